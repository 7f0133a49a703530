/* fig_axis.c - the figures' axes: data ranges, scales, ticks and their number and time labels (fig_int.h). */
#include "fig_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- number formatting ---- */

/* Fewest decimals that show step (in the display unit), at most one past
 * what tells neighbouring ticks apart: 0.25 -> 2, 0.005 -> 3, 5 -> 0. */
static int step_decimals(double step)
{
	int d = (int)fmax(0, ceil(-log10(step) - 1e-9)), max = d + 1;
	for (; d < max; d++) {
		double m = step * pow(10, d);
		if (fabs(m - round(m)) <= 1e-6 * fmax(1, m))
			break;
	}
	return d > 12 ? 12 : d;
}

/* Decimals for three significant digits of a (> 0). */
static int sig3_decimals(double a) { return fig_clampi(2 - floor(log10(a)), 0, 12); }

/* "%.*f" without trailing zeros, a trailing '.' or the '-' of a zero;
 * from 1e15 up, an exponent rather than a wall of digits. */
static void fixed(char *t, size_t tlen, int dec, double v)
{
	snprintf(t, tlen, fabs(v) < 1e15 ? "%.*f" : "%.*g", fabs(v) < 1e15 ? dec : 3, v);
	size_t n = strlen(t);
	while (strchr(t, '.') && (t[n - 1] == '0' || t[n - 1] == '.'))
		t[--n] = 0;
	if (t[0] == '-' && strspn(t + 1, "0") == n - 1)
		memmove(t, t + 1, n);
}

void cs_fig_fmt_num(double v, double step, char *out, size_t outlen)
{
	/* from the largest: T G M k, plain, µ, n */
	static const double at[] = {1e12, 1e9, 1e6, 1e3, 1e-3, 1e-6, 0};
	static const double fac[] = {1e12, 1e9, 1e6, 1e3, 1, 1e-6, 1e-9};
	static const char *const pre[] = {"T", "G", "M", "k", "", "\xc2\xb5", "n"};
	char t[64] = "0";
	int k = 4, has_step = isfinite(step) && step > 0;
	if (!out || !outlen)
		return;
	if (!isfinite(v)) {
		snprintf(out, outlen, "n/a");
		return;
	}
	/* zero, or a rounding residue far below the tick spacing, stays "0" */
	if (fabs(v) >= 1e15) {
		snprintf(t, sizeof t, "%.3g", v); /* past any prefix */
	} else if (v != 0 && !(has_step && fabs(v) < step * 1e-9)) {
		for (k = 0; fabs(v) < at[k]; k++)
			;
		for (;;) {
			int dec = has_step ? step_decimals(step / fac[k])
					   : sig3_decimals(fabs(v) / fac[k]);
			fixed(t, sizeof t, dec, v / fac[k]);
			/* 999.96 rounds to "1000": say "1k" instead */
			if (k == 0 || fabs(strtod(t, NULL)) < 1000)
				break;
			k--;
		}
	}
	snprintf(out, outlen, "%s%s", t, strcmp(t, "0") ? pre[k] : "");
}

void cs_fig_fmt_time(double v_ns, double step_ns, char *out, size_t outlen)
{
	static const double fac[] = {1e9, 1e6, 1e3, 1};
	static const char *const unit[] = {"s", "ms", "\xc2\xb5s", "ns"};
	char t[64] = "0";
	int k = 0, has_step = isfinite(step_ns) && step_ns > 0;
	if (!out || !outlen)
		return;
	if (!isfinite(v_ns)) {
		snprintf(out, outlen, "n/a");
		return;
	}
	/* the largest unit no more than 100 steps (or than |v| with no step) */
	for (double by = has_step ? 100 * step_ns : fabs(v_ns); k < 3 && fac[k] > by; k++)
		;
	while (v_ns != 0 && !(has_step && fabs(v_ns) < step_ns * 1e-9)) {
		fixed(t, sizeof t, has_step ? step_decimals(step_ns / fac[k])
					    : sig3_decimals(fabs(v_ns) / fac[k]), v_ns / fac[k]);
		/* picked by |v|, 999.96 µs rounds to "1000": say "1 ms" */
		if (has_step || k == 0 || fabs(strtod(t, NULL)) < 1000)
			break;
		k--;
	}
	snprintf(out, outlen, "%s %s", t, unit[k]);
}

/* ---- scales and ticks ---- */



int fig_usable(int log, double v) { return isfinite(v) && (!log || v > 0); }

void fig_grow(range *r, int log, double v)
{
	if (!fig_usable(log, v))
		return;
	r->lo = r->any ? fmin(r->lo, v) : v;
	r->hi = r->any ? fmax(r->hi, v) : v;
	r->any = 1;
}

/* Sets a's data range from r: a default when empty, widened around a
 * single value, padded by the fractions given (of log10 span on log). */
void fig_settle(axis *a, range r, int log, double pad_lo, double pad_hi)
{
	double lo = log ? 1 : 0, hi = log ? 10 : 1;
	a->log = log;
	if (r.any) {
		/* keeps hi - lo finite, and log10 of either end */
		lo = fmax(r.lo, log ? 1e-300 : -1e300);
		hi = fmax(fmin(r.hi, 1e300), lo);
		if (lo == hi) {
			double d = fabs(lo) * 0.1;
			d = lo + d > lo ? d : 1; /* zero, or too small to widen */
			hi = lo + d;
			lo = lo == 0 ? 0 : log ? lo / 2 : lo - d;
		} else if (log) {
			double l0 = log10(lo), l1 = log10(hi);
			lo = fmax(pow(10, l0 - pad_lo * (l1 - l0)), 1e-305);
			hi = fmin(pow(10, l1 + pad_hi * (l1 - l0)), 1e305);
		} else {
			double sp = hi - lo;
			lo -= pad_lo * sp;
			hi += pad_hi * sp;
		}
	}
	a->d0 = lo;
	a->d1 = hi;
}

/* Pixel of v (usable on a); clamped, as far outside is clipped anyway. */
double fig_px(const axis *a, double v)
{
	double f = a->log ? (log10(v) - log10(a->d0)) / (log10(a->d1) - log10(a->d0))
			  : (v - a->d0) / (a->d1 - a->d0);
	double p = a->p0 + f * (a->p1 - a->p0);
	return !(p > -PX_LIMIT) ? -PX_LIMIT : p > PX_LIMIT ? PX_LIMIT : p;
}

void fig_make_ticks(axis *a, int want)
{
	a->nt = 0;
	a->step = 0;
	if (a->log) {
		/* decades (every few when there are many), 2 and 5 too when few */
		static const double m[] = {1, 2, 5};
		double l0 = log10(a->d0), l1 = log10(a->d1);
		int stride = (int)fmax(1, ceil((l1 - l0) / 10)), per = l1 - l0 < 3 ? 3 : 1;
		for (int e = (int)floor(l0 / stride); e <= (int)ceil(l1 / stride); e++)
			for (int k = 0; k < per && a->nt < MAXT; k++) {
				double v = m[k] * pow(10, e * stride);
				if (v >= a->d0 * (1 - 1e-9) && v <= a->d1 * (1 + 1e-9))
					a->t[a->nt++] = v;
			}
		return;
	}
	/* 1, 2 or 5 x 10^k nearest span / want, counted from the origin */
	double u0 = a->d0 - a->origin, u1 = a->d1 - a->origin, raw = (u1 - u0) / want;
	double mag = pow(10, floor(log10(raw))), f = raw / mag;
	double st = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
	if (!isfinite(st) || !(st > 0))
		return;
	double k0 = ceil(u0 / st - 1e-9);
	for (int k = 0; k < MAXT && (k0 + k) * st <= u1 + st * 1e-9; k++)
		a->t[a->nt++] = fabs((k0 + k) * st) < st * 1e-9 ? 0 : (k0 + k) * st;
	a->step = st;
}
