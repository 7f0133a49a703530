/*
 * figure.h - figures as SVG (cs_fig_*): the one renderer behind
 * `cyclescope plot`, GET /api/v1/runs/{run}/plot.svg, the compare page's
 * and the report's figures, so a figure saved from the browser and one
 * drawn by the CLI are the same drawing.
 *
 * A figure is a title, a caption line, one or more panels stacked on one
 * shared x axis, and lanes of labelled spans (kernels, ranges) under the
 * panels on the same x scale. A scatter figure is one panel whose x axis is
 * its own (log or linear) rather than time.
 *
 * Everything is plain data borrowed for the call to cs_fig_svg: the caller
 * builds the arrays, calls once, frees them. No I/O; the output is appended
 * to a cs_buf. Text is XML-escaped here.
 */
#ifndef CS_FIGURE_H
#define CS_FIGURE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* How a series is drawn. */
enum cs_fig_style {
	CS_FIG_STEP,   /* y[i] held over [x0[i], x1[i]): counters, bucket means */
	CS_FIG_BARS,   /* a filled bar from 0 to y[i] over [x0[i], x1[i]): whole kernels */
	CS_FIG_LINE,   /* straight segments through (x0[i], y[i]) */
	CS_FIG_POINTS, /* markers at (x0[i], y[i]), labels[i] beside when set */
};

/* What the x axis counts; it decides tick labels and the axis title. */
enum cs_fig_xkind {
	CS_FIG_X_NS,     /* nanoseconds, shown relative to x_origin in s/ms/µs/ns */
	CS_FIG_X_CYCLES, /* cycles, relative to x_origin, with k/M/G */
	CS_FIG_X_PLAIN,  /* a value axis (scatter): SI-prefixed numbers */
};

typedef struct cs_fig_series {
	const char *label;   /* legend text */
	const char *color;   /* CSS colour, e.g. "#1f77b4" */
	enum cs_fig_style style;
	double width;        /* stroke width in px; 0 = 1.5 */
	const char *dash;    /* SVG stroke-dasharray, e.g. "5 3"; NULL = solid */
	size_t n;
	const double *x0;    /* n interval starts (or x for LINE/POINTS) */
	const double *x1;    /* n interval ends; NULL for LINE/POINTS */
	const double *y;     /* n values; NaN = absent (a gap) */
	const double *lo, *hi; /* optional band (min/max) drawn under the series in
				* its colour at low opacity; NULL = none */
	const char *const *labels; /* POINTS only: n labels or NULL entries; NULL = none */
	const char *const *hover;  /* POINTS only: n texts shown on hover (an SVG
				      <title> per marker, which carries its
				      index as data-i, its series group the
				      series' place in the panel as data-s, for
				      a page's clicks); NULL = none */
	const double *xlo, *xhi;   /* POINTS only: a horizontal whisker from
				      xlo[i] to xhi[i] (spread across repeats);
				      NULL = none */
} cs_fig_series;

typedef struct cs_fig_panel {
	const char *ytitle;  /* axis title with its unit: "lts__t_sectors.sum [l2_sector/s]" */
	int ylog;            /* log10 y scale (non-positive values are skipped) */
	double height;       /* px; 0 = 220 */
	int zero_line;       /* draw a thin line at y = 0 (difference panels) */
	size_t nseries;
	const cs_fig_series *series;
} cs_fig_panel;

typedef struct cs_fig_span {
	double x0, x1;
	const char *label;   /* drawn inside when it fits, and as the SVG <title> */
	const char *color;   /* NULL = the lane's colour */
} cs_fig_span;

typedef struct cs_fig_lane {
	const char *label;   /* left of the lane: "kernel s7", "nvtx" */
	const char *color;   /* default span colour */
	size_t n;
	const cs_fig_span *spans;
} cs_fig_lane;

/* A line from the middle of one lane's span down to the middle of a span
 * of a lane below (a hardware kernel and its simulator match on the compare
 * figure), coloured by how they differ. */
typedef struct cs_fig_link {
	size_t lane_a, span_a, lane_b, span_b;
	const char *color;
	const char *label;   /* the SVG <title>: "sim +12.3% of hw" */
} cs_fig_link;

/* Shaded x intervals behind every panel (kernel boundaries on the compare
 * figure, alternately light and lighter; overlap phases on a run's
 * figure, in their colours), clipped to the plot area. */
typedef struct cs_fig_shade {
	size_t n;
	const double *x0, *x1;
	/* per interval its colour, lightly (NULL entries not drawn); NULL =
	 * the alternating greys */
	const char *const *color;
} cs_fig_shade;

typedef struct cs_fig {
	const char *title;    /* top line */
	const char *caption;  /* one line under the figure: runs, metric, window, bins */
	enum cs_fig_xkind xkind;
	double x_origin;      /* NS/CYCLES: tick labels are x - x_origin */
	const char *xtitle;   /* NULL = derived: "time since run start [ms]", "cycles" */
	int xlog;             /* PLAIN only */
	double xmin, xmax;    /* the x range drawn; xmin >= xmax = fit the data */
	double width;         /* px; 0 = 960 */
	int diagonal;         /* scatter: draw y = x across the panel */
	double band_pct;      /* scatter: with diagonal, y = x (1 +- band_pct/100) too */
	int square;           /* scatter: x and y axes fit the same range (x and y
				 data together), so y = x is the square's diagonal */
	size_t npanels;
	const cs_fig_panel *panels;
	size_t nlanes;
	const cs_fig_lane *lanes;
	size_t nlinks;
	const cs_fig_link *links;
	cs_fig_shade shade;
	/* more legend entries after the series' (the lanes' kernel colours,
	 * as CS_FIG_BARS swatches); drawn only there */
	size_t nkeys;
	const cs_fig_series *keys;
} cs_fig;

/* Appends the figure as one standalone SVG document (XML declaration,
 * width/height in px, viewBox, fonts as generic families) to out. Returns
 * 0 or -ENOMEM. Never fails on the data itself: empty series, all-NaN
 * values, xmin == xmax and huge counts all draw (an empty panel says "no
 * data in view"). */
int cs_fig_svg(const cs_fig *f, cs_buf *out);

/* n figures in one SVG document, cols to a row (each drawn as by
 * cs_fig_svg, nested), under a title line (NULL = none). 0 or -ENOMEM. */
int cs_fig_grid(const cs_fig *f, size_t n, size_t cols, const char *title, cs_buf *out);

/* Tick and number formatting shared by the figures and the UI (app.js
 * follows the same rules; docs/ui.md states them), so an axis reads the
 * same in the browser, the CLI's SVG and the report. Both write at most
 * outlen - 1 bytes, UTF-8.
 *
 * cs_fig_fmt_num: v with an SI prefix chosen by |v| (k, M, G, T at 1e3,
 *   1e6, 1e9, 1e12; plain below 1000; µ and n below 0.001), and as many
 *   decimals as step (the tick spacing; 0 = none given: 3 significant
 *   digits) needs to tell neighbouring ticks apart, never more:
 *   (17545, 5) -> "17.545k", (15000, 5000) -> "15k", (0, 5000) -> "0",
 *   (0.25, 0.05) -> "0.25", (2.5e-6, 0) -> "2.5µ", (1234567, 0) -> "1.23M".
 * cs_fig_fmt_time: ns as s, ms, µs or ns, the unit chosen from step (the
 *   largest unit no more than 100 x step), decimals as for cs_fig_fmt_num
 *   (trailing zeros dropped), a space before the unit: (25000, 50) ->
 *   "25 µs", (25050, 50) -> "25.05 µs", (1.5e6, 5e5) -> "1.5 ms", (2.5e9,
 *   5e8) -> "2.5 s", (120, 2) -> "120 ns", (0, 5e5) -> "0 ms". */
void cs_fig_fmt_num(double v, double step, char *out, size_t outlen);
void cs_fig_fmt_time(double v_ns, double step_ns, char *out, size_t outlen);

#endif
