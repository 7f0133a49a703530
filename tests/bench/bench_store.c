/*
 * bench_store.c - `make bench`: the store against the obvious baseline.
 *
 * Data: M metrics x N samples (default 20 x 1,000,000) of counter-like
 * values, described in the output. Each figure is printed beside the same
 * measurement on a one-row-per-value SQLite table (run, metric, t0, t1,
 * value) with a clustered primary key, filled with one prepared statement
 * inside large transactions, twice: naively (rows in time order, values as
 * doubles, default page size) and tuned as an expert would (rows in key
 * order, integers as integers, 16 KiB pages, our cache and map), all measured
 * in this run on this machine.
 *
 *   bench_store [--samples N] [--metrics M] [--cli PATH] [--dir DIR]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "reader.h"
#include "store.h"
#include "store_int.h" /* cs_store_db: to look at what was written */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 2685821657736338717ull;
}
static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
static double gauss(void)
{
	double u = unif() + 1e-300, v = unif();
	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* The entropy in bits of one sample of rate r: r (1 + 0.05 g), g standard
 * normal, below 0 taken as 0, rounded half up. Summed over its integers
 * where its spread sd is 50 or under (10 spreads each side hold all but
 * 2e-23 of it); above, that of the normal law itself, which is under the
 * sum by less than 1 / (16 sd^2) bits: 2.5e-5 at most. */
static double sample_entropy(double r)
{
	double sd = 0.05 * r;
	if (sd <= 0)
		return 0;
	if (sd > 50)
		return 0.5 * log2(2 * M_PI * M_E * sd * sd);
	double h = 0, lo = floor(r - 10 * sd), hi = ceil(r + 10 * sd);
	for (double j = lo < 0 ? 0 : lo; j <= hi; j++) {
		/* P(j - 1/2 <= value < j + 1/2), all of value < 1/2 at 0 */
		double a = j == 0 ? 0 : 0.5 * erfc((r - (j - 0.5)) / (sd * M_SQRT2));
		double p = 0.5 * erfc((r - (j + 0.5)) / (sd * M_SQRT2)) - a;
		h -= p > 0 ? p * log2(p) : 0;
	}
	return h;
}

/* The data's floor in bits, what generate() draws from its law: each
 * value's sample_entropy, and for each sample the entropy of its time step
 * (10000 ns, plus 0 to 39 one time in 16; t1 is t0 + 10000). Summed by
 * generate(). */
static double floor_bits;

/* Bursty counter-like data: the run moves through phases of 200 to 20,000
 * samples (idle, copy, compute, collective); each metric has a base rate per
 * phase spread over four decades, and each sample is that rate times
 * (1 + 5% Gaussian noise), rounded to a non-negative integer. */
static void generate(double *values, uint64_t *t0, uint64_t *t1, uint32_t n, uint32_t m)
{
	double rate[4][64], bits[4] = {0, 0, 0, 0};
	for (int p = 0; p < 4; p++)
		for (uint32_t k = 0; k < m; k++)
			rate[p][k] = p == 0 ? 10 * unif() : pow(10, 2 + 4 * unif());
	for (int p = 0; p < 4; p++)
		for (uint32_t k = 0; k < m; k++)
			bits[p] += sample_entropy(rate[p][k]);
	double still = 15.0 / 16 + 1.0 / 640; /* a step of 10000 exactly */
	double step_bits = -still * log2(still) + 39.0 / 640 * log2(640);
	floor_bits = 0;
	uint32_t left = 0;
	int phase = 0;
	uint64_t t = 1000000;
	for (uint32_t i = 0; i < n; i++) {
		if (!left) {
			phase = (int)(rnd() % 4);
			left = 200 + (uint32_t)(rnd() % 19800);
		}
		left--;
		floor_bits += bits[phase] + step_bits;
		t0[i] = t;
		t1[i] = t + 10000;
		t += 10000 + (rnd() % 16 == 0 ? rnd() % 40 : 0); /* sampling jitter */
		for (uint32_t k = 0; k < m; k++) {
			double v = rate[phase][k] * (1 + 0.05 * gauss());
			values[(size_t)i * m + k] = v < 0 ? 0 : floor(v + 0.5);
		}
	}
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench: %s: %s\n", what, why);
	exit(1);
}

/* One figure for the summary (tests/bench/figures.py), when $BENCH_FIGURES
 * names a file: name, best, median, unit, goal. */
static void figure(const char *name, double best, double median, const char *unit,
		   const char *goal)
{
	const char *path = getenv("BENCH_FIGURES");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	fprintf(f, "%s %.6g %.6g %s %s\n", name, best, median, unit, goal);
	fclose(f);
}

static int count_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	(void)seq, (void)t0, (void)t1, (void)v;
	*(double *)ctx += 1;
	return 0;
}

static int count_bucket(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *a)
{
	(void)i, (void)t0, (void)t1;
	*(double *)ctx += a[0].sum;
	return 0;
}

static double bench_baseline_ingest(sqlite3 *db, const double *values, const uint64_t *t0,
				    const uint64_t *t1, uint32_t n, uint32_t m)
{
	sqlite3_exec(db,
		     "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
		     "CREATE TABLE base(run INTEGER, metric INTEGER, t0 INTEGER, t1 INTEGER,"
		     " value REAL, PRIMARY KEY(run, metric, t0)) WITHOUT ROWID;",
		     NULL, NULL, NULL);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "INSERT INTO base VALUES(1, ?1, ?2, ?3, ?4)", -1, &st,
			       NULL) != SQLITE_OK)
		die("baseline", sqlite3_errmsg(db));
	double start = now_s();
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t k = 0; k < m; k++) {
			sqlite3_bind_int(st, 1, (int)k);
			sqlite3_bind_int64(st, 2, (int64_t)t0[i]);
			sqlite3_bind_int64(st, 3, (int64_t)t1[i]);
			sqlite3_bind_double(st, 4, values[(size_t)i * m + k]);
			if (sqlite3_step(st) != SQLITE_DONE)
				die("baseline insert", sqlite3_errmsg(db));
			sqlite3_reset(st);
		}
		if (i % 50000 == 49999) {
			sqlite3_exec(db, "COMMIT; BEGIN", NULL, NULL, NULL);
		}
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	double el = now_s() - start;
	sqlite3_finalize(st);
	sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	return el;
}

/* The baseline as an expert would set it up: 16 KiB pages, the same
 * cache and map as ours, rows inserted in key order (appends to the B-tree, so
 * its pages fill), integers bound as integers. */
static double bench_tuned_ingest(sqlite3 *db, const double *values, const uint64_t *t0,
				 const uint64_t *t1, uint32_t n, uint32_t m)
{
	sqlite3_exec(db,
		     "PRAGMA page_size = 16384; PRAGMA journal_mode = WAL;"
		     " PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;"
		     " PRAGMA mmap_size = 1073741824;"
		     "CREATE TABLE base(run INTEGER, metric INTEGER, t0 INTEGER, t1 INTEGER,"
		     " value REAL, PRIMARY KEY(run, metric, t0)) WITHOUT ROWID;",
		     NULL, NULL, NULL);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "INSERT INTO base VALUES(1, ?1, ?2, ?3, ?4)", -1, &st,
			       NULL) != SQLITE_OK)
		die("tuned baseline", sqlite3_errmsg(db));
	double start = now_s();
	uint64_t rows = 0;
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (uint32_t k = 0; k < m; k++) {
		for (uint32_t i = 0; i < n; i++) {
			double v = values[(size_t)i * m + k];
			sqlite3_bind_int(st, 1, (int)k);
			sqlite3_bind_int64(st, 2, (int64_t)t0[i]);
			sqlite3_bind_int64(st, 3, (int64_t)t1[i]);
			if (v == floor(v) && fabs(v) < 9007199254740992.0)
				sqlite3_bind_int64(st, 4, (int64_t)v);
			else
				sqlite3_bind_double(st, 4, v);
			if (sqlite3_step(st) != SQLITE_DONE)
				die("tuned baseline insert", sqlite3_errmsg(db));
			sqlite3_reset(st);
			if (++rows % 1000000 == 0)
				sqlite3_exec(db, "COMMIT; BEGIN", NULL, NULL, NULL);
		}
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	double el = now_s() - start;
	sqlite3_finalize(st);
	sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	return el;
}

/* The GROUP BY of the bucket query on a baseline table; best of 2 in
 * seconds, metric 0's sum in *check. */
static double baseline_buckets(sqlite3 *db, uint64_t from, uint64_t to, double *check)
{
	sqlite3_stmt *st;
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT metric, (t0 - %llu) * 1000 / %llu AS b, min(value), max(value),"
		 " avg(value), sum(value), count(*) FROM base WHERE run = 1"
		 " GROUP BY metric, b",
		 (unsigned long long)from, (unsigned long long)(to - from));
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die("baseline query", sqlite3_errmsg(db));
	double best = 1e9;
	for (int rep = 0; rep < 2; rep++) {
		*check = 0;
		double start = now_s();
		while (sqlite3_step(st) == SQLITE_ROW)
			if (sqlite3_column_int(st, 0) == 0)
				*check += sqlite3_column_double(st, 5);
		sqlite3_reset(st);
		double el = now_s() - start;
		best = el < best ? el : best;
	}
	sqlite3_finalize(st);
	return best;
}

static double run_cmd(const char *cmd)
{
	double start = now_s();
	if (system(cmd) != 0)
		die("command failed", cmd);
	return now_s() - start;
}

int main(int argc, char **argv)
{
	uint32_t n = 1000000, m = 20;
	const char *cli = "build/cyclescope", *dir = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--samples"))
			n = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--metrics"))
			m = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--cli"))
			cli = argv[i + 1];
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
	}
	if (m < 1 || m > 64 || n < 1000)
		die("arguments", "--metrics 1..64, --samples >= 1000");
	char tmpl[] = "/tmp/csbench.XXXXXX";
	if (!dir && !(dir = mkdtemp(tmpl)))
		die("mkdtemp", strerror(errno));
	char ours[512], base[512], cmd[2048], out1[512], out2[512];
	snprintf(ours, sizeof ours, "%s/ours.db", dir);
	snprintf(base, sizeof base, "%s/baseline.db", dir);
	snprintf(out1, sizeof out1, "%s/ours.csv", dir);
	snprintf(out2, sizeof out2, "%s/baseline.csv", dir);
	unlink(ours);
	unlink(base);
	uint64_t values_total = (uint64_t)n * m;

	double *values = malloc(values_total * sizeof *values);
	uint64_t *t0 = malloc(n * sizeof *t0), *t1 = malloc(n * sizeof *t1);
	if (!values || !t0 || !t1)
		die("malloc", "out of memory");
	generate(values, t0, t1, n, m);
	printf("cyclescope store benchmark\n");
	printf("data: %u metrics x %u samples = %llu values. Counter-like: phases of\n"
	       "  200..20000 samples (idle/copy/compute/collective) with per-metric base\n"
	       "  rates spread over 1e2..1e6 (idle under 10), times (1 + 5%% Gaussian\n"
	       "  noise), rounded to non-negative integers; 10 us intervals with jitter.\n",
	       m, n, (unsigned long long)values_total);
	printf("baselines: table (run, metric, t0, t1, value REAL) WITHOUT ROWID, primary\n"
	       "  key (run, metric, t0), one prepared INSERT per value, WAL,\n"
	       "  synchronous=NORMAL.\n"
	       "  naive: rows in time order (sample by sample), values bound as doubles,\n"
	       "    50k samples per transaction, SQLite's default page size and cache;\n"
	       "  tuned: rows in key order (metric by metric: appends, full pages),\n"
	       "    integral values bound as integers, 1M rows per transaction, 16 KiB\n"
	       "    pages, our cache (64 MiB) and map (1 GiB).\n\n");
	fflush(stdout);

	/* --- ingest, 3 times --- */
	char err[512];
	uint32_t ids[64];
	double rates[3];
	cs_store *s = NULL;
	for (int rep = 0; rep < 3; rep++) {
		unlink(ours);
		s = cs_store_open(ours, CS_OPEN_CREATE, err, sizeof err);
		if (!s)
			die(ours, err);
		cs_run_info info = {.kind = "hw", .source = "bench", .name = "bench",
				    .time_unit = "ns"};
		double start = now_s();
		cs_writer *w = cs_writer_begin(s, &info, err, sizeof err);
		if (!w)
			die("begin", err);
		for (uint32_t k = 0; k < m; k++) {
			char name[64];
			snprintf(name, sizeof name, "metric_%02u.sum", k);
			cs_metric_info mi = {.name = name};
			if (cs_writer_add_metric(w, &mi, &ids[k]))
				die("metric", cs_store_errmsg(s));
		}
		const uint32_t batch = 1000;
		for (uint32_t i = 0; i < n; i += batch) {
			uint32_t nb = n - i < batch ? n - i : batch;
			cs_batch b = {0, i, nb, m, ids, t0 + i, t1 + i, values + (size_t)i * m};
			if (cs_writer_append(w, &b))
				die("append", cs_store_errmsg(s));
		}
		if (cs_writer_end(w, "complete", NULL))
			die("end", cs_store_errmsg(s));
		rates[rep] = (double)values_total / (now_s() - start);
		sqlite3_exec(cs_store_db(s), "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
		cs_store_close(s);
	}
	qsort(rates, 3, sizeof *rates, cmp_d);
	double ours_bytes = file_size(ours);

	sqlite3 *bdb, *tdb;
	char tuned[512];
	snprintf(tuned, sizeof tuned, "%s/tuned.db", dir);
	unlink(tuned);
	if (sqlite3_open(base, &bdb) != SQLITE_OK || sqlite3_open(tuned, &tdb) != SQLITE_OK)
		die(base, "cannot open");
	double base_rate = (double)values_total / bench_baseline_ingest(bdb, values, t0, t1, n, m);
	double base_bytes = file_size(base);
	double tuned_rate = (double)values_total / bench_tuned_ingest(tdb, values, t0, t1, n, m);
	double tuned_bytes = file_size(tuned);

	printf("ingest (writer API, batches of 1000 samples; best and median of 3):\n");
	printf("  cyclescope %8.2f M values/s  (median %.2f)\n", rates[2] / 1e6, rates[1] / 1e6);
	printf("  naive      %8.2f M values/s\n", base_rate / 1e6);
	printf("  tuned      %8.2f M values/s\n", tuned_rate / 1e6);
	printf("  ratio      %8.1fx the naive, %.1fx the tuned  (target >= 15x the tuned)\n\n",
	       rates[2] / base_rate, rates[2] / tuned_rate);
	figure("store.ingest", rates[2] / 1e6, rates[1] / 1e6, "Mvalues/s", "-");
	figure("store.ingest_over_tuned_baseline", rates[2] / tuned_rate, rates[1] / tuned_rate, "x",
	       ">=15");
	figure("store.ingest_over_naive_baseline", rates[2] / base_rate, rates[1] / base_rate, "x", "-");
	printf("on-disk size:\n");
	printf("  cyclescope %8.3f bytes/value  (%.1f MB)  (target <= 1.3)\n",
	       ours_bytes / (double)values_total, ours_bytes / 1e6);
	printf("  naive      %8.3f bytes/value  (%.1f MB)\n", base_bytes / (double)values_total,
	       base_bytes / 1e6);
	printf("  tuned      %8.3f bytes/value  (%.1f MB)\n", tuned_bytes / (double)values_total,
	       tuned_bytes / 1e6);
	double floor_bytes = floor_bits / 8 / (double)values_total;
	printf("  floor      %8.3f bytes/value: the entropy of the law the data is drawn from\n"
	       "             (each value's, given its phase's rate; each time step's)\n",
	       floor_bytes);
	printf("  ratio      %8.1fx smaller than the naive, %.1fx than the tuned; %.3fx the floor\n\n",
	       base_bytes / ours_bytes, tuned_bytes / ours_bytes,
	       ours_bytes / (double)values_total / floor_bytes);
	figure("store.size", ours_bytes / (double)values_total, ours_bytes / (double)values_total,
	       "B/value", "<=1.3");
	figure("store.floor", floor_bytes, floor_bytes, "B/value", "-");
	figure("store.size_over_floor", ours_bytes / (double)values_total / floor_bytes,
	       ours_bytes / (double)values_total / floor_bytes, "x", "-");
	figure("store.size_tuned_over_ours", tuned_bytes / ours_bytes, tuned_bytes / ours_bytes, "x",
	       "-");
	fflush(stdout);

	/* --- 1000-bucket query over every value --- */
	s = cs_store_open(ours, CS_OPEN_READONLY, err, sizeof err);
	if (!s)
		die(ours, err);
	uint64_t from = t0[0], to = t0[n - 1] + 1;
	cs_scan q = {.run = 1, .device = 0, .m = m, .metrics = ids, .from = from, .to = to};
	double times[5], check = 0;
	cs_read_stats stats = {0};
	for (int rep = 0; rep < 5; rep++) {
		check = 0;
		memset(&stats, 0, sizeof stats);
		double start = now_s();
		if (cs_read_buckets(s, &q, 1000, count_bucket, &check, &stats))
			die("buckets", cs_store_errmsg(s));
		times[rep] = now_s() - start;
	}
	qsort(times, 5, sizeof *times, cmp_d);
	double best = times[0];
	double base_check = 0, tuned_check = 0;
	double base_best = baseline_buckets(bdb, from, to, &base_check);
	double tuned_best = baseline_buckets(tdb, from, to, &tuned_check);
	printf("1000-bucket min/max/mean/sum/count over all %llu values (best of 5 / 2):\n",
	       (unsigned long long)values_total);
	printf("  cyclescope %8.1f ms  (median %.1f; target < 50 ms)\n", best * 1e3, times[2] * 1e3);
	printf("  naive      %8.1f ms  (GROUP BY over the naive table)\n", base_best * 1e3);
	printf("  tuned      %8.1f ms  (GROUP BY over the tuned table)\n", tuned_best * 1e3);
	printf("  ratio      %8.1fx faster than the naive, %.1fx than the tuned; metric 0 sums agree:"
	       " %s\n",
	       base_best / best, tuned_best / best,
	       fabs(check - base_check) <= 1e-9 * fabs(base_check) &&
			       fabs(check - tuned_check) <= 1e-9 * fabs(tuned_check)
		       ? "yes"
		       : "NO");
	printf("  work: %llu chunk aggregates, %llu block aggregates, %llu blocks unpacked"
	       " (%llu of %llu values, %.1f%%), %llu timelines decoded\n\n",
	       (unsigned long long)stats.chunks_whole, (unsigned long long)stats.blocks_whole,
	       (unsigned long long)stats.blocks_decoded,
	       (unsigned long long)stats.values_decoded, (unsigned long long)values_total,
	       100.0 * (double)stats.values_decoded / (double)values_total,
	       (unsigned long long)stats.timelines_decoded);
	figure("store.buckets_all", best * 1e3, times[2] * 1e3, "ms", "<=50");

	/* --- a 1% window in the middle, one metric and every metric, in
	 * process (bench_clickhouse.sh sets them beside ClickHouse) --- */
	{
		uint64_t wf = t0[n / 2], wt = t0[n / 2 + n / 100];
		printf("1%% window (%u samples from t0 = %llu), in process (best / median of 5):\n",
		       n / 100, (unsigned long long)wf);
		for (int all = 0; all < 2; all++) {
			uint32_t one = ids[m / 2];
			cs_scan wq = {.run = 1, .device = 0, .m = all ? m : 1,
				      .metrics = all ? ids : &one, .from = wf, .to = wt};
			double wt5[5];
			for (int rep = 0; rep < 5; rep++) {
				double rows = 0, st0 = now_s();
				if (cs_read_raw(s, &wq, count_row, &rows))
					die("window", cs_store_errmsg(s));
				wt5[rep] = now_s() - st0;
			}
			qsort(wt5, 5, sizeof *wt5, cmp_d);
			printf("  %-12s %8.3f ms  (median %.3f)\n", all ? "all metrics" : "one metric",
			       wt5[0] * 1e3, wt5[2] * 1e3);
			figure(all ? "store.window1pct_all_metrics" : "store.window1pct_one_metric",
			       wt5[0] * 1e3, wt5[2] * 1e3, "ms", "-");
		}
		printf("\n");
	}
	figure("store.buckets_all_tuned_baseline_over_ours", tuned_best / best, tuned_best / times[2],
	       "x", "-");
	cs_store_close(s);
	sqlite3_close(bdb);
	sqlite3_close(tdb);
	fflush(stdout);

	/* --- export of one metric to CSV, both through their command-line tools --- */
	snprintf(cmd, sizeof cmd, "%s export 1 --db %s --metric metric_00.sum > %s", cli, ours,
		 out1);
	double e1 = 1e9, e2 = 1e9;
	for (int rep = 0; rep < 3; rep++) {
		double el = run_cmd(cmd);
		e1 = el < e1 ? el : e1;
	}
	snprintf(cmd, sizeof cmd,
		 "sqlite3 -csv -header %s 'SELECT t0, t1, value FROM base"
		 " WHERE run = 1 AND metric = 0' > %s",
		 tuned, out2);
	for (int rep = 0; rep < 3; rep++) {
		double el = run_cmd(cmd);
		e2 = el < e2 ? el : e2;
	}
	double b1 = file_size(out1), b2 = file_size(out2);
	printf("export of one metric's %u samples to CSV (best of 3):\n", n);
	printf("  cyclescope %8.1f MB/s  (%.1f MB in %.3f s: cyclescope export)\n", b1 / e1 / 1e6,
	       b1 / 1e6, e1);
	printf("  tuned      %8.1f MB/s  (%.1f MB in %.3f s: sqlite3 -csv)\n", b2 / e2 / 1e6,
	       b2 / 1e6, e2);
	printf("  ratio      %8.1fx (rows/s: %.1fx)\n", (b1 / e1) / (b2 / e2), e2 / e1);
	figure("store.export_one_metric", b1 / e1 / 1e6, b1 / e1 / 1e6, "MB/s", "-");
	figure("store.export_rows_over_sqlite3_csv", e2 / e1, e2 / e1, "x", "-");
	unlink(tuned);

	unlink(out1);
	unlink(out2);
	if (dir == tmpl || !strncmp(dir, "/tmp/csbench.", 13)) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench: could not remove %s\n", dir);
	}
	free(values);
	free(t0);
	free(t1);
	return 0;
}
