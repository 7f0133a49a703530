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
#include "fig_int.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- layout ---- */

typedef struct panel_lay {
	axis y;
	double top, h;
	double lw;  /* widest tick label */
	int empty;  /* no finite value in view */
	int heading; /* the y title is too long to run up the axis: it is a
			heading in room of its own above the plot area */
} panel_lay;

#define HEADING_ROOM 17.0

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
	if (!fig_usable(x->log, e0) || !fig_usable(x->log, e1))
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
	if (f->xmin < f->xmax && isfinite(f->xmax - f->xmin) && fig_usable(log, f->xmin)) {
		x->log = log;
		x->d0 = f->xmin;
		x->d1 = f->xmax;
		return;
	}
	for (size_t k = 0; k < f->npanels; k++)
		for (size_t j = 0; f->panels[k].series && j < f->panels[k].nseries; j++) {
			const cs_fig_series *se = &f->panels[k].series[j];
			for (size_t i = 0; series_ok(se) && i < se->n; i++) {
				fig_grow(&r, log, se->x0[i]);
				fig_grow(&r, log, end_of(se, i));
				if (se->xlo && se->xhi) {
					fig_grow(&r, log, se->xlo[i]);
					fig_grow(&r, log, se->xhi[i]);
				}
				if (f->square && f->xkind == CS_FIG_X_PLAIN)
					fig_grow(&r, log && f->panels[k].ylog, se->y[i]);
			}
		}
	for (size_t k = 0; k < f->nlanes; k++)
		for (size_t i = 0; f->lanes[k].spans && i < f->lanes[k].n; i++) {
			fig_grow(&r, log, f->lanes[k].spans[i].x0);
			fig_grow(&r, log, f->lanes[k].spans[i].x1);
		}
	for (size_t i = 0; f->shade.x0 && f->shade.x1 && i < f->shade.n; i++) {
		fig_grow(&r, log, f->shade.x0[i]);
		fig_grow(&r, log, f->shade.x1[i]);
	}
	/* time runs edge to edge; a value axis breathes as matplotlib's does */
	double pad = f->xkind == CS_FIG_X_PLAIN ? 0.05 : 0;
	fig_settle(x, r, log, pad, pad);
}

/* The y range of a panel over the samples whose x overlaps the view. */
static void fit_y(const cs_fig_panel *p, const axis *x, int square, panel_lay *pl)
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
			if (fig_usable(log, se->y[i])) {
				pl->empty = 0;
				bars |= se->style == CS_FIG_BARS;
			}
			fig_grow(&r, log, se->y[i]);
			if (square) {
				fig_grow(&r, log, se->x0[i]);
				if (se->xlo && se->xhi) {
					fig_grow(&r, log, se->xlo[i]);
					fig_grow(&r, log, se->xhi[i]);
				}
			}
			if (se->lo && se->hi) {
				fig_grow(&r, log, se->lo[i]);
				fig_grow(&r, log, se->hi[i]);
			}
		}
	}
	if (!log && r.any && (r.lo >= 0 || bars)) { /* counters and bars start at 0 */
		r.lo = fmin(r.lo, 0);
		r.hi = fmax(r.hi, 0);
	}
	fig_settle(&pl->y, r, log, !log && r.any && r.lo == 0 ? 0 : 0.05, 0.05);
}

/* A series' presentation attributes: on its group and its legend sample. */
static void put_style(svg *s, const cs_fig_series *se)
{
	const char *c = se->color ? se->color : "#444";
	if (se->style == CS_FIG_POINTS) {
		fig_put_kv(s, "fill", c);
		fig_put(s, " stroke=\"none\"");
		return;
	}
	if (se->style == CS_FIG_BARS) {
		fig_put_kv(s, "fill", c);
		fig_put(s, " fill-opacity=\"0.55\" stroke-width=\"1\"");
	} else {
		fig_put(s, " fill=\"none\" stroke-width=\"%.2f\"", stroke_w(se));
	}
	fig_put_kv(s, "stroke", c);
	fig_put(s, " stroke-linejoin=\"round\"");
	if (!fig_blank(se->dash))
		fig_put_kv(s, "stroke-dasharray", se->dash);
}

/* Lays out the legend from y0 and, given s, draws it; returns its rows. */
static int legend(svg *s, const lay *L, double y0)
{
	double x = L->ml, y = y0 + 12;
	int rows = L->nleg ? 1 : 0;
	for (size_t i = 0; L->leg && i < L->nleg; i++) {
		const cs_fig_series *se = L->leg[i];
		double w = 28 + fig_text_w(se->label, 11) + 20;
		if (x > L->ml && x + w > L->W - L->mr) {
			x = L->ml;
			y += LEGEND_ROW;
			rows++;
		}
		if (s) {
			fig_put(s, "<g class=\"legend-entry\"");
			put_style(s, se);
			if (se->style == CS_FIG_BARS)
				fig_put(s, "><rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"10\"/>", x + 4, y - 9);
			else if (se->style == CS_FIG_POINTS)
				fig_put(s, "><circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\"/>", x + 11, y - 4);
			else
				fig_put(s, "><path d=\"M%.2f,%.2f h22\"/>", x, y - 4);
			fig_put_text(s, x + 28, y, "font-size=\"11\" fill=\"#222\" fill-opacity=\"1\" "
				 "stroke=\"none\"", se->label);
			fig_put(s, "</g>\n");
		}
		x += w;
	}
	return rows;
}

/* Captions wrap at spaces to the figure's width (an estimated 0.62 em a
 * character, wider than fig_text_w's, so a line never runs out), each
 * line CAPTION_LEAD below the last. */
#define CAPTION_LEAD 14.0
#define CAPTION_MAX_LINES 12

/* The number of lines t takes at font size fs within max px; with ends,
 * the offset where each line ends (at most cap of them). */
static size_t wrap(const char *t, double fs, double max, size_t *ends, size_t cap)
{
	size_t per = (size_t)fmax(20, max / (0.62 * fs)), n = 0, len = strlen(t), at = 0;
	while (at < len) {
		size_t end = len;
		if (len - at > per) {
			end = at + per;
			size_t sp = end;
			while (sp > at && t[sp] != ' ')
				sp--;
			if (sp > at)
				end = sp;
			/* (a UTF-8 sequence is not split) */
			while (end > at && ((unsigned char)t[end] & 0xc0) == 0x80)
				end--;
		}
		if (ends && n < cap)
			ends[n] = end;
		n++;
		at = end;
		while (at < len && t[at] == ' ')
			at++;
	}
	return n > CAPTION_MAX_LINES ? CAPTION_MAX_LINES : n;
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
		fit_y(p, &L->x, f->square && f->xkind == CS_FIG_X_PLAIN && p->ylog == f->xlog, pl);
		fig_make_ticks(&pl->y, fig_clampi(pl->h / 50, 3, 6));
		for (int i = 0; i < pl->y.nt; i++) {
			cs_fig_fmt_num(pl->y.t[i], pl->y.step, t, sizeof t);
			pl->lw = fmax(pl->lw, fig_text_w(t, 11));
		}
		L->ml = fmax(L->ml, pl->lw + (fig_blank(p->ytitle) ? 12 : 30));
		total += p->series ? p->nseries : 0;
	}
	for (size_t k = 0; k < f->nlanes; k++)
		L->ml = fmax(L->ml, fig_text_w(f->lanes[k].label, 11) + 12);
	L->ml = ceil(L->ml);
	L->W = fmax(L->W, L->ml + L->mr + 60); /* too narrow to draw in: widen */
	L->pw = L->W - L->ml - L->mr;
	L->x.p0 = L->ml;
	L->x.p1 = L->ml + L->pw;
	fig_make_ticks(&L->x, fig_clampi(L->pw / 120, 4, 8));

	total += f->keys ? f->nkeys : 0;
	L->leg = total ? calloc(total, sizeof *L->leg) : NULL;
	if (total && !L->leg) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < f->npanels; k++)
		for (size_t j = 0; f->panels[k].series && j < f->panels[k].nseries; j++) {
			const cs_fig_series *se = &f->panels[k].series[j];
			size_t i = 0;
			while (!fig_blank(se->label) && i < L->nleg && strcmp(L->leg[i]->label, se->label))
				i++;
			if (!fig_blank(se->label) && i == L->nleg)
				L->leg[L->nleg++] = se;
		}
	for (size_t k = 0; f->keys && k < f->nkeys; k++)
		if (!fig_blank(f->keys[k].label))
			L->leg[L->nleg++] = &f->keys[k];

	/* top to bottom */
	double y = 8;
	L->title_y = y + 16;
	y += fig_blank(f->title) ? 0 : 26;
	L->legend_y = y;
	y += L->nleg ? legend(NULL, L, y) * LEGEND_ROW + 6 : 0;
	for (size_t k = 0; k < f->npanels; k++) {
		const char *yt = f->panels[k].ytitle;
		L->p[k].heading = !fig_blank(yt) && fig_text_w(yt, 12) > L->p[k].h - 4;
		y += L->p[k].heading ? HEADING_ROOM : 0; /* never over the data */
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
	y += fig_blank(L->xtitle) ? 22 : 40;
	if (f->npanels && f->nlanes) {
		L->lanes_y = y + 6;
		y = L->lanes_y + (double)f->nlanes * LANE_PITCH;
	}
	L->caption_y = y + 16;
	size_t cl = fig_blank(f->caption) ? 0 : wrap(f->caption, 11, L->W - 16, NULL, 0);
	L->H = ceil(y + (cl ? 22 + CAPTION_LEAD * (double)(cl - 1) : 0) + 6);

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
		fig_put(w->s, "<path d=\"M");
		for (size_t i = 0; i < a->n; i++)
			fig_put(w->s, "%s%.2f,%.2f", i ? " " : "", a->v[i].x, a->v[i].y);
		for (size_t i = w->fill ? b->n : 0; i-- > 0;)
			fig_put(w->s, " %.2f,%.2f", b->v[i].x, b->v[i].y);
		fig_put(w->s, "%s\"", w->fill ? "Z" : "");
		if (w->fill) {
			fig_put_kv(w->s, "fill", w->fill);
			fig_put(w->s, " fill-opacity=\"0.15\" stroke=\"none\"");
		}
		fig_put(w->s, "/>\n");
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
		int ok = held(se) ? in_view(x, a, end_of(se, i), &a, &b) : fig_usable(x->log, a);
		for (int k = 0; k < w->nv; k++)
			ok = ok && fig_usable(y->log, v[k][i]);
		if (!ok) {
			walk_end(w);
			run = 0;
			continue;
		}
		for (int k = 0; k < w->nv; k++)
			q[k] = fig_px(y, v[k][i]);
		if (held(se)) {
			/* held values: flat over the interval, joined vertically to a
			 * touching neighbour, broken by a gap */
			if (run && a - prev_b > fmax(tol_view, 4 * DBL_EPSILON * fabs(prev_b)))
				walk_end(w);
			double qa = fig_px(x, fmax(a, x->d0)), qb = fig_px(x, fmin(b, x->d1));
			for (int k = 0; k < w->nv; k++) {
				m4_add(&w->m[k], qa, q[k]);
				m4_add(&w->m[k], qb, q[k]);
			}
			prev_b = b;
			run = 1;
			continue;
		}
		/* points: straight segments, clipped to the view in x */
		double qx = fig_px(x, a), x0 = prev[0], dx = qx - x0;
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
	fig_put(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n", x0, y0,
	    fmax(1, x1 - x0), y1 - y0);
}

/* Bars from the axis' zero (its bottom on log); those narrower than a
 * pixel merge per column into their envelope. */
static void draw_bars(svg *s, const cs_fig_series *se, const axis *x, const axis *y)
{
	double base = y->log ? y->p0 : fig_px(y, fmin(fmax(0, y->d0), y->d1));
	double g[4] = {0, 0, 0, 0}; /* the merged column: left, top, right, bottom */
	int open = 0;
	for (size_t i = 0; i < se->n; i++) {
		double a, b;
		if (!in_view(x, se->x0[i], end_of(se, i), &a, &b) || !fig_usable(y->log, se->y[i]))
			continue;
		double q = fig_px(y, se->y[i]), r[4] = {fig_px(x, fmax(a, x->d0)), fmin(q, base),
						    fig_px(x, fmin(b, x->d1)), fmax(q, base)};
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
	char whisker[96];
	snprintf(whisker, sizeof whisker, "class=\"whisker\" stroke=\"%s\" stroke-width=\"1.2\"",
		 se->color && !strpbrk(se->color, "\"<>&") ? se->color : "#444");
	for (size_t i = 0; i < se->n; i++) {
		double a = se->x0[i];
		if (!fig_usable(x->log, a) || !fig_usable(y->log, se->y[i]) || a < x->d0 || a > x->d1)
			continue;
		double qx = fig_px(x, a), qy = fig_px(y, se->y[i]);
		const char *label = se->labels ? se->labels[i] : NULL;
		if (seen && fig_blank(label)) {
			size_t c = (size_t)fig_clampi((qx - x->p0) / 2, 0, cols - 1) +
				   (size_t)fig_clampi((qy - y->p1) / 2, 0, rows - 1) * (size_t)cols;
			if (seen[c])
				continue;
			seen[c] = 1;
		}
		if (se->xlo && se->xhi && fig_usable(x->log, se->xlo[i]) &&
		    fig_usable(x->log, se->xhi[i]) && se->xlo[i] < se->xhi[i])
			fig_put_line(s, fig_px(x, fmax(se->xlo[i], x->d0)), qy,
				     fig_px(x, fmin(se->xhi[i], x->d1)), qy, whisker);
		const char *hover = se->hover ? se->hover[i] : NULL;
		if (fig_blank(hover)) {
			fig_put(s, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\"/>\n", qx, qy);
		} else {
			fig_put(s, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" data-i=\"%zu\">", qx, qy, i);
			fig_put_title(s, hover);
			fig_put(s, "</circle>\n");
		}
		if (!fig_blank(label))
			fig_put_text(s, qx + 5, qy - 5, "font-size=\"10\" fill=\"#333\"", label);
	}
out:
	free(seen);
	return rc;
}

static int draw_series(svg *s, const cs_fig_series *se, size_t j, const axis *x, const axis *y)
{
	int rc = 0;
	walk w = {.s = s, .x = x, .y = y};
	fig_put(s, "<g class=\"series\"");
	fig_put_kv(s, "data-label", se->label);
	if (se->hover) /* its place in the panel, for a page's clicks */
		fig_put(s, " data-s=\"%zu\"", j);
	put_style(s, se);
	fig_put(s, ">\n");
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
	fig_put(s, "</g>\n");
	free(w.m[0].out.v);
	free(w.m[1].out.v);
	return rc;
}

/* ---- panels, axes, lanes ---- */

static void x_ticks(svg *s, const cs_fig *f, const lay *L, double yb, int labels)
{
	char t[64], attr[96];
	for (int i = 0; i < L->x.nt; i++) {
		double q = fig_px(&L->x, L->x.origin + L->x.t[i]);
		fig_put_line(s, q, yb, q, yb + 4, "stroke=\"#333\"");
		if (!labels)
			continue;
		if (f->xkind == CS_FIG_X_NS)
			cs_fig_fmt_time(L->x.t[i], L->x.step, t, sizeof t);
		else
			cs_fig_fmt_num(L->x.t[i], L->x.step, t, sizeof t);
		/* keep the end labels inside the figure */
		double w = fig_text_w(t, 11);
		snprintf(attr, sizeof attr, "font-size=\"11\" fill=\"#333\" text-anchor=\"%s\"",
			 q + w / 2 > L->W - 2 ? "end" : q - w / 2 < 2 ? "start" : "middle");
		fig_put_text(s, q, yb + 15, attr, t);
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
	fig_put(s, "<g class=\"panel\">\n");
	for (int i = 0; i < y->nt; i++)
		fig_put_line(s, x0, fig_px(y, y->t[i]), x1, fig_px(y, y->t[i]), "stroke=\"" GRID "\"");
	for (int i = 0; i < x->nt; i++) {
		double q = fig_px(x, x->origin + x->t[i]);
		fig_put_line(s, q, top, q, bot, "stroke=\"" GRID "\"");
	}
	fig_put(s, "<g clip-path=\"url(#%s-p%zu)\">\n", L->id, k);
	for (size_t i = 0; f->shade.x0 && f->shade.x1 && i < f->shade.n; i++) {
		double a, b;
		if (!in_view(x, f->shade.x0[i], f->shade.x1[i], &a, &b))
			continue;
		double qa = fig_px(x, fmax(a, x->d0)), qb = fig_px(x, fmin(b, x->d1));
		if (f->shade.color && !f->shade.color[i])
			continue;
		fig_put(s, "<rect class=\"shade\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"",
		    qa, top, qb - qa, pl->h);
		fig_put_kv(s, "fill", f->shade.color ? f->shade.color[i] : "#000");
		fig_put(s, " fill-opacity=\"%s\"/>\n", f->shade.color ? "0.14" : i % 2 ? "0.03" : "0.06");
	}
	if (p->zero_line && !y->log && y->d0 <= 0 && y->d1 >= 0)
		fig_put_line(s, x0, fig_px(y, 0), x1, fig_px(y, 0), "class=\"zero\" stroke=\"#888\" stroke-width=\"0.8\"");
	/* y = x where the ranges overlap; only a line when both scales agree */
	double lo = fmax(x->d0, y->d0), hi = fmin(x->d1, y->d1);
	if (f->diagonal && x->log == y->log && lo < hi)
		fig_put_line(s, fig_px(x, lo), fig_px(y, lo), fig_px(x, hi), fig_px(y, hi),
			 "class=\"diagonal\" stroke=\"#999\" stroke-dasharray=\"4 3\"");
	for (int sgn = -1; f->diagonal && f->band_pct > 0 && f->band_pct < 100 && x->log == y->log &&
			   sgn <= 1; sgn += 2) {
		/* y = x (1 + sgn p): where it crosses the panel */
		double g = 1 + sgn * f->band_pct / 100;
		double a = fmax(x->d0, y->d0 / g), b = fmin(x->d1, y->d1 / g);
		if (a < b)
			fig_put_line(s, fig_px(x, a), fig_px(y, a * g), fig_px(x, b), fig_px(y, b * g),
				 "class=\"band\" stroke=\"#bbb\" stroke-dasharray=\"1 3\"");
	}
	for (size_t j = 0; rc == 0 && p->series && j < p->nseries; j++)
		if (series_ok(&p->series[j]))
			rc = draw_series(s, &p->series[j], j, x, y);
	fig_put(s, "</g>\n");
	if (pl->empty)
		fig_put_text(s, (x0 + x1) / 2, (top + bot) / 2 + 4,
			 "class=\"no-data\" font-size=\"12\" fill=\"#888\" text-anchor=\"middle\"",
			 "no data in view");
	fig_put(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
	    "stroke=\"#333\" stroke-width=\"0.8\"/>\n", x0, top, L->pw, pl->h);
	for (int i = 0; i < y->nt; i++) {
		double q = fig_px(y, y->t[i]);
		cs_fig_fmt_num(y->t[i], y->step, t, sizeof t);
		fig_put_line(s, x0 - 4, q, x0, q, "stroke=\"#333\"");
		fig_put_text(s, x0 - 7, q + 4, "font-size=\"11\" fill=\"#333\" text-anchor=\"end\"", t);
	}
	if (pl->heading) {
		/* too long to run up the axis (an expression): a heading in its
		 * own room above the plot area, so it is read whole and hides
		 * nothing */
		fig_put(s, "<text class=\"axis-title\" x=\"%.2f\" y=\"%.2f\" font-size=\"11\" fill=\"#222\"",
		    x0 + 1, top - 5);
		fig_put_fit(s, p->ytitle, 11, L->pw - 10);
		fig_put(s, ">");
		fig_put_esc(s, p->ytitle);
		fig_put(s, "</text>\n");
	} else if (!fig_blank(p->ytitle)) {
		/* baseline 9 px from the labels: the glyphs, rotated, face left */
		fig_put(s, "<text class=\"axis-title\" transform=\"translate(%.2f,%.2f) rotate(-90)\" "
		    "font-size=\"12\" fill=\"#222\" text-anchor=\"middle\">", x0 - 16 - pl->lw,
		    (top + bot) / 2);
		fig_put_esc(s, p->ytitle);
		fig_put(s, "</text>\n");
	}
	x_ticks(s, f, L, bot, k + 1 == f->npanels);
	fig_put(s, "</g>\n");
	return rc;
}

/* A span's label in width px at 10 px: whole, or its head with an
 * ellipsis (cut between UTF-8 characters, into out) when at least three
 * characters of it fit; NULL when not even that does. */
static const char *fit_label(const char *label, double width, char *out, size_t outlen)
{
	if (fig_blank(label))
		return NULL;
	if (fig_text_w(label, 10) <= width)
		return label;
	size_t n = strlen(label);
	if (n >= outlen - 4)
		n = outlen - 4;
	while (n > 0) {
		while (n > 0 && ((unsigned char)label[n] & 0xC0) == 0x80)
			n--; /* not inside a character */
		snprintf(out, outlen, "%.*s\u2026", (int)n, label);
		if (fig_text_w(out, 10) <= width)
			return n >= 3 ? out : NULL;
		n--;
	}
	return NULL;
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
		fig_put(s, "<g class=\"lane\"");
		fig_put_kv(s, "data-label", ln->label);
		fig_put(s, ">\n<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#f5f5f5\"/>\n",
		    L->ml, top, L->pw, LANE_H);
		fig_put_text(s, L->ml - 6, top + 12, "font-size=\"11\" fill=\"#222\" text-anchor=\"end\"",
			 ln->label);
		fig_put(s, "<g clip-path=\"url(#%s-lanes)\">\n", L->id);
		for (size_t i = 0; ln->spans && i < ln->n; i++) {
			const cs_fig_span *sp = &ln->spans[i];
			const char *c = sp->color ? sp->color : ln->color ? ln->color : "#888";
			double a, b;
			if (!in_view(x, sp->x0, sp->x1, &a, &b))
				continue;
			double qa = fig_px(x, fmax(a, x->d0)), qb = fmax(fig_px(x, fmin(b, x->d1)), qa + 1);
			/* a crowded lane keeps one sub-pixel span per column */
			size_t col = (size_t)fig_clampi(qa - L->ml, 0, (int)cols - 1);
			if (qb - qa <= 1 && crowded) {
				if (used[col])
					continue;
				used[col] = 1;
			}
			/* a hairline parts neighbours of one colour; not on a sliver */
			fig_put(s, "<rect class=\"span\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"%s",
			    qa, top, qb - qa, LANE_H,
			    qb - qa >= 3 ? " stroke=\"#fff\" stroke-width=\"0.5\"" : "");
			fig_put_kv(s, "fill", c);
			fig_put(s, " fill-opacity=\"0.75\">");
			fig_put_title(s, sp->label);
			fig_put(s, "</rect>\n");
			char cut[256];
			const char *text = fit_label(sp->label, qb - qa - 6, cut, sizeof cut);
			if (text) {
				snprintf(attr, sizeof attr, "font-size=\"10\" fill=\"%s\" "
					 "text-anchor=\"middle\" pointer-events=\"none\"", ink_on(c));
				fig_put_text(s, (qa + qb) / 2, top + 11.5, attr, text);
			}
		}
		fig_put(s, "</g>\n</g>\n");
	}
out:
	free(used);
	return rc;
}

/* The links between lanes, over them, clipped to the lanes' area. */
static void draw_links(svg *s, const cs_fig *f, const lay *L)
{
	const axis *x = &L->x;
	fig_put(s, "<g class=\"links\" clip-path=\"url(#%s-lanes)\">\n", L->id);
	for (size_t i = 0; i < f->nlinks; i++) {
		const cs_fig_link *k = &f->links[i];
		if (k->lane_a >= f->nlanes || k->lane_b >= f->nlanes ||
		    k->span_a >= f->lanes[k->lane_a].n || k->span_b >= f->lanes[k->lane_b].n)
			continue;
		const cs_fig_span *a = &f->lanes[k->lane_a].spans[k->span_a];
		const cs_fig_span *b = &f->lanes[k->lane_b].spans[k->span_b];
		double xa = fig_px(x, (a->x0 + a->x1) / 2), xb = fig_px(x, (b->x0 + b->x1) / 2);
		double ya = L->lanes_y + (double)k->lane_a * LANE_PITCH + LANE_H;
		double yb = L->lanes_y + (double)k->lane_b * LANE_PITCH;
		if (!isfinite(xa) || !isfinite(xb))
			continue;
		fig_put(s, "<line class=\"link\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
			   "stroke-width=\"1.5\"", xa, ya, xb, yb);
		fig_put_kv(s, "stroke", k->color ? k->color : "#888");
		fig_put(s, ">");
		fig_put_title(s, k->label);
		fig_put(s, "</line>\n");
	}
	fig_put(s, "</g>\n");
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

	fig_put(&s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
	    "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"" FONT "\">\n"
	    "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n<defs>\n",
	    L.W, L.H, L.W, L.H, L.W, L.H);
	for (size_t k = 0; k < f->npanels; k++)
		fig_put(&s, "<clipPath id=\"%s-p%zu\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\"/></clipPath>\n", L.id, k, L.ml, L.p[k].top, L.pw, L.p[k].h);
	if (f->nlanes)
		fig_put(&s, "<clipPath id=\"%s-lanes\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		    "height=\"%.2f\"/></clipPath>\n", L.id, L.ml, L.lanes_y, L.pw,
		    (double)f->nlanes * LANE_PITCH);
	fig_put(&s, "</defs>\n");
	if (!fig_blank(f->title)) {
		/* centred on the plot, or on the figure when wider than the plot */
		int wide = fig_text_w(f->title, 15) * 1.1 > L.pw;
		fig_put(&s, "<text x=\"%.2f\" y=\"%.2f\" class=\"title\" font-size=\"15\" "
		    "font-weight=\"bold\" fill=\"#111\" text-anchor=\"middle\"",
		    wide ? L.W / 2 : L.ml + L.pw / 2, L.title_y);
		fig_put_fit(&s, f->title, 15 * 1.1, L.W - 16);
		fig_put(&s, ">");
		fig_put_esc(&s, f->title);
		fig_put(&s, "</text>\n");
	}
	if (L.nleg) {
		fig_put(&s, "<g class=\"legend\">\n");
		legend(&s, &L, L.legend_y);
		fig_put(&s, "</g>\n");
	}
	for (size_t k = 0; rc == 0 && k < f->npanels; k++)
		rc = draw_panel(&s, f, &L, k);
	if (rc == 0 && !f->npanels) { /* no panel: a bare x axis */
		fig_put_line(&s, L.ml, L.xaxis_y, L.ml + L.pw, L.xaxis_y, "stroke=\"#333\"");
		x_ticks(&s, f, &L, L.xaxis_y, 1);
	}
	if (!fig_blank(L.xtitle))
		fig_put_text(&s, L.ml + L.pw / 2, L.xtitle_y, "class=\"axis-title\" font-size=\"12\" "
			 "fill=\"#222\" text-anchor=\"middle\"", L.xtitle);
	if (rc == 0 && f->nlanes)
		rc = draw_lanes(&s, f, &L);
	if (rc == 0 && f->nlinks && f->nlanes)
		draw_links(&s, f, &L);
	if (!fig_blank(f->caption)) {
		/* as many lines as it takes: never squeezed, never cut */
		size_t ends[CAPTION_MAX_LINES];
		size_t n = wrap(f->caption, 11, L.W - 16, ends, CAPTION_MAX_LINES);
		fig_put(&s, "<text x=\"8\" y=\"%.2f\" class=\"caption\" font-size=\"11\" fill=\"#555\">",
		    L.caption_y);
		for (size_t i = 0, at = 0; i < n && i < CAPTION_MAX_LINES; i++) {
			char line[1024];
			size_t len = ends[i] - at;
			while (len && f->caption[at] == ' ')
				at++, len--;
			/* the space a line broke at ends it: the text reads whole when
			 * copied or extracted */
			len += f->caption[at + len] == ' ';
			snprintf(line, sizeof line, "%.*s", (int)len, f->caption + at);
			fig_put(&s, "<tspan x=\"8\" dy=\"%.1f\">", i ? CAPTION_LEAD : 0.0);
			fig_put_esc(&s, line);
			fig_put(&s, "</tspan>");
			at = ends[i];
		}
		fig_put(&s, "</text>\n");
	}
	fig_put(&s, "</svg>\n");
	if (rc == 0)
		rc = s.err;
out:
	if (rc && out)
		out->len = start; /* nothing half-written is left behind */
	free(L.leg);
	free(L.p);
	return rc;
}

int cs_fig_grid(const cs_fig *f, size_t n, size_t cols, const char *title, cs_buf *out)
{
	if (!out || (n && !f))
		return -EINVAL;
	size_t start = out->len;
	cols = cols ? cols : 1;
	cs_buf *one = calloc(n + 1, sizeof *one);
	double *w = calloc(n + 1, sizeof *w), *h = calloc(n + 1, sizeof *h);
	int rc = one && w && h ? 0 : -ENOMEM;
	/* each figure alone, its size read back from its own root element */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if ((rc = cs_fig_svg(&f[i], &one[i])) < 0 || cs_buf_append(&one[i], "", 1) < 0) {
			rc = rc < 0 ? rc : -ENOMEM;
			break;
		}
		const char *root = strstr((const char *)one[i].data, "<svg ");
		const char *wa = root ? strstr(root, " width=\"") : NULL, *ha = root ? strstr(root, " height=\"") : NULL;
		w[i] = wa ? strtod(wa + 8, NULL) : 0;
		h[i] = ha ? strtod(ha + 9, NULL) : 0;
	}
	double top = fig_blank(title) ? 0 : 30, W = 0, H = top;
	size_t rows = (n + cols - 1) / cols;
	double *rh = calloc(rows + 1, sizeof *rh), *cw = calloc(cols + 1, sizeof *cw);
	if (rc == 0 && (!rh || !cw))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		rh[i / cols] = fmax(rh[i / cols], h[i]);
		cw[i % cols] = fmax(cw[i % cols], w[i]);
	}
	for (size_t c = 0; rc == 0 && c < cols; c++)
		W += cw[c];
	for (size_t r = 0; rc == 0 && r < rows; r++)
		H += rh[r];
	svg s = {.b = out};
	if (rc == 0) {
		fig_put(&s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		    "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"" FONT "\">\n"
		    "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
		    W, H, W, H, W, H);
		if (!fig_blank(title)) {
			fig_put(&s, "<text x=\"%.2f\" y=\"21\" class=\"title\" font-size=\"16\" "
			    "font-weight=\"bold\" fill=\"#111\" text-anchor=\"middle\"", W / 2);
			fig_put_fit(&s, title, 16 * 1.1, W - 16);
			fig_put(&s, ">");
			fig_put_esc(&s, title);
			fig_put(&s, "</text>\n");
		}
	}
	double y = top;
	for (size_t r = 0; rc == 0 && r < rows; r++) {
		double x = 0;
		for (size_t c = 0; c < cols && r * cols + c < n; c++) {
			size_t i = r * cols + c;
			/* the figure without its XML declaration, placed by its root */
			const char *root = strstr((const char *)one[i].data, "<svg ");
			fig_put(&s, "<svg x=\"%.0f\" y=\"%.0f\"", x, y);
			const char *body = root ? root + 4 : "/>\n";
			if (cs_buf_append(out, body, strlen(body)) < 0)
				s.err = -ENOMEM;
			x += cw[c];
		}
		y += rh[r];
	}
	if (rc == 0)
		fig_put(&s, "</svg>\n");
	if (rc == 0)
		rc = s.err;
	for (size_t i = 0; one && i < n; i++)
		cs_buf_free(&one[i]);
	free(one), free(w), free(h), free(rh), free(cw);
	if (rc)
		out->len = start;
	return rc;
}
