/* series_rows.c - a run's series as rows, a part at a time; see series_rows.h. */
#define _GNU_SOURCE
#include "series_rows.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "ranges.h"
#include "runs.h"
#include "reader.h"
#include "text.h"

typedef struct window {
	uint64_t from, to;
} window;

/* Buckets are read and written a part at a time, at most PART buckets and
 * PART_CELLS bucket-metric cells (32 MiB of aggregates): memory stays
 * bounded whatever the bucket count. */
#define PART 4096u
#define PART_CELLS (1u << 20)

/* since= with expressions: the samples up to since that are read (not
 * written) first, so that delta() has the value before the first row
 * written, as in the whole export, unless its argument was absent for all
 * of them. */
#define SINCE_LOOKBACK 64u

struct cs_srows {
	cs_store *s;
	int64_t run;
	uint32_t *ids, m;    /* the metric columns, then the metrics only
				expressions read (nscan in all) */
	uint32_t nscan;
	cs_expr **ex;        /* expression columns, after the metrics */
	uint32_t nex;
	uint32_t *eids, neids; /* whole: the metrics the expressions read,
				  scanned raw (the metric columns come from
				  the stored aggregates) */
	double per_unit;     /* rate(): sample length in seconds (ns runs) or
				cycles */
	int whole;           /* buckets from a raw scan (expressions): all of a
				device's buckets held, written a part at a time */
	uint32_t *devs, ndev;
	int device_col;
	uint32_t buckets;
	window *win;
	uint32_t nwin;
	/* since: one scan by seq per device, its rows kept when their t0 is
	 * in a window; with expressions the scan starts SINCE_LOOKBACK
	 * samples before (evaluated for delta(), written only past since) */
	int have_since;
	uint64_t since, seq_from;
	int64_t cur_win; /* the window of the last row (-1: none yet) */
	int empty;       /* since is the last seq there can be */
	/* position */
	uint32_t dev_i, win_i;
	cs_raw_iter *it;
	cs_agg *aggs;     /* PART buckets * m: the current part of a device's */
	uint64_t *bounds; /* PART + 1 */
	uint32_t bucket_i; /* next bucket to read and write */
	int scanned;       /* whole: the device's buckets are filled */
	uint32_t part;     /* buckets a part */
	double *vals;      /* whole: one sample's expression values */
	double *row;       /* raw: one row's values */
	/* the current cs_srows_next() */
	cs_srows_fn emit;
	void *ctx;
	int emit_rc;
	uint64_t emitted;
};


int cs_series_fail(char *err, size_t errlen, int *status, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	*status = code;
	return -1;
}

static int cmp_window(const void *a, const void *b)
{
	const window *x = a, *y = b;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* The union of the run's ranges matching name (exact, or a glob). */
static int load_windows(cs_srows *x, const char *name, const cs_series_req *r,
			int *status, char *err, size_t errlen)
{
	cs_ranges_query q = {.run = x->run, .to = UINT64_MAX, .window = CS_RANGES_TOUCHING, .name = name,
			     .name_glob = strpbrk(name, "*?[") != NULL};
	cs_ranges_cursor *cur = cs_ranges_open(x->s, &q);
	if (!cur)
		return cs_series_fail(err, errlen, status, 500, "%s", cs_store_errmsg(x->s));
	uint32_t cap = 0;
	cs_range_row rr;
	int more;
	while ((more = cs_ranges_next(cur, &rr)) == 1) {
		if (x->nwin == cap) {
			cap = cap ? cap * 2 : 64;
			window *nw = realloc(x->win, cap * sizeof *nw);
			if (!nw) {
				cs_ranges_close(cur);
				return cs_series_fail(err, errlen, status, 500, "out of memory");
			}
			x->win = nw;
		}
		uint64_t a = (uint64_t)rr.t0;
		uint64_t b = (uint64_t)rr.t1 + 1;
		if (r->have_from && a < r->from)
			a = r->from;
		if (b > r->to)
			b = r->to;
		if (a < b)
			x->win[x->nwin++] = (window){a, b};
	}
	cs_ranges_close(cur);
	if (more < 0)
		return cs_series_fail(err, errlen, status, 500, "%s", cs_store_errmsg(x->s));
	if (x->nwin) /* a range that matched nothing: win is NULL */
		qsort(x->win, x->nwin, sizeof *x->win, cmp_window);
	uint32_t k = 0;
	for (uint32_t i = 0; i < x->nwin; i++) {
		if (k && x->win[i].from <= x->win[k - 1].to) {
			if (x->win[i].to > x->win[k - 1].to)
				x->win[k - 1].to = x->win[i].to;
		} else {
			x->win[k++] = x->win[i];
		}
	}
	x->nwin = k;
	return 0;
}

/* Parses the ';'-separated expressions and binds them to the run: the
 * metrics they read are scanned after the metric columns. */
static int open_exprs(cs_srows *x, const char *text, int *status, char *err, size_t errlen)
{
	uint32_t *all = NULL, nall = 0;
	char (*names)[256] = NULL;
	char *copy = strdup(text), *save = NULL;
	int rc = -1;
	if (!copy || cs_read_metric_ids(x->s, x->run, &all, &nall)) {
		cs_series_fail(err, errlen, status, 500, "%s", copy ? cs_store_errmsg(x->s) : "out of memory");
		goto out;
	}
	uint32_t cap = 1;
	for (const char *c = text; *c; c++)
		cap += *c == ';';
	names = calloc(nall + 1, sizeof *names);
	x->ex = calloc(cap, sizeof *x->ex);
	/* raw rows: the expressions' metrics scanned after the metric
	 * columns; buckets: scanned on their own */
	uint32_t *ids = x->buckets ? calloc((size_t)nall + 1, sizeof *ids)
				   : realloc(x->ids, ((size_t)x->m + nall + 1) * sizeof *ids);
	if (ids && x->buckets)
		x->eids = ids;
	else if (ids)
		x->ids = ids;
	if (!names || !x->ex || !ids) {
		cs_series_fail(err, errlen, status, 500, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < nall; i++)
		if (cs_read_metric_name(x->s, x->run, all[i], names[i], sizeof names[i]))
			names[i][0] = '\0';
	char run_name[32];
	snprintf(run_name, sizeof run_name, "%lld", (long long)x->run);
	size_t nscan = x->buckets ? 0 : x->m;
	for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		char why[768];
		cs_expr *e = cs_expr_parse(tok, why, sizeof why);
		if (!e) {
			cs_series_fail(err, errlen, status, 400, "expr: %s", why);
			goto out;
		}
		x->ex[x->nex++] = e;
		if (cs_expr_bind(e, run_name, x->run, names, all, nall, x->buckets ? x->eids : x->ids,
				 &nscan, why, sizeof why)) {
			cs_series_fail(err, errlen, status, 400, "expr: %s", why);
			goto out;
		}
	}
	if (!x->nex) {
		cs_series_fail(err, errlen, status, 400, "expr: names no expression");
		goto out;
	}
	if (x->buckets)
		x->neids = (uint32_t)nscan;
	else
		x->nscan = (uint32_t)nscan;
	cs_run_summary sum;
	x->per_unit = cs_runs_summary(x->s, x->run, &sum) == 0 && !strcmp(sum.time_unit, "ns")
			      ? 1e-9 : 1;
	rc = 0;
out:
	free(copy);
	free(names);
	free(all);
	return rc;
}

cs_srows *cs_srows_open(cs_store *s, const cs_series_req *r, int *status, char *err,
			size_t errlen)
{
	cs_srows *x = calloc(1, sizeof *x);
	if (!x) {
		cs_series_fail(err, errlen, status, 500, "out of memory");
		return NULL;
	}
	x->s = s;
	cs_buf more = CS_BUF_INIT; /* expressions named where metrics are */
	int more_bad = 0;
	x->buckets = r->buckets;
	if (r->to <= r->from) {
		cs_series_fail(err, errlen, status, 400, "to: must be greater than from");
		goto fail;
	}
	if (r->buckets && r->range) {
		cs_series_fail(err, errlen, status, 400, "range: cannot be combined with buckets");
		goto fail;
	}
	if (r->have_since && r->buckets) {
		cs_series_fail(err, errlen, status, 400, "since: cannot be combined with buckets "
		    "(since returns raw samples; ask for buckets without since, or since without buckets)");
		goto fail;
	}
	x->have_since = r->have_since;
	x->since = r->since;
	int rc = cs_read_find_run(s, r->run, &x->run);
	if (rc) {
		cs_series_fail(err, errlen, status, rc == -ENOENT ? 404 : 500, "%s", cs_store_errmsg(s));
		goto fail;
	}
	if (!r->metrics && !r->exprs) {
		if (cs_read_metric_ids(s, x->run, &x->ids, &x->m)) {
			cs_series_fail(err, errlen, status, 500, "%s", cs_store_errmsg(s));
			goto fail;
		}
	} else if (r->metrics) {
		x->ids = malloc((cs_list_count(r->metrics) + 1) * sizeof *x->ids);
		if (!x->ids) {
			cs_series_fail(err, errlen, status, 500, "out of memory");
			goto fail;
		}
		const char *p = r->metrics, *item;
		size_t len;
		while (cs_list_next(&p, &item, &len)) {
			if (!len)
				continue;
			char *name = strndup(item, len);
			int mrc = name ? cs_read_metric_id(s, x->run, name, &x->ids[x->m]) : -ENOMEM;
			if (mrc == -ENOENT && cs_expr_looks(item, len)) {
				/* no such metric, but an expression: a column after the metrics */
				mrc = cs_buf_printf(&more, "%s%s", more.len ? ";" : "", name) < 0 ? -ENOMEM : 0;
				more_bad |= mrc != 0;
				free(name);
				if (mrc == 0)
					continue;
			} else
				free(name);
			if (mrc) {
				cs_series_fail(err, errlen, status, mrc == -ENOMEM ? 500 : 400, "metric: %s",
					       mrc == -ENOMEM ? "out of memory" : cs_store_errmsg(s));
				goto fail;
			}
			/* A metric listed twice is one column. */
			uint32_t dup = 0;
			for (uint32_t i = 0; i < x->m && !dup; i++)
				dup = x->ids[i] == x->ids[x->m];
			x->m += !dup;
		}
		if (!x->m && !more.len) {
			cs_series_fail(err, errlen, status, 400, "metric: names no metric");
			goto fail;
		}
	}
	x->nscan = x->m;
	if (more.len && r->exprs && *r->exprs)
		more_bad |= cs_buf_printf(&more, ";%s", r->exprs) < 0;
	more_bad |= cs_buf_put_u8(&more, 0) < 0;
	const char *exprs = more.len > 1 ? (const char *)more.data : r->exprs;
	if (more_bad) {
		cs_series_fail(err, errlen, status, 500, "out of memory");
		goto fail;
	}
	if (exprs && open_exprs(x, exprs, status, err, errlen))
		goto fail;
	cs_buf_free(&more);
	if (cs_read_devices(s, x->run, &x->devs, &x->ndev)) {
		cs_series_fail(err, errlen, status, 500, "%s", cs_store_errmsg(s));
		goto fail;
	}
	if (r->have_device) {
		uint32_t found = 0;
		for (uint32_t i = 0; i < x->ndev; i++)
			found |= x->devs[i] == r->device;
		if (!found) {
			cs_series_fail(err, errlen, status, 400, "device: run %lld has no samples for device %u",
			    (long long)x->run, r->device);
			goto fail;
		}
		x->devs[0] = r->device;
		x->ndev = 1;
	}
	for (uint32_t i = 0; i < x->ndev; i++)
		x->device_col |= x->devs[i] != 0;
	uint64_t from = r->have_from ? r->from : 0, to = r->to;
	if (r->buckets && !r->have_to) {
		uint64_t t_min = 0, t_max = 0;
		rc = cs_read_run_span(s, x->run, &t_min, &t_max);
		if (rc && rc != -ENODATA) {
			cs_series_fail(err, errlen, status, 500, "%s", cs_store_errmsg(s));
			goto fail;
		}
		if (!r->have_from)
			from = t_min;
		to = t_max + 1 > from ? t_max + 1 : from + 1;
	}
	if (r->range) {
		if (load_windows(x, r->range, r, status, err, errlen))
			goto fail;
	} else {
		x->win = malloc(sizeof *x->win);
		if (!x->win) {
			cs_series_fail(err, errlen, status, 500, "out of memory");
			goto fail;
		}
		x->win[0] = (window){from, to};
		x->nwin = 1;
	}
	if (x->have_since) {
		if (x->nex)
			x->seq_from = x->since >= SINCE_LOOKBACK ? x->since - (SINCE_LOOKBACK - 1) : 0;
		else
			x->seq_from = x->since + 1;
		x->empty = !x->nex && x->since == UINT64_MAX;
	}
	uint32_t cols = x->m + x->nex;
	x->whole = r->buckets && x->nex;
	uint64_t cap = x->whole ? PART_CELLS : CS_SERIES_MAX_CELLS;
	if (r->buckets && (uint64_t)r->buckets * (cols ? cols : 1) > cap) {
		cs_series_fail(err, errlen, status, 400, "buckets: %u buckets x %u %s is over the %u "
		    "bucket-column cells one request may hold; ask for fewer buckets or columns",
		    r->buckets, cols, x->nex ? "metrics and expressions" : "metrics", (unsigned)cap);
		goto fail;
	}
	x->row = calloc((size_t)cols + 1, sizeof *x->row);
	if (!x->row) {
		cs_series_fail(err, errlen, status, 500, "out of memory");
		goto fail;
	}
	if (x->whole) {
		x->part = r->buckets;
		x->aggs = calloc((size_t)r->buckets * (cols ? cols : 1), sizeof *x->aggs);
		x->bounds = calloc((size_t)r->buckets + 1, sizeof *x->bounds);
		x->vals = calloc((size_t)x->nex + 1, sizeof *x->vals); /* one sample's expressions */
		if (!x->aggs || !x->bounds || !x->vals) {
			cs_series_fail(err, errlen, status, 400, "buckets: too many");
			goto fail;
		}
	} else if (r->buckets) {
		uint32_t m = x->m ? x->m : 1;
		x->part = PART_CELLS / m < PART ? PART_CELLS / m : PART;
		if (x->part > r->buckets)
			x->part = r->buckets;
		if (!x->part)
			x->part = 1;
		x->aggs = calloc((size_t)x->part * m, sizeof *x->aggs);
		x->bounds = calloc((size_t)x->part + 1, sizeof *x->bounds);
		if (!x->aggs || !x->bounds) {
			cs_series_fail(err, errlen, status, 400, "buckets: too many");
			goto fail;
		}
	}
	return x;
fail:
	cs_buf_free(&more);
	cs_srows_close(x);
	return NULL;
}

/* since: the window holding t, or -1 (windows sorted, disjoint). */
static int64_t window_of(const cs_srows *x, uint64_t t)
{
	uint32_t lo = 0, hi = x->nwin;
	while (lo < hi) { /* the first window starting after t */
		uint32_t mid = lo + (hi - lo) / 2;
		if (x->win[mid].from <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && t < x->win[lo - 1].to ? (int64_t)lo - 1 : -1;
}

static int on_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	cs_srows *x = ctx;
	if (x->have_since) {
		/* the windows a by-time scan would have read, one by one */
		int64_t w = window_of(x, t0);
		if (w < 0)
			return 0;
		if (w != x->cur_win) {
			for (uint32_t k = 0; k < x->nex; k++)
				cs_expr_reset(x->ex[k]);
			x->cur_win = w;
		}
		if (seq <= x->since) { /* read for delta() only */
			for (uint32_t k = 0; k < x->nex; k++)
				cs_expr_eval(x->ex[k], v, (double)(t1 - t0) * x->per_unit);
			return 0;
		}
	}
	const double *row = v; /* the metric columns come first: v as it is */
	if (x->nex) {
		memcpy(x->row, v, x->m * sizeof *v);
		for (uint32_t k = 0; k < x->nex; k++)
			x->row[x->m + k] = cs_expr_eval(x->ex[k], v, (double)(t1 - t0) * x->per_unit);
		row = x->row;
	}
	cs_series_row r = {x->devs[x->dev_i], seq, t0, t1, row, NULL};
	x->emitted++;
	return x->emit_rc = x->emit(x->ctx, &r);
}

/* whole: one raw sample's expressions into its bucket (v: the metrics
 * the expressions read, eids). */
static int on_sample(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	cs_srows *x = ctx;
	(void)seq;
	uint32_t cols = x->m + x->nex;
	for (uint32_t k = 0; k < x->nex; k++)
		x->vals[k] = cs_expr_eval(x->ex[k], v, (double)(t1 - t0) * x->per_unit);
	const window *w = &x->win[0];
	if (t0 < w->from || t0 >= w->to)
		return 0;
	uint32_t b = cs_read_bucket_of(w->from, w->to, x->buckets, t0);
	cs_agg *a = x->aggs + (size_t)b * cols + x->m;
	for (uint32_t k = 0; k < x->nex; k++) {
		double y = x->vals[k];
		if (y != y)
			continue;
		cs_agg one = {1, y, y, y};
		cs_agg_merge(&a[k], &one);
	}
	return 0;
}

static int on_bucket(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *a)
{
	cs_srows *x = ctx;
	i -= x->bucket_i; /* within the part (whole: all of them, from 0) */
	memcpy(x->aggs + (size_t)i * (x->m + x->nex), a, x->m * sizeof *a);
	x->bounds[i] = t0;
	x->bounds[i + 1] = t1;
	return 0;
}

/* whole: every bucket of the device's window: the metric columns from
 * the stored aggregates, the expressions from one raw scan of what they
 * read. */
static int scan_buckets(cs_srows *x)
{
	uint32_t cols = x->m + x->nex;
	const window *w = &x->win[0];
	for (size_t i = 0; i < (size_t)x->buckets * cols; i++)
		x->aggs[i] = (cs_agg){0, INFINITY, -INFINITY, 0};
	for (uint32_t i = 0; i <= x->buckets; i++)
		x->bounds[i] = cs_read_bucket_start(w->from, w->to, x->buckets, i);
	x->scanned = 1;
	for (uint32_t k = 0; k < x->nex; k++)
		cs_expr_reset(x->ex[k]);
	cs_scan q = {.run = x->run, .device = x->devs[x->dev_i], .m = x->m, .metrics = x->ids,
		     .from = w->from, .to = w->to};
	int rc = x->m ? cs_read_buckets_part(x->s, &q, x->buckets, 0, x->buckets, on_bucket, x, NULL)
		      : 0;
	if (rc || !x->neids)
		return rc;
	q.m = x->neids;
	q.metrics = x->eids;
	return cs_read_raw(x->s, &q, on_sample, x);
}

/* Reads the current device's next part of buckets and hands on its rows. */
static int emit_buckets(cs_srows *x)
{
	uint32_t cols = x->m + x->nex, first = 0, step = x->part;
	if (x->whole) {
		/* all of them are held: a part's worth of rows per piece */
		if (!x->scanned) {
			int rc = scan_buckets(x);
			if (rc)
				return rc;
		}
		first = x->bucket_i;
		step = PART;
	}
	uint32_t end = x->buckets - x->bucket_i > step ? x->bucket_i + step : x->buckets;
	if (!x->whole) {
		cs_scan q = {.run = x->run, .device = x->devs[x->dev_i], .m = x->m,
			     .metrics = x->ids, .from = x->win[0].from, .to = x->win[0].to};
		int rc = cs_read_buckets_part(x->s, &q, x->buckets, x->bucket_i, end, on_bucket, x,
					      NULL);
		if (rc)
			return rc;
	}
	for (uint32_t i = first; i < first + end - x->bucket_i; i++) {
		cs_series_row r = {x->devs[x->dev_i], 0, x->bounds[i], x->bounds[i + 1], NULL,
				   x->aggs + (size_t)i * cols};
		x->emitted++;
		if ((x->emit_rc = x->emit(x->ctx, &r)) != 0)
			return x->emit_rc;
	}
	x->bucket_i = end;
	return 0;
}

int cs_srows_next(cs_srows *x, cs_srows_fn fn, void *ctx)
{
	x->emit = fn;
	x->ctx = ctx;
	x->emit_rc = 0;
	x->emitted = 0;
	int rc = 1;
	while (x->dev_i < x->ndev) {
		if (x->buckets) {
			if (x->bucket_i < x->buckets) {
				rc = emit_buckets(x);
				if (!rc)
					rc = 1;
				goto done;
			}
			x->bucket_i = 0;
			x->scanned = 0;
			x->dev_i++;
			continue;
		}
		if (!x->it) {
			/* since: one scan a device, by seq */
			uint32_t scans = !x->have_since ? x->nwin : x->nwin && !x->empty;
			if (x->win_i == scans) {
				x->win_i = 0;
				x->dev_i++;
				continue;
			}
			/* delta() starts afresh at each device and window */
			for (uint32_t k = 0; k < x->nex; k++)
				cs_expr_reset(x->ex[k]);
			cs_scan q = {.run = x->run, .device = x->devs[x->dev_i], .m = x->nscan, .metrics = x->ids};
			if (x->have_since) {
				q.seq_from = x->seq_from;
				q.seq_to = UINT64_MAX;
				x->cur_win = -1;
			} else {
				q.from = x->win[x->win_i].from;
				q.to = x->win[x->win_i].to;
			}
			x->it = cs_raw_open(x->s, &q);
			if (!x->it) {
				rc = -ENOMEM;
				goto done;
			}
		}
		rc = cs_raw_next(x->it, on_row, x);
		if (x->emit_rc)
			return x->emit_rc;
		if (rc < 0)
			goto done;
		if (rc == 0) {
			cs_raw_close(x->it);
			x->it = NULL;
			x->win_i++;
			if (x->emitted)
				break;
			continue;
		}
		rc = 1;
		goto done;
	}
	rc = x->dev_i < x->ndev ? 1 : 0;
done:
	return rc;
}

uint32_t cs_srows_ncols(const cs_srows *x) { return x->m + x->nex; }
int cs_srows_device_col(const cs_srows *x) { return x->device_col; }
int cs_srows_has_seq(const cs_srows *x) { return x->have_since; }
uint32_t cs_srows_buckets(const cs_srows *x) { return x->buckets; }

const char *cs_srows_col_name(cs_srows *x, uint32_t k, char *buf, size_t len)
{
	if (k >= x->m)
		return cs_expr_text(x->ex[k - x->m]);
	if (cs_read_metric_name(x->s, x->run, x->ids[k], buf, len))
		snprintf(buf, len, "metric_%u", x->ids[k]);
	return buf;
}

void cs_srows_close(cs_srows *x)
{
	if (!x)
		return;
	cs_raw_close(x->it);
	free(x->ids);
	free(x->devs);
	free(x->win);
	free(x->aggs);
	free(x->bounds);
	free(x->vals);
	free(x->row);
	free(x->eids);
	for (uint32_t k = 0; k < x->nex; k++)
		cs_expr_free(x->ex[k]);
	free(x->ex);
	free(x);
}

