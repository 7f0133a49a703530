/* test_series.c - the series virtual table under WHERE constraints. */
#include <unistd.h>

#include "series.h"
#include "store.h"
#include "testutil.h"

#define N 10000

static const cs_run_info info = {.kind = "hw", .source = "test", .time_unit = "ns"};

/* Two runs; run r has metrics "a" and "b" on devices 0 and 1; value of
 * metric k at sample i is r*1000000 + k*100000 + i, except every 10th
 * sample of "b", which is absent. t0 = 1000 + 10*i. */
static void build(void)
{
	char err[256];
	unlink(tu_path("s.db"));
	cs_store *s = cs_store_open(tu_path("s.db"), CS_OPEN_CREATE, err, sizeof err);
	assert_non_null(s);
	cs_store_set_chunk_samples(s, CS_CHUNK_SAMPLES); /* chunks the pushdown skips */
	static uint64_t t0[N], t1[N];
	static double v[N * 2];
	for (int r = 1; r <= 2; r++) {
		cs_writer *w = cs_writer_begin(s, &info, err, sizeof err);
		uint32_t ids[2];
		cs_metric_info ma = {.name = "a"}, mb = {.name = "b"};
		assert_int_equal(cs_writer_add_metric(w, &ma, &ids[0]), 0);
		assert_int_equal(cs_writer_add_metric(w, &mb, &ids[1]), 0);
		for (uint32_t d = 0; d < 2; d++) {
			for (int i = 0; i < N; i++) {
				t0[i] = 1000 + 10 * (uint64_t)i;
				t1[i] = t0[i] + 10;
				v[i * 2] = r * 1000000 + i;
				v[i * 2 + 1] = i % 10 ? r * 1000000 + 100000 + i : (double)NAN;
			}
			cs_batch b = {d, 0, N, 2, ids, t0, t1, v};
			assert_int_equal(cs_writer_append(w, &b), 0);
		}
		assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	}
	cs_store_close(s);
}

static sqlite3 *db_g;
static cs_series_stats stats_g;

static int setup(void **state)
{
	(void)state;
	build();
	if (sqlite3_open_v2(tu_path("s.db"), &db_g, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	return cs_series_register(db_g, &stats_g) == SQLITE_OK ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	sqlite3_close(db_g);
	return 0;
}

static double q1(const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db_g, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db_g));
	if (sqlite3_step(st) != SQLITE_ROW)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db_g));
	double v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

static uint64_t decoded(const char *sql, double *result)
{
	stats_g.chunks_decoded = 0;
	*result = q1(sql);
	return stats_g.chunks_decoded;
}

static void test_counts_and_values(void **state)
{
	(void)state;
	/* 2 runs x 2 devices x (N of a + 0.9 N of b) */
	assert_true(q1("SELECT count(*) FROM series") == 2 * 2 * (N + N * 9 / 10));
	assert_true(q1("SELECT count(*) FROM series WHERE value IS NULL") == 0);
	assert_true(q1("SELECT count(*) FROM series WHERE run = 2 AND metric = 'b'") ==
		    2 * N * 9 / 10);
	assert_true(q1("SELECT value FROM series WHERE run = 2 AND metric = 'b' AND device = 1"
		       " AND seq = 1234") == 2100000 + 1234);
	assert_true(q1("SELECT t0 FROM series WHERE run = 1 AND metric = 'a' AND device = 0"
		       " AND seq = 9999") == 1000 + 10 * 9999);
	assert_true(q1("SELECT t1 - t0 FROM series WHERE run = 1 AND metric = 'a' LIMIT 1") == 10);
	/* sum over a time window equals the closed form */
	double want = 0;
	for (int i = 0; i < N; i++) {
		uint64_t t = 1000 + 10 * (uint64_t)i;
		if (t >= 20000 && t <= 40000)
			want += 1000000 + i;
	}
	assert_true(q1("SELECT sum(value) FROM series WHERE run = 1 AND metric = 'a'"
		       " AND device = 0 AND t0 BETWEEN 20000 AND 40000") == want);
	/* strict and reversed operators, seq ranges */
	assert_true(q1("SELECT count(*) FROM series WHERE run = 1 AND metric = 'a' AND device = 0"
		       " AND t0 > 1000 AND t0 < 1050") == 4);
	assert_true(q1("SELECT count(*) FROM series WHERE run = 1 AND metric = 'a' AND device = 0"
		       " AND 1050 >= t0") == 6);
	assert_true(q1("SELECT count(*) FROM series WHERE run = 1 AND metric = 'a' AND device = 0"
		       " AND seq >= 100 AND seq < 200") == 100);
	assert_true(q1("SELECT count(*) FROM series WHERE run = 1 AND metric = 'a' AND device = 0"
		       " AND t0 >= 1000.5 AND t0 <= 1030.5") == 3);
	assert_true(q1("SELECT count(*) FROM series WHERE run = 1 AND t0 = 1010") == 2 * 2);
	assert_true(q1("SELECT count(*) FROM series WHERE metric = 'nope'") == 0);
	assert_true(q1("SELECT count(*) FROM series WHERE run = NULL") == 0);
	/* joins with the plain tables work */
	assert_true(q1("SELECT count(*) FROM series s JOIN runs r ON r.id = s.run"
		       " WHERE r.id = 1 AND s.metric = 'a' AND s.seq < 10") == 20);
}

static void test_pushdown_skips_chunks(void **state)
{
	(void)state;
	double r;
	/* Everything: 2 runs x 2 metrics x 2 devices x 3 chunks. */
	assert_int_equal(decoded("SELECT count(*) FROM series", &r), 24);
	assert_int_equal(decoded("SELECT count(*) FROM series WHERE run = 2", &r), 12);
	assert_int_equal(decoded("SELECT count(*) FROM series WHERE run = 2 AND metric = 'b'", &r),
			 6);
	assert_int_equal(decoded("SELECT count(*) FROM series WHERE metric = 'b'", &r), 12);
	/* t0 in the first chunk only (samples 0..4095 have t0 < 41960) */
	assert_int_equal(decoded("SELECT count(*) FROM series WHERE run = 2 AND metric = 'b'"
				 " AND device = 1 AND t0 BETWEEN 2000 AND 3000",
				 &r),
			 1);
	assert_true(r == 101 - 11); /* i = 100..200, every 10th absent */
	assert_int_equal(decoded("SELECT count(*) FROM series WHERE run = 1 AND metric = 'a'"
				 " AND t0 >= 95000",
				 &r),
			 2);
	assert_int_equal(decoded("SELECT count(*) FROM series WHERE run = 1 AND metric = 'a'"
				 " AND seq BETWEEN 5000 AND 5001",
				 &r),
			 2);
}

static void test_corrupt_chunk_is_an_error(void **state)
{
	(void)state;
	sqlite3 *rw;
	assert_int_equal(sqlite3_open(tu_path("s.db"), &rw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(rw, "UPDATE chunks SET data = x'0102030405' WHERE run = 2"
					  " AND metric = 0 AND device = 0 AND seq0 = 0",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(rw);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db_g, "SELECT count(*) FROM series WHERE run = 2",
					    -1, &st, NULL),
			 SQLITE_OK);
	assert_int_not_equal(sqlite3_step(st), SQLITE_ROW);
	assert_non_null(strstr(sqlite3_errmsg(db_g), "corrupt chunk"));
	sqlite3_finalize(st);
	/* The rest of the store still reads. */
	assert_true(q1("SELECT count(*) FROM series WHERE run = 1") == 2 * (N + N * 9 / 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_and_values),
		cmocka_unit_test(test_pushdown_skips_chunks),
		cmocka_unit_test(test_corrupt_chunk_is_an_error),
	};
	int rc = cmocka_run_group_tests(tests, setup, teardown);
	tu_cleanup();
	return rc;
}
