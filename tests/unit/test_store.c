/* test_store.c - schema, migration refusal, the batch writer, dead writers. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "pack.h"
#include "reader.h"
#include "store.h"
#include "store_int.h" /* cs_store_db: to look at what was written */
#include "testutil.h"

static cs_store *open_new(const char *name)
{
	char err[512];
	unlink(tu_path(name));
	cs_store *s = cs_store_open(tu_path(name), CS_OPEN_CREATE, err, sizeof err);
	if (!s)
		fail_msg("open %s: %s", name, err);
	cs_store_set_chunk_samples(s, CS_CHUNK_SAMPLES); /* the chunk counts below */
	return s;
}

static int64_t sql_int(cs_store *s, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(cs_store_db(s), sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static const cs_run_info run_info = {.kind = "hw", .source = "test", .name = "t", .time_unit = "ns"};

static void test_schema_created(void **state)
{
	(void)state;
	cs_store *s = open_new("schema.db");
	assert_int_equal(sql_int(s, "PRAGMA user_version"), CS_SCHEMA_VERSION);
	assert_int_equal(sql_int(s, "PRAGMA application_id"), CS_APPLICATION_ID);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
				    " AND name IN ('runs','devices','metrics','ranges',"
				    "'timelines','chunks')"),
			 6);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(cs_store_db(s), "PRAGMA journal_mode", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	cs_store_close(s);
	char err[512];
	s = cs_store_open(tu_path("schema.db"), CS_OPEN_READONLY, err, sizeof err);
	assert_non_null(s);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM runs"), 0);
	cs_store_close(s);
	cs_store_close(NULL);
}

static void expect_refusal(const char *path, int flags, const char *needle)
{
	char err[512] = "";
	cs_store *s = cs_store_open(path, flags, err, sizeof err);
	if (s)
		fail_msg("%s opened, expected refusal with '%s'", path, needle);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
}

static void test_refuses_foreign_and_newer(void **state)
{
	(void)state;
	tu_write_file(tu_path("text.db"), "this is not a database at all, just some text\n");
	expect_refusal(tu_path("text.db"), CS_OPEN_CREATE, "not a SQLite database");

	sqlite3 *db;
	assert_int_equal(sqlite3_open(tu_path("other.db"), &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	expect_refusal(tu_path("other.db"), CS_OPEN_CREATE, "not a cyclescope");

	cs_store *s = open_new("newer.db");
	cs_store_close(s);
	assert_int_equal(sqlite3_open(tu_path("newer.db"), &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	expect_refusal(tu_path("newer.db"), CS_OPEN_CREATE, "newer than this cyclescope");
	expect_refusal(tu_path("newer.db"), CS_OPEN_READONLY, "upgrade cyclescope");

	tu_write_file(tu_path("empty.db"), "");
	expect_refusal(tu_path("empty.db"), CS_OPEN_READONLY, "not a cyclescope database yet");
	expect_refusal(tu_path("missing-dir/x.db"), CS_OPEN_CREATE, "cannot open");
	/* The refused files are untouched. */
	assert_int_equal(sqlite3_open(tu_path("other.db"), &db), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL), SQLITE_OK);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

typedef struct collected {
	uint32_t m;
	uint64_t n;
	uint64_t *seq, *t0, *t1;
	double *v;
} collected;

static int collect(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	collected *c = ctx;
	c->seq[c->n] = seq;
	c->t0[c->n] = t0;
	c->t1[c->n] = t1;
	memcpy(c->v + c->n * c->m, v, c->m * sizeof *v);
	c->n++;
	return 0;
}

#define N_ODD 13000
#define M_ODD 3

static void test_odd_batches_roundtrip(void **state)
{
	(void)state;
	cs_store *s = open_new("odd.db");
	char err[256];
	cs_writer *w = cs_writer_begin(s, &run_info, err, sizeof err);
	assert_non_null(w);
	uint32_t ids[M_ODD];
	const char *names[M_ODD] = {"lts__t_sectors.sum", "sm__cycles_active.avg", "ratio.pct"};
	for (int k = 0; k < M_ODD; k++) {
		cs_metric_info mi = {.name = names[k], .kind = k == 2 ? "ratio" : NULL};
		assert_int_equal(cs_writer_add_metric(w, &mi, &ids[k]), 0);
		assert_int_equal(ids[k], (uint32_t)k);
	}
	static uint64_t t0[N_ODD], t1[N_ODD];
	static double v[N_ODD * M_ODD], expect[N_ODD * M_ODD];
	uint64_t seed = 11, t = 5000;
	for (int i = 0; i < N_ODD; i++) {
		t0[i] = t;
		t1[i] = t + 100 + (uint64_t)(i % 3);
		t += (i % 500 == 0) ? 0 : 100 + tu_rand(&seed) % 7; /* equal t0s allowed */
		v[i * M_ODD + 0] = (double)(tu_rand(&seed) % 1000000);
		v[i * M_ODD + 1] = (double)(tu_rand(&seed) % 1000) / 3.0;
		v[i * M_ODD + 2] = i % 11 == 0 ? (double)NAN : (i % 13 == 0 ? -0.0 : (double)i);
	}
	memcpy(expect, v, sizeof v);
	static const uint32_t sizes[] = {1, 7, 4095, 4097, 333, 1, 128, 129, 2000};
	uint32_t done = 0, si = 0, batch_no = 0;
	while (done < N_ODD) {
		uint32_t n = sizes[si++ % 9];
		if (n > N_ODD - done)
			n = N_ODD - done;
		if (batch_no++ % 4 == 3) {
			/* This batch carries metrics 2 and 0 only, in that order. */
			static double sub[4097 * 2];
			uint32_t sub_ids[2] = {ids[2], ids[0]};
			for (uint32_t i = 0; i < n; i++) {
				sub[i * 2] = v[(done + i) * M_ODD + 2];
				sub[i * 2 + 1] = v[(done + i) * M_ODD + 0];
				expect[(done + i) * M_ODD + 1] = NAN;
			}
			cs_batch b = {0, done, n, 2, sub_ids, t0 + done, t1 + done, sub};
			assert_int_equal(cs_writer_append(w, &b), 0);
		} else {
			cs_batch b = {0, done, n, M_ODD, ids, t0 + done, t1 + done, v + (size_t)done * M_ODD};
			assert_int_equal(cs_writer_append(w, &b), 0);
		}
		done += n;
		if (si == 4)
			assert_int_equal(cs_store_commit(s), 0); /* partial chunk, rewritten later */
	}
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM timelines"), (N_ODD + 4095) / 4096);
	assert_int_equal(sql_int(s, "SELECT sum(n) FROM timelines"), N_ODD);
	assert_int_equal(sql_int(s, "SELECT samples FROM runs"), N_ODD);
	assert_int_equal(sql_int(s, "SELECT status = 'complete' FROM runs"), 1);
	cs_store_close(s);

	s = cs_store_open(tu_path("odd.db"), CS_OPEN_READONLY, err, sizeof err);
	assert_non_null(s);
	collected c = {M_ODD, 0, malloc(N_ODD * 8), malloc(N_ODD * 8), malloc(N_ODD * 8),
		       malloc(N_ODD * M_ODD * 8)};
	cs_scan q = {.run = 1, .device = 0, .m = M_ODD, .metrics = ids, .from = 0, .to = UINT64_MAX};
	assert_int_equal(cs_read_raw(s, &q, collect, &c), 0);
	assert_int_equal(c.n, N_ODD);
	for (int i = 0; i < N_ODD; i++) {
		assert_int_equal(c.seq[i], (uint64_t)i);
		assert_int_equal(c.t0[i], t0[i]);
		assert_int_equal(c.t1[i], t1[i]);
		for (int k = 0; k < M_ODD; k++) {
			double e = expect[i * M_ODD + k], got = c.v[i * M_ODD + k];
			if (isnan(e))
				assert_true(isnan(got));
			else if (!tu_same_bits(e, got))
				fail_msg("sample %d metric %d: %.17g != %.17g", i, k, got, e);
		}
	}
	/* NaN is stored as absent, never 0: the chunk aggregates count only
	 * present values. */
	int64_t absent = 0;
	for (int i = 0; i < N_ODD; i++)
		absent += isnan(expect[i * M_ODD + 2]);
	assert_int_equal(sql_int(s, "SELECT sum(count) FROM chunks WHERE metric = 2"), N_ODD - absent);
	/* A window of the raw scan. */
	c.n = 0;
	cs_scan win = {.run = 1, .device = 0, .m = M_ODD, .metrics = ids, .from = t0[5000], .to = t0[9000]};
	assert_int_equal(cs_read_raw(s, &win, collect, &c), 0);
	uint64_t want = 0;
	for (int i = 0; i < N_ODD; i++)
		want += t0[i] >= t0[5000] && t0[i] < t0[9000];
	assert_int_equal(c.n, want);
	free(c.seq);
	free(c.t0);
	free(c.t1);
	free(c.v);
	cs_store_close(s);
}

static void expect_einval(cs_store *s, cs_writer *w, const cs_batch *b, const char *needle)
{
	assert_int_equal(cs_writer_append(w, b), -EINVAL);
	if (!strstr(cs_store_errmsg(s), needle))
		fail_msg("'%s' lacks '%s'", cs_store_errmsg(s), needle);
}

static void test_writer_validation(void **state)
{
	(void)state;
	cs_store *s = open_new("valid.db");
	char err[256];
	cs_writer *w = cs_writer_begin(s, &run_info, err, sizeof err);
	uint32_t a, b2;
	cs_metric_info ma = {.name = "a"}, mb = {.name = "b"};
	assert_int_equal(cs_writer_add_metric(w, &ma, &a), 0);
	assert_int_equal(cs_writer_add_metric(w, &ma, &b2), -EEXIST);
	cs_metric_info bad = {.name = "x", .kind = "weird"};
	assert_int_equal(cs_writer_add_metric(w, &bad, &b2), -EINVAL);
	assert_int_equal(cs_writer_add_metric(w, &mb, &b2), 0);
	uint64_t t0[3] = {10, 20, 30}, t1[3] = {20, 30, 40};
	double v[6] = {1, 2, 3, 4, 5, 6};
	uint32_t ids[2] = {a, b2};
	cs_batch ok = {0, 0, 3, 2, ids, t0, t1, v};
	assert_int_equal(cs_writer_append(w, &ok), 0);
	cs_batch gap = ok;
	gap.seq0 = 5;
	expect_einval(s, w, &gap, "expected 3");
	uint64_t back[3] = {25, 26, 27}, back1[3] = {26, 27, 28};
	cs_batch dec = {0, 3, 3, 2, ids, back, back1, v};
	expect_einval(s, w, &dec, "before the previous sample");
	uint64_t f0[3] = {40, 50, 60}, f1[3] = {41, 49, 61};
	cs_batch inv = {0, 3, 3, 2, ids, f0, f1, v};
	expect_einval(s, w, &inv, "is before t0");
	uint32_t unknown[2] = {a, 7};
	cs_batch unk = {0, 3, 3, 2, unknown, f0, f0, v};
	expect_einval(s, w, &unk, "only 2 are declared");
	uint32_t dup[2] = {a, a};
	cs_batch dp = {0, 3, 3, 2, dup, f0, f0, v};
	expect_einval(s, w, &dp, "appears twice");
	/* After all that, the writer still works and nothing bad was stored. */
	cs_batch next = {0, 3, 3, 2, ids, f0, f0, v};
	assert_int_equal(cs_writer_append(w, &next), 0);
	cs_range r;
	cs_range_init(&r, "api", "cudaMemcpy", 15, 35);
	r.bytes = 4096;
	assert_int_equal(cs_writer_add_range(w, &r), 0);
	cs_range_init(&r, "kernel", "gemm", 50, 40);
	assert_int_equal(cs_writer_add_range(w, &r), -EINVAL);
	cs_device_info d = {.index = 1, .name = "NVIDIA H200", .chip = "GH100", .sm_count = 132};
	assert_int_equal(cs_writer_add_device(w, &d), 0);
	assert_int_equal(cs_writer_add_device(w, &d), -EEXIST);
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	assert_int_equal(sql_int(s, "SELECT samples FROM runs"), 6);
	assert_int_equal(sql_int(s, "SELECT bytes FROM ranges WHERE name = 'cudaMemcpy'"), 4096);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM ranges"), 1);
	assert_int_equal(sql_int(s, "SELECT sm_count FROM devices WHERE idx = 1"), 132);
	cs_run_info badrun = run_info;
	badrun.kind = "gpu";
	assert_null(cs_writer_begin(s, &badrun, err, sizeof err));
	assert_non_null(strstr(err, "'hw' or 'sim'"));
	cs_store_close(s);
}

static void test_discard_removes_run(void **state)
{
	(void)state;
	cs_store *s = open_new("discard.db");
	char err[256];
	cs_writer *w = cs_writer_begin(s, &run_info, err, sizeof err);
	uint32_t id;
	cs_metric_info mi = {.name = "a"};
	assert_int_equal(cs_writer_add_metric(w, &mi, &id), 0);
	uint64_t t[5000];
	double v[5000];
	for (int i = 0; i < 5000; i++)
		t[i] = (uint64_t)i, v[i] = i;
	cs_batch b = {0, 0, 5000, 1, &id, t, t, v};
	assert_int_equal(cs_writer_append(w, &b), 0);
	cs_writer_discard(w);
	assert_int_equal(sql_int(s, "SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM"
				    " chunks) + (SELECT count(*) FROM timelines) + (SELECT"
				    " count(*) FROM metrics)"),
			 0);
	cs_store_close(s);
}

static int count_rows(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	(void)seq, (void)t0, (void)t1, (void)v;
	++*(int *)ctx;
	return 0;
}

/* Found by fuzz_store: a run's counts are written whatever commits its
 * last chunk (another run's discard committed it, and the run's end then
 * had nothing left: samples stayed 0); t_max is the largest t1 even within
 * the first batch; a sample at t0 = INT64_MAX is found by a time scan with
 * no end. */
static void test_run_stats_and_extremes(void **state)
{
	(void)state;
	cs_store *s = open_new("stats.db");
	cs_store_set_commit_values(s, 0);
	char err[256];
	cs_writer *a = cs_writer_begin(s, &run_info, err, sizeof err);
	cs_writer *b = cs_writer_begin(s, &run_info, err, sizeof err);
	uint32_t ida, idb;
	cs_metric_info mi = {.name = "a"};
	assert_int_equal(cs_writer_add_metric(a, &mi, &ida), 0);
	assert_int_equal(cs_writer_add_metric(b, &mi, &idb), 0);
	static uint64_t t0[4096], t1[4096];
	static double v[4096];
	for (int i = 0; i < 4096; i++)
		t0[i] = 100 + 10 * (uint64_t)i, t1[i] = t0[i] + 5, v[i] = i;
	cs_batch ba = {0, 0, 4096, 1, &ida, t0, t1, v}; /* one whole chunk */
	assert_int_equal(cs_writer_append(a, &ba), 0);
	cs_batch bb = {0, 0, 10, 1, &idb, t0, t1, v};
	assert_int_equal(cs_writer_append(b, &bb), 0);
	int64_t run_a = cs_writer_run(a);
	cs_writer_discard(b);
	assert_int_equal(cs_writer_end(a, "complete", NULL), 0);
	char sql[160];
	snprintf(sql, sizeof sql, "SELECT samples FROM runs WHERE id = %lld", (long long)run_a);
	assert_int_equal(sql_int(s, sql), 4096);
	snprintf(sql, sizeof sql, "SELECT t_max FROM runs WHERE id = %lld", (long long)run_a);
	assert_int_equal(sql_int(s, sql), 100 + 10 * 4095 + 5);

	cs_writer *c = cs_writer_begin(s, &run_info, err, sizeof err);
	uint32_t idc;
	assert_int_equal(cs_writer_add_metric(c, &mi, &idc), 0);
	uint64_t c0[3] = {10, 20, 30}, c1[3] = {15, 90, 35};
	double cv[3] = {1, 2, 3};
	cs_batch bc = {0, 0, 3, 1, &idc, c0, c1, cv};
	assert_int_equal(cs_writer_append(c, &bc), 0);
	uint64_t d0[1] = {INT64_MAX}, d1[1] = {INT64_MAX};
	cs_batch bd = {0, 3, 1, 1, &idc, d0, d1, cv};
	int64_t run_c = cs_writer_run(c);
	assert_int_equal(cs_writer_end(c, "complete", NULL), 0);
	snprintf(sql, sizeof sql, "SELECT t_max FROM runs WHERE id = %lld", (long long)run_c);
	assert_int_equal(sql_int(s, sql), 90);

	cs_writer *e = cs_writer_begin(s, &run_info, err, sizeof err);
	uint32_t ide;
	assert_int_equal(cs_writer_add_metric(e, &mi, &ide), 0);
	bd.metrics = &ide;
	bd.seq0 = 0;
	assert_int_equal(cs_writer_append(e, &bd), 0);
	int64_t run_e = cs_writer_run(e);
	assert_int_equal(cs_writer_end(e, "complete", NULL), 0);
	int rows = 0;
	uint32_t id0 = 0;
	cs_scan q = {.run = run_e, .device = 0, .m = 1, .metrics = &id0, .from = 0, .to = UINT64_MAX};
	assert_int_equal(cs_read_raw(s, &q, count_rows, &rows), 0);
	assert_int_equal(rows, 1);
	cs_store_close(s);
}

/* Writes `runs` complete runs of n samples, values i * (run + 1). */
static void write_runs(cs_store *s, int runs, uint32_t n)
{
	char err[256];
	for (int r = 0; r < runs; r++) {
		cs_writer *w = cs_writer_begin(s, &run_info, err, sizeof err);
		assert_non_null(w);
		uint32_t id;
		cs_metric_info mi = {.name = "a"};
		assert_int_equal(cs_writer_add_metric(w, &mi, &id), 0);
		for (uint32_t i = 0; i < n; i += 1000) {
			uint64_t t[1000];
			double v[1000];
			for (uint32_t j = 0; j < 1000; j++)
				t[j] = i + j, v[j] = (double)(i + j) * (r + 1);
			cs_batch b = {0, i, 1000, 1, &id, t, t, v};
			assert_int_equal(cs_writer_append(w, &b), 0);
		}
		assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	}
}

static int sum_rows(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	(void)seq, (void)t0, (void)t1;
	*(double *)ctx += v[0];
	return 0;
}

static void check_runs_intact(cs_store *s, int runs, uint32_t n)
{
	for (int r = 1; r <= runs; r++) {
		uint32_t id = 0;
		double sum = 0;
		cs_scan q = {.run = r, .device = 0, .m = 1, .metrics = &id, .from = 0, .to = UINT64_MAX};
		assert_int_equal(cs_read_raw(s, &q, sum_rows, &sum), 0);
		double want = (double)n * (n - 1) / 2 * r;
		if (sum != want)
			fail_msg("run %d: sum %.0f, expected %.0f", r, sum, want);
	}
}

/* A run's meta is a JSON object; a device index past CS_MAX_DEVICE_INDEX
 * is refused, declared or first seen in samples, and nothing is stored. */
static void test_meta_and_device_limits(void **state)
{
	(void)state;
	cs_store *s = open_new("limits.db");
	char err[256] = "";
	cs_run_info info = run_info;
	info.meta = " [1,2]";
	assert_null(cs_writer_begin(s, &info, err, sizeof err));
	assert_non_null(strstr(err, "JSON object"));
	info.meta = "{\"a\": 1}";
	cs_writer *w = cs_writer_begin(s, &info, err, sizeof err);
	assert_non_null(w);
	cs_device_info di = {.index = 1024};
	assert_int_not_equal(cs_writer_add_device(w, &di), 0);
	di.index = 1023;
	assert_int_equal(cs_writer_add_device(w, &di), 0);
	uint32_t id;
	cs_metric_info mi = {.name = "a"};
	assert_int_equal(cs_writer_add_metric(w, &mi, &id), 0);
	uint64_t t[2] = {1, 2};
	double v[2] = {1, 2};
	cs_batch b = {4294967295u, 0, 2, 1, &id, t, t, v};
	assert_int_not_equal(cs_writer_append(w, &b), 0);
	b.device = 1023;
	assert_int_equal(cs_writer_append(w, &b), 0);
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(sql_int(s, "SELECT max(idx) FROM devices"), 1023);
	assert_int_equal(sql_int(s, "SELECT samples FROM runs"), 2);
	cs_store_close(s);
}

static void count_problem(void *arg, const char *msg)
{
	(void)msg;
	++*(int *)arg;
}

/* A commit that leaves the open chunk buffered (the daemon's periodic one)
 * writes a runs row counting only what it commits: the process dying right
 * after leaves a row that agrees with its data, and check compares them. */
static void test_run_counts_what_commits(void **state)
{
	(void)state;
	cs_store *s = open_new("counts.db");
	cs_store_close(s);
	pid_t pid = fork();
	if (pid == 0) {
		char err[256];
		cs_store *cs = cs_store_open(tu_path("counts.db"), 0, err, sizeof err);
		cs_store_set_commit_values(cs, 0);
		cs_store_set_chunk_samples(cs, CS_CHUNK_SAMPLES);
		cs_writer *w = cs_writer_begin(cs, &run_info, err, sizeof err);
		uint32_t id;
		cs_metric_info mi = {.name = "a"};
		cs_writer_add_metric(w, &mi, &id);
		static uint64_t t0[7000], t1[7000];
		static double v[7000];
		for (int i = 0; i < 7000; i++)
			t0[i] = 1000 + 10 * (uint64_t)i, t1[i] = t0[i] + 10, v[i] = i;
		cs_batch b = {0, 0, 7000, 1, &id, t0, t1, v}; /* a chunk and 2904 more */
		cs_writer_append(w, &b);
		cs_store_commit_ex(cs, 0);
		_exit(0); /* dies with the rest buffered */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	char err[256];
	s = cs_store_open(tu_path("counts.db"), CS_OPEN_READONLY, err, sizeof err);
	assert_non_null(s);
	assert_int_equal(sql_int(s, "SELECT coalesce(sum(n), 0) FROM timelines"), 4096);
	assert_int_equal(sql_int(s, "SELECT samples FROM runs"), 4096);
	assert_int_equal(sql_int(s, "SELECT t_max FROM runs"), 1000 + 10 * 4095 + 10);
	cs_check_stats st;
	int problems = 0;
	assert_int_equal(cs_store_check(s, 1, count_problem, &problems, &st), 0);
	assert_int_equal(problems, 0);
	cs_store_close(s);

	/* a row that claims more than its data is a problem check names */
	s = cs_store_open(tu_path("counts.db"), 0, err, sizeof err);
	assert_non_null(s);
	assert_int_equal(sqlite3_exec(cs_store_db(s), "UPDATE runs SET samples = 7000", NULL, NULL,
				      NULL),
			 SQLITE_OK);
	assert_int_equal(cs_store_check(s, 1, count_problem, &problems, &st), 0);
	assert_int_equal(problems, 1);
	cs_store_close(s);
}

static void test_dead_writer_marked_incomplete(void **state)
{
	(void)state;
	cs_store *s = open_new("dead.db");
	cs_store_close(s);
	pid_t pid = fork();
	if (pid == 0) {
		char err[256];
		cs_store *cs = cs_store_open(tu_path("dead.db"), 0, err, sizeof err);
		cs_writer *w = cs_writer_begin(cs, &run_info, err, sizeof err);
		uint32_t id;
		cs_metric_info mi = {.name = "a"};
		cs_writer_add_metric(w, &mi, &id);
		uint64_t t[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
		double v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
		cs_batch b = {0, 0, 10, 1, &id, t, t, v};
		cs_writer_append(w, &b);
		cs_store_commit(cs);
		_exit(0); /* dies without ending the run */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	char err[256];
	/* A read-only open does not change the file... */
	s = cs_store_open(tu_path("dead.db"), CS_OPEN_READONLY, err, sizeof err);
	assert_int_equal(sql_int(s, "SELECT status = 'running' FROM runs"), 1);
	cs_store_close(s);
	/* ...a read-write one marks the run, keeping what was committed. */
	s = cs_store_open(tu_path("dead.db"), 0, err, sizeof err);
	assert_non_null(s);
	assert_int_equal(sql_int(s, "SELECT status = 'incomplete' FROM runs"), 1);
	assert_int_equal(sql_int(s, "SELECT sum(count) FROM chunks"), 10);
	cs_store_close(s);
}

/* A live writer whose memory grows is not taken for dead: the process
 * start time is field 22 of /proc/PID/stat (field 23, vsize, was read,
 * so any read-write open marked live runs incomplete once the writer's
 * memory changed). The child keeps its run open, grows its address space
 * by 256 MiB, and only then lets the parent open the file read-write. */
static void test_live_writer_with_growing_memory(void **state)
{
	(void)state;
	cs_store *s = open_new("live.db");
	cs_store_close(s);
	int go[2], done[2];
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char err[256], c;
		cs_store *cs = cs_store_open(tu_path("live.db"), 0, err, sizeof err);
		cs_writer *w = cs_writer_begin(cs, &run_info, err, sizeof err);
		cs_store_commit(cs);
		void *grow = malloc(256u << 20); /* mapped: vsize grows */
		if (write(go[1], "g", 1) != 1 || read(done[0], &c, 1) != 1)
			_exit(1);
		cs_writer_end(w, "complete", NULL);
		cs_store_close(cs);
		_exit(grow ? 0 : 2);
	}
	char c, err[256];
	assert_int_equal(read(go[0], &c, 1), 1);
	s = cs_store_open(tu_path("live.db"), 0, err, sizeof err);
	int running = s ? (int)sql_int(s, "SELECT count(*) FROM runs WHERE status = 'running'") : -1;
	cs_store_close(s);
	/* the child goes on before anything is asserted, so it never waits */
	assert_int_equal(write(done[1], "d", 1), 1);
	assert_int_equal(running, 1);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(go[0]), close(go[1]), close(done[0]), close(done[1]);
}

/* A batch of timestamps only (m = 0) on a run that declared no metrics:
 * accepted, no undefined behaviour (memset on a NULL table, which UBSan
 * aborts on in the sanitizer builds). */
static void test_batch_without_metrics(void **state)
{
	(void)state;
	cs_store *s = open_new("nometrics.db");
	char err[256];
	cs_writer *w = cs_writer_begin(s, &run_info, err, sizeof err);
	assert_non_null(w);
	uint64_t t0[3] = {10, 20, 30}, t1[3] = {20, 30, 40};
	cs_batch b = {.device = 0, .seq0 = 0, .n = 3, .m = 0, .t0 = t0, .t1 = t1};
	assert_int_equal(cs_writer_append(w, &b), 0);
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	cs_store_close(s);
}

static void test_sigkill_mid_import(void **state)
{
	(void)state;
	cs_store *s = open_new("kill.db");
	cs_store_close(s);
	int pipefd[2];
	assert_int_equal(pipe(pipefd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char err[256];
		close(pipefd[0]);
		cs_store *cs = cs_store_open(tu_path("kill.db"), 0, err, sizeof err);
		write_runs(cs, 3, 20000);
		cs_store_set_commit_values(cs, 5000);
		cs_writer *w = cs_writer_begin(cs, &run_info, err, sizeof err);
		uint32_t id;
		cs_metric_info mi = {.name = "a"};
		cs_writer_add_metric(w, &mi, &id);
		if (write(pipefd[1], "go", 2) != 2)
			_exit(1);
		for (uint64_t i = 0;; i += 1000) {
			uint64_t t[1000];
			double v[1000];
			for (int j = 0; j < 1000; j++)
				t[j] = i + (uint64_t)j, v[j] = (double)j;
			cs_batch b = {0, i, 1000, 1, &id, t, t, v};
			if (cs_writer_append(w, &b))
				_exit(2);
		}
	}
	close(pipefd[1]);
	char buf[2];
	assert_int_equal(read(pipefd[0], buf, 2), 2);
	close(pipefd[0]);
	struct timespec pause = {0, 200 * 1000 * 1000};
	nanosleep(&pause, NULL);
	kill(pid, SIGKILL);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	char err[512];
	s = cs_store_open(tu_path("kill.db"), 0, err, sizeof err);
	if (!s)
		fail_msg("reopen after SIGKILL: %s", err);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(cs_store_db(s), "PRAGMA integrity_check", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM runs WHERE status = 'complete'"), 3);
	assert_int_equal(sql_int(s, "SELECT status = 'incomplete' FROM runs WHERE id = 4"), 1);
	check_runs_intact(s, 3, 20000);
	/* What the killed writer had committed reads back cleanly. */
	double sum = 0;
	uint32_t id = 0;
	cs_scan q = {.run = 4, .device = 0, .m = 1, .metrics = &id, .from = 0, .to = UINT64_MAX};
	assert_int_equal(cs_read_raw(s, &q, sum_rows, &sum), 0);
	assert_true(sql_int(s, "SELECT count(*) FROM timelines WHERE run = 4") > 0);
	cs_store_close(s);
}

/* A v3 file (tests/fixtures/store/v3.db, written by the code before v4):
 * read-only it reads as it is, without the v4 index; opened read-write it
 * is migrated, and windows read the same before and after. (Its values
 * against the source CSV: tests/cli.sh.) */
typedef struct fold {
	uint64_t rows, hash;
} fold;

static int fold_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	fold *f = ctx;
	uint64_t x[5] = {seq, t0, t1, 0, 0};
	memcpy(&x[3], &v[0], 8);
	memcpy(&x[4], &v[1], 8);
	for (int i = 0; i < 5; i++)
		f->hash = (f->hash ^ x[i]) * 0x100000001b3ull;
	f->rows++;
	return 0;
}

static void read_windows(cs_store *s, fold out[2][4])
{
	uint32_t ids[2] = {0, 1};
	const uint64_t win[4][2] = {{0, UINT64_MAX}, {1000, 2000}, {200000, 300000}, {440000, 460000}};
	for (uint32_t d = 0; d < 2; d++)
		for (int w = 0; w < 4; w++) {
			cs_scan q = {.run = 1, .device = d, .m = 2, .metrics = ids,
				     .from = win[w][0], .to = win[w][1]};
			out[d][w] = (fold){0, 0};
			assert_int_equal(cs_read_raw(s, &q, fold_row, &out[d][w]), 0);
		}
}

static void test_migrates_v3_file(void **state)
{
	(void)state;
	const char *src = getenv("CS_SRC") ? getenv("CS_SRC") : ".";
	char from[600], cmd[1400], err[512];
	snprintf(from, sizeof from, "%s/tests/fixtures/store/v3.db", src);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, tu_path("v3.db"));
	assert_int_equal(system(cmd), 0);
	cs_store *s = cs_store_open(tu_path("v3.db"), CS_OPEN_READONLY, err, sizeof err);
	if (!s)
		fail_msg("read-only open of a v3 file: %s", err);
	assert_int_equal(sql_int(s, "PRAGMA user_version"), 3);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM sqlite_master WHERE name = 'timelines_t0'"), 0);
	fold before[2][4], after[2][4];
	read_windows(s, before);
	cs_store_close(s);
	assert_int_equal(before[0][0].rows, 4500);
	assert_int_equal(before[1][0].rows, 4500);
	s = cs_store_open(tu_path("v3.db"), 0, err, sizeof err);
	if (!s)
		fail_msg("read-write open of a v3 file: %s", err);
	assert_int_equal(sql_int(s, "PRAGMA user_version"), CS_SCHEMA_VERSION);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM sqlite_master WHERE name = 'timelines_t0'"), 1);
	/* the window's first timeline is found through the new index */
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(cs_store_db(s), "EXPLAIN QUERY PLAN SELECT seq0 FROM"
					    " timelines WHERE run = 1 AND device = 0 AND"
					    " t0_first < 5000 ORDER BY t0_first DESC, seq0 DESC"
					    " LIMIT 1", -1, &st, NULL), SQLITE_OK);
	int by_index = 0;
	while (sqlite3_step(st) == SQLITE_ROW)
		by_index |= strstr((const char *)sqlite3_column_text(st, 3), "timelines_t0") != NULL;
	sqlite3_finalize(st);
	assert_true(by_index);
	read_windows(s, after);
	assert_int_equal(sqlite3_prepare_v2(cs_store_db(s), "PRAGMA integrity_check", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	cs_store_close(s);
	for (int d = 0; d < 2; d++)
		for (int w = 0; w < 4; w++) {
			assert_true(before[d][w].rows > 0);
			assert_int_equal(before[d][w].rows, after[d][w].rows);
			assert_int_equal(before[d][w].hash, after[d][w].hash);
		}
}

/* The page model of pack.h against SQLite itself: a row's record length
 * and the bytes its cell takes on a leaf page, for integers of every
 * width, REAL values stored as integers or not (and NULL for NaN), and
 * blobs that fit a page or spill to overflow pages, as dbstat reports them
 * for a table holding that one row; in 4 KiB pages (what new files take)
 * and 16 KiB ones (older files). */
static void pack_model_in_pages(uint32_t page)
{
	sqlite3 *db;
	char pragma[64];
	snprintf(pragma, sizeof pragma, "PRAGMA page_size = %u", page);
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
	uint64_t seed = 42;
	static uint8_t blob[40000];
	const int64_t ints[] = {0, 1, 2, -1, 127, 128, -129, 32767, 40000, 8388607, 8388608,
				2147483647LL, 2147483648LL, 140737488355327LL, 140737488355328LL,
				INT64_MAX, INT64_MIN};
	const double reals[] = {0.0, 1.0, 3.5, -7.0, 1e15, 2e14, 140737488355328.0, 0.1, NAN,
				-0.0, 1e300};
	for (int r = 0; r < 300; r++) {
		int64_t iv[8];
		double rv[3];
		for (int i = 0; i < 8; i++)
			iv[i] = ints[tu_rand(&seed) % (sizeof ints / sizeof *ints)];
		for (int i = 0; i < 3; i++)
			rv[i] = reals[tu_rand(&seed) % (sizeof reals / sizeof *reals)];
		size_t len = r < 100 ? tu_rand(&seed) % 300 : tu_rand(&seed) % sizeof blob;
		assert_int_equal(sqlite3_exec(db, "DROP TABLE IF EXISTS c;"
					      "CREATE TABLE c(id INTEGER PRIMARY KEY, a, b, m, s, n,"
					      " f, l, k, vmin REAL, vmax REAL, vsum REAL, data BLOB)",
					      NULL, NULL, NULL), SQLITE_OK);
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO c VALUES(?1, ?2, ?3, ?4, ?5, ?6,"
						    " ?7, ?8, ?9, ?10, ?11, ?12, ?13)", -1, &st, NULL),
				 SQLITE_OK);
		int64_t rowid = 1 + (int64_t)(tu_rand(&seed) % 3000000);
		sqlite3_bind_int64(st, 1, rowid);
		for (int i = 0; i < 8; i++)
			sqlite3_bind_int64(st, 2 + i, iv[i]);
		for (int i = 0; i < 3; i++)
			sqlite3_bind_double(st, 10 + i, rv[i]);
		sqlite3_bind_blob(st, 13, blob, (int)len, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
		size_t rec = cs_pack_record_len(iv, 8, rv, 3, len);
		uint32_t cost = cs_pack_cost(rec, rowid, page);
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT sum(payload), sum(unused) FROM dbstat"
						    " WHERE name = 'c' AND pagetype = 'leaf'", -1,
						    &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		int64_t local = sqlite3_column_int64(st, 0), unused = sqlite3_column_int64(st, 1);
		sqlite3_finalize(st);
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT coalesce(sum(payload), 0) FROM dbstat"
						    " WHERE name = 'c' AND pagetype = 'overflow'", -1,
						    &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		int64_t spilled = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if ((int64_t)rec != local + spilled)
			fail_msg("row %d: record %zu, SQLite's %lld", r, rec, (long long)(local + spilled));
		/* a one-row leaf: header 8 bytes, then the cell and its pointer */
		if ((int64_t)cost != (int64_t)page - 8 - unused)
			fail_msg("row %d (blob %zu): cost %u, SQLite's %lld", r, len, cost,
				 (long long)((int64_t)page - 8 - unused));
	}
	sqlite3_close(db);
}

static void test_pack_model_matches_sqlite(void **state)
{
	(void)state;
	for (int big = 0; big < 2; big++)
		pack_model_in_pages(big ? 16384 : 4096);
}

/* Chunk rows held back for a commit survive a failed flush: an insert made
 * to fail once (a trigger and a function, SQLite's own RAISE) fails the
 * commit, the transaction stays open, and the next commit writes every
 * row, the full chunk and the partial one rewritten meanwhile (the newer
 * version, not the older, whatever the order they are packed in). */
static int fail_left;
static void fail_once(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	int hit = sqlite3_value_int(argv[0]) == 1 && fail_left > 0;
	fail_left -= hit;
	sqlite3_result_int(ctx, hit);
}

static int sum_metric(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	(void)t0, (void)t1;
	double *acc = ctx;
	for (int k = 0; k < 3; k++) {
		if (v[k] != (double)(seq * 3 + (uint64_t)k))
			fail_msg("seq %llu metric %d: %.17g", (unsigned long long)seq, k, v[k]);
		acc[k] += v[k];
	}
	acc[3]++;
	return 0;
}

/* Values of metric k at sample seq: what test_chunk_length_by_metrics wrote. */
static int check_two(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	(void)t1;
	uint64_t *n = ctx;
	if (t0 != 1000 + 10 * seq || v[0] != (double)(seq % 977) || v[1] != (double)(7 * seq))
		fail_msg("seq %llu: t0 %llu, %.17g %.17g", (unsigned long long)seq,
			 (unsigned long long)t0, v[0], v[1]);
	if (*n != seq)
		fail_msg("sample %llu read as number %llu", (unsigned long long)seq,
			 (unsigned long long)*n);
	(*n)++;
	return 0;
}

/* A run of few metrics is written in long chunks, a wide one in short ones,
 * decided as each chunk opens: two metrics (32768 samples), 40 more
 * declared inside the second chunk (16384 from the third), 30 more inside
 * the third (4096 from the fourth). */
static void test_chunk_length_by_metrics(void **state)
{
	(void)state;
	char err[512];
	unlink(tu_path("len.db"));
	cs_store *s = cs_store_open(tu_path("len.db"), CS_OPEN_CREATE, err, sizeof err);
	assert_non_null(s);
	cs_writer *w = cs_writer_begin(s, &run_info, err, sizeof err);
	assert_non_null(w);
	uint32_t ids[2];
	for (int k = 0; k < 2; k++) {
		cs_metric_info mi = {.name = k ? "b" : "a"};
		assert_int_equal(cs_writer_add_metric(w, &mi, &ids[k]), 0);
	}
	enum { N = 90000, STEP = 1000 };
	static uint64_t t0[N], t1[N];
	static double v[N * 2];
	for (uint32_t i = 0; i < N; i++) {
		t0[i] = 1000 + 10 * (uint64_t)i;
		t1[i] = t0[i] + 10;
		v[2 * i] = i % 977;
		v[2 * i + 1] = 7.0 * i;
	}
	for (uint32_t at = 0; at < N; at += STEP) {
		if (at == 40000 || at == 70000)
			for (int k = 0; k < (at == 40000 ? 40 : 30); k++) {
				char name[16];
				snprintf(name, sizeof name, "w%d_%02d", at / 10000, k);
				cs_metric_info mi = {.name = name};
				uint32_t id;
				assert_int_equal(cs_writer_add_metric(w, &mi, &id), 0);
			}
		cs_batch b = {0, at, STEP, 2, ids, t0 + at, t1 + at, v + 2 * (size_t)at};
		assert_int_equal(cs_writer_append(w, &b), 0);
	}
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	/* 32768 + 32768 (opened with 2 metrics), 16384 (42), then 4096 + 3984 */
	assert_int_equal(sql_int(s, "SELECT group_concat(n, ',') = '32768,32768,16384,4096,3984'"
				    " FROM (SELECT n FROM timelines ORDER BY seq0)"),
			 1);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM chunks WHERE metric = 1"), 5);
	assert_int_equal(sql_int(s, "SELECT sum(count) FROM chunks WHERE metric = 1"), N);
	uint64_t n = 0;
	cs_scan q = {.run = 1, .device = 0, .m = 2, .metrics = ids, .from = 0, .to = UINT64_MAX};
	if (cs_read_raw(s, &q, check_two, &n))
		fail_msg("%s", cs_store_errmsg(s));
	assert_int_equal(n, N);
	cs_store_close(s);
}

static void test_failed_flush_keeps_rows(void **state)
{
	(void)state;
	cs_store *s = open_new("flush.db");
	sqlite3 *db = cs_store_db(s);
	assert_int_equal(sqlite3_create_function(db, "cs_fail_once", 1, SQLITE_UTF8, NULL, fail_once,
						 NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TEMP TRIGGER inject BEFORE INSERT ON main.chunks"
				      " WHEN cs_fail_once(NEW.metric)"
				      " BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
				      NULL, NULL, NULL), SQLITE_OK);
	char err[256];
	cs_writer *w = cs_writer_begin(s, &run_info, err, sizeof err);
	assert_non_null(w);
	uint32_t ids[3];
	const char *names[3] = {"a", "b", "c"};
	for (int k = 0; k < 3; k++) {
		cs_metric_info mi = {.name = names[k]};
		assert_int_equal(cs_writer_add_metric(w, &mi, &ids[k]), 0);
	}
	static uint64_t t0[5100], t1[5100];
	static double v[5100 * 3];
	for (uint32_t i = 0; i < 5100; i++) {
		t0[i] = 100 + 10 * (uint64_t)i;
		t1[i] = t0[i] + 10;
		for (int k = 0; k < 3; k++)
			v[i * 3 + k] = (double)(i * 3 + (uint32_t)k);
	}
	/* a full chunk (4096) and a partial one (904), then the failure */
	cs_batch b1 = {0, 0, 5000, 3, ids, t0, t1, v};
	assert_int_equal(cs_writer_append(w, &b1), 0);
	fail_left = 1;
	assert_int_not_equal(cs_store_commit(s), 0);
	assert_int_equal(fail_left, 0);
	/* the partial chunk grows; this commit succeeds */
	cs_batch b2 = {0, 5000, 100, 3, ids, t0 + 5000, t1 + 5000, v + 5000 * 3};
	assert_int_equal(cs_writer_append(w, &b2), 0);
	assert_int_equal(cs_store_commit(s), 0);
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	double acc[4] = {0, 0, 0, 0};
	cs_scan q = {.run = 1, .device = 0, .m = 3, .metrics = ids, .from = 0, .to = UINT64_MAX};
	if (cs_read_raw(s, &q, sum_metric, acc))
		fail_msg("%s", cs_store_errmsg(s));
	assert_true(acc[3] == 5100);
	assert_int_equal(sql_int(s, "SELECT count(*) FROM chunks"), 6);
	cs_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_migrates_v3_file),
		cmocka_unit_test(test_pack_model_matches_sqlite),
		cmocka_unit_test(test_failed_flush_keeps_rows),
		cmocka_unit_test(test_chunk_length_by_metrics),
		cmocka_unit_test(test_schema_created),
		cmocka_unit_test(test_refuses_foreign_and_newer),
		cmocka_unit_test(test_odd_batches_roundtrip),
		cmocka_unit_test(test_writer_validation),
		cmocka_unit_test(test_discard_removes_run),
		cmocka_unit_test(test_run_stats_and_extremes),
		cmocka_unit_test(test_dead_writer_marked_incomplete),
		cmocka_unit_test(test_run_counts_what_commits),
		cmocka_unit_test(test_meta_and_device_limits),
		cmocka_unit_test(test_live_writer_with_growing_memory),
		cmocka_unit_test(test_batch_without_metrics),
		cmocka_unit_test(test_sigkill_mid_import),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tu_cleanup();
	return rc;
}
