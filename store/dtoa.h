/*
 * dtoa.h - the shortest decimal digits that read back as a given double,
 * from Dragonbox (Junekey Jeon, "Dragonbox: A New Floating-Point
 * Binary-to-Decimal Conversion Algorithm", 2020; Debian's libdragonbox-dev,
 * header-only), through a C++ shim (dtoa.cc) with C linkage.
 *
 * Threads: safe from any thread (no state).
 */
#ifndef CS_DTOA_H
#define CS_DTOA_H

#ifdef __cplusplus
extern "C" {
#endif

/* For finite v != 0: *digits x 10^*exp10 == |v| rounded to the shortest
 * decimal that reads back as v (round to nearest, ties to even), with no
 * trailing zero in *digits (at most 17 digits). */
void cs_dtoa_shortest(double v, unsigned long long *digits, int *exp10);

#ifdef __cplusplus
}
#endif

#endif
