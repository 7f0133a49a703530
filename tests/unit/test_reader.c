/* test_reader.c - bucketed scans against a brute-force computation. */
#include <unistd.h>

#include "reader.h"
#include "store.h"
#include "store_int.h" /* cs_store_db: to look at what was written */
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
	cs_store_set_chunk_samples(s, CS_CHUNK_SAMPLES); /* chunks the reads cross */
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
	assert_true(st.values_decoded <= 3 * 2 * CS_VALUE_BLOCK * 3);
	/* 30 buckets (1000 samples each): whole blocks where they fit. */
	memset(&st, 0, sizeof st);
	check_window(s, 0, lo, hi, 30, &st);
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

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

typedef struct one_metric {
	uint32_t n;
	cs_agg a[64];
} one_metric;

static int collect_one(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *a)
{
	(void)t0, (void)t1;
	one_metric *g = ctx;
	assert_int_equal(i, g->n);
	g->a[g->n++] = a[0];
	return 0;
}

/* Writes one metric of S samples, 10 apart, and checks cs_read_buckets
 * over them, for each bucket count in nbs[0..k), against exact 128-bit
 * sums over the documented bucket rule. */
enum { SPLIT_S = 4096 };
static void check_split(const double *v, const uint32_t *nbs, int k)
{
	static uint64_t t0[SPLIT_S], t1[SPLIT_S];
	for (int i = 0; i < SPLIT_S; i++) {
		t0[i] = 1000 + 10 * (uint64_t)i;
		t1[i] = t0[i] + 10;
	}
	char err[256];
	unlink(tu_path("split.db"));
	cs_store *s = cs_store_open(tu_path("split.db"), CS_OPEN_CREATE, err, sizeof err);
	assert_non_null(s);
	cs_writer *w = cs_writer_begin(s, &info, err, sizeof err);
	uint32_t id;
	cs_metric_info mi = {.name = "x"};
	assert_int_equal(cs_writer_add_metric(w, &mi, &id), 0);
	cs_batch b = {0, 0, SPLIT_S, 1, &id, t0, t1, v};
	assert_int_equal(cs_writer_append(w, &b), 0);
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	uint64_t from = t0[0], to = t0[SPLIT_S - 1] + 1;
	for (int j = 0; j < k; j++) {
		uint32_t nb = nbs[j];
		one_metric g = {0};
		cs_scan q = {.run = 1, .device = 0, .m = 1, .metrics = &id, .from = from, .to = to};
		assert_int_equal(cs_read_buckets(s, &q, nb, collect_one, &g, NULL), 0);
		assert_int_equal(g.n, nb);
		i128 sum[64] = {0};
		double lo[64], hi[64];
		uint64_t count[64] = {0};
		for (int i = 0; i < SPLIT_S; i++) {
			uint32_t c = (uint32_t)((u128)(t0[i] - from) * nb / (to - from));
			if (!count[c]++)
				lo[c] = hi[c] = v[i];
			lo[c] = v[i] < lo[c] ? v[i] : lo[c];
			hi[c] = v[i] > hi[c] ? v[i] : hi[c];
			sum[c] += (i128)v[i];
		}
		for (uint32_t c = 0; c < nb; c++) {
			if (g.a[c].count != count[c] || g.a[c].min != lo[c] || g.a[c].max != hi[c] ||
			    g.a[c].sum != (double)sum[c])
				fail_msg("%u buckets, bucket %u: count %llu min %g max %g sum %.17g;"
					 " want %llu %g %g %.17g",
					 nb, c, (unsigned long long)g.a[c].count, g.a[c].min, g.a[c].max,
					 g.a[c].sum, (unsigned long long)count[c], lo[c], hi[c],
					 (double)sum[c]);
		}
	}
	cs_store_close(s);
}

/* Packed blocks one bucket boundary crosses are read on their shorter
 * side: results stay exact wherever the extremes lie, and where that
 * side's sum passes 2^53 though the block's does not. */
static void test_buckets_split_blocks(void **state)
{
	(void)state;
	static double v[SPLIT_S];
	uint64_t seed = 31;
	for (int i = 0; i < SPLIT_S; i++)
		v[i] = (double)(tu_rand(&seed) % 1000);
	/* extremes near a block's start (block 2) and near its end (block 4),
	 * under every bucket count from 2 to 40 */
	v[1024 + 3] = -5;
	v[1024 + 9] = 5000;
	v[2048 + 500] = -7;
	v[2048 + 505] = 7000;
	uint32_t nbs[39];
	for (int j = 0; j < 39; j++)
		nbs[j] = 2 + (uint32_t)j;
	check_split(v, nbs, 39);
	/* Block 1 (samples 512-1023) of values near +-2^52, so wide that it is
	 * packed: pairs x, -x of random x, but at offsets 0, 2, 4 and 6 2^52,
	 * at 10 3, at 200-204 (even) -2^52, at 206 -2^52 - 1 (its minimum),
	 * at 300 2^52 + 1 (its maximum), at 302 -2^52 - 2: its sum is 1. Six
	 * buckets cut it at 171, where the short side's sum is 2^54 + 3 (no
	 * double holds it: the longer side must be read, not subtracted);
	 * five at 308, where the short side holds pairs only. Everything else
	 * is 0 but for three values in block 2 (so that rounding once, as the
	 * expected sums do, and twice differ: bucket 1 sums to -2^54 - 2 +
	 * 4997). */
	for (int i = 0; i < SPLIT_S; i++)
		v[i] = 0;
	const int64_t big = 4503599627370496; /* 2^52 */
	for (int o = 0; o < 512; o += 2) {
		if (o < 20 || (o >= 170 && o < 210) || (o >= 300 && o < 304))
			continue;
		int64_t x = (int64_t)(tu_rand(&seed) % (uint64_t)(2 * big - 32)) - (big - 16);
		v[512 + o] = (double)x;
		v[512 + o + 1] = (double)-x;
	}
	for (int o = 0; o < 8; o += 2)
		v[512 + o] = (double)big;
	v[512 + 10] = 3;
	for (int o = 200; o < 206; o += 2)
		v[512 + o] = (double)-big;
	v[512 + 206] = (double)(-big - 1);
	v[512 + 300] = (double)(big + 1);
	v[512 + 302] = (double)(-big - 2);
	v[1024 + 3] = -5;
	v[1024 + 9] = 5000;
	v[1024 + 20] = 2;
	static const uint32_t cuts[] = {5, 6};
	check_split(v, cuts, 2);
	/* entropy-coded blocks (a wave with little noise: its differences
	 * are narrow), whose extremes lie anywhere in them */
	for (int i = 0; i < SPLIT_S; i++)
		v[i] = (double)(5000 + (int)(1000.0 * sin(i / 50.0)) + (int)(tu_rand(&seed) % 5));
	check_split(v, nbs, 39);
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

/* Raw scans over many metrics decode a slice of each timeline at a time
 * (the store bounds metrics x samples in memory): every value of a window
 * still comes back where it belongs, metrics asked in any order and twice,
 * metrics with no chunk in a timeline as NaN. */
#define WM 1500
#define WN 9000
static double wide_value(uint32_t i, uint32_t k)
{
	if (k % 7 == 3 && i >= 4096 && i < 8192)
		return NAN; /* no chunk at all in the second timeline */
	if ((i * 31 + k) % 11 == 0)
		return NAN;
	return (double)((i * 2654435761u) ^ (k * 40503u)) / (k % 3 ? 1.0 : 8.0);
}

typedef struct wide_got {
	const uint32_t *ids;
	uint32_t m;
	uint64_t next;
	uint64_t rows;
} wide_got;

static int wide_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	wide_got *g = ctx;
	if (g->rows && seq != g->next)
		fail_msg("row %llu after %llu", (unsigned long long)seq,
			 (unsigned long long)g->next - 1);
	assert_int_equal(t0, 1000 + 10 * seq);
	assert_int_equal(t1, 1000 + 10 * seq + 10);
	for (uint32_t k = 0; k < g->m; k++) {
		double want = wide_value((uint32_t)seq, g->ids[k]);
		if (!(isnan(want) ? isnan(v[k]) : v[k] == want))
			fail_msg("seq %llu metric %u: %.17g, want %.17g", (unsigned long long)seq,
				 g->ids[k], v[k], want);
	}
	g->next = seq + 1;
	g->rows++;
	return 0;
}

typedef struct wide_buckets {
	cs_agg *aggs;
	uint32_t m;
} wide_buckets;

static int wide_bucket(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *a)
{
	(void)t0, (void)t1;
	wide_buckets *w = ctx;
	memcpy(w->aggs + (size_t)i * w->m, a, w->m * sizeof *a);
	return 0;
}

static void test_raw_many_metrics(void **state)
{
	(void)state;
	char err[256];
	unlink(tu_path("w.db"));
	cs_store *s = cs_store_open(tu_path("w.db"), CS_OPEN_CREATE, err, sizeof err);
	assert_non_null(s);
	cs_writer *w = cs_writer_begin(s, &info, err, sizeof err);
	static uint32_t ids[WM];
	for (uint32_t k = 0; k < WM; k++) {
		char name[32];
		snprintf(name, sizeof name, "m%u", k);
		cs_metric_info mi = {.name = name};
		assert_int_equal(cs_writer_add_metric(w, &mi, &ids[k]), 0);
	}
	enum { B = 500 };
	static double v[B * WM];
	uint64_t t0[B], t1[B];
	for (uint32_t i = 0; i < WN; i += B) {
		for (uint32_t j = 0; j < B; j++) {
			t0[j] = 1000 + 10 * (uint64_t)(i + j);
			t1[j] = t0[j] + 10;
			for (uint32_t k = 0; k < WM; k++)
				v[(size_t)j * WM + k] = wide_value(i + j, k);
		}
		cs_batch b = {0, i, B, WM, ids, t0, t1, v};
		assert_int_equal(cs_writer_append(w, &b), 0);
	}
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	/* every metric reversed, then a few twice */
	static uint32_t ask[WM + 3];
	for (uint32_t k = 0; k < WM; k++)
		ask[k] = WM - 1 - k;
	ask[WM] = 3, ask[WM + 1] = 3, ask[WM + 2] = 0;
	const uint64_t win[][2] = {{0, WN}, {4000, 8300}, {4096, 4097}, {8191, 8192}, {1, 130}};
	for (size_t j = 0; j < sizeof win / sizeof *win; j++) {
		wide_got g = {ask, WM + 3, 0, 0};
		cs_scan q = {.run = 1, .device = 0, .m = WM + 3, .metrics = ask,
			     .from = 1000 + 10 * win[j][0], .to = 1000 + 10 * win[j][1]};
		assert_int_equal(cs_read_raw(s, &q, wide_row, &g), 0);
		assert_int_equal(g.rows, win[j][1] - win[j][0]);
		/* the same by sample number */
		wide_got h = {ask, WM + 3, 0, 0};
		cs_scan qs = {.run = 1, .device = 0, .m = WM + 3, .metrics = ask,
			      .seq_from = win[j][0], .seq_to = win[j][1]};
		assert_int_equal(cs_read_raw(s, &qs, wide_row, &h), 0);
		assert_int_equal(h.rows, win[j][1] - win[j][0]);
	}
	/* bucketed, looked up chunk by chunk: 7 buckets of every metric
	 * against sums over wide_value (bucket b holds samples whose t0 is
	 * in [from + ceil(b W / 7), ...)) */
	static cs_agg aggs[7 * WM];
	wide_buckets wb = {aggs, WM};
	cs_scan qb = {.run = 1, .device = 0, .m = WM, .metrics = ids, .from = 1000,
		      .to = 1000 + 10 * (uint64_t)WN};
	assert_int_equal(cs_read_buckets(s, &qb, 7, wide_bucket, &wb, NULL), 0);
	for (uint32_t k = 0; k < WM; k += 97)
		for (uint32_t b = 0; b < 7; b++) {
			uint64_t lo = (b * 10ull * WN + 6) / 7, hi = ((b + 1) * 10ull * WN + 6) / 7;
			cs_agg want = {0, INFINITY, -INFINITY, 0};
			for (uint32_t i = 0; i < WN; i++) {
				double x = wide_value(i, k);
				if (10ull * i < lo || 10ull * i >= hi || isnan(x))
					continue;
				cs_agg one = {1, x, x, x};
				cs_agg_merge(&want, &one);
			}
			const cs_agg *have = &aggs[(size_t)b * WM + k];
			if (have->count != want.count || (want.count && (have->min != want.min || have->max != want.max)) ||
			    fabs(have->sum - want.sum) > 1e-9 * fabs(want.sum))
				fail_msg("metric %u bucket %u: count %llu sum %.17g, want %llu %.17g", k,
					 b, (unsigned long long)have->count, have->sum,
					 (unsigned long long)want.count, want.sum);
		}
	cs_store_close(s);
}

/* Windows whose start falls among equal t0s that span timelines: the scan
 * still starts at the first sample with t0 >= from. */
static int count_rows(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	(void)seq, (void)t1, (void)v;
	uint64_t *c = ctx;
	c[0]++;
	if (!c[1] || t0 + 1 < c[1])
		c[1] = t0 + 1; /* the smallest t0, plus one (0 = none yet) */
	return 0;
}

static void test_window_start_among_equal_times(void **state)
{
	(void)state;
	char err[256];
	unlink(tu_path("e.db"));
	cs_store *s = cs_store_open(tu_path("e.db"), CS_OPEN_CREATE, err, sizeof err);
	assert_non_null(s);
	cs_writer *w = cs_writer_begin(s, &info, err, sizeof err);
	uint32_t id;
	cs_metric_info mi = {.name = "x"};
	assert_int_equal(cs_writer_add_metric(w, &mi, &id), 0);
	/* t0: 0..2999 step 1, then 10000 samples at t0 = 5000, then on */
	enum { NS = 20000 };
	static uint64_t t0[NS], t1[NS];
	static double v[NS];
	for (uint32_t i = 0; i < NS; i++) {
		t0[i] = i < 3000 ? i : i < 13000 ? 5000 : 5000 + (i - 12999);
		t1[i] = t0[i] + 1;
		v[i] = i;
	}
	cs_batch b = {0, 0, NS, 1, &id, t0, t1, v};
	assert_int_equal(cs_writer_append(w, &b), 0);
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	const uint64_t from[] = {0, 2999, 3000, 4999, 5000, 5001, 6000, 12000};
	for (size_t j = 0; j < sizeof from / sizeof *from; j++) {
		uint64_t want = 0, first = 0;
		for (uint32_t i = 0; i < NS; i++)
			if (t0[i] >= from[j] && t0[i] < from[j] + 3000) {
				want++;
				first = first ? first : t0[i] + 1;
			}
		uint64_t seen[2] = {0, 0};
		cs_scan q = {.run = 1, .device = 0, .m = 1, .metrics = &id, .from = from[j],
			     .to = from[j] + 3000};
		assert_int_equal(cs_read_raw(s, &q, count_rows, seen), 0);
		if (seen[0] != want)
			fail_msg("from %llu: %llu rows, want %llu", (unsigned long long)from[j],
				 (unsigned long long)seen[0], (unsigned long long)want);
		if (want)
			assert_int_equal(seen[1], first);
	}
	cs_store_close(s);
}

/* By sample number far into a run (series.csv?since=): the timelines
 * are found by a seek past seq_from - CS_CHUNK_MAX, so windows past the
 * first CS_CHUNK_MAX samples, at chunk boundaries and open-ended, still
 * give exactly [seq_from, seq_to), each sample once and in order. */
static int seq_rows(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	uint64_t *c = ctx; /* rows, first seq, next seq */
	if (c[0] && seq != c[2])
		fail_msg("seq %llu after %llu", (unsigned long long)seq, (unsigned long long)c[2] - 1);
	assert_int_equal(t0, 3 * seq);
	assert_int_equal(t1, 3 * seq + 3);
	assert_true(v[0] == (double)seq);
	c[1] = c[0] ? c[1] : seq;
	c[0]++;
	c[2] = seq + 1;
	return 0;
}

static void test_seq_windows_far_in(void **state)
{
	(void)state;
	char err[256];
	unlink(tu_path("q.db"));
	cs_store *s = cs_store_open(tu_path("q.db"), CS_OPEN_CREATE, err, sizeof err);
	assert_non_null(s);
	cs_writer *w = cs_writer_begin(s, &info, err, sizeof err);
	uint32_t id;
	cs_metric_info mi = {.name = "x"};
	assert_int_equal(cs_writer_add_metric(w, &mi, &id), 0);
	enum { NS = 300000, B = 10000 };
	static uint64_t t0[B], t1[B];
	static double v[B];
	for (uint32_t i = 0; i < NS; i += B) {
		for (uint32_t j = 0; j < B; j++) {
			t0[j] = 3 * (uint64_t)(i + j);
			t1[j] = t0[j] + 3;
			v[j] = i + j;
		}
		cs_batch b = {0, i, B, 1, &id, t0, t1, v};
		assert_int_equal(cs_writer_append(w, &b), 0);
	}
	assert_int_equal(cs_writer_end(w, "complete", NULL), 0);
	const uint64_t win[][2] = {{70000, 70001},	{65535, 65537},	    {65536, 131073},
				   {131071, 131072},	{200000, UINT64_MAX}, {299999, UINT64_MAX},
				   {300000, UINT64_MAX}, {0, UINT64_MAX},	    {250000, 250000 + 3 * 65536}};
	for (size_t j = 0; j < sizeof win / sizeof *win; j++) {
		uint64_t end = win[j][1] < NS ? win[j][1] : NS;
		uint64_t c[3] = {0, 0, 0};
		cs_scan q = {.run = 1, .device = 0, .m = 1, .metrics = &id, .seq_from = win[j][0],
			     .seq_to = win[j][1]};
		assert_int_equal(cs_read_raw(s, &q, seq_rows, c), 0);
		if (c[0] != end - win[j][0] || (c[0] && c[1] != win[j][0]))
			fail_msg("seq [%llu, %llu): %llu rows from %llu", (unsigned long long)win[j][0],
				 (unsigned long long)win[j][1], (unsigned long long)c[0],
				 (unsigned long long)c[1]);
	}
	cs_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_match_brute_force),
		cmocka_unit_test(test_buckets_use_aggregates),
		cmocka_unit_test(test_buckets_split_blocks),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_corrupt_chunks),
		cmocka_unit_test(test_raw_many_metrics),
		cmocka_unit_test(test_window_start_among_equal_times),
		cmocka_unit_test(test_seq_windows_far_in),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tu_cleanup();
	return rc;
}
