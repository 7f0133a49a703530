/*
 * fig_int.h - what the figure renderer's files share (figure.c draws,
 * fig_svg.c writes SVG text, fig_axis.c scales axes and formats numbers);
 * not part of the public API.
 */
#ifndef CS_FIG_INT_H
#define CS_FIG_INT_H

#include <stddef.h>

#include "figure.h"

#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"
#define GRID "#e6e6e6"
#define MAXT 64      /* ticks on one axis, at most */
#define PX_LIMIT 1e9 /* pixel coordinates are clamped to +-this */
#define LANE_PITCH 20.0
#define LANE_H 16.0
#define LEGEND_ROW 18.0

typedef struct svg {
	cs_buf *b;
	int err; /* the first -ENOMEM; later writes are skipped */
} svg;

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

/* fig_svg.c: SVG text (the first -ENOMEM stops writing) */
void fig_put(svg *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fig_put_esc(svg *s, const char *t);
/* "<title>t</title>" (escaped), or nothing when t is NULL: an element's hover text. */
void fig_put_title(svg *s, const char *t);
void fig_put_kv(svg *s, const char *name, const char *value);
void fig_put_text(svg *s, double x, double y, const char *attr, const char *t);
void fig_put_fit(svg *s, const char *t, double fs, double max);
void fig_put_line(svg *s, double x1, double y1, double x2, double y2, const char *attr);
double fig_text_w(const char *t, double fs);
int fig_blank(const char *t); /* NULL or "" */
int fig_clampi(double v, int lo, int hi);

/* fig_axis.c: data ranges, scales and ticks */
int fig_usable(int log, double v);
void fig_grow(range *r, int log, double v);
void fig_settle(axis *a, range r, int log, double pad_lo, double pad_hi);
double fig_px(const axis *a, double v);
void fig_make_ticks(axis *a, int want);

#endif
