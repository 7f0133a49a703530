/*
 * plot.c - a run's figure as SVG (plot.h). The data comes from the series
 * rows (series_rows.h) that series.csv is written from, in the CSV's
 * columns: expressions, rates, buckets and raw samples mean here exactly
 * what they mean in the CSV the figure is a picture of.
 */
#define _GNU_SOURCE
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corr_job.h"
#include "expr.h"
#include "figure.h"
#include "overlap.h"
#include "ranges.h"
#include "reader.h"
#include "runs.h"
#include "series_rows.h"
#include "text.h"

/* The UI's colours (web/ui/app.js): kernels by name (the longest-running
 * name in view first, so the names that matter get distinct colours),
 * other kinds by kind. */
static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
				      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
static const char *const kind_color[][2] = {
	{"api", "#7f7f7f"},   {"memcpy", "#2ca02c"}, {"memset", "#98df8a"}, {"graph", "#9467bd"},
	{"nvtx", "#c49c94"},  {"window", "#bcbd22"}, {"phase", "#17becf"},  {"trigger", "#e377c2"},
};
static const char *const kind_order[] = {"api",	 "kernel", "memcpy", "memset", "graph",
					 "nvtx", "window", "sim-kernel", "phase"};

/* "void ns::gemm<float>(float const*, int)" -> "ns::gemm", as app.js's
 * shortName: template arguments and parameter lists dropped, then the
 * last word; a name that is no signature ("kernel 2") as it is. */
static void short_name(const char *full, char *out, size_t outlen)
{
	if (!strchr(full, '(')) {
		snprintf(out, outlen, "%.95s", full);
		return;
	}
	char buf[512];
	size_t n = 0;
	int depth = 0;
	for (const char *c = full; *c && n < sizeof buf - 1; c++) {
		if (*c == '<' || *c == '(')
			depth++;
		else if ((*c == '>' || *c == ')') && depth > 0)
			depth--;
		else if (!depth)
			buf[n++] = *c;
	}
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	const char *sp = strrchr(buf, ' ');
	snprintf(out, outlen, "%.95s", sp && sp[1] ? sp + 1 : buf[0] ? buf : full);
}

typedef struct table {
	size_t rows, cols, cap;
	char **head;   /* cols names */
	double *v;     /* rows x cols */
} table;

static void table_free(table *t)
{
	for (size_t i = 0; t->head && i < t->cols; i++)
		free(t->head[i]);
	free(t->head);
	free(t->v);
}

static int table_head(table *t, const char *name)
{
	char **g = realloc(t->head, (t->cols + 1) * sizeof *g);
	if (!g)
		return -ENOMEM;
	t->head = g;
	if (!(g[t->cols] = strdup(name)))
		return -ENOMEM;
	t->cols++;
	return 0;
}

typedef struct fill {
	table *t;
	cs_srows *r;
} fill;

/* One row of the series into the table, in the wide CSV's columns. */
static int table_row(void *ctx, const cs_series_row *row)
{
	fill *f = ctx;
	table *t = f->t;
	if (t->rows == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 1024;
		double *g = realloc(t->v, c * t->cols * sizeof *g);
		if (!g)
			return -ENOMEM;
		t->v = g;
		t->cap = c;
	}
	double *o = t->v + t->rows * t->cols;
	if (cs_srows_device_col(f->r))
		*o++ = row->device;
	*o++ = (double)row->t0;
	*o++ = (double)row->t1;
	for (uint32_t k = 0; k < cs_srows_ncols(f->r); k++) {
		if (!row->a) {
			*o++ = row->v[k];
			continue;
		}
		const cs_agg *a = &row->a[k];
		double n = (double)a->count;
		*o++ = a->count ? a->min : (double)NAN;
		*o++ = a->count ? a->max : (double)NAN;
		*o++ = a->count ? a->sum / n : (double)NAN;
		*o++ = a->count ? a->sum : (double)NAN;
		*o++ = n;
	}
	t->rows++;
	return 0;
}

/* The series of the request as a table: the wide CSV's column names
 * (series_csv.h) and its numbers, read straight from the rows (an absent
 * value is NaN). */
static int read_table(cs_store *s, const cs_series_req *q, table *t, int *status, char *err,
		      size_t errlen)
{
	cs_srows *r = cs_srows_open(s, q, status, err, errlen);
	if (!r)
		return -1;
	static const char *const stats[] = {"min", "max", "mean", "sum", "count"};
	int rc = 0;
	if (cs_srows_device_col(r))
		rc = table_head(t, "device");
	if (!rc)
		rc = table_head(t, "t0");
	if (!rc)
		rc = table_head(t, "t1");
	for (uint32_t k = 0; !rc && k < cs_srows_ncols(r); k++) {
		char buf[512], col[1100];
		const char *name = cs_srows_col_name(r, k, buf, sizeof buf);
		if (!cs_srows_buckets(r)) {
			rc = table_head(t, name);
			continue;
		}
		for (int j = 0; !rc && j < 5; j++) {
			snprintf(col, sizeof col, "%.1000s:%s", name, stats[j]);
			rc = table_head(t, col);
		}
	}
	fill f = {t, r};
	if (!rc)
		do /* every part: 1 while more follows */
			rc = cs_srows_next(r, table_row, &f);
		while (rc > 0);
	cs_srows_close(r);
	if (rc == -ENOMEM)
		return cs_series_fail(err, errlen, status, 500, "reading the series: out of memory");
	if (rc < 0)
		return cs_series_fail(err, errlen, status, 500, "reading the series: %s", cs_store_errmsg(s));
	return 0;
}

static long column(const table *t, const char *name)
{
	for (size_t i = 0; i < t->cols; i++)
		if (!strcmp(t->head[i], name))
			return (long)i;
	return -1;
}

typedef struct lane_set {
	cs_fig_lane lane[24];
	char label[24][48];
	cs_fig_span *spans;
	char (*names)[96];
	char (*titles)[512];
	size_t n, nspans;
	cs_fig_series keys[10]; /* the kernel colours' legend, longest first */
	char key_label[10][112];
	size_t nkeys;
} lane_set;

typedef struct name_total {
	const char *name;
	double total;
} name_total;

/* Span indices by their names (ctx: the names). */
static int cmp_by_name(const void *a, const void *b, void *ctx)
{
	char (*names)[96] = ctx;
	return strcmp(names[*(const size_t *)a], names[*(const size_t *)b]);
}

static int kind_rank(const char *kind)
{
	for (size_t i = 0; i < sizeof kind_order / sizeof *kind_order; i++)
		if (!strcmp(kind, kind_order[i]))
			return (int)i;
	return 99;
}

static int cmp_lane(const void *a, const void *b)
{
	const cs_fig_lane *x = a, *y = b;
	char ka[48], kb[48];
	sscanf(x->label, "%47s", ka);
	sscanf(y->label, "%47s", kb);
	int d = kind_rank(ka) - kind_rank(kb);
	return d ? d : strcmp(x->label, y->label);
}

/* The ranges of kinds (NULL = all) overlapping [from, to), the 2000
 * longest, one lane per kind and for kernels one per stream when there are
 * several. */
static int load_lanes(cs_store *s, int64_t run, uint64_t from, uint64_t to, const char *kinds,
		      lane_set *ls)
{
	/* a kind's kernels get a lane per stream when they ran on several */
	cs_ranges_kind *kstat = NULL;
	size_t nkstat = 0;
	if (cs_ranges_kinds(s, run, &kstat, &nkstat) < 0)
		return -EIO;
	cs_ranges_query q = {.run = run, .from = from, .to = to, .window = CS_RANGES_TOUCHING,
			     .limit = 2000, .longest_first = 1};
	cs_ranges_cursor *cur = cs_ranges_open(s, &q);
	if (!cur) {
		free(kstat);
		return -EIO;
	}
	ls->spans = calloc(2000, sizeof *ls->spans);
	ls->names = calloc(2000, sizeof *ls->names);
	ls->titles = calloc(2000, sizeof *ls->titles);
	size_t *lane_of = calloc(2000, sizeof *lane_of);
	if (!ls->spans || !ls->names || !ls->titles || !lane_of) {
		free(lane_of);
		free(kstat);
		cs_ranges_close(cur);
		return -ENOMEM;
	}
	cs_range_row rr;
	while (ls->nspans < 2000 && cs_ranges_next(cur, &rr) == 1) {
		const char *kind = rr.kind;
		const char *name = rr.name;
		if (!kind || !name)
			continue;
		if (kinds && !cs_list_has(kinds, kind))
			continue;
		int kernel = !strcmp(kind, "kernel") || !strcmp(kind, "sim-kernel");
		char label[48];
		int64_t streams = 0;
		for (size_t k = 0; k < nkstat; k++)
			if (!strcmp(kstat[k].kind, kind))
				streams = kstat[k].streams;
		if (kernel && streams > 1 && (rr.has & CS_RANGE_HAS_STREAM))
			snprintf(label, sizeof label, "%.24s s%lld", kind, (long long)rr.stream);
		else
			snprintf(label, sizeof label, "%.40s", kind);
		size_t l = 0;
		while (l < ls->n && strcmp(ls->label[l], label))
			l++;
		if (l == ls->n) {
			if (ls->n == 24)
				continue;
			snprintf(ls->label[l], sizeof ls->label[l], "%s", label);
			const char *c = "#444444";
			for (size_t i = 0; i < sizeof kind_color / sizeof *kind_color; i++)
				if (!strcmp(kind, kind_color[i][0]))
					c = kind_color[i][1];
			ls->lane[l] = (cs_fig_lane){.label = ls->label[l], .color = c};
			ls->n++;
		}
		size_t i = ls->nspans++;
		char demangled[512];
		cs_cjob_demangle(name, demangled, sizeof demangled);
		if (kernel)
			short_name(demangled, ls->names[i], sizeof ls->names[i]);
		else
			snprintf(ls->names[i], sizeof ls->names[i], "%.95s", demangled);
		snprintf(ls->titles[i], sizeof ls->titles[i], "%s", demangled);
		ls->spans[i] = (cs_fig_span){(double)rr.t0, (double)rr.t1, ls->names[i],
					     kernel ? "" : NULL};
		lane_of[i] = l;
	}
	cs_ranges_close(cur);
	free(kstat);
	/* kernel colours: distinct names by total time, palette in that order */
	size_t *order = calloc(ls->nspans + 1, sizeof *order), nk = 0;
	if (!order) {
		free(lane_of);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ls->nspans; i++)
		if (ls->spans[i].color)
			order[nk++] = i;
	qsort_r(order, nk, sizeof *order, cmp_by_name, ls->names);
	name_total tops[10] = {{0}};
	for (size_t a = 0, b; a < nk; a = b) {
		double tot = 0;
		for (b = a; b < nk && !strcmp(ls->names[order[b]], ls->names[order[a]]); b++)
			tot += ls->spans[order[b]].x1 - ls->spans[order[b]].x0;
		for (int t = 0; t < 10; t++) /* the ten longest, longest first */
			if (!tops[t].name || tot > tops[t].total) {
				memmove(&tops[t + 1], &tops[t], (size_t)(9 - t) * sizeof *tops);
				tops[t] = (name_total){ls->names[order[a]], tot};
				break;
			}
	}
	for (int t = 0; t < 10 && tops[t].name; t++) {
		snprintf(ls->key_label[t], sizeof ls->key_label[t], "%s", tops[t].name);
		ls->keys[t] = (cs_fig_series){.label = ls->key_label[t], .color = palette[t],
					      .style = CS_FIG_BARS};
		ls->nkeys = (size_t)t + 1;
	}
	for (size_t a = 0; a < nk; a++) {
		cs_fig_span *sp = &ls->spans[order[a]];
		sp->color = "#999999"; /* past the tenth name */
		for (int t = 0; t < 10; t++)
			if (tops[t].name && !strcmp(tops[t].name, ls->names[order[a]]))
				sp->color = palette[t];
	}
	free(order);
	/* each lane's spans contiguous: a stable pass per lane into a copy */
	cs_fig_span *sorted = calloc(ls->nspans + 1, sizeof *sorted);
	if (!sorted) {
		free(lane_of);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t l = 0; l < ls->n; l++) {
		ls->lane[l].spans = sorted + k;
		for (size_t i = 0; i < ls->nspans; i++)
			if (lane_of[i] == l)
				sorted[k++] = ls->spans[i];
		ls->lane[l].n = (size_t)(sorted + k - ls->lane[l].spans);
	}
	free(ls->spans);
	ls->spans = sorted;
	free(lane_of);
	qsort(ls->lane, ls->n, sizeof *ls->lane, cmp_lane);
	return 0;
}

static void lanes_free(lane_set *ls)
{
	free(ls->spans);
	free(ls->names);
	free(ls->titles);
}

/* One plotted column: a metric or an expression, maybe made a rate. */
typedef struct pcol {
	char label[600]; /* as asked */
	char col[640];   /* the CSV column */
	char title[700]; /* axis title with the unit */
	double scale;
} pcol;

int cs_plot_defaults(cs_store *s, int64_t run, char *out, size_t outlen)
{
	return cs_runs_default_metrics(s, run, out, outlen) < 0 ? -EIO : 0;
}

/* One figure being made: the run, the request's window and rate, its
 * columns (metrics, then expressions) and what is drawn from them. */
typedef struct plot {
	cs_store *s;
	const cs_plot_req *r;
	int64_t run;
	char unit[16], name[256], kind[16], source[64];
	double clock_hz;
	int ns;
	char cycle_counter[64]; /* ns run, no clock: the per-sample cycle counter */
	const char *rate;
	uint64_t t_min, from, to;
	pcol *cols;
	size_t n, cap;
	cs_buf mlist, elist; /* the series request's metrics and expressions */
	uint32_t nb, dev, ndev;
	int raw;
	table t;
	lane_set ls;
	cs_fig_series *ser;
	cs_fig_panel *pan;
	double *x0, *x1, *ys;
} plot;

/* An expression's unit from its metrics' units (as the UI derives it):
 * sums and differences of one unit keep it, A / B is uA/uB, rate(E) per
 * second on ns runs and per cycle on cycle runs; anything else (a product,
 * delta(), sum_sm(), a glob or units that differ) has none (""). */
static void expr_unit(plot *P, const char *e, size_t len, char *out, size_t outlen)
{
	char kind[32], u[64], inner[64];
	out[0] = '\0';
	while (len && *e == ' ')
		e++, len--;
	while (len && e[len - 1] == ' ')
		len--;
	if (len > 6 && !strncmp(e, "rate(", 5) && e[len - 1] == ')') {
		expr_unit(P, e + 5, len - 6, inner, sizeof inner);
		if (inner[0] && snprintf(out, outlen, "%s/%s", inner, P->ns ? "s" : "cycle") >= (int)outlen)
			out[0] = '\0'; /* (cut: none rather than a wrong one) */
		return;
	}
	const char *slash = memchr(e, '/', len);
	if (slash && !memchr(slash + 1, '/', len - (size_t)(slash + 1 - e)) && !memchr(e, '(', len)) {
		char a[64], b[64];
		expr_unit(P, e, (size_t)(slash - e), a, sizeof a);
		expr_unit(P, slash + 1, len - (size_t)(slash + 1 - e), b, sizeof b);
		if (a[0] && b[0] && snprintf(out, outlen, "%s/%s", a, b) >= (int)outlen)
			out[0] = '\0';
		return;
	}
	if (memchr(e, '*', len) || memchr(e, '(', len) || slash)
		return;
	/* names between + and - (a '-' with a space beside it) */
	char common[64] = "";
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && e[j] != '+' && !(e[j] == '-' && ((j && e[j - 1] == ' ') || (j + 1 < len && e[j + 1] == ' '))))
			j++;
		size_t a = i, b = j;
		while (a < b && e[a] == ' ')
			a++;
		while (b > a && e[b - 1] == ' ')
			b--;
		char name[600];
		snprintf(name, sizeof name, "%.*s", (int)(b - a), e + a);
		char *end;
		if (b > a && (strtod(name, &end), *end)) { /* (numbers have no unit) */
			if (cs_runs_metric_unit(P->s, P->run, name, u, sizeof u, kind, sizeof kind) || !u[0] ||
			    (common[0] && strcmp(common, u)))
				return;
			snprintf(common, sizeof common, "%s", u);
		}
		i = j + 1;
	}
	snprintf(out, outlen, "%s", common);
}

/* One column asked for (pass 0: a metric, 1: an expression), with its
 * unit, and as a rate when asked for and it is a counter. */
static void add_column(plot *P, int pass, const char *a, size_t l)
{
	pcol *c = &P->cols[P->n++];
	snprintf(c->label, sizeof c->label, "%.*s", (int)(l < 599 ? l : 599), a);
	char u[64] = "";
	int counter = !pass || !strstr(c->label, "rate(");
	if (!pass) {
		char mkind[32];
		if (cs_runs_metric_unit(P->s, P->run, c->label, u, sizeof u, mkind, sizeof mkind) == 0)
			counter = strcmp(mkind, "ratio") != 0;
		else if (cs_expr_looks(c->label, strlen(c->label)))
			pass = 1, counter = !strstr(c->label, "rate("); /* an expression */
	}
	if (pass)
		expr_unit(P, c->label, strlen(c->label), u, sizeof u);
	c->scale = 1;
	if (strcmp(P->rate, "sample") && counter) {
		int ns = P->ns;
		/* a metric's name quoted: any name reads as one */
		snprintf(c->col, sizeof c->col, pass ? "rate(%s)" : "rate(\"%s\")", c->label);
		/* series' rate() is per second on ns runs, per cycle on cycle runs */
		c->scale = !strcmp(P->rate, "second") ? (ns ? 1 : P->clock_hz) : (ns ? 1 / P->clock_hz : 1);
		if (!strcmp(P->rate, "cycle") && ns && P->cycle_counter[0]) {
			/* each sample over the cycles its own counter gives */
			snprintf(c->col, sizeof c->col, pass ? "(%s) / %s" : "\"%s\" / %s", c->label,
				 P->cycle_counter);
			c->scale = 1;
		}
		snprintf(c->title, sizeof c->title, "%s [%s/%s]", c->label, u[0] ? u : "count",
			 !strcmp(P->rate, "second") ? "s" : "cycle");
		cs_buf_printf(&P->elist, "%s%s", P->elist.len ? ";" : "", c->col);
		return;
	}
	snprintf(c->col, sizeof c->col, "%s", c->label);
	if (u[0])
		snprintf(c->title, sizeof c->title, "%s [%s]", c->label, u);
	else
		snprintf(c->title, sizeof c->title, "%s", c->label);
	cs_buf *to_list = pass ? &P->elist : &P->mlist;
	cs_buf_printf(to_list, "%s%s", to_list->len ? (pass ? ";" : ",") : "", c->col);
}

/* The columns of the request: its metrics (or the run's defaults), then
 * its expressions. 0, or -1 with the reason. */
static int plot_columns(plot *P, int *status, char *err, size_t errlen)
{
	const cs_plot_req *r = P->r;
	char defaults[1024] = "";
	const char *metrics = r->metrics;
	if ((!metrics || !*metrics) && (!r->exprs || !*r->exprs)) {
		cs_plot_defaults(P->s, P->run, defaults, sizeof defaults);
		metrics = defaults;
	}
	P->cap = 2 + cs_list_count(metrics);
	for (const char *c = r->exprs ? r->exprs : ""; *c; c++)
		P->cap += *c == ';';
	if (P->cap > CS_PLOT_MAX_SERIES + 1)
		P->cap = CS_PLOT_MAX_SERIES + 1;
	if (!(P->cols = calloc(P->cap, sizeof *P->cols)))
		return cs_series_fail(err, errlen, status, 500, "out of memory");
	for (int pass = 0; pass < 2; pass++) {
		const char *list = pass ? r->exprs : metrics;
		const char *sep = pass ? ";" : ",";
		for (const char *p = list ? list : ""; *p;) {
			size_t l = strcspn(p, sep);
			const char *a = p;
			p += l + (p[l] != '\0');
			while (l && *a == ' ')
				a++, l--;
			while (l && a[l - 1] == ' ')
				l--;
			if (!l)
				continue;
			if (P->n == P->cap || P->n == CS_PLOT_MAX_SERIES)
				return cs_series_fail(err, errlen, status, 400, "metric: at most %d metrics "
						      "and expressions in one figure", CS_PLOT_MAX_SERIES);
			add_column(P, pass, a, l);
		}
	}
	if (!P->n)
		return cs_series_fail(err, errlen, status, 400,
				      "metric: name a metric or an expression to plot");
	cs_buf_put_u8(&P->mlist, 0);
	cs_buf_put_u8(&P->elist, 0);
	return 0;
}

/* The rows of the window: bucketed, or every sample over its own interval
 * when there are no more than half the buckets' worth (whole kernels stay
 * whole). The count column of the first series says how many fell in each
 * bucket. */
static int plot_rows(plot *P, int *status, char *err, size_t errlen)
{
	const cs_plot_req *r = P->r;
	P->nb = r->buckets ? r->buckets : 1000;
	/* one device's samples: the first, unless one is asked for */
	uint32_t *devs = NULL;
	P->dev = r->device;
	if (!r->have_device && cs_read_devices(P->s, P->run, &devs, &P->ndev) == 0 && P->ndev)
		P->dev = devs[0];
	free(devs);
	cs_series_req q = {.run = r->run, .metrics = P->mlist.len > 1 ? (const char *)P->mlist.data : NULL,
			   .exprs = P->elist.len > 1 ? (const char *)P->elist.data : NULL,
			   .have_device = 1, .device = P->dev, .from = P->from,
			   .to = P->to, .have_from = 1, .have_to = 1, .buckets = P->nb};
	if (read_table(P->s, &q, &P->t, status, err, errlen))
		return -1;
	double total = 0;
	char cname[700];
	snprintf(cname, sizeof cname, "%s:count", P->cols[0].col);
	long cc = column(&P->t, cname);
	for (size_t i = 0; cc >= 0 && i < P->t.rows; i++)
		total += P->t.v[i * P->t.cols + (size_t)cc];
	P->raw = cc >= 0 && total * 2 <= P->nb;
	if (!P->raw)
		return 0;
	table_free(&P->t);
	memset(&P->t, 0, sizeof P->t);
	q.buckets = 0;
	return read_table(P->s, &q, &P->t, status, err, errlen);
}

/* One panel a column: its values (a bucket's mean, with its min to max as
 * a band), scaled to the rate asked for. */
static int plot_panels(plot *P, int *status, char *err, size_t errlen)
{
	const table *t = &P->t;
	size_t rows = t->rows, n = P->n, base = column(t, "device") >= 0 ? 1 : 0;
	P->x0 = calloc(rows + 1, sizeof *P->x0);
	P->x1 = calloc(rows + 1, sizeof *P->x1);
	P->ys = calloc((rows + 1) * n * 3, sizeof *P->ys);
	P->ser = calloc(n, sizeof *P->ser);
	P->pan = calloc(n, sizeof *P->pan);
	if (!P->x0 || !P->x1 || !P->ys || !P->ser || !P->pan)
		return cs_series_fail(err, errlen, status, 500, "out of memory");
	for (size_t i = 0; i < rows; i++) {
		P->x0[i] = t->v[i * t->cols + base];
		P->x1[i] = t->v[i * t->cols + base + 1];
	}
	int raw = P->raw;
	for (size_t k = 0; k < n; k++) {
		pcol *c = &P->cols[k];
		double *y = P->ys + k * 3 * (rows + 1), *lo = y + rows + 1, *hi = lo + rows + 1;
		char key[700];
		snprintf(key, sizeof key, raw ? "%s" : "%s:mean", c->col);
		long cy = column(t, key), cl = -1, ch = -1;
		if (!raw) {
			snprintf(key, sizeof key, "%s:min", c->col);
			cl = column(t, key);
			snprintf(key, sizeof key, "%s:max", c->col);
			ch = column(t, key);
		}
		for (size_t i = 0; i < rows; i++) {
			y[i] = cy >= 0 ? t->v[i * t->cols + (size_t)cy] * c->scale : (double)NAN;
			lo[i] = cl >= 0 ? t->v[i * t->cols + (size_t)cl] * c->scale : (double)NAN;
			hi[i] = ch >= 0 ? t->v[i * t->cols + (size_t)ch] * c->scale : (double)NAN;
		}
		P->ser[k] = (cs_fig_series){.label = raw ? "sample" : "bucket mean (band: min to max)",
					    .color = "#1f77b4", .style = raw && rows <= 64 ? CS_FIG_BARS : CS_FIG_STEP,
					    .n = rows, .x0 = P->x0, .x1 = P->x1, .y = y,
					    .lo = raw ? NULL : lo, .hi = raw ? NULL : hi};
		P->pan[k] = (cs_fig_panel){.ytitle = c->title, .height = n > 3 ? 150 : 200, .nseries = 1,
					   .series = &P->ser[k]};
	}
	return 0;
}

/* The figure's title (its columns, cut short) and caption (the run, the
 * window in the run's unit, buckets or samples, rate, device). */
static void plot_words(const plot *P, char *title, size_t tlen, char *caption, size_t clen)
{
	const pcol *cols = P->cols;
	size_t n = P->n;
	int ns = P->ns;
	snprintf(title, tlen, "%s: %s", P->name, cols[0].label);
	for (size_t k = 1; k < n; k++) {
		size_t l = strlen(title);
		if (l + strlen(cols[k].label) > 110) {
			snprintf(title + l, tlen - l, " and %zu more", n - k);
			break;
		}
		snprintf(title + l, tlen - l, ", %s", cols[k].label);
	}
	char span[64], a[64], b[64];
	double len = (double)(P->to - P->from);
	/* both ends in one unit, with the digits the window needs */
	double step = pow(10, floor(log10(len > 1 ? len : 1)) - 2);
	if (ns) {
		cs_fig_fmt_time((double)(P->from - P->t_min), step, a, sizeof a);
		cs_fig_fmt_time((double)(P->to - P->t_min), step, b, sizeof b);
		cs_fig_fmt_time(len / P->nb, 0, span, sizeof span);
	} else {
		cs_fig_fmt_num((double)(P->from - P->t_min), step, a, sizeof a);
		cs_fig_fmt_num((double)(P->to - P->t_min), step, b, sizeof b);
		cs_fig_fmt_num(len / P->nb, 0, span, sizeof span);
	}
	snprintf(caption, clen, "run %s (%s, %s); %s to %s%s of the run; %s", P->name, P->kind,
		 P->source, a, b, ns ? "" : " cycles", P->raw ? "every sample over its own interval" : "");
	if (!P->raw) {
		size_t l = strlen(caption);
		snprintf(caption + l, clen - l, "%u buckets of %s%s (mean, band min to max)", P->nb,
			 span, ns ? "" : " cycles");
	}
	if (strcmp(P->rate, "sample")) {
		size_t l = strlen(caption);
		snprintf(caption + l, clen - l, "; counters per %s", P->rate);
	}
	if (P->r->have_device || P->ndev > 1) {
		size_t l = strlen(caption);
		snprintf(caption + l, clen - l, "; device %u", P->dev);
	}
}

/* The run, its clock and extent, the rate and the window. */
static int plot_run(plot *P, int *status, char *err, size_t errlen)
{
	cs_store *s = P->s;
	const cs_plot_req *r = P->r;
	int rc = cs_read_find_run(s, r->run, &P->run);
	if (rc)
		return cs_series_fail(err, errlen, status, rc == -ENOENT ? 404 : 500, "%s", cs_store_errmsg(s));
	snprintf(P->unit, sizeof P->unit, "ns");
	cs_run_summary sum;
	if (cs_runs_summary(s, P->run, &sum) == 0) {
		snprintf(P->unit, sizeof P->unit, "%.15s", sum.time_unit[0] ? sum.time_unit : "ns");
		snprintf(P->name, sizeof P->name, "%.255s", sum.name);
		snprintf(P->kind, sizeof P->kind, "%.15s", sum.kind);
		snprintf(P->source, sizeof P->source, "%.63s", sum.source);
		P->clock_hz = sum.clock_hz;
	}
	int ns = P->ns = !strcmp(P->unit, "ns");
	const char *rate = P->rate = r->rate && *r->rate ? r->rate : "sample";
	if (strcmp(rate, "sample") && strcmp(rate, "second") && strcmp(rate, "cycle"))
		return cs_series_fail(err, errlen, status, 400, "rate: sample, second or cycle, not '%s'", rate);
	/* per cycle on an ns run with no clock: by its per-sample cycle
	 * counter, where it has one (what correlate's axis counts by) */
	static const char *const counters[] = {"gpc__cycles_elapsed.max", "gr__cycles_elapsed.max",
					       "sm__cycles_elapsed.avg", "sm__cycles_elapsed.max",
					       "sys__cycles_elapsed.avg", "sys__cycles_elapsed.max"};
	uint32_t cid;
	for (size_t i = 0; ns && !(P->clock_hz > 0) && !P->cycle_counter[0] && i < sizeof counters / sizeof *counters; i++)
		if (cs_read_metric_id(P->s, P->run, counters[i], &cid) == 0)
			snprintf(P->cycle_counter, sizeof P->cycle_counter, "%s", counters[i]);
	if ((!strcmp(rate, "second") && !ns && !(P->clock_hz > 0)) ||
	    (!strcmp(rate, "cycle") && ns && !(P->clock_hz > 0) && !P->cycle_counter[0]))
		return cs_series_fail(err, errlen, status, 400, "rate: run %s has no clock to count %ss by",
				      P->name, rate);
	uint64_t t_end = 1;
	rc = cs_read_run_extent(s, P->run, &P->t_min, &t_end);
	if (rc && rc != -ENODATA)
		return cs_series_fail(err, errlen, status, 500, "%s", cs_store_errmsg(s));
	P->from = r->have_from ? r->from : P->t_min;
	P->to = r->have_to ? r->to : t_end;
	if (P->to <= P->from)
		return cs_series_fail(err, errlen, status, 400, "to: must be greater than from");
	return 0;
}

/* The overlap phases of the request's A and B as the figure's shading. */
typedef struct phase_shade {
	double *x0, *x1;
	const char **color;
	cs_fig_shade shade;
} phase_shade;

static void phase_shade_free(phase_shade *ps)
{
	free(ps->x0), free(ps->x1), free(ps->color);
}

static int plot_phases(plot *P, phase_shade *ps, int *status, char *err, size_t errlen)
{
	static const char *const colors[CS_OV_NPHASE] = {
		[CS_OV_NEITHER] = NULL, [CS_OV_A] = "#ff7f0e", [CS_OV_AB] = "#d62728", [CS_OV_B] = "#1f77b4"};
	char id[32], why[1024];
	cs_overlap o;
	snprintf(id, sizeof id, "%lld", (long long)P->run);
	int rc = cs_overlap_compute(P->s, id, P->r->a, P->r->b,
				    P->mlist.len > 1 ? (const char *)P->mlist.data : NULL,
				    P->dev, &o, why, sizeof why);
	if (rc < 0)
		return cs_series_fail(err, errlen, status, rc == -ENOENT ? 404 : rc == -EINVAL ? 400 : 500,
				      "a, b: %s", why);
	ps->x0 = calloc(o.nseg + 1, sizeof *ps->x0);
	ps->x1 = calloc(o.nseg + 1, sizeof *ps->x1);
	ps->color = calloc(o.nseg + 1, sizeof *ps->color);
	if (!ps->x0 || !ps->x1 || !ps->color) {
		cs_overlap_free(&o);
		return cs_series_fail(err, errlen, status, 500, "out of memory");
	}
	for (size_t i = 0; i < o.nseg; i++) {
		ps->x0[i] = (double)o.origin + o.seg[i].t0;
		ps->x1[i] = (double)o.origin + o.seg[i].t1;
		int ph = o.seg[i].phase;
		ps->color[i] = o.seg[i].tail ? "#9467bd" : ph >= 0 && ph < CS_OV_NPHASE ? colors[ph] : NULL;
	}
	ps->shade = (cs_fig_shade){o.nseg, ps->x0, ps->x1, ps->color};
	cs_overlap_free(&o);
	return 0;
}

int cs_plot_svg(cs_store *s, const cs_plot_req *r, cs_buf *out, int *status, char *err,
		size_t errlen)
{
	plot P = {.s = s, .r = r, .mlist = CS_BUF_INIT, .elist = CS_BUF_INIT};
	phase_shade ov = {0};
	int ret = -1;
	if (plot_run(&P, status, err, errlen) || plot_columns(&P, status, err, errlen) ||
	    plot_rows(&P, status, err, errlen) || plot_panels(&P, status, err, errlen))
		goto out;
	const char *kinds = r->ranges && *r->ranges ? r->ranges : NULL;
	if (!kinds || strcmp(kinds, "none")) {
		if (kinds && (!strcmp(kinds, "1") || !strcmp(kinds, "all")))
			kinds = NULL;
		if (load_lanes(s, P.run, P.from, P.to, kinds, &P.ls) < 0) {
			cs_series_fail(err, errlen, status, 500, "reading the ranges: %s",
				       cs_store_errmsg(s));
			goto out;
		}
	}
	char title[900], caption[1600];
	plot_words(&P, title, sizeof title, caption, sizeof caption);
	int ns = P.ns;
	cs_fig f = {.title = title, .caption = caption, .xkind = ns ? CS_FIG_X_NS : CS_FIG_X_CYCLES,
		    .x_origin = (double)P.t_min, .xtitle = ns ? "time since run start" : "cycles since run start",
		    .xmin = (double)P.from, .xmax = (double)P.to, .width = r->width, .npanels = P.n,
		    .panels = P.pan, .nlanes = P.ls.n, .lanes = P.ls.lane, .nkeys = P.ls.nkeys,
		    .keys = P.ls.keys};
	if (r->a && *r->a && r->b && *r->b) {
		if (plot_phases(&P, &ov, status, err, errlen))
			goto out;
		f.shade = ov.shade;
		size_t cl = strlen(caption);
		snprintf(caption + cl, sizeof caption - cl, "; shaded: the overlap of A = %s and B = %s: only A "
			 "orange, A and B red, only B blue, B's tail purple", r->a, r->b);
	}
	if (cs_fig_svg(&f, out) < 0) {
		cs_series_fail(err, errlen, status, 500, "out of memory");
		goto out;
	}
	ret = 0;
out:
	free(P.cols);
	cs_buf_free(&P.mlist);
	cs_buf_free(&P.elist);
	table_free(&P.t);
	lanes_free(&P.ls);
	free(P.ser);
	free(P.pan);
	free(P.x0);
	free(P.x1);
	free(P.ys);
	phase_shade_free(&ov);
	return ret;
}
