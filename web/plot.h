/*
 * plot.h - a run's figure as SVG (cs_plot_*): the metrics and expressions
 * of a window, one panel each on a shared time axis, bucket means as steps
 * with their min/max band (or, few enough samples in view, every sample
 * held over its own interval), and the run's ranges in lanes under them.
 * `cyclescope plot` and GET /api/v1/runs/{run}/plot.svg (the UI's SVG and
 * PNG buttons) both draw through it, so the figures are the same.
 */
#ifndef CS_PLOT_H
#define CS_PLOT_H

#include <stdint.h>

#include "buf.h"
#include "store.h"

/* The most panels (metrics and expressions) one figure draws. */
#define CS_PLOT_MAX_SERIES 32

typedef struct cs_plot_req {
	const char *run;     /* id, name or uuid */
	const char *metrics; /* comma-separated; NULL with exprs NULL = the run's
				default metrics (cs_plot_defaults) */
	const char *exprs;   /* ';'-separated expressions; NULL = none */
	int have_device;
	uint32_t device;
	uint64_t from, to;   /* run time units */
	int have_from, have_to;
	uint32_t buckets;    /* 0 = 1000 */
	const char *rate;    /* NULL/"sample", "second", "cycle": counters as
				rates over each sample's own length */
	const char *ranges;  /* NULL/"" = every kind, "none", or kinds
				comma-separated ("kernel,nvtx") */
	double width;        /* px; 0 = 960 */
	const char *a, *b;   /* with both: the overlap phases of A and B
				([KIND:]GLOB, docs/phases.md) shaded behind
				every panel; NULL = none */
} cs_plot_req;

/* Appends the SVG to out. 0, or -1 with *status (400 bad parameter, 404
 * unknown run, 500) and the reason in err naming the parameter. */
int cs_plot_svg(cs_store *s, const cs_plot_req *r, cs_buf *out, int *status, char *err,
		size_t errlen);

/* The metrics a run's plots open on, comma-separated into out ("" when
 * the run has none): the run's metric set when it recorded one
 * (meta.metrics), else the two whose values vary most relative to their
 * size, counted from the chunks' stored aggregates (no value is decoded). */
int cs_plot_defaults(cs_store *s, int64_t run, char *out, size_t outlen);

#endif
