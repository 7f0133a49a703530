/* series_csv.c - a run's series rows as wide CSV; see series_csv.h. */
#include "series_csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corr_job.h"
#include "csv.h"

struct cs_series_csv {
	cs_srows *rows;
	int device_col, has_seq; /* the rows' shape, asked once */
	uint32_t ncols;
	int header_done;
	cs_buf *out;
	cs_csv w;
};

static int sink_to_buf(void *ctx, const void *p, size_t n)
{
	cs_series_csv *x = ctx;
	return cs_buf_append(x->out, p, n);
}

cs_series_csv *cs_series_csv_open(cs_store *s, const cs_series_req *r, int *status, char *err,
				  size_t errlen)
{
	cs_series_csv *x = calloc(1, sizeof *x);
	if (!x) {
		cs_series_fail(err, errlen, status, 500, "out of memory");
		return NULL;
	}
	if (!(x->rows = cs_srows_open(s, r, status, err, errlen))) {
		free(x);
		return NULL;
	}
	x->device_col = cs_srows_device_col(x->rows);
	x->has_seq = cs_srows_has_seq(x->rows);
	x->ncols = cs_srows_ncols(x->rows);
	return x;
}

void cs_series_csv_close(cs_series_csv *x)
{
	if (!x)
		return;
	cs_srows_close(x->rows);
	free(x);
}

static void write_header(cs_series_csv *x)
{
	cs_srows *r = x->rows;
	static const char *const stats[] = {"min", "max", "mean", "sum", "count"};
	if (cs_srows_device_col(r))
		cs_csv_str(&x->w, "device");
	if (cs_srows_has_seq(r))
		cs_csv_str(&x->w, "seq");
	cs_csv_str(&x->w, "t0");
	cs_csv_str(&x->w, "t1");
	for (uint32_t k = 0; k < cs_srows_ncols(r); k++) {
		char buf[512];
		const char *name = cs_srows_col_name(r, k, buf, sizeof buf);
		if (!cs_srows_buckets(r)) {
			cs_csv_str(&x->w, name);
			continue;
		}
		size_t n = strlen(name) + 8;
		char *col = malloc(n);
		for (int j = 0; col && j < 5; j++) {
			snprintf(col, n, "%s:%s", name, stats[j]);
			cs_csv_str(&x->w, col);
		}
		free(col);
	}
	cs_csv_end_row(&x->w);
}

static int write_row(void *ctx, const cs_series_row *row)
{
	cs_series_csv *x = ctx;
	uint32_t cols = x->ncols;
	if (x->device_col)
		cs_csv_u64(&x->w, row->device);
	if (!row->a) {
		if (x->has_seq)
			cs_csv_u64(&x->w, row->seq);
		cs_csv_u64(&x->w, row->t0);
		cs_csv_u64(&x->w, row->t1);
		for (uint32_t k = 0; k < cols; k++)
			cs_csv_f64(&x->w, row->v[k]);
		cs_csv_end_row(&x->w);
		return x->w.rc;
	}
	cs_csv_u64(&x->w, row->t0);
	cs_csv_u64(&x->w, row->t1);
	for (uint32_t k = 0; k < cols; k++) {
		const cs_agg *a = &row->a[k];
		if (a->count) {
			cs_csv_f64(&x->w, a->min);
			cs_csv_f64(&x->w, a->max);
			cs_csv_f64(&x->w, a->sum / (double)a->count);
			cs_csv_f64(&x->w, a->sum);
		} else {
			for (int j = 0; j < 4; j++)
				cs_csv_empty(&x->w);
		}
		cs_csv_u64(&x->w, a->count);
	}
	cs_csv_end_row(&x->w);
	return x->w.rc;
}

int cs_series_csv_next(cs_series_csv *x, cs_buf *out)
{
	x->out = out;
	cs_csv_init(&x->w, sink_to_buf, x);
	int rc = 1;
	if (!x->header_done) {
		write_header(x);
		x->header_done = 1;
	} else {
		rc = cs_srows_next(x->rows, write_row, x);
	}
	if (cs_csv_flush(&x->w) && rc >= 0)
		rc = -ENOMEM;
	cs_buf_free(&x->w.buf);
	return rc;
}

void cs_ranges_csv_header(cs_csv *w)
{
	static const char *const cols[] = {"kind", "name", "t0", "t1", "device", "stream",
					   "correlation_id", "pid", "tid", "bytes", "demangled", "args"};
	for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
		cs_csv_str(w, cols[i]);
	cs_csv_end_row(w);
}

void cs_ranges_csv_row(cs_csv *w, const cs_range_row *r)
{
	char dm[1024];
	cs_csv_str(w, r->kind);
	cs_csv_str(w, r->name);
	cs_csv_i64(w, r->t0);
	cs_csv_i64(w, r->t1);
	const int64_t opt[6] = {r->device, r->stream, r->correlation_id, r->pid, r->tid, r->bytes};
	for (int k = 0; k < 6; k++) {
		if (r->has & (1u << k))
			cs_csv_i64(w, opt[k]);
		else
			cs_csv_empty(w);
	}
	cs_csv_str(w, cs_cjob_demangle(r->name ? r->name : "", dm, sizeof dm));
	if (r->args)
		cs_csv_str(w, r->args);
	else
		cs_csv_empty(w);
	cs_csv_end_row(w);
}
