/*
 * jobfig.c - a job's figure (jobfig.h): the ranks stacked on one time
 * axis, one lane each, drawn from the phases of sim-bridge/jobphases.h.
 * In a rank's lane B (compute) is grey, A where B hides it blue, A exposed
 * (only A) orange, and the straggler's collective red; above the lanes a
 * panel draws each instance's start skew as a bar over the window in
 * which the ranks arrived, so an instance reads across the ranks.
 */
#include "jobfig.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figure.h"
#include "jobphases.h"

#define C_B "#9e9e9e"
#define C_HIDDEN "#1f77b4"
#define C_EXPOSED "#ff7f0e"
#define C_LATE "#d62728"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The window drawn (job-relative ns): [from, to) when asked, else the
 * span of the first max_instances instances by their last start. */
static void window(const cs_jobphases *j, const cs_jobfig_request *rq, double *w0, double *w1,
		   double *origin)
{
	if (rq->have_window) {
		*w0 = *origin = rq->from_abs ? (double)((int64_t)rq->from - j->origin) : (double)rq->from;
		*w1 = rq->to_abs ? (double)((int64_t)rq->to - j->origin) : (double)rq->to;
		return;
	}
	size_t max = rq->max_instances ? rq->max_instances : 20;
	double lo = 0, hi = 1, cut = INFINITY;
	double *starts = malloc((j->ncoll ? j->ncoll : 1) * sizeof *starts);
	if (starts && j->ncoll) {
		for (size_t c = 0; c < j->ncoll; c++)
			starts[c] = j->coll[c].start[j->coll[c].straggler];
		qsort(starts, j->ncoll, sizeof *starts, cmp_double);
		cut = starts[(j->ncoll < max ? j->ncoll : max) - 1];
		lo = INFINITY;
		hi = -INFINITY;
	}
	free(starts);
	for (size_t c = 0; c < j->ncoll; c++) {
		const cs_job_coll *x = &j->coll[c];
		if (x->start[x->straggler] > cut)
			continue;
		for (size_t r = 0; r < j->nranks; r++) {
			if (x->start[r] < lo)
				lo = x->start[r];
			if (x->end[r] > hi)
				hi = x->end[r];
		}
	}
	double pad = (hi - lo) * 0.02;
	*origin = lo;
	*w0 = lo - pad;
	*w1 = hi + pad;
}

static int add_span(cs_fig_span **v, size_t *n, size_t *cap, double x0, double x1,
		    const char *label, const char *color)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		cs_fig_span *g = realloc(*v, c * sizeof *g);
		if (!g)
			return -ENOMEM;
		*v = g;
		*cap = c;
	}
	(*v)[(*n)++] = (cs_fig_span){x0, x1, label, color};
	return 0;
}

int cs_jobfig_svg(cs_store *s, const cs_jobfig_request *rq, cs_buf *out, char *err,
		  size_t errlen)
{
	cs_jobphases j;
	int rc = cs_jobphases_compute(s, rq->job, rq->a, rq->b, NULL, rq->align, &j, err, errlen);
	if (rc)
		return rc;
	double w0, w1, x_origin;
	window(&j, rq, &w0, &w1, &x_origin);
	size_t nr = j.nranks;
	cs_fig_lane *lanes = calloc(nr, sizeof *lanes);
	char (*names)[48] = calloc(nr, sizeof *names);
	char (*titles)[160] = NULL;
	size_t ntitles = 0;
	/* the skew panel: one bar per instance in view */
	double *x0 = malloc((j.ncoll ? j.ncoll : 1) * sizeof *x0);
	double *x1 = malloc((j.ncoll ? j.ncoll : 1) * sizeof *x1);
	double *y = malloc((j.ncoll ? j.ncoll : 1) * sizeof *y);
	size_t nb = 0;
	if (!lanes || !names || !x0 || !x1 || !y)
		rc = -ENOMEM;
	for (size_t c = 0; rc == 0 && c < j.ncoll; c++) {
		const cs_job_coll *x = &j.coll[c];
		double first = x->start[x->straggler] - x->start_skew;
		if (x->start[x->straggler] < w0 || first > w1)
			continue;
		x0[nb] = first;
		x1[nb] = x->start[x->straggler] > first ? x->start[x->straggler] : first + 1;
		y[nb++] = x->start_skew / 1e3;
	}
	titles = calloc(j.ncoll ? j.ncoll : 1, sizeof *titles);
	if (!titles)
		rc = -ENOMEM;
	for (size_t r = 0; rc == 0 && r < nr; r++) {
		const cs_job_rankres *x = &j.ranks[r];
		const cs_overlap *ov = &x->ov;
		cs_fig_span *v = NULL;
		size_t n = 0, cap = 0;
		/* phases from this rank's segments, moved onto the job's axis */
		double shift = (double)(ov->origin - j.origin) - (double)x->offset_ns;
		for (size_t i = 0; rc == 0 && i < ov->nseg; i++) {
			const cs_overlap_seg *g = &ov->seg[i];
			double a = g->t0 + shift, b = g->t1 + shift;
			if (b < w0 || a > w1 || g->phase == CS_OV_NEITHER)
				continue;
			const char *col = g->phase == CS_OV_B ? C_B : g->phase == CS_OV_AB ? C_HIDDEN : C_EXPOSED;
			rc = add_span(&v, &n, &cap, a, b, NULL, col);
		}
		/* the straggler's collectives over them, named */
		for (size_t c = 0; rc == 0 && c < j.ncoll; c++) {
			const cs_job_coll *k = &j.coll[c];
			if (k->straggler != r || k->start[r] > w1 || k->end[r] < w0 || !(k->start_skew > 0))
				continue;
			snprintf(titles[ntitles], sizeof titles[0], "%s #%zu: rank %lld started last, "
				 "%.1f us after the first", k->name, k->index, (long long)x->rank,
				 k->start_skew / 1e3);
			rc = add_span(&v, &n, &cap, k->start[r], k->end[r], titles[ntitles++], C_LATE);
		}
		snprintf(names[r], sizeof names[r], "rank %lld", (long long)x->rank);
		lanes[r] = (cs_fig_lane){names[r], C_HIDDEN, n, v};
	}
	char title[300], caption[600];
	snprintf(title, sizeof title, "job %s: %zu ranks, A = %s, B = %s", j.job, nr, rq->a, rq->b);
	snprintf(caption, sizeof caption, "grey: B; blue: A hidden behind B; orange: A exposed; red: "
		 "the straggler's collective. Clocks %s. Bars: start skew per instance [us].",
		 j.aligned ? "aligned on the collectives' ends" : "as stored");
	cs_fig_series sk = {.label = "start skew", .color = C_LATE, .style = CS_FIG_BARS, .n = nb,
			    .x0 = x0, .x1 = x1, .y = y};
	cs_fig_panel p = {.ytitle = "start skew [us]", .height = 120, .nseries = 1, .series = &sk};
	cs_fig f = {.title = title, .caption = caption, .xkind = CS_FIG_X_NS, .x_origin = x_origin,
		    .xtitle = rq->have_window ? "time since --from" : "time since the first collective shown", .xmin = w0, .xmax = w1,
		    .npanels = 1, .panels = &p, .nlanes = nr, .lanes = lanes};
	if (rc == 0)
		rc = cs_fig_svg(&f, out);
	for (size_t r = 0; lanes && r < nr; r++)
		free((void *)lanes[r].spans);
	free(lanes);
	free(names);
	free(titles);
	free(x0);
	free(x1);
	free(y);
	cs_jobphases_free(&j);
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	return rc;
}
