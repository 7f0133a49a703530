/* test_reader.c - bucketed scans against a brute-force computation. */
#include <unistd.h>

#include "reader.h"
#include "store.h"
#include "testutil.h"

#define N 30000
#define M 3

static uint64_t t0s[2][N], t1s[2][N];
static double vals[2][N * M];

static const cs_run_info info = {.kind = "sim", .source = "test", .time_unit = "cycle"};

static cs_store *build(void)
{
	char err[256];
	unlink(tu_path("r.db"));
	cs_store *s = cs_store_open(tu_path("r.db"), CS_OPEN_CREATE, err, sizeof err);
	assert_non_null(s);
	cs_writer *w = cs_writer_begin(s, &info, err, sizeof err);
	uint32_t ids[M];
	const char *names[M] = {"ints", "floats", "sparse"};
	for (int k = 0; k < M; k++) {
		cs_metric_info mi = {.name = names[k]};
		assert_int_equal(cs_writer_add_metric(w, &mi, &ids[k]), 0);
	}
	uint64_t seed = 1234;
	for (int d = 0; d < 2; d++) {
		uint64_t t = 100 + (uint64_t)d * 7;
		for (int i = 0; i < N; i++) {
			t0s[d][i] = t;
			t1s[d][i] = t + 50;
			/* irregular: gaps, repeated t0s, bursts */
			uint64_t r = tu_rand(&seed) % 100;
			t += r < 5 ? 0 : r < 95 ? 50 + r % 9 : 5000;
			vals[d][i * M + 0] = (double)(tu_rand(&seed) % 100000);
			vals[d][i * M + 1] = (double)(tu_rand(&seed) % 100000) / 1024.0 - 20;
			vals[d][i * M + 2] = tu_rand(&seed) % 4 ? (double)NAN : (double)(i % 77);
		}
		for (int i = 0; i < N; i += 1111) {
			uint32_t n = N - i < 1111 ? (uint32_t)(N - i) : 1111;
			cs_batch b = {(uint32_t)d, (uint64_t)i, n, M, ids, t0s[d] + i, t1s[d] + i,
				      vals[d] + (size_t)i * M};
			assert_int_equal(cs_writer_append(w, &b), 0);
		}
	}
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	return s;
}

typedef struct got {
	uint32_t n;
	cs_agg *aggs;
	uint64_t *lo, *hi;
} got;

static int collect(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *a)
{
	got *g = ctx;
	assert_int_equal(i, g->n);
	g->lo[i] = t0;
	g->hi[i] = t1;
	memcpy(g->aggs + (size_t)i * M, a, M * sizeof *a);
	g->n++;
	return 0;
}

static void check_window(cs_store *s, uint32_t dev, uint64_t from, uint64_t to, uint32_t nb,
			 cs_read_stats *stats)
{
	uint32_t ids[M] = {0, 1, 2};
	got g = {0, calloc((size_t)nb * M, sizeof(cs_agg)), calloc(nb, 8), calloc(nb, 8)};
	cs_agg *want = calloc((size_t)nb * M, sizeof(cs_agg));
	cs_scan q = {.run = 1, .device = dev, .m = M, .metrics = ids, .from = from, .to = to};
	assert_int_equal(cs_read_buckets(s, &q, nb, collect, &g, stats), 0);
	assert_int_equal(g.n, nb);
	assert_int_equal(g.lo[0], from);
	assert_int_equal(g.hi[nb - 1], to);
	for (int i = 0; i < N; i++) {
		uint64_t t = t0s[dev][i];
		if (t < from || t >= to)
			continue;
		/* brute force: the documented rule, in long double */
		uint32_t b = (uint32_t)((long double)(t - from) * nb / (long double)(to - from));
		if (b >= nb)
			b = nb - 1;
		while (b + 1 < nb && t >= g.lo[b + 1])
			b++;
		while (b > 0 && t < g.lo[b])
			b--;
		assert_true(t >= g.lo[b] && t < g.hi[b]);
		for (int k = 0; k < M; k++) {
			double v = vals[dev][i * M + k];
			if (isnan(v))
				continue;
			cs_agg one = {1, v, v, v};
			cs_agg_merge(&want[(size_t)b * M + k], &one);
		}
	}
	for (uint32_t b = 0; b < nb; b++) {
		if (b + 1 < nb)
			assert_int_equal(g.hi[b], g.lo[b + 1]);
		for (int k = 0; k < M; k++) {
			cs_agg *x = &g.aggs[(size_t)b * M + k], *y = &want[(size_t)b * M + k];
			if (x->count != y->count)
				fail_msg("bucket %u metric %d: count %llu, brute force %llu", b, k,
					 (unsigned long long)x->count, (unsigned long long)y->count);
			if (!y->count)
				continue;
			assert_true(x->min == y->min);
			assert_true(x->max == y->max);
			double tol = k == 1 ? 1e-9 * (fabs(y->sum) + 1) : 0;
			if (fabs(x->sum - y->sum) > tol)
				fail_msg("bucket %u metric %d: sum %.17g, brute force %.17g", b, k,
					 x->sum, y->sum);
		}
	}
	free(g.aggs);
	free(g.lo);
	free(g.hi);
	free(want);
}

static void test_buckets_match_brute_force(void **state)
{
	(void)state;
	cs_store *s = build();
	uint64_t seed = 77;
	static const uint32_t counts[] = {1, 2, 7, 100, 999, 1000, 4096, 30000, 65536};
	for (int d = 0; d < 2; d++) {
		uint64_t lo = t0s[d][0], hi = t0s[d][N - 1] + 1;
		for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
			check_window(s, (uint32_t)d, lo, hi, counts[c], NULL);
		for (int rep = 0; rep < 25; rep++) {
			uint64_t a = lo - 200 + tu_rand(&seed) % (hi - lo + 400);
			uint64_t b = lo - 200 + tu_rand(&seed) % (hi - lo + 400);
			if (a == b)
				b++;
			if (a > b) {
				uint64_t x = a;
				a = b;
				b = x;
			}
			check_window(s, (uint32_t)d, a, b, 1 + (uint32_t)(tu_rand(&seed) % 3000), NULL);
		}
	}
	cs_store_close(s);
}

static void test_buckets_use_aggregates(void **state)
{
	(void)state;
	cs_store *s = build();
	cs_read_stats st = {0};
	uint64_t lo = t0s[0][0], hi = t0s[0][N - 1] + 1;
	/* 3 wide buckets over 8 chunks: most chunks fit in one bucket. */
	check_window(s, 0, lo, hi, 3, &st);
	assert_true(st.chunks_whole >= 10);
	assert_true(st.values_decoded <= 3 * 2 * CS_BLOCK_SAMPLES * 3);
	/* 300 buckets (100 samples each): whole blocks where they fit. */
	memset(&st, 0, sizeof st);
	check_window(s, 0, lo, hi, 300, &st);
	assert_true(st.blocks_whole > 0);
	assert_true(st.values_decoded < (uint64_t)N * M);
	/* An empty window still reports every bucket, all empty. */
	check_window(s, 0, hi + 1000, hi + 2000, 10, NULL);
	/* Invalid windows are refused. */
	uint32_t ids[1] = {0};
	cs_scan bad = {.run = 1, .device = 0, .m = 1, .metrics = ids, .from = 10, .to = 10};
	assert_int_equal(cs_read_buckets(s, &bad, 10, collect, NULL, NULL), -EINVAL);
	cs_store_close(s);
}

static void test_lookups(void **state)
{
	(void)state;
	cs_store *s = build();
	uint32_t id;
	assert_int_equal(cs_read_metric_id(s, 1, "floats", &id), 0);
	assert_int_equal(id, 1);
	assert_int_equal(cs_read_metric_id(s, 1, "nope", &id), -ENOENT);
	assert_non_null(strstr(cs_store_errmsg(s), "ints, floats, sparse"));
	uint32_t *devs, n;
	assert_int_equal(cs_read_devices(s, 1, &devs, &n), 0);
	assert_int_equal(n, 2);
	free(devs);
	int64_t run;
	assert_int_equal(cs_read_find_run(s, "1", &run), 0);
	assert_int_equal(run, 1);
	assert_int_equal(cs_read_find_run(s, "test", &run), 0);
	assert_int_equal(cs_read_find_run(s, "2", &run), -ENOENT);
	uint64_t a, b;
	assert_int_equal(cs_read_run_span(s, 1, &a, &b), 0);
	assert_int_equal(a, t0s[0][0]);
	assert_int_equal(cs_read_run_span(s, 9, &a, &b), -ENOENT);
	cs_store_close(s);
}

static int ignore_bucket(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *a)
{
	(void)ctx, (void)i, (void)t0, (void)t1, (void)a;
	return 0;
}

/* A corrupt chunk makes a bucketed read fail with a message, never crash,
 * whether the header, the directory or a block's bitmap is damaged. */
static void test_corrupt_chunks(void **state)
{
	(void)state;
	static const char *const damage[] = {
		"UPDATE chunks SET data = x'01' WHERE metric = 2 AND seq0 = 4096",
		"UPDATE chunks SET data = substr(data, 1, 100) WHERE metric = 2 AND seq0 = 4096",
		"UPDATE chunks SET data = substr(data, 1, 20) || x'07' || substr(data, 22)"
		" WHERE metric = 2 AND seq0 = 4096",
		/* first bitmap byte of block 0 (sparse metric: every block has one) */
		"UPDATE chunks SET data = substr(data, 1, 16 + 28 * 32) || x'ff' ||"
		" substr(data, 16 + 28 * 32 + 2) WHERE metric = 2 AND seq0 = 4096",
	};
	for (size_t d = 0; d < sizeof damage / sizeof *damage; d++) {
		cs_store *s = build();
		assert_int_equal(sqlite3_exec(cs_store_db(s), damage[d], NULL, NULL, NULL), SQLITE_OK);
		uint32_t ids[M] = {0, 1, 2};
		cs_scan q = {.run = 1, .device = 0, .m = M, .metrics = ids, .from = t0s[0][0], .to = t0s[0][N - 1] + 1};
		int rc = cs_read_buckets(s, &q, 997, ignore_bucket, NULL, NULL);
		if (rc != -EBADMSG || !strstr(cs_store_errmsg(s), "corrupt chunk"))
			fail_msg("damage %zu: rc %d, '%s'", d, rc, cs_store_errmsg(s));
		cs_store_close(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_match_brute_force),
		cmocka_unit_test(test_buckets_use_aggregates),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_corrupt_chunks),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tu_cleanup();
	return rc;
}
