/*
 * fuzz_store.c - libFuzzer target: the store writer driven by decoded wire
 * frames through the code the daemon's ingest uses (store/apply.c), then
 * everything written read back through the reader and checked against
 * what the writer accepted (recorded from apply's hooks).
 *
 * The input is records of one control byte and one wire frame
 * (docs/protocol.md). Control bit 0 picks one of two connections (the
 * daemon interleaves the runs of several producers in one store); bits 1-2
 * commit after the frame (1: whole chunks only, 2: partial chunks too); bit
 * 3 closes the connection after the frame (its open run ends incomplete);
 * bits 4-6 apply a SAMPLES frame 2^k times, seq and times moved on each
 * time (whole chunks of 4096 samples do not fit in 64 KiB of frames).
 * tests/tools/mkfuzzstore.py writes the seeds. Decoding stops at the
 * first frame that does not decode. Then every open run ends incomplete,
 * and every run is read back: raw scans by sample number and by time
 * (whole and a window), bucketed scans, the run's extent, metric ids,
 * devices and its row in runs must match what was appended; a discarded
 * run must leave nothing. Then the runs are deleted and the database
 * must be empty again.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "apply.h"
#include "log.h"
#include "reader.h"
#include "store.h"
#include "store_int.h" /* cs_store_db: to look at what was written */
#include "wire.h"

#define NCONN 2
#define MAX_DEVICES 256u            /* per run, as ingest */
#define MAX_FRAME_VALUES (1u << 18) /* n * (m + 1) of a SAMPLES frame, repeats too */
#define MAX_INPUT_VALUES (1u << 20) /* the same over one input */
#define MAX_COLUMNS 2048u           /* sum of m over the SAMPLES of one input */
#define READ_DEVICES 16u            /* devices of a run scanned */
#define READ_METRICS 32u            /* metrics of a device scanned */
#define READ_GROUP 8u               /* metrics per scan */
#define REOPEN_EVERY 1000u

/* A SAMPLES frame the writer accepted, its arrays taken from the message
 * and its metric ids turned into store ids. */
typedef struct batch {
	uint32_t device, n, m;
	uint64_t seq0;
	uint32_t *ids;
	uint64_t *t0, *t1;
	double *values;
} batch;

/* What one run should hold. */
typedef struct run_rec {
	int64_t id;
	int discarded;
	int ended;     /* cs_writer_end returned 0 */
	int complete;  /* ... with status complete */
	int unchecked; /* a store error that may have lost data: not checked */
	uint32_t nmetrics;
	uint64_t samples, ranges;
	uint32_t devs[MAX_DEVICES], ndevs; /* device rows written */
	batch *b;
	size_t nb, cap;
} run_rec;

/* One producer connection: its frames go through cs_apply, and what the
 * hooks report is recorded in run. */
typedef struct conn {
	cs_apply *a;
	run_rec *run;
} conn;

/* One sample a device should hold, in sequence order. */
typedef struct samp {
	uint64_t seq, t0, t1;
	uint32_t b, i; /* batch and row in it */
} samp;

static cs_store *s;
static conn conns[NCONN];
static run_rec **runs;
static size_t nruns, runs_cap;
static uint64_t columns, budget;
static uint64_t rng;

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort(); /* the harness's own memory */
	return p;
}

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

/* A finding: what the store returned differs from what was written. */
__attribute__((format(printf, 2, 3), noreturn))
static void bad(const run_rec *r, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "fuzz_store: run %lld: ", (long long)(r ? r->id : -1));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (store: %s)\n", cs_store_errmsg(s));
	abort();
}

static int has_u32(const uint32_t *v, uint32_t n, uint32_t x)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* ---- the writer side, as ingest applies frames ---- */

/* A failure that may have lost written data (ingest's degrade()): what is
 * uncommitted is rolled back and every open run cut. */
static int lost(int rc)
{
	if (rc != -ENOSPC && rc != -EIO && !cs_store_tx_lost(s))
		return 0;
	cs_store_abort(s);
	for (int i = 0; i < NCONN; i++) {
		conn *c = &conns[i];
		if (c->run)
			c->run->unchecked = 1;
		if (c->a)
			cs_apply_cut(c->a);
		c->run = NULL;
	}
	for (size_t i = 0; i < nruns; i++)
		runs[i]->unchecked = 1; /* a failing store is not checked at all */
	return 1;
}

static void note_device_row(run_rec *r, uint32_t idx)
{
	if (!has_u32(r->devs, r->ndevs, idx) && r->ndevs < MAX_DEVICES)
		r->devs[r->ndevs++] = idx;
}

static run_rec *new_run(int64_t id)
{
	if (nruns == runs_cap) {
		runs_cap = runs_cap ? runs_cap * 2 : 8;
		runs = xrealloc(runs, runs_cap * sizeof *runs);
	}
	run_rec *r = xrealloc(NULL, sizeof *r);
	memset(r, 0, sizeof *r);
	r->id = id;
	runs[nruns++] = r;
	return r;
}

static void batch_free(batch *b)
{
	free(b->ids);
	free(b->t0);
	free(b->t1);
	free(b->values);
}

/* ---- what apply reports ---- */

/* A store call for c's run failed: the store degrades, or c's run fails.
 * Anything but a refusal (-EINVAL, -EEXIST) may have left the run part
 * written: it is not checked then. */
static int hook_store_failed(void *ctx, const char *frame, int rc)
{
	conn *c = ctx;
	(void)frame;
	if (lost(rc))
		return 1;
	if (rc != -EINVAL && rc != -EEXIST && c->run)
		c->run->unchecked = 1;
	return 0;
}

static void hook_begun(void *ctx, int64_t run)
{
	conn *c = ctx;
	c->run = new_run(run);
}

static void hook_ending(void *ctx, int64_t run)
{
	conn *c = ctx;
	uint64_t samples = cs_apply_samples(c->a);
	(void)run;
	if (!c->run->unchecked && samples != c->run->samples)
		bad(c->run, "writer counts %llu samples, %llu were appended",
		    (unsigned long long)samples, (unsigned long long)c->run->samples);
}

static void hook_ended(void *ctx, int64_t run, int complete, int rc)
{
	conn *c = ctx;
	run_rec *r = c->run;
	(void)run;
	c->run = NULL;
	if (rc) {
		r->unchecked = 1;
		lost(rc);
	} else {
		r->ended = 1;
		r->complete = complete;
	}
}

static void hook_discarded(void *ctx, int64_t run)
{
	conn *c = ctx;
	(void)run;
	c->run->discarded = 1;
	c->run = NULL;
}

static void hook_device_added(void *ctx, uint32_t index)
{
	conn *c = ctx;
	note_device_row(c->run, index);
}

static void hook_metric_added(void *ctx, uint32_t id)
{
	conn *c = ctx;
	if (id != c->run->nmetrics)
		bad(c->run, "metric got id %u, expected %u", id, c->run->nmetrics);
	c->run->nmetrics++;
}

static void hook_range_added(void *ctx, const cs_range *r)
{
	conn *c = ctx;
	(void)r;
	c->run->ranges++;
}

/* Keeps a copy of a batch the writer accepted. */
static void hook_appended(void *ctx, const cs_batch *cb)
{
	conn *c = ctx;
	run_rec *r = c->run;
	if (!cb->n)
		return;
	batch b = {cb->device, cb->n, cb->m, cb->seq0, NULL, NULL, NULL, NULL};
	b.ids = xrealloc(NULL, (b.m ? b.m : 1) * sizeof *b.ids);
	b.t0 = xrealloc(NULL, b.n * sizeof *b.t0);
	b.t1 = xrealloc(NULL, b.n * sizeof *b.t1);
	b.values = xrealloc(NULL, ((size_t)b.n * b.m ? (size_t)b.n * b.m : 1) * sizeof *b.values);
	if (b.m) {
		memcpy(b.ids, cb->metrics, b.m * sizeof *b.ids);
		memcpy(b.values, cb->values, (size_t)b.n * b.m * sizeof *b.values);
	}
	memcpy(b.t0, cb->t0, b.n * sizeof *b.t0);
	memcpy(b.t1, cb->t1, b.n * sizeof *b.t1);
	if (r->nb == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		r->b = xrealloc(r->b, r->cap * sizeof *r->b);
	}
	r->b[r->nb++] = b;
	r->samples += b.n;
	note_device_row(r, b.device);
}

static const cs_apply_hooks hooks = {
	.store_failed = hook_store_failed,
	.begun = hook_begun,
	.ending = hook_ending,
	.ended = hook_ended,
	.discarded = hook_discarded,
	.appended = hook_appended,
	.device_added = hook_device_added,
	.metric_added = hook_metric_added,
	.range_added = hook_range_added,
};

/* The connection closes (its open run ends incomplete); the next frame
 * for it starts a new one. */
static void conn_close(conn *c)
{
	if (c->a)
		cs_apply_abandon(c->a);
	cs_apply_free(c->a);
	c->a = NULL;
	c->run = NULL;
}

/* A SAMPLES frame, applied reps times (the producer sending the same
 * samples again and again, later, seq and times moved on by a frame's
 * worth each time): enough for whole chunks within the fuzzer's input
 * sizes. */
static void apply_samples(conn *c, cs_wire_msg *m, uint32_t reps)
{
	cs_wire_samples *x = &m->u.samples;
	uint64_t cost = (uint64_t)x->n * reps * (x->m + 1);
	if (cost > MAX_FRAME_VALUES || budget < cost || columns + x->m > MAX_COLUMNS)
		return; /* too slow to fuzz: as if never sent */
	budget -= cost;
	columns += x->m;
	int64_t run = cs_apply_run(c->a);
	cs_apply_frame(c->a, m);
	if (!x->n)
		return;
	uint64_t step = x->t0[x->n - 1] - x->t0[0] + 1;
	cs_wire_msg r = *m;
	cs_wire_samples *y = &r.u.samples;
	y->t0 = xrealloc(NULL, x->n * sizeof *y->t0);
	y->t1 = xrealloc(NULL, x->n * sizeof *y->t1);
	for (uint32_t rep = 1; rep < reps; rep++) {
		if (cs_apply_failed(c->a) || cs_apply_run(c->a) != run)
			break;
		uint64_t shift;
		int over = __builtin_mul_overflow(step, (uint64_t)rep, &shift);
		for (uint32_t i = 0; !over && i < x->n; i++) {
			y->t0[i] = x->t0[i] + shift;
			y->t1[i] = x->t1[i] + shift;
			over = y->t0[i] < shift || y->t1[i] < shift;
		}
		if (over)
			break; /* the times would pass 2^64 */
		y->seq0 = x->seq0 + (uint64_t)rep * x->n;
		cs_apply_frame(c->a, &r);
	}
	free(y->t0);
	free(y->t1);
}

static void apply(conn *c, cs_wire_msg *m, uint32_t reps)
{
	if (!c->a && !(c->a = cs_apply_new(s, &hooks, c)))
		abort();
	if (m->type == CS_WIRE_SAMPLES && cs_apply_run(c->a) && !cs_apply_failed(c->a))
		apply_samples(c, m, reps);
	else
		cs_apply_frame(c->a, m);
}

/* ---- the reader side ---- */

typedef struct scan_ck {
	const run_rec *r;
	const samp *sv;
	size_t next, hi; /* rows [next, hi) of sv still expected */
	const uint32_t *mids;
	uint32_t g;
	uint32_t cached; /* batch whose columns are in col */
	int col[READ_GROUP];
	const char *what;
} scan_ck;

static int row_fn(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	scan_ck *k = ctx;
	const run_rec *r = k->r;
	if (k->next >= k->hi)
		bad(r, "%s: row seq %llu past the %zu expected", k->what, (unsigned long long)seq,
		    k->hi);
	const samp *e = &k->sv[k->next++];
	if (seq != e->seq || t0 != e->t0 || t1 != e->t1)
		bad(r, "%s: row seq %llu [%llu, %llu], expected seq %llu [%llu, %llu]", k->what,
		    (unsigned long long)seq, (unsigned long long)t0, (unsigned long long)t1,
		    (unsigned long long)e->seq, (unsigned long long)e->t0,
		    (unsigned long long)e->t1);
	const batch *b = &r->b[e->b];
	if (k->cached != e->b) {
		for (uint32_t j = 0; j < k->g; j++) {
			k->col[j] = -1;
			for (uint32_t c = 0; c < b->m; c++)
				if (b->ids[c] == k->mids[j])
					k->col[j] = (int)c;
		}
		k->cached = e->b;
	}
	for (uint32_t j = 0; j < k->g; j++) {
		double want = k->col[j] < 0 ? (double)NAN : b->values[(size_t)e->i * b->m + (uint32_t)k->col[j]];
		if (isnan(want) != isnan(v[j]) || (!isnan(want) && memcmp(&want, &v[j], sizeof want)))
			bad(r, "%s: seq %llu metric %u: read %a, appended %a", k->what,
			    (unsigned long long)seq, k->mids[j], v[j], want);
	}
	return 0;
}

/* A raw scan of device dev must give exactly rows [lo, hi) of sv. */
static void check_raw(const run_rec *r, const cs_scan *q, const samp *sv, size_t lo, size_t hi,
		      const char *what)
{
	scan_ck k = {r, sv, lo, hi, q->metrics, q->m, UINT32_MAX, {0}, what};
	int rc = cs_read_raw(s, q, row_fn, &k);
	if (rc)
		bad(r, "%s: device %u: read failed: %d", what, q->device, rc);
	if (k.next != hi)
		bad(r, "%s: device %u: %zu rows read, %zu expected", what, q->device, k.next - lo,
		    hi - lo);
}

typedef struct bucket_ck {
	const run_rec *r;
	uint32_t g, nb;
	const uint64_t *want; /* nb * g counts */
	uint32_t seen;
} bucket_ck;

static int bucket_fn(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *aggs)
{
	bucket_ck *k = ctx;
	if (i != k->seen++ || i >= k->nb)
		bad(k->r, "bucket %u reported out of order", i);
	for (uint32_t j = 0; j < k->g; j++)
		if (aggs[j].count != k->want[(size_t)i * k->g + j])
			bad(k->r, "bucket %u [%llu, %llu) column %u: count %llu, expected %llu", i,
			    (unsigned long long)t0, (unsigned long long)t1, j,
			    (unsigned long long)aggs[j].count,
			    (unsigned long long)k->want[(size_t)i * k->g + j]);
	return 0;
}

static void check_buckets(const run_rec *r, cs_scan *q, uint32_t nb, const samp *sv, size_t n)
{
	uint64_t *want = xrealloc(NULL, (size_t)nb * (q->m ? q->m : 1) * sizeof *want);
	memset(want, 0, (size_t)nb * (q->m ? q->m : 1) * sizeof *want);
	uint64_t width = q->to - q->from;
	for (size_t i = 0; i < n; i++) {
		if (sv[i].t0 < q->from || sv[i].t0 >= q->to)
			continue;
		__extension__ unsigned __int128 x = (unsigned __int128)(sv[i].t0 - q->from) * nb;
		uint32_t bk = (uint32_t)(x / width);
		const batch *b = &r->b[sv[i].b];
		for (uint32_t j = 0; j < q->m; j++)
			for (uint32_t c = 0; c < b->m; c++)
				if (b->ids[c] == q->metrics[j] &&
				    !isnan(b->values[(size_t)sv[i].i * b->m + c]))
					want[(size_t)bk * q->m + j]++;
	}
	bucket_ck k = {r, q->m, nb, want, 0};
	cs_read_stats st;
	int rc = cs_read_buckets(s, q, nb, bucket_fn, &k, &st);
	if (rc)
		bad(r, "buckets [%llu, %llu) x %u: read failed: %d", (unsigned long long)q->from,
		    (unsigned long long)q->to, nb, rc);
	if (k.seen != nb)
		bad(r, "%u of %u buckets reported", k.seen, nb);
	free(want);
}

/* First index in sv[0..n) whose seq (by_t0: t0) is >= x (sv is sorted by
 * both). */
static size_t lower(const samp *sv, size_t n, uint64_t x, int by_t0)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((by_t0 ? sv[mid].t0 : sv[mid].seq) < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void check_device(const run_rec *r, uint32_t dev, uint64_t from, uint64_t to)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nb; i++)
		if (r->b[i].device == dev)
			n += r->b[i].n;
	samp *sv = xrealloc(NULL, n * sizeof *sv);
	uint8_t *used = xrealloc(NULL, r->nmetrics + 1);
	memset(used, 0, r->nmetrics + 1);
	size_t j = 0;
	for (uint32_t i = 0; i < r->nb; i++) {
		const batch *b = &r->b[i];
		if (b->device != dev)
			continue;
		for (uint32_t c = 0; c < b->m; c++)
			used[b->ids[c]] = 1;
		for (uint32_t k = 0; k < b->n; k++)
			sv[j++] = (samp){b->seq0 + k, b->t0[k], b->t1[k], i, k};
	}
	/* The metrics it has values for, and one it never had. */
	uint32_t mids[READ_METRICS + 1], nm = 0;
	for (uint32_t k = 0; k < r->nmetrics && nm < READ_METRICS; k++)
		if (used[k])
			mids[nm++] = k;
	for (uint32_t k = 0; k < r->nmetrics; k++) {
		if (!used[k]) {
			mids[nm++] = k;
			break;
		}
	}
	free(used);

	cs_scan q = {.run = r->id, .device = dev, .to = UINT64_MAX};
	/* Everything by sample number, a group of metrics at a time. */
	q.seq_from = 0;
	q.seq_to = UINT64_MAX;
	for (uint32_t g0 = 0; g0 < (nm ? nm : 1); g0 += READ_GROUP) {
		q.metrics = mids + g0;
		q.m = nm - g0 < READ_GROUP ? nm - g0 : READ_GROUP;
		check_raw(r, &q, sv, 0, n, "raw by seq");
	}
	q.metrics = mids;
	q.m = nm < READ_GROUP ? nm : READ_GROUP;
	/* A window of sample numbers. */
	uint64_t a = sv[rnd() % n].seq, b = sv[rnd() % n].seq + (rnd() & 1);
	if (b < a) {
		uint64_t x = a;
		a = b;
		b = x;
	}
	if (b > a) {
		q.seq_from = a;
		q.seq_to = b;
		check_raw(r, &q, sv, lower(sv, n, a, 0), lower(sv, n, b, 0), "raw seq window");
	}
	/* Everything by time, then a window of time. */
	q.seq_from = q.seq_to = 0;
	q.from = 0;
	q.to = UINT64_MAX;
	check_raw(r, &q, sv, 0, n, "raw by time");
	a = sv[rnd() % n].t0 + (rnd() % 3) - 1;
	b = sv[rnd() % n].t0 + (rnd() % 3) - 1;
	if (b < a) {
		uint64_t x = a;
		a = b;
		b = x;
	}
	q.from = a;
	q.to = b;
	check_raw(r, &q, sv, lower(sv, n, a, 1), lower(sv, n, b, 1), "raw time window");
	/* Buckets over the run's extent and over the window. */
	uint32_t nb = 1 + rnd() % 64;
	q.from = from;
	q.to = to;
	check_buckets(r, &q, nb, sv, n);
	if (b > a && b != UINT64_MAX) {
		q.from = a;
		q.to = b;
		check_buckets(r, &q, nb, sv, n);
	}
	free(sv);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int64_t count_rows(const char *table, int64_t run)
{
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE %s = ?1", table,
		 strcmp(table, "runs") ? "run" : "id");
	sqlite3_stmt *st = NULL;
	int64_t n = -1;
	if (sqlite3_prepare_v2(cs_store_db(s), sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return n;
}

static void check_run(const run_rec *r)
{
	uint32_t *v = NULL, nv = 0;
	uint64_t t_lo = 0, t_hi = 0;
	if (r->discarded) {
		/* A later run may have been given the same id. */
		for (size_t i = 0; i < nruns; i++)
			if (runs[i] != r && runs[i]->id == r->id)
				return;
		static const char *const tables[] = {"runs", "devices", "metrics", "ranges",
						     "timelines", "chunks"};
		for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
			if (count_rows(tables[i], r->id))
				bad(r, "discarded, but %s still has rows of it", tables[i]);
		if (cs_read_run_span(s, r->id, &t_lo, &t_hi) != -ENOENT)
			bad(r, "discarded, but its span reads");
		return;
	}
	if (r->unchecked || !r->ended)
		return;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(cs_store_db(s), "SELECT status, samples, t_min, t_max FROM runs"
				 " WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
		bad(r, "cannot read runs");
	sqlite3_bind_int64(st, 1, r->id);
	if (sqlite3_step(st) != SQLITE_ROW)
		bad(r, "ended, but not in runs");
	const char *status = (const char *)sqlite3_column_text(st, 0);
	const char *want = r->complete ? "complete" : "incomplete";
	if (!status || strcmp(status, want))
		bad(r, "status %s, expected %s", status ? status : "NULL", want);
	if ((uint64_t)sqlite3_column_int64(st, 1) != r->samples)
		bad(r, "runs.samples %lld, %llu appended", (long long)sqlite3_column_int64(st, 1),
		    (unsigned long long)r->samples);
	/* t_min: the first t0; t_max: the largest t1 (docs/schema.md). */
	uint64_t min_t0 = UINT64_MAX, max_t0 = 0, max_t1 = 0;
	for (size_t i = 0; i < r->nb; i++) {
		const batch *b = &r->b[i];
		for (uint32_t k = 0; k < b->n; k++) {
			min_t0 = b->t0[k] < min_t0 ? b->t0[k] : min_t0;
			max_t0 = b->t0[k] > max_t0 ? b->t0[k] : max_t0;
			max_t1 = b->t1[k] > max_t1 ? b->t1[k] : max_t1;
		}
	}
	uint64_t t_min = (uint64_t)sqlite3_column_int64(st, 2);
	uint64_t t_max = (uint64_t)sqlite3_column_int64(st, 3);
	if (r->samples && (t_min != min_t0 || t_max != max_t1))
		bad(r, "runs.t_min/t_max %llu/%llu, appended t0 from %llu, t1 up to %llu",
		    (unsigned long long)t_min, (unsigned long long)t_max,
		    (unsigned long long)min_t0, (unsigned long long)max_t1);
	sqlite3_finalize(st);
	if (count_rows("ranges", r->id) != (int64_t)r->ranges)
		bad(r, "%lld ranges, %llu added", (long long)count_rows("ranges", r->id),
		    (unsigned long long)r->ranges);
	if (count_rows("devices", r->id) != (int64_t)r->ndevs)
		bad(r, "%lld device rows, %u expected", (long long)count_rows("devices", r->id),
		    r->ndevs);

	if (cs_read_metric_ids(s, r->id, &v, &nv))
		bad(r, "metric ids do not read");
	if (nv != r->nmetrics)
		bad(r, "%u metrics read, %u declared", nv, r->nmetrics);
	for (uint32_t i = 0; i < nv; i++)
		if (v[i] != i)
			bad(r, "metric %u has id %u", i, v[i]);
	free(v);

	/* Devices with samples, ascending. */
	uint32_t want_devs[MAX_DEVICES], nd = 0;
	for (size_t i = 0; i < r->nb; i++)
		if (!has_u32(want_devs, nd, r->b[i].device) && nd < MAX_DEVICES)
			want_devs[nd++] = r->b[i].device;
	qsort(want_devs, nd, sizeof *want_devs, cmp_u32);
	v = NULL;
	nv = 0;
	if (cs_read_devices(s, r->id, &v, &nv))
		bad(r, "devices do not read");
	if (nv != nd || (nd && memcmp(v, want_devs, nd * sizeof *v)))
		bad(r, "%u devices with samples read, %u expected", nv, nd);
	free(v);

	int rc = cs_read_run_extent(s, r->id, &t_lo, &t_hi);
	if (!r->samples) {
		if (rc != -ENODATA)
			bad(r, "no samples, but its extent reads: %d", rc);
		return;
	}
	uint64_t end = t_max > max_t0 + 1 ? t_max : max_t0 + 1;
	if (rc || t_lo != min_t0 || t_hi != end)
		bad(r, "extent [%llu, %llu) rc %d, expected [%llu, %llu)",
		    (unsigned long long)t_lo, (unsigned long long)t_hi, rc,
		    (unsigned long long)min_t0, (unsigned long long)end);
	for (uint32_t i = 0; i < nd && i < READ_DEVICES; i++)
		check_device(r, want_devs[i], t_lo, t_hi);
}

static void check_empty(void)
{
	static const char sql[] =
		"SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM devices) +"
		" (SELECT count(*) FROM metrics) + (SELECT count(*) FROM ranges) +"
		" (SELECT count(*) FROM timelines) + (SELECT count(*) FROM chunks)";
	sqlite3_stmt *st = NULL;
	int64_t n = -1;
	if (sqlite3_prepare_v2(cs_store_db(s), sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (n)
		bad(NULL, "%lld rows left after deleting every run", (long long)n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned uses;
	char err[1024];
	if (!s || ++uses % REOPEN_EVERY == 0) {
		cs_log_set_level(CS_LOG_ERROR);
		cs_store_close(s);
		s = cs_store_open(":memory:", CS_OPEN_CREATE, err, sizeof err);
		if (!s)
			abort();
		cs_store_set_commit_values(s, 0); /* as ingest: commits are ours */
	}
	rng = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < size; i++)
		rng = (rng ^ data[i]) * 0x100000001b3ull;
	rng |= 1;
	columns = 0;
	budget = MAX_INPUT_VALUES;

	size_t off = 0;
	while (off < size) {
		uint8_t ctl = data[off++];
		cs_wire_msg m;
		size_t used;
		if (cs_wire_decode(data + off, size - off, &m, &used, err, sizeof err))
			break;
		off += used;
		conn *c = &conns[ctl & 1];
		apply(c, &m, 1u << ((ctl >> 4) & 7));
		cs_wire_msg_free(&m);
		int commit = (ctl >> 1) & 3;
		if (commit == 1 || commit == 2) {
			int rc = cs_store_commit_ex(s, commit == 2);
			if (rc && !lost(rc))
				for (int i = 0; i < NCONN; i++)
					if (conns[i].run)
						conns[i].run->unchecked = 1;
		}
		if (ctl & 8)
			conn_close(c);
	}
	for (int i = 0; i < NCONN; i++)
		conn_close(&conns[i]);
	int crc = cs_store_commit(s);

	for (size_t i = 0; !crc && i < nruns; i++)
		check_run(runs[i]);
	int drc = crc;
	for (size_t i = 0; i < nruns; i++) {
		int rc = cs_store_delete_run(s, runs[i]->id);
		drc = drc ? drc : rc;
	}
	if (!drc)
		check_empty();
	else
		uses = REOPEN_EVERY - 1; /* start the next input on a fresh store */
	for (size_t i = 0; i < nruns; i++) {
		run_rec *r = runs[i];
		for (size_t j = 0; j < r->nb; j++)
			batch_free(&r->b[j]);
		free(r->b);
		free(r);
	}
	nruns = 0;
	return 0;
}
