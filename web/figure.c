/*
 * figure.c - figures as SVG (figure.h).
 *
 * Layout, top to bottom: the title, the legend (one entry per distinct
 * series label, wrapped onto more rows when wider than the figure), the
 * panels stacked on one x scale, the x axis (tick labels and title under
 * the last panel only, as matplotlib's sharex does), the lanes of spans,
 * the caption. Every panel and lane has the same plot-area x extent: the
 * left margin is the largest any panel needs for its tick labels plus its
 * rotated y title, or any lane for its label, so a y title never overprints
 * a tick label and a kernel's span lines up with the counters above it.
 * Everything is measured before anything is written (the <svg> element
 * carries the height). With no font metrics at hand, text is estimated at
 * 0.6 em a character, about DejaVu Sans' average.
 *
 * Size: a run of a million samples must still give a small file, so the
 * output is O(plot width) per series whatever n is. Lines and steps pass
 * through an M4 reduction (the first, lowest, highest and last vertex of
 * each pixel column), which paints the same pixels as the full polyline;
 * bars narrower than a pixel merge per column into their envelope; markers
 * skip a 2x2 px cell already marked; a crowded lane keeps one sub-pixel
 * span per column.
 *
 * Robustness: NaN and infinite values are gaps and are never printed;
 * pixel coordinates are clamped so that a wild value cannot print hundreds
 * of digits; text is XML-escaped with control bytes dropped and invalid
 * UTF-8 replaced by U+FFFD. Clip-path ids carry a hash of the figure so
 * that several figures inlined in one HTML page do not share ids.
 */
#include "figure.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"
#define GRID "#e6e6e6"
#define MAXT 64      /* ticks on one axis, at most */
#define PX_LIMIT 1e9 /* pixel coordinates are clamped to +-this */
#define LANE_PITCH 20.0
#define LANE_H 16.0
#define LEGEND_ROW 18.0

/* ---- output ---- */

typedef struct svg {
	cs_buf *b;
	int err; /* the first -ENOMEM; later writes are skipped */
} svg;

static void put_bytes(svg *s, const void *p, size_t n)
{
	if (!s->err && cs_buf_append(s->b, p, n) < 0)
		s->err = -ENOMEM;
}

/* Every format here is markup and numbers, well under the buffer; text
 * of any length goes through put_esc. */
static void put(svg *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(svg *s, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		put_bytes(s, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Length of the valid UTF-8 sequence at p, 0 when it is not one (overlong
 * forms and surrogates included): an XML parser rejects the whole file. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
		 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* Text or attribute content: escaped, control bytes dropped (XML 1.0 has
 * no place for them, and a newline would break a one-line caption). */
static void put_esc(svg *s, const char *t)
{
	static const char special[] = "&<>\"'";
	static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
	for (const unsigned char *p = (const unsigned char *)(t ? t : ""); *p;) {
		size_t n = utf8_len(p);
		const char *e = n != 1 ? NULL : strchr(special, *p);
		if (!n)
			put_bytes(s, "\xef\xbf\xbd", 3);
		else if (e)
			put(s, "%s", ent[e - special]);
		else if (n > 1 || (*p >= 0x20 && *p != 0x7f))
			put_bytes(s, p, n);
		p += n ? n : 1;
	}
}

/* ` name="value"`, the value escaped. */
static void put_kv(svg *s, const char *name, const char *value)
{
	put(s, " %s=\"", name);
	put_esc(s, value);
	put(s, "\"");
}

/* <text> at (x, y) with attributes attr and escaped content t. */
static void put_text(svg *s, double x, double y, const char *attr, const char *t)
{
	put(s, "<text x=\"%.2f\" y=\"%.2f\" %s>", x, y, attr);
	put_esc(s, t);
	put(s, "</text>\n");
}

/* ` textLength=...` squeezing t into max px when its estimated width at
 * font size fs is more: a long metric expression or caption stays whole
 * and inside the figure instead of running past its edge or into the
 * next panel. Nothing when it fits. */
static void put_fit(svg *s, const char *t, double fs, double max)
{
	double w = 0.6 * fs * (double)strlen(t ? t : "");
	if (max > 20 && w > max)
		put(s, " textLength=\"%.2f\" lengthAdjust=\"spacingAndGlyphs\"", max);
}

static void put_line(svg *s, double x1, double y1, double x2, double y2, const char *attr)
{
	put(s, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" %s/>\n", x1, y1, x2, y2, attr);
}

/* Estimated width in px of t at font size fs: 0.6 em per character. */
static double text_w(const char *t, double fs)
{
	size_t chars = 0;
	for (const unsigned char *p = (const unsigned char *)(t ? t : ""); *p; p++)
		chars += (*p & 0xc0) != 0x80;
	return 0.6 * fs * (double)chars;
}

static int blank(const char *t) { return !t || !*t; }

static int clampi(double v, int lo, int hi) { return !(v >= lo) ? lo : v > hi ? hi : (int)v; }

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
static int sig3_decimals(double a) { return clampi(2 - floor(log10(a)), 0, 12); }

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

typedef struct axis {
	double d0, d1; /* data range */
	double p0, p1; /* the pixels d0 and d1 map to */
	int log;
	double origin; /* tick i sits at origin + t[i]; its label shows t[i] */
	double step;   /* tick spacing in t; 0 on a log axis */
	double t[MAXT];
	int nt;
} axis;

typedef struct range {
	double lo, hi;
	int any;
} range;

static int usable(int log, double v) { return isfinite(v) && (!log || v > 0); }

static void grow(range *r, int log, double v)
{
	if (!usable(log, v))
		return;
	r->lo = r->any ? fmin(r->lo, v) : v;
	r->hi = r->any ? fmax(r->hi, v) : v;
	r->any = 1;
}

/* Sets a's data range from r: a default when empty, widened around a
 * single value, padded by the fractions given (of log10 span on log). */
static void settle(axis *a, range r, int log, double pad_lo, double pad_hi)
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
static double px(const axis *a, double v)
{
	double f = a->log ? (log10(v) - log10(a->d0)) / (log10(a->d1) - log10(a->d0))
			  : (v - a->d0) / (a->d1 - a->d0);
	double p = a->p0 + f * (a->p1 - a->p0);
	return !(p > -PX_LIMIT) ? -PX_LIMIT : p > PX_LIMIT ? PX_LIMIT : p;
}

static void make_ticks(axis *a, int want)
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

/* ---- layout ---- */

typedef struct panel_lay {
	axis y;
	double top, h;
	double lw;  /* widest tick label */
	int empty;  /* no finite value in view */
} panel_lay;

typedef struct lay {
	double W, H, ml, mr, pw; /* size, margins, plot width */
	axis x;
	panel_lay *p;
	const cs_fig_series **leg; /* one per distinct label, first occurrence */
	size_t nleg;
	double title_y, legend_y, xaxis_y, xtitle_y, lanes_y, caption_y;
	const char *xtitle;
	char id[16]; /* clip-path id prefix */
} lay;

/* Orders the ends e0, e1 of an interval into *a <= *b; 0 when an end is
 * not a number the x axis can place or the interval misses the view. */
static int in_view(const axis *x, double e0, double e1, double *a, double *b)
{
	if (!usable(x->log, e0) || !usable(x->log, e1))
		return 0;
	*a = fmin(e0, e1);
	*b = fmax(e0, e1);
	return *b >= x->d0 && *a <= x->d1;
}

static int series_ok(const cs_fig_series *se) { return se->n && se->x0 && se->y; }

/* STEP and BARS hold values over intervals; LINE and POINTS are points. */
static int held(const cs_fig_series *se)
{
	return se->style == CS_FIG_STEP || se->style == CS_FIG_BARS;
}

/* Where sample i ends: x1[i]; a STEP given no x1 holds until the next. */
static double end_of(const cs_fig_series *se, size_t i)
{
	if (se->x1 && held(se))
		return se->x1[i];
	return se->style == CS_FIG_STEP && i + 1 < se->n ? se->x0[i + 1] : se->x0[i];
}

static double stroke_w(const cs_fig_series *se)
{
	return isfinite(se->width) && se->width > 0 ? fmin(se->width, 50) : 1.5;
}

static void fit_x(const cs_fig *f, axis *x)
{
	int log = f->xkind == CS_FIG_X_PLAIN && f->xlog;
	range r = {0, 0, 0};
	x->origin = f->xkind == CS_FIG_X_PLAIN || !isfinite(f->x_origin) ? 0 : f->x_origin;
	if (f->xmin < f->xmax && isfinite(f->xmax - f->xmin) && usable(log, f->xmin)) {
		x->log = log;
		x->d0 = f->xmin;
		x->d1 = f->xmax;
		return;
	}
	for (size_t k = 0; k < f->npanels; k++)
		for (size_t j = 0; f->panels[k].series && j < f->panels[k].nseries; j++) {
			const cs_fig_series *se = &f->panels[k].series[j];
			for (size_t i = 0; series_ok(se) && i < se->n; i++) {
				grow(&r, log, se->x0[i]);
				grow(&r, log, end_of(se, i));
			}
		}
	for (size_t k = 0; k < f->nlanes; k++)
		for (size_t i = 0; f->lanes[k].spans && i < f->lanes[k].n; i++) {
			grow(&r, log, f->lanes[k].spans[i].x0);
			grow(&r, log, f->lanes[k].spans[i].x1);
		}
	for (size_t i = 0; f->shade.x0 && f->shade.x1 && i < f->shade.n; i++) {
		grow(&r, log, f->shade.x0[i]);
		grow(&r, log, f->shade.x1[i]);
	}
	/* time runs edge to edge; a value axis breathes as matplotlib's does */
	double pad = f->xkind == CS_FIG_X_PLAIN ? 0.05 : 0;
	settle(x, r, log, pad, pad);
}

/* The y range of a panel over the samples whose x overlaps the view. */
static void fit_y(const cs_fig_panel *p, const axis *x, panel_lay *pl)
{
	int log = !!p->ylog, bars = 0;
	range r = {0, 0, 0};
	pl->empty = 1;
	for (size_t j = 0; p->series && j < p->nseries; j++) {
		const cs_fig_series *se = &p->series[j];
		for (size_t i = 0; series_ok(se) && i < se->n; i++) {
			double a, b;
			if (!in_view(x, se->x0[i], end_of(se, i), &a, &b))
				continue;
			if (usable(log, se->y[i])) {
				pl->empty = 0;
				bars |= se->style == CS_FIG_BARS;
			}
			grow(&r, log, se->y[i]);
			if (se->lo && se->hi) {
				grow(&r, log, se->lo[i]);
				grow(&r, log, se->hi[i]);
			}
		}
	}
	if (!log && r.any && (r.lo >= 0 || bars)) { /* counters and bars start at 0 */
		r.lo = fmin(r.lo, 0);
		r.hi = fmax(r.hi, 0);
	}
	settle(&pl->y, r, log, !log && r.any && r.lo == 0 ? 0 : 0.05, 0.05);
}

/* A series' presentation attributes: on its group and its legend sample. */
static void put_style(svg *s, const cs_fig_series *se)
{
	const char *c = se->color ? se->color : "#444";
	if (se->style == CS_FIG_POINTS) {
		put_kv(s, "fill", c);
		put(s, " stroke=\"none\"");
		return;
	}
	if (se->style == CS_FIG_BARS) {
		put_kv(s, "fill", c);
		put(s, " fill-opacity=\"0.55\" stroke-width=\"1\"");
	} else {
		put(s, " fill=\"none\" stroke-width=\"%.2f\"", stroke_w(se));
	}
	put_kv(s, "stroke", c);
	put(s, " stroke-linejoin=\"round\"");
	if (!blank(se->dash))
		put_kv(s, "stroke-dasharray", se->dash);
}

/* Lays out the legend from y0 and, given s, draws it; returns its rows. */
static int legend(svg *s, const lay *L, double y0)
{
	double x = L->ml, y = y0 + 12;
	int rows = L->nleg ? 1 : 0;
	for (size_t i = 0; L->leg && i < L->nleg; i++) {
		const cs_fig_series *se = L->leg[i];
		double w = 28 + text_w(se->label, 11) + 20;
		if (x > L->ml && x + w > L->W - L->mr) {
			x = L->ml;
			y += LEGEND_ROW;
			rows++;
		}
		if (s) {
			put(s, "<g class=\"legend-entry\"");
			put_style(s, se);
			if (se->style == CS_FIG_BARS)
				put(s, "><rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"10\"/>", x + 4, y - 9);
			else if (se->style == CS_FIG_POINTS)
				put(s, "><circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\"/>", x + 11, y - 4);
			else
				put(s, "><path d=\"M%.2f,%.2f h22\"/>", x, y - 4);
			put_text(s, x + 28, y, "font-size=\"11\" fill=\"#222\" fill-opacity=\"1\" "
				 "stroke=\"none\"", se->label);
			put(s, "</g>\n");
		}
		x += w;
	}
	return rows;
}

static int layout(const cs_fig *f, lay *L)
{
	int rc = 0;
	size_t total = 0;
	char t[64];
	/* bounded so that the per-pixel bitmaps stay small */
	L->W = isfinite(f->width) && f->width > 0 ? fmin(round(f->width), 16384) : 960;
	L->mr = 24;
	fit_x(f, &L->x);
	/* y axes first: their tick labels decide the shared left margin; a
	 * rotated title's glyphs reach ~9 px left of its baseline */
	L->ml = 40;
	for (size_t k = 0; k < f->npanels; k++) {
		const cs_fig_panel *p = &f->panels[k];
		panel_lay *pl = &L->p[k];
		pl->h = !isfinite(p->height) || p->height <= 0 ? 220 : fmin(fmax(p->height, 40), 4096);
		fit_y(p, &L->x, pl);
		make_ticks(&pl->y, clampi(pl->h / 50, 3, 6));
		for (int i = 0; i < pl->y.nt; i++) {
			cs_fig_fmt_num(pl->y.t[i], pl->y.step, t, sizeof t);
			pl->lw = fmax(pl->lw, text_w(t, 11));
		}
		L->ml = fmax(L->ml, pl->lw + (blank(p->ytitle) ? 12 : 30));
		total += p->series ? p->nseries : 0;
	}
	for (size_t k = 0; k < f->nlanes; k++)
		L->ml = fmax(L->ml, text_w(f->lanes[k].label, 11) + 12);
	L->ml = ceil(L->ml);
	L->W = fmax(L->W, L->ml + L->mr + 60); /* too narrow to draw in: widen */
	L->pw = L->W - L->ml - L->mr;
	L->x.p0 = L->ml;
	L->x.p1 = L->ml + L->pw;
	make_ticks(&L->x, clampi(L->pw / 120, 4, 8));

	L->leg = total ? calloc(total, sizeof *L->leg) : NULL;
	if (total && !L->leg) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < f->npanels; k++)
		for (size_t j = 0; f->panels[k].series && j < f->panels[k].nseries; j++) {
			const cs_fig_series *se = &f->panels[k].series[j];
			size_t i = 0;
			while (!blank(se->label) && i < L->nleg && strcmp(L->leg[i]->label, se->label))
				i++;
			if (!blank(se->label) && i == L->nleg)
				L->leg[L->nleg++] = se;
		}

	/* top to bottom */
	double y = 8;
	L->title_y = y + 16;
	y += blank(f->title) ? 0 : 26;
	L->legend_y = y;
	y += L->nleg ? legend(NULL, L, y) * LEGEND_ROW + 6 : 0;
	for (size_t k = 0; k < f->npanels; k++) {
		L->p[k].top = y;
		L->p[k].y.p0 = y + L->p[k].h;
		L->p[k].y.p1 = y;
		y += L->p[k].h + (k + 1 < f->npanels ? 10 : 0);
	}
	L->xtitle = f->xtitle ? f->xtitle
		  : f->xkind == CS_FIG_X_NS ? "time since start"
		  : f->xkind == CS_FIG_X_CYCLES ? "cycles since start" : "";
	/* lanes go under the x axis, or above it when there is no panel */
	L->lanes_y = y + 6;
	if (!f->npanels)
		y += f->nlanes ? 6 + (double)f->nlanes * LANE_PITCH : 0;
	L->xaxis_y = y;
	L->xtitle_y = y + 34;
	y += blank(L->xtitle) ? 22 : 40;
	if (f->npanels && f->nlanes) {
		L->lanes_y = y + 6;
		y = L->lanes_y + (double)f->nlanes * LANE_PITCH;
	}
	L->caption_y = y + 16;
	L->H = ceil(y + (blank(f->caption) ? 0 : 22) + 6);

	/* ids unique per figure, yet the same for the same input */
	uint32_t h = 2166136261u;
	const char *parts[] = {f->title, f->caption, L->xtitle};
	for (size_t i = 0; i < 3; i++)
		for (const char *c = parts[i] ? parts[i] : ""; *c; c++)
			h = (h ^ (uint8_t)*c) * 16777619u;
	for (size_t k = 0; k < f->npanels; k++) { /* y titles and labels: the margins they make */
		for (const char *c = f->panels[k].ytitle ? f->panels[k].ytitle : ""; *c; c++)
			h = (h ^ (uint8_t)*c) * 16777619u;
		for (size_t j = 0; j < f->panels[k].nseries; j++)
			for (const char *c = f->panels[k].series[j].label ? f->panels[k].series[j].label : ""; *c; c++)
				h = (h ^ (uint8_t)*c) * 16777619u;
	}
	h = (h ^ (uint32_t)((uint64_t)L->H * 31 + (uint64_t)L->ml * 17 + f->npanels * 7 + f->nlanes)) *
	    16777619u;
	snprintf(L->id, sizeof L->id, "csf%08x", (unsigned)h);
out:
	return rc;
}

/* ---- series ---- */

typedef struct pt {
	double x, y;
	size_t at; /* sequence number */
} pt;

typedef struct pts {
	pt *v;
	size_t n, cap;
	int err;
} pts;

static void pts_add(pts *p, pt q)
{
	if (p->err || (p->n && p->v[p->n - 1].x == q.x && p->v[p->n - 1].y == q.y))
		return;
	if (p->n == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 256;
		pt *g = realloc(p->v, c * sizeof *g);
		if (!g) {
			p->err = -ENOMEM;
			return;
		}
		p->v = g;
		p->cap = c;
	}
	p->v[p->n++] = q;
}

/* M4: of the vertices falling in one pixel column, only the first, lowest,
 * highest and last (in their order) can change a pixel of the polyline. */
typedef struct m4 {
	pts out;
	int open;
	double col;
	pt p[4]; /* first, lowest, highest, last */
	size_t seq;
} m4;

static void m4_flush(m4 *m)
{
	if (!m->open)
		return;
	int lo_first = m->p[1].at <= m->p[2].at;
	pts_add(&m->out, m->p[0]);
	pts_add(&m->out, m->p[lo_first ? 1 : 2]);
	pts_add(&m->out, m->p[lo_first ? 2 : 1]);
	pts_add(&m->out, m->p[3]);
	m->open = 0;
}

static void m4_add(m4 *m, double x, double y)
{
	pt q = {x, y, m->seq++};
	if (m->open && floor(x) != m->col)
		m4_flush(m);
	if (!m->open) {
		m->p[0] = m->p[1] = m->p[2] = q;
		m->open = 1;
		m->col = floor(x);
	}
	if (y < m->p[1].y)
		m->p[1] = q;
	if (y > m->p[2].y)
		m->p[2] = q;
	m->p[3] = q;
}

/* Traces one value array (a line) or two (a band's upper and lower edge)
 * of a series, drawing each contiguous run as a path when it ends. */
typedef struct walk {
	svg *s;
	const axis *x, *y;
	m4 m[2];
	int nv;
	const char *fill; /* a band's colour; NULL for a line */
} walk;

static void walk_end(walk *w)
{
	const pts *a = &w->m[0].out, *b = &w->m[1].out;
	for (int k = 0; k < w->nv; k++)
		m4_flush(&w->m[k]);
	if (a->err || b->err)
		w->s->err = -ENOMEM;
	if (a->n > (w->fill ? 0u : 1u)) {
		put(w->s, "<path d=\"M");
		for (size_t i = 0; i < a->n; i++)
			put(w->s, "%s%.2f,%.2f", i ? " " : "", a->v[i].x, a->v[i].y);
		for (size_t i = w->fill ? b->n : 0; i-- > 0;)
			put(w->s, " %.2f,%.2f", b->v[i].x, b->v[i].y);
		put(w->s, "%s\"", w->fill ? "Z" : "");
		if (w->fill) {
			put_kv(w->s, "fill", w->fill);
			put(w->s, " fill-opacity=\"0.15\" stroke=\"none\"");
		}
		put(w->s, "/>\n");
	}
	w->m[0].out.n = w->m[1].out.n = 0;
}

static void trace(walk *w, const cs_fig_series *se, const double *va, const double *vb)
{
	const axis *x = w->x, *y = w->y;
	const double *v[2] = {va, vb};
	int run = 0;
	double prev_b = 0, prev[3] = {0, 0, 0}; /* the previous point in px: x, y per edge */
	/* intervals touch when equal within 1e-9 of the view or a few ulps of
	 * the value: relative to the value alone, 1e-9 of an epoch-ns time
	 * would be a whole second */
	double tol_view = x->log ? 0 : 1e-9 * (x->d1 - x->d0);
	for (size_t i = 0; i < se->n; i++) {
		double a = se->x0[i], b = a, q[2] = {0, 0};
		int ok = held(se) ? in_view(x, a, end_of(se, i), &a, &b) : usable(x->log, a);
		for (int k = 0; k < w->nv; k++)
			ok = ok && usable(y->log, v[k][i]);
		if (!ok) {
			walk_end(w);
			run = 0;
			continue;
		}
		for (int k = 0; k < w->nv; k++)
			q[k] = px(y, v[k][i]);
		if (held(se)) {
			/* held values: flat over the interval, joined vertically to a
			 * touching neighbour, broken by a gap */
			if (run && a - prev_b > fmax(tol_view, 4 * DBL_EPSILON * fabs(prev_b)))
				walk_end(w);
			double qa = px(x, fmax(a, x->d0)), qb = px(x, fmin(b, x->d1));
			for (int k = 0; k < w->nv; k++) {
				m4_add(&w->m[k], qa, q[k]);
				m4_add(&w->m[k], qb, q[k]);
			}
			prev_b = b;
			run = 1;
			continue;
		}
		/* points: straight segments, clipped to the view in x */
		double qx = px(x, a), x0 = prev[0], dx = qx - x0;
		if (!run) {
			for (int k = 0; qx >= x->p0 && qx <= x->p1 && k < w->nv; k++)
				m4_add(&w->m[k], qx, q[k]);
		} else if (fmax(x0, qx) < x->p0 || fmin(x0, qx) > x->p1) {
			walk_end(w); /* outside: no join along the edge of the view */
		} else {
			double ta = dx ? (x->p0 - x0) / dx : 0, tb = dx ? (x->p1 - x0) / dx : 1;
			double t0 = fmax(0, fmin(ta, tb)), t1 = fmin(1, fmax(ta, tb));
			for (int k = 0; k < w->nv; k++) {
				double y0 = prev[1 + k], dy = q[k] - y0;
				m4_add(&w->m[k], x0 + t0 * dx, y0 + t0 * dy);
				m4_add(&w->m[k], x0 + t1 * dx, y0 + t1 * dy);
			}
		}
		prev[0] = qx;
		prev[1] = q[0];
		prev[2] = q[1];
		run = 1;
	}
	walk_end(w);
}

static void put_rect(svg *s, double x0, double y0, double x1, double y1)
{
	put(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n", x0, y0,
	    fmax(1, x1 - x0), y1 - y0);
}

/* Bars from the axis' zero (its bottom on log); those narrower than a
 * pixel merge per column into their envelope. */
static void draw_bars(svg *s, const cs_fig_series *se, const axis *x, const axis *y)
{
	double base = y->log ? y->p0 : px(y, fmin(fmax(0, y->d0), y->d1));
	double g[4] = {0, 0, 0, 0}; /* the merged column: left, top, right, bottom */
	int open = 0;
	for (size_t i = 0; i < se->n; i++) {
		double a, b;
		if (!in_view(x, se->x0[i], end_of(se, i), &a, &b) || !usable(y->log, se->y[i]))
			continue;
		double q = px(y, se->y[i]), r[4] = {px(x, fmax(a, x->d0)), fmin(q, base),
						    px(x, fmin(b, x->d1)), fmax(q, base)};
		if (r[2] - r[0] < 1 && open && floor(r[0]) == floor(g[0])) {
			g[1] = fmin(g[1], r[1]);
			g[2] = fmax(g[2], r[2]);
			g[3] = fmax(g[3], r[3]);
			continue;
		}
		if (open)
			put_rect(s, g[0], g[1], g[2], g[3]);
		open = r[2] - r[0] < 1;
		if (open)
			memcpy(g, r, sizeof g);
		else
			put_rect(s, r[0], r[1], r[2], r[3]);
	}
	if (open)
		put_rect(s, g[0], g[1], g[2], g[3]);
}

static int draw_points(svg *s, const cs_fig_series *se, const axis *x, const axis *y)
{
	int rc = 0;
	/* a marker is 7 px across: one per 2x2 px cell looks the same */
	int cols = (int)((x->p1 - x->p0) / 2) + 2, rows = (int)((y->p0 - y->p1) / 2) + 2;
	unsigned char *seen = se->n > 2000 ? calloc((size_t)cols * (size_t)rows, 1) : NULL;
	if (se->n > 2000 && !seen) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < se->n; i++) {
		double a = se->x0[i];
		if (!usable(x->log, a) || !usable(y->log, se->y[i]) || a < x->d0 || a > x->d1)
			continue;
		double qx = px(x, a), qy = px(y, se->y[i]);
		const char *label = se->labels ? se->labels[i] : NULL;
		if (seen && blank(label)) {
			size_t c = (size_t)clampi((qx - x->p0) / 2, 0, cols - 1) +
				   (size_t)clampi((qy - y->p1) / 2, 0, rows - 1) * (size_t)cols;
			if (seen[c])
				continue;
			seen[c] = 1;
		}
		put(s, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\"/>\n", qx, qy);
		if (!blank(label))
			put_text(s, qx + 5, qy - 5, "font-size=\"10\" fill=\"#333\"", label);
	}
out:
	free(seen);
	return rc;
}

static int draw_series(svg *s, const cs_fig_series *se, const axis *x, const axis *y)
{
	int rc = 0;
	walk w = {.s = s, .x = x, .y = y};
	put(s, "<g class=\"series\"");
	put_kv(s, "data-label", se->label);
	put_style(s, se);
	put(s, ">\n");
	if (se->lo && se->hi) { /* the band goes under the series */
		w.nv = 2;
		w.fill = se->color ? se->color : "#444";
		trace(&w, se, se->hi, se->lo);
	}
	if (se->style == CS_FIG_BARS) {
		draw_bars(s, se, x, y);
	} else if (se->style == CS_FIG_POINTS) {
		rc = draw_points(s, se, x, y);
	} else {
		w.nv = 1;
		w.fill = NULL;
		trace(&w, se, se->y, NULL);
	}
	put(s, "</g>\n");
	free(w.m[0].out.v);
	free(w.m[1].out.v);
	return rc;
}

/* ---- panels, axes, lanes ---- */

static void x_ticks(svg *s, const cs_fig *f, const lay *L, double yb, int labels)
{
	char t[64], attr[96];
	for (int i = 0; i < L->x.nt; i++) {
		double q = px(&L->x, L->x.origin + L->x.t[i]);
		put_line(s, q, yb, q, yb + 4, "stroke=\"#333\"");
		if (!labels)
			continue;
		if (f->xkind == CS_FIG_X_NS)
			cs_fig_fmt_time(L->x.t[i], L->x.step, t, sizeof t);
		else
			cs_fig_fmt_num(L->x.t[i], L->x.step, t, sizeof t);
		/* keep the end labels inside the figure */
		double w = text_w(t, 11);
		snprintf(attr, sizeof attr, "font-size=\"11\" fill=\"#333\" text-anchor=\"%s\"",
			 q + w / 2 > L->W - 2 ? "end" : q - w / 2 < 2 ? "start" : "middle");
		put_text(s, q, yb + 15, attr, t);
	}
}

static int draw_panel(svg *s, const cs_fig *f, const lay *L, size_t k)
{
	int rc = 0;
	const cs_fig_panel *p = &f->panels[k];
	const panel_lay *pl = &L->p[k];
	const axis *x = &L->x, *y = &pl->y;
	double x0 = L->ml, x1 = L->ml + L->pw, top = pl->top, bot = pl->top + pl->h;
	char t[64];
	put(s, "<g class=\"panel\">\n");
	for (int i = 0; i < y->nt; i++)
		put_line(s, x0, px(y, y->t[i]), x1, px(y, y->t[i]), "stroke=\"" GRID "\"");
	for (int i = 0; i < x->nt; i++) {
		double q = px(x, x->origin + x->t[i]);
		put_line(s, q, top, q, bot, "stroke=\"" GRID "\"");
	}
	put(s, "<g clip-path=\"url(#%s-p%zu)\">\n", L->id, k);
	for (size_t i = 0; f->shade.x0 && f->shade.x1 && i < f->shade.n; i++) {
		double a, b;
		if (!in_view(x, f->shade.x0[i], f->shade.x1[i], &a, &b))
			continue;
		double qa = px(x, fmax(a, x->d0)), qb = px(x, fmin(b, x->d1));
		put(s, "<rect class=\"shade\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
		    "fill=\"#000\" fill-opacity=\"%s\"/>\n", qa, top, qb - qa, pl->h,
		    i % 2 ? "0.03" : "0.06");
	}
	if (p->zero_line && !y->log && y->d0 <= 0 && y->d1 >= 0)
		put_line(s, x0, px(y, 0), x1, px(y, 0), "class=\"zero\" stroke=\"#888\" stroke-width=\"0.8\"");
	/* y = x where the ranges overlap; only a line when both scales agree */
	double lo = fmax(x->d0, y->d0), hi = fmin(x->d1, y->d1);
	if (f->diagonal && x->log == y->log && lo < hi)
		put_line(s, px(x, lo), px(y, lo), px(x, hi), px(y, hi),
			 "class=\"diagonal\" stroke=\"#999\" stroke-dasharray=\"4 3\"");
	for (size_t j = 0; rc == 0 && p->series && j < p->nseries; j++)
		if (series_ok(&p->series[j]))
			rc = draw_series(s, &p->series[j], x, y);
	put(s, "</g>\n");
	if (pl->empty)
		put_text(s, (x0 + x1) / 2, (top + bot) / 2 + 4,
			 "class=\"no-data\" font-size=\"12\" fill=\"#888\" text-anchor=\"middle\"",
			 "no data in view");
	put(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
	    "stroke=\"#333\" stroke-width=\"0.8\"/>\n", x0, top, L->pw, pl->h);
	for (int i = 0; i < y->nt; i++) {
		double q = px(y, y->t[i]);
		cs_fig_fmt_num(y->t[i], y->step, t, sizeof t);
		put_line(s, x0 - 4, q, x0, q, "stroke=\"#333\"");
		put_text(s, x0 - 7, q + 4, "font-size=\"11\" fill=\"#333\" text-anchor=\"end\"", t);
	}
	if (!blank(p->ytitle) && text_w(p->ytitle, 12) > pl->h - 4) {
		/* too long to run up the axis (an expression): a heading at the
		 * panel's top left, on a white ground, so it is read whole */
		put(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"16\" fill=\"#fff\" "
		    "fill-opacity=\"0.85\"/>\n", x0 + 1, top + 1, fmin(text_w(p->ytitle, 11) + 8, L->pw - 2));
		put(s, "<text class=\"axis-title\" x=\"%.2f\" y=\"%.2f\" font-size=\"11\" fill=\"#222\"",
		    x0 + 5, top + 13);
		put_fit(s, p->ytitle, 11, L->pw - 10);
		put(s, ">");
		put_esc(s, p->ytitle);
		put(s, "</text>\n");
	} else if (!blank(p->ytitle)) {
		/* baseline 9 px from the labels: the glyphs, rotated, face left */
		put(s, "<text class=\"axis-title\" transform=\"translate(%.2f,%.2f) rotate(-90)\" "
		    "font-size=\"12\" fill=\"#222\" text-anchor=\"middle\">", x0 - 16 - pl->lw,
		    (top + bot) / 2);
		put_esc(s, p->ytitle);
		put(s, "</text>\n");
	}
	x_ticks(s, f, L, bot, k + 1 == f->npanels);
	put(s, "</g>\n");
	return rc;
}

/* White text on a dark span, near-black on a light one (#rgb or #rrggbb;
 * any other colour counts as light), as seen at opacity 0.75 on white. */
static const char *ink_on(const char *c)
{
	unsigned r, g, b, n = c ? (unsigned)strlen(c) : 0;
	if (n == 4 && sscanf(c, "#%1x%1x%1x", &r, &g, &b) == 3)
		r *= 17, g *= 17, b *= 17;
	else if (n != 7 || sscanf(c, "#%2x%2x%2x", &r, &g, &b) != 3)
		return "#111";
	double lum = 0.299 * r + 0.587 * g + 0.114 * b;
	return 255 - 0.75 * (255 - lum) < 150 ? "#fff" : "#111";
}

static int draw_lanes(svg *s, const cs_fig *f, const lay *L)
{
	int rc = 0;
	const axis *x = &L->x;
	size_t cols = (size_t)L->pw + 2;
	unsigned char *used = calloc(cols, 1);
	char attr[96];
	if (!used) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < f->nlanes; k++) {
		const cs_fig_lane *ln = &f->lanes[k];
		double top = L->lanes_y + (double)k * LANE_PITCH;
		int crowded = ln->n > cols;
		memset(used, 0, cols);
		put(s, "<g class=\"lane\"");
		put_kv(s, "data-label", ln->label);
		put(s, ">\n<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#f5f5f5\"/>\n",
		    L->ml, top, L->pw, LANE_H);
		put_text(s, L->ml - 6, top + 12, "font-size=\"11\" fill=\"#222\" text-anchor=\"end\"",
			 ln->label);
		put(s, "<g clip-path=\"url(#%s-lanes)\">\n", L->id);
		for (size_t i = 0; ln->spans && i < ln->n; i++) {
			const cs_fig_span *sp = &ln->spans[i];
			const char *c = sp->color ? sp->color : ln->color ? ln->color : "#888";
			double a, b;
			if (!in_view(x, sp->x0, sp->x1, &a, &b))
				continue;
			double qa = px(x, fmax(a, x->d0)), qb = fmax(px(x, fmin(b, x->d1)), qa + 1);
			/* a crowded lane keeps one sub-pixel span per column */
			size_t col = (size_t)clampi(qa - L->ml, 0, (int)cols - 1);
			if (qb - qa <= 1 && crowded) {
				if (used[col])
					continue;
				used[col] = 1;
			}
			/* a hairline parts neighbours of one colour; not on a sliver */
			put(s, "<rect class=\"span\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"%s",
			    qa, top, qb - qa, LANE_H,
			    qb - qa >= 3 ? " stroke=\"#fff\" stroke-width=\"0.5\"" : "");
			put_kv(s, "fill", c);
			put(s, " fill-opacity=\"0.75\">");
			if (sp->label) {
				put(s, "<title>");
				put_esc(s, sp->label);
				put(s, "</title>");
			}
			put(s, "</rect>\n");
			if (!blank(sp->label) && text_w(sp->label, 10) + 6 <= qb - qa) {
				snprintf(attr, sizeof attr, "font-size=\"10\" fill=\"%s\" "
					 "text-anchor=\"middle\" pointer-events=\"none\"", ink_on(c));
				put_text(s, (qa + qb) / 2, top + 11.5, attr, sp->label);
			}
		}
		put(s, "</g>\n</g>\n");
	}
out:
	free(used);
	return rc;
}

int cs_fig_svg(const cs_fig *f, cs_buf *out)
{
	int rc = 0;
	lay L;
	svg s = {out, 0};
	size_t start = out ? out->len : 0;
	memset(&L, 0, sizeof L);
	if (!f || !out || (f->npanels && !f->panels) || (f->nlanes && !f->lanes)) {
		rc = -EINVAL;
		goto out;
	}
	L.p = f->npanels ? calloc(f->npanels, sizeof *L.p) : NULL;
	if (f->npanels && !L.p) {
		rc = -ENOMEM;
		goto out;
	}
	rc = layout(f, &L);
	if (rc)
		goto out;

	put(&s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
	    "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"" FONT "\">\n"
	    "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n<defs>\n",
	    L.W, L.H, L.W, L.H, L.W, L.H);
	for (size_t k = 0; k < f->npanels; k++)
		put(&s, "<clipPath id=\"%s-p%zu\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\"/></clipPath>\n", L.id, k, L.ml, L.p[k].top, L.pw, L.p[k].h);
	if (f->nlanes)
		put(&s, "<clipPath id=\"%s-lanes\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\"/></clipPath>\n", L.id, L.ml, L.lanes_y, L.pw,
		    (double)f->nlanes * LANE_PITCH);
	put(&s, "</defs>\n");
	if (!blank(f->title)) {
		/* centred on the plot, or on the figure when wider than the plot */
		int wide = text_w(f->title, 15) * 1.1 > L.pw;
		put(&s, "<text x=\"%.2f\" y=\"%.2f\" class=\"title\" font-size=\"15\" "
		    "font-weight=\"bold\" fill=\"#111\" text-anchor=\"middle\"",
		    wide ? L.W / 2 : L.ml + L.pw / 2, L.title_y);
		put_fit(&s, f->title, 15 * 1.1, L.W - 16);
		put(&s, ">");
		put_esc(&s, f->title);
		put(&s, "</text>\n");
	}
	if (L.nleg) {
		put(&s, "<g class=\"legend\">\n");
		legend(&s, &L, L.legend_y);
		put(&s, "</g>\n");
	}
	for (size_t k = 0; rc == 0 && k < f->npanels; k++)
		rc = draw_panel(&s, f, &L, k);
	if (rc == 0 && !f->npanels) { /* no panel: a bare x axis */
		put_line(&s, L.ml, L.xaxis_y, L.ml + L.pw, L.xaxis_y, "stroke=\"#333\"");
		x_ticks(&s, f, &L, L.xaxis_y, 1);
	}
	if (!blank(L.xtitle))
		put_text(&s, L.ml + L.pw / 2, L.xtitle_y, "class=\"axis-title\" font-size=\"12\" "
			 "fill=\"#222\" text-anchor=\"middle\"", L.xtitle);
	if (rc == 0 && f->nlanes)
		rc = draw_lanes(&s, f, &L);
	if (!blank(f->caption)) {
		put(&s, "<text x=\"8\" y=\"%.2f\" class=\"caption\" font-size=\"11\" fill=\"#555\"",
		    L.caption_y);
		put_fit(&s, f->caption, 11, L.W - 16);
		put(&s, ">");
		put_esc(&s, f->caption);
		put(&s, "</text>\n");
	}
	put(&s, "</svg>\n");
	if (rc == 0)
		rc = s.err;
out:
	if (rc && out)
		out->len = start; /* nothing half-written is left behind */
	free(L.leg);
	free(L.p);
	return rc;
}
