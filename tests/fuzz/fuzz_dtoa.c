/* fuzz_dtoa.c - libFuzzer target: the shortest double formatting
 * (cs_format_f64, Dragonbox) against the C library. Every 8 bytes are a
 * double; its text must read back (strtod) as the same bits, and one
 * significant digit fewer (printf's correctly rounded %.*e) must not. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (size_t off = 0; off + 8 <= size; off += 8) {
		double v;
		memcpy(&v, data + off, 8);
		char out[32], shorter[40];
		size_t n = cs_format_f64(out, v);
		if (n == 0 || n >= 32 || strlen(out) != n)
			abort();
		if (isnan(v))
			continue;
		double back = strtod(out, NULL);
		if (memcmp(&back, &v, 8) != 0)
			abort();
		/* significant digits written */
		int digits = 0, lead = 1;
		for (const char *c = out; *c && *c != 'e'; c++) {
			if (*c < '0' || *c > '9')
				continue;
			if (lead && *c == '0')
				continue;
			lead = 0;
			digits++;
		}
		/* an integer prints whole (trailing zeros count), so only
		 * fractions and exponents are held to the shortest */
		if (digits > 1 && !isinf(v) && (strchr(out, '.') || strchr(out, 'e'))) {
			snprintf(shorter, sizeof shorter, "%.*e", digits - 2, v);
			if (strtod(shorter, NULL) == v)
				abort();
		}
	}
	return 0;
}
