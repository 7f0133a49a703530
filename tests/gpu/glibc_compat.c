/*
 * glibc_compat.c - linked into the bundle's workloads so that the static
 * libstdc++ of this (Debian 12, glibc 2.36) build does not make them need
 * a glibc newer than 2.34 on the GPU machine: libstdc++.a's
 * std::random_device calls arc4random (GLIBC_2.36); this definition is
 * bound at link time instead. getrandom is glibc 2.25.
 */
#include <stdint.h>
#include <sys/random.h>
#include <sys/types.h>

uint32_t arc4random(void);

uint32_t arc4random(void)
{
	uint32_t v = 0;
	while (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
		;
	return v;
}
