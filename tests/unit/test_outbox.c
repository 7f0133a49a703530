/*
 * test_outbox.c - what a fleet shipper reads and records (outbox.h): the
 * v1 -> v2 migration that adds ship_marks, marks, the pending list moving
 * with new data and settling on the "done" mark, the rows in their
 * documented column order, the scan by sample number across chunks, and a
 * deleted run taking its marks with it.
 */
#include <unistd.h>

#include "outbox.h"
#include "reader.h"
#include "store.h"
#include "store_int.h" /* cs_store_db: to look at what was written */
#include "testutil.h"

#define N 10000
#define M 3

static cs_store *open_rw(const char *name, int fresh)
{
	char err[512];
	if (fresh)
		unlink(tu_path(name));
	cs_store *s = cs_store_open(tu_path(name), CS_OPEN_CREATE, err, sizeof err);
	if (!s)
		fail_msg("open %s: %s", name, err);
	return s;
}

/* A run of N samples x M metrics (value = seq * 10 + k, metric 1 absent on
 * every 5th sample) and two ranges. */
static cs_writer *write_run(cs_store *s, int end)
{
	char err[512];
	cs_run_info ri = {.kind = "hw", .source = "test", .name = "r", .time_unit = "ns"};
	cs_writer *w = cs_writer_begin(s, &ri, err, sizeof err);
	assert_non_null(w);
	cs_device_info d = {.index = 0, .name = "GPU"};
	assert_int_equal(cs_writer_add_device(w, &d), 0);
	uint32_t ids[M];
	const char *names[M] = {"a", "b", "c"};
	for (int k = 0; k < M; k++) {
		cs_metric_info mi = {.name = names[k]};
		assert_int_equal(cs_writer_add_metric(w, &mi, &ids[k]), 0);
	}
	uint64_t *t0 = malloc(N * sizeof *t0), *t1 = malloc(N * sizeof *t1);
	double *v = malloc((size_t)N * M * sizeof *v);
	for (int i = 0; i < N; i++) {
		t0[i] = 1000 + (uint64_t)i * 10;
		t1[i] = t0[i] + 10;
		for (int k = 0; k < M; k++)
			v[i * M + k] = k == 1 && i % 5 == 0 ? (double)NAN : i * 10.0 + k;
	}
	cs_batch b = {.device = 0, .seq0 = 0, .n = N, .m = M, .metrics = ids, .t0 = t0, .t1 = t1, .values = v};
	assert_int_equal(cs_writer_append(w, &b), 0);
	cs_range r;
	cs_range_init(&r, "kernel", "k0", 1000, 5000);
	assert_int_equal(cs_writer_add_range(w, &r), 0);
	cs_range_init(&r, "nvtx", "phase, \"one\"", 2000, 3000);
	r.bytes = 64;
	assert_int_equal(cs_writer_add_range(w, &r), 0);
	free(t0);
	free(t1);
	free(v);
	if (end) {
		assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
		return NULL;
	}
	assert_int_equal(cs_store_commit(s), 0);
	return w;
}

static void test_migrates_v1(void **state)
{
	(void)state;
	cs_store *s = open_rw("v1.db", 1);
	write_run(s, 1);
	/* make it a v1 file again: no ship_marks (v2), no runs.bad_records
	 * or runs.empty_samples (v3), no timelines_t0 (v4), no ranges.args (v5),
	 * the ranges_run_name index (v6 dropped it), no correlations (v7) */
	assert_int_equal(sqlite3_exec(cs_store_db(s), "DROP TABLE ship_marks; DROP TABLE correlations; "
				      "CREATE INDEX ranges_run_name ON ranges(run, name); "
				      "ALTER TABLE ranges DROP COLUMN args; "
				      "ALTER TABLE runs DROP COLUMN bad_records; "
				      "ALTER TABLE runs DROP COLUMN empty_samples; "
				      "DROP INDEX timelines_t0; PRAGMA user_version = 1",
				      NULL, NULL, NULL), SQLITE_OK);
	cs_store_close(s);
	char err[512] = "";
	assert_null(cs_store_open(tu_path("v1.db"), CS_OPEN_READONLY, err, sizeof err));
	assert_non_null(strstr(err, "schema version 1 needs migrating to 7"));
	s = open_rw("v1.db", 0);
	assert_int_equal(tu_q1(cs_store_db(s), "PRAGMA user_version"), CS_SCHEMA_VERSION);
	assert_int_equal(tu_q1(cs_store_db(s), "SELECT count(*) FROM sqlite_master"
			       " WHERE name = 'timelines_t0'"), 1);
	assert_int_equal(tu_q1(cs_store_db(s), "SELECT count(*) FROM sqlite_master"
			       " WHERE name = 'ranges_run_name'"), 0);
	assert_int_equal(tu_q1(cs_store_db(s), "SELECT sum(bad_records) + sum(empty_samples) FROM runs"), 0);
	assert_int_equal(tu_q1(cs_store_db(s), "SELECT count(*) FROM ship_marks"), 0);
	assert_int_equal(tu_q1(cs_store_db(s), "SELECT count(*) FROM correlations"), 0);
	assert_int_equal(tu_q1(cs_store_db(s), "SELECT count(*) FROM runs"), 1);
	cs_store_close(s);
}

typedef struct rows {
	int n;
	char text[4096];
} rows;

static int on_cells(void *p, const cs_cell *c, int n)
{
	rows *r = p;
	size_t l = strlen(r->text);
	for (int i = 0; i < n; i++) {
		char cell[256];
		if (c[i].type == CS_CELL_NULL)
			snprintf(cell, sizeof cell, "-");
		else if (c[i].type == CS_CELL_INT)
			snprintf(cell, sizeof cell, "%lld", (long long)c[i].i);
		else if (c[i].type == CS_CELL_REAL)
			snprintf(cell, sizeof cell, "%g", c[i].d);
		else
			snprintf(cell, sizeof cell, "%.*s", (int)c[i].len, c[i].s);
		l += (size_t)snprintf(r->text + l, sizeof r->text - l, "%s%s", i ? "|" : "", cell);
	}
	snprintf(r->text + l, sizeof r->text - l, "\n");
	r->n++;
	return 0;
}

static void test_marks_and_pending(void **state)
{
	(void)state;
	cs_store *s = open_rw("ob.db", 1);
	cs_writer *w = write_run(s, 0);
	int64_t mark = -1;
	assert_int_equal(cs_outbox_mark(s, "t", "u", "samples", 0, &mark), 0);
	assert_int_equal(mark, 0);
	assert_int_equal(cs_outbox_set_mark(s, "t", "u", "samples", 0, 4096), 0);
	assert_int_equal(cs_outbox_set_mark(s, "t", "u", "samples", 0, 8192), 0);
	assert_int_equal(cs_outbox_mark(s, "t", "u", "samples", 0, &mark), 0);
	assert_int_equal(mark, 8192);
	assert_int_equal(cs_outbox_mark(s, "other", "u", "samples", 0, &mark), 0);
	assert_int_equal(mark, 0);

	cs_outbox_run *runs;
	size_t n;
	assert_int_equal(cs_outbox_pending(s, "t", 0, &runs, &n), 0);
	assert_int_equal(n, 1);
	assert_true(runs[0].running);
	assert_int_equal(runs[0].last_range, 2);
	cs_outbox_run first = runs[0];
	free(runs);
	uint32_t *devs;
	uint64_t *counts;
	uint32_t nd;
	assert_int_equal(cs_outbox_device_samples(s, first.id, &devs, &counts, &nd), 0);
	assert_int_equal(nd, 1);
	assert_int_equal(counts[0], N);
	free(devs);
	free(counts);
	/* done at this fingerprint: nothing pending */
	assert_int_equal(cs_outbox_set_mark(s, "t", first.uuid, "done", 0, first.fingerprint), 0);
	assert_int_equal(cs_outbox_pending(s, "t", 0, &runs, &n), 0);
	assert_int_equal(n, 0);
	free(runs);
	/* the run ends: pending again, with a new meta fingerprint */
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	assert_int_equal(cs_outbox_pending(s, "t", first.id, &runs, &n), 0);
	assert_int_equal(n, 1);
	assert_false(runs[0].running);
	assert_true(runs[0].fingerprint != first.fingerprint);
	assert_true(runs[0].meta_fingerprint != first.meta_fingerprint);
	free(runs);
	/* another target has everything pending */
	assert_int_equal(cs_outbox_pending(s, "t2", 0, &runs, &n), 0);
	assert_int_equal(n, 1);
	free(runs);

	rows r = {0};
	assert_int_equal(cs_outbox_ranges(s, first.id, 0, 10, on_cells, &r), 0);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.text, "1|kernel|k0|1000|5000|-|-|-|-|-|-\n"
				    "2|nvtx|phase, \"one\"|2000|3000|-|-|-|-|-|64\n");
	memset(&r, 0, sizeof r);
	assert_int_equal(cs_outbox_ranges(s, first.id, 1, 10, on_cells, &r), 0);
	assert_int_equal(r.n, 1);
	memset(&r, 0, sizeof r);
	assert_int_equal(cs_outbox_metrics(s, first.id, on_cells, &r), 0);
	assert_int_equal(r.n, M);
	assert_non_null(strstr(r.text, "|b|-|counter|0\n"));
	memset(&r, 0, sizeof r);
	assert_int_equal(cs_outbox_run_row(s, first.id, on_cells, &r), 0);
	assert_int_equal(r.n, 1);
	assert_non_null(strstr(r.text, "|hw|test|r|"));
	assert_non_null(strstr(r.text, "|complete|ns|"));
	memset(&r, 0, sizeof r);
	assert_int_equal(cs_outbox_devices(s, first.id, on_cells, &r), 0);
	assert_string_equal(r.text, "0|GPU|-|-|-|-|-\n"); /* 0 = unknown: NULL */

	/* deleting the run takes its marks */
	assert_int_equal(cs_store_delete_run(s, first.id), 0);
	assert_int_equal(cs_outbox_mark(s, "t", first.uuid, "done", 0, &mark), 0);
	assert_int_equal(mark, 0);
	cs_store_close(s);
}

typedef struct seen {
	uint64_t first, next;
	int bad;
	uint64_t values;
} seen;

static int on_row(void *p, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	seen *x = p;
	if (x->next == UINT64_MAX)
		x->first = x->next = seq;
	if (seq != x->next || t0 != 1000 + seq * 10 || t1 != t0 + 10 || v[0] != seq * 10.0 ||
	    (seq % 5 == 0 ? !isnan(v[1]) : v[1] != seq * 10.0 + 1))
		x->bad++;
	x->next = seq + 1;
	x->values += 2 + !isnan(v[1]);
	return 0;
}

static void test_scan_by_seq(void **state)
{
	(void)state;
	cs_store *s = open_rw("seq.db", 1);
	write_run(s, 1);
	uint32_t ids[M] = {0, 1, 2};
	uint32_t *all;
	uint32_t nm;
	assert_int_equal(cs_read_metric_ids(s, 1, &all, &nm), 0);
	memcpy(ids, all, sizeof ids);
	free(all);
	static const uint64_t spans[][2] = {{0, 1}, {4000, 8200}, {4096, 8192}, {9990, N}, {9990, 20000}, {0, N}};
	for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
		seen x = {0, UINT64_MAX, 0, 0};
		cs_scan q = {.run = 1, .device = 0, .m = M, .metrics = ids,
			     .seq_from = spans[i][0], .seq_to = spans[i][1]};
		assert_int_equal(cs_read_raw(s, &q, on_row, &x), 0);
		uint64_t want_to = spans[i][1] < N ? spans[i][1] : N;
		if (x.bad || x.first != spans[i][0] || x.next != want_to)
			fail_msg("[%llu, %llu): got [%llu, %llu) with %d bad rows",
				 (unsigned long long)spans[i][0], (unsigned long long)spans[i][1],
				 (unsigned long long)x.first, (unsigned long long)x.next, x.bad);
	}
	cs_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_migrates_v1),
		cmocka_unit_test(test_marks_and_pending),
		cmocka_unit_test(test_scan_by_seq),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tu_cleanup();
	return rc;
}
