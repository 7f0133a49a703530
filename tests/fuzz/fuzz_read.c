/*
 * fuzz_read.c - libFuzzer target: the readers on a stored run one of whose
 * rows holds damaged data. A run of three metrics (noisy integers about a
 * rising trend, that take entropy-coded blocks, most of them against
 * lines; doubles; integers with absent values) over
 * two whole chunks and a partial third is written once into an in-memory
 * store. Each input damages one row and reads the run every way the
 * daemon and the CLI do: raw scans by time and by sample number, whole
 * and in windows (the first chunk of a scan among those damaged), bucketed
 * scans whole and in parts, and a full check. Any read may fail; none may
 * crash, hang or touch memory outside its own. The row is then put back.
 *
 * Input: byte 0 picks the row (a value chunk of metric 0..2, the first,
 * second or last of the run, or a timeline), byte 1 how it is damaged:
 * 0 replaced by the rest of the input, 1 the rest XORed onto it at the
 * offset in bytes 2-3, 2 cut to the length in bytes 2-3, 3 the rest
 * written over it at that offset (the row keeps its length).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "check.h"
#include "log.h"
#include "reader.h"
#include "store.h"
#include "store_int.h" /* cs_store_db: to damage a row */

#define CHUNK 1024u
#define N (2 * CHUNK + 452u)
#define M 3u

static cs_store *s;
static uint32_t ids[M];
static uint64_t t_end;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_read: %s: %s\n", what, s ? cs_store_errmsg(s) : "");
	abort();
}

static void build(void)
{
	char err[256];
	cs_log_set_level(CS_LOG_ERROR);
	s = cs_store_open(":memory:", CS_OPEN_CREATE, err, sizeof err);
	if (!s)
		die(err);
	cs_store_set_chunk_samples(s, CHUNK);
	cs_run_info ri = {.kind = "hw", .source = "fuzz", .name = "r", .time_unit = "ns"};
	cs_writer *w = cs_writer_begin(s, &ri, err, sizeof err);
	if (!w)
		die(err);
	cs_device_info d = {.index = 0, .name = "gpu"};
	if (cs_writer_add_device(w, &d))
		die("device");
	const char *names[M] = {"noise", "rate", "gaps"};
	for (uint32_t k = 0; k < M; k++) {
		cs_metric_info mi = {.name = names[k]};
		if (cs_writer_add_metric(w, &mi, &ids[k]))
			die("metric");
	}
	static uint64_t t0[N], t1[N];
	static double v[N * M];
	uint32_t x = 12345;
	for (uint32_t i = 0; i < N; i++) {
		x = x * 1103515245u + 12345u;
		t0[i] = 1000000 + 10000 * (uint64_t)i + (x >> 28);
		t1[i] = t0[i] + 9000;
		v[i * M + 0] = 50000 + (double)(i % 3000) + (double)((x >> 8) % 201);
		v[i * M + 1] = (double)(x >> 10) / 1000.0;
		v[i * M + 2] = (x >> 20) % 7 == 0 ? NAN : (double)(i % 13);
	}
	t_end = t1[N - 1] + 1;
	cs_batch b = {0, 0, N, M, ids, t0, t1, v};
	if (cs_writer_append(w, &b) || cs_store_commit(s) ||
	    cs_writer_end(w, "complete", NULL))
		die("writing the run");
}

/* What a read gave, touched so that every value is read. */
typedef struct seen {
	double sum;
	uint32_t m; /* metrics in the scan */
} seen;

static int on_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *values)
{
	(void)seq, (void)t0, (void)t1;
	seen *r = ctx;
	for (uint32_t k = 0; k < r->m; k++)
		if (values[k] == values[k])
			r->sum += values[k];
	return 0;
}

static int on_bucket(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *aggs)
{
	(void)i, (void)t0, (void)t1;
	seen *r = ctx;
	for (uint32_t k = 0; k < r->m; k++)
		r->sum += (double)aggs[k].count;
	return 0;
}

static void on_problem(void *arg, const char *problem)
{
	(void)problem;
	++*(int *)arg;
}

/* Every read of the run, each from a fresh start. */
static void read_all(void)
{
	seen all = {0, M}, one_m = {0, 1};
	cs_scan q = {.run = 1, .device = 0, .m = M, .metrics = ids, .from = 0, .to = UINT64_MAX};
	cs_read_raw(s, &q, on_row, &all);
	cs_scan one = q;
	for (uint32_t k = 0; k < M; k++) {
		one.m = 1;
		one.metrics = &ids[k];
		cs_read_raw(s, &one, on_row, &one_m);
	}
	/* windows by time, the first inside the last chunk */
	uint64_t edges[][2] = {{1000000 + 10000 * (uint64_t)(2 * CHUNK + 7), UINT64_MAX},
			       {1000000 + 10000 * (uint64_t)(CHUNK - 3), 1000000 + 10000 * (uint64_t)(CHUNK + 40)},
			       {0, 1000000 + 10000 * 5}};
	for (size_t e = 0; e < sizeof edges / sizeof *edges; e++) {
		cs_scan wq = q;
		wq.from = edges[e][0];
		wq.to = edges[e][1];
		cs_read_raw(s, &wq, on_row, &all);
	}
	/* by sample number, pulled chunk by chunk as the HTTP side does */
	cs_scan sq = q;
	sq.seq_from = CHUNK + 100;
	sq.seq_to = N;
	cs_raw_iter *it = cs_raw_open(s, &sq);
	if (it) {
		while (cs_raw_next(it, on_row, &all) == 1)
			;
		cs_raw_close(it);
	}
	cs_scan bq = q;
	bq.to = t_end;
	cs_read_stats st;
	cs_read_buckets(s, &bq, 7, on_bucket, &all, &st);
	cs_read_buckets(s, &bq, 1000, on_bucket, &all, &st);
	cs_read_buckets_part(s, &bq, 300, 100, 200, on_bucket, &all, &st);
	int problems = 0;
	cs_check_stats cst;
	cs_store_check(s, 0, on_problem, &problems, &cst);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!s)
		build();
	if (size < 4)
		return 0;
	sqlite3 *db = cs_store_db(s);
	static const char *const pick[] = {
		"SELECT id, data FROM chunks WHERE metric = ?1 ORDER BY seq0 LIMIT 1 OFFSET ?2",
		"SELECT rowid, data FROM timelines ORDER BY seq0 LIMIT 1 OFFSET ?2",
	};
	unsigned sel = data[0] % 10, mode = data[1] % 4;
	unsigned off = (unsigned)data[2] | (unsigned)data[3] << 8;
	int timeline = sel == 9;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, pick[timeline], -1, &st, NULL) != SQLITE_OK)
		die("select");
	sqlite3_bind_int(st, 1, (int)ids[sel % M]);
	sqlite3_bind_int(st, 2, timeline ? data[0] / 10 % 3 : (int)(sel / M));
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return 0;
	}
	int64_t row = sqlite3_column_int64(st, 0);
	size_t len = (size_t)sqlite3_column_bytes(st, 1);
	uint8_t *orig = malloc(len + 1), *bad = malloc(len + size + 1);
	if (!orig || !bad)
		die("memory");
	memcpy(orig, sqlite3_column_blob(st, 1), len);
	sqlite3_finalize(st);
	const uint8_t *rest = data + 4;
	size_t nrest = size - 4, blen = len;
	memcpy(bad, orig, len);
	switch (mode) {
	case 0:
		memcpy(bad, rest, nrest);
		blen = nrest;
		break;
	case 1:
		for (size_t i = 0; i < nrest && off + i < len; i++)
			bad[off + i] ^= rest[i];
		break;
	case 2:
		blen = off < len ? off : len;
		break;
	default:
		for (size_t i = 0; i < nrest && off + i < len; i++)
			bad[off + i] = rest[i];
		break;
	}
	const char *put = timeline ? "UPDATE timelines SET data = ?1 WHERE rowid = ?2"
				   : "UPDATE chunks SET data = ?1 WHERE id = ?2";
	for (int pass = 0; pass < 2; pass++) {
		if (sqlite3_prepare_v2(db, put, -1, &st, NULL) != SQLITE_OK)
			die("update");
		sqlite3_bind_blob(st, 1, pass ? orig : bad, (int)(pass ? len : blen), SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, row);
		if (sqlite3_step(st) != SQLITE_DONE)
			die("update");
		sqlite3_finalize(st);
		if (!pass)
			read_all();
	}
	free(orig);
	free(bad);
	return 0;
}
