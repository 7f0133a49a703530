/*
 * bench_scale.c - `make bench-scale`: how the store's costs grow with the
 * number of metrics and the length of a run, warm and cold.
 *
 *   bench_scale --metrics M --samples N [--dir DIR] [--keep] [--cli PATH]
 *               [--reuse] [--repeat R]
 *
 * Writes one run of M metrics x N samples (the counter-like data of
 * bench_store, generated batch by batch so 4000 metrics fit in memory),
 * then measures, each the best (and median) of 3:
 *   ingest        values/s through the writer API (R runs, default 3)
 *   size          bytes per value (file + WAL after a checkpoint), and how
 *                 full the chunk pages are (dbstat, when compiled in)
 *   raw-all       every metric, a window of 1% of the run in the middle
 *   buckets-all   every metric, 1000 buckets over the run
 *   window-one    one metric, 1000 samples in the middle of the run
 *   buckets-one   one metric, 1000 buckets over the run
 *   cold          the same two one-metric queries and raw-all after the
 *                 file is evicted from the page cache
 *                 (posix_fadvise DONTNEED): bytes read from storage
 *                 (/proc/self/io read_bytes) against the bytes of the rows
 *                 they decode (chunks and timelines, summed with SQL)
 * One line per figure, "key best median unit", for bench_scale.sh to
 * tabulate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench_scale: %s: %s\n", what, why);
	exit(1);
}

/* splitmix64: the value of (sample, metric) is a pure function of both, so
 * batches can be generated in any order. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}
static double unif(uint64_t h) { return (double)(h >> 11) / 9007199254740992.0; }

typedef struct gen {
	uint32_t m;
	double *rate; /* 4 x m */
	/* phase schedule: phase of sample i */
	uint64_t next_change, t;
	int phase;
	uint64_t state;
} gen;

static void gen_init(gen *g, uint32_t m)
{
	memset(g, 0, sizeof *g);
	g->m = m;
	g->rate = malloc(4 * (size_t)m * sizeof *g->rate);
	if (!g->rate)
		die("malloc", "out of memory");
	for (int p = 0; p < 4; p++)
		for (uint32_t k = 0; k < m; k++) {
			double u = unif(mix(((uint64_t)p << 32) | k));
			g->rate[(size_t)p * m + k] = p == 0 ? 10 * u : pow(10, 2 + 4 * u);
		}
	g->t = 1000000;
	g->state = 12345;
}

/* Samples [i0, i0 + n): bursty counter-like values as bench_store makes. */
static void gen_batch(gen *g, uint64_t i0, uint32_t n, uint64_t *t0, uint64_t *t1, double *v)
{
	for (uint32_t j = 0; j < n; j++) {
		uint64_t i = i0 + j;
		if (i >= g->next_change) {
			g->state = mix(g->state);
			g->phase = (int)(g->state % 4);
			g->next_change = i + 200 + mix(g->state + 1) % 19800;
		}
		t0[j] = g->t;
		t1[j] = g->t + 10000;
		uint64_t h = mix(i ^ 0x5555);
		g->t += 10000 + (h % 16 == 0 ? (h >> 8) % 40 : 0);
		const double *rate = g->rate + (size_t)g->phase * g->m;
		for (uint32_t k = 0; k < g->m; k++) {
			uint64_t hk = mix((i << 13) ^ k);
			double u1 = unif(hk) + 1e-300, u2 = unif(mix(hk));
			double gs = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
			double x = rate[k] * (1 + 0.05 * gs);
			v[(size_t)j * g->m + k] = x < 0 ? 0 : floor(x + 0.5);
		}
	}
}

/* Storage bytes this process has read so far (/proc/self/io). */
static double io_read_bytes(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	double v = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "read_bytes:", 11))
			v = strtod(line + 11, NULL);
	if (f)
		fclose(f);
	return v;
}

static void evict(const char *path)
{
	char p[600];
	const char *suffix[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			continue;
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

static int count_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	(void)seq, (void)t0, (void)t1, (void)v;
	(*(uint64_t *)ctx)++;
	return 0;
}

static int count_bucket(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *a)
{
	(void)i, (void)t0, (void)t1;
	*(uint64_t *)ctx += a[0].count;
	return 0;
}

typedef struct query {
	const char *key;
	int raw;
	cs_scan q;
	uint32_t buckets;
} query;

/* Runs q once on a fresh read-only store; returns seconds. */
static double run_query(const char *path, const query *qq, uint64_t *out)
{
	char err[256];
	cs_store *s = cs_store_open(path, CS_OPEN_READONLY, err, sizeof err);
	if (!s)
		die(path, err);
	uint64_t got = 0;
	double t = now_s();
	int rc = qq->raw ? cs_read_raw(s, &qq->q, count_row, &got)
			 : cs_read_buckets(s, &qq->q, qq->buckets, count_bucket, &got, NULL);
	t = now_s() - t;
	if (rc)
		die(qq->key, cs_store_errmsg(s));
	cs_store_close(s);
	if (out)
		*out = got;
	return t;
}

/* Bytes of the chunk and timeline rows a scan over [from, to) of the given
 * metrics decodes, summed independently with SQL. */
static double rows_bytes(const char *path, const cs_scan *q)
{
	sqlite3 *db;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		die(path, "cannot open");
	char sql[512];
	double total = 0;
	snprintf(sql, sizeof sql,
		 "SELECT coalesce(sum(length(data)), 0) FROM timelines WHERE run = %lld"
		 " AND device = %u AND t0_last >= %llu AND t0_first < %llu",
		 (long long)q->run, q->device, (unsigned long long)q->from,
		 (unsigned long long)q->to);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		total += sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	for (uint32_t k = 0; k < q->m; k++) {
		snprintf(sql, sizeof sql,
			 "SELECT coalesce(sum(length(data)), 0) FROM chunks WHERE run = %lld"
			 " AND metric = %u AND device = %u AND t0_last >= %llu AND t0_first < %llu",
			 (long long)q->run, q->metrics[k], q->device, (unsigned long long)q->from,
			 (unsigned long long)q->to);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			total += sqlite3_column_double(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return total;
}

/* Fraction of the chunks table's pages left unused, from dbstat (-1 when
 * the library lacks it). */
static double chunk_page_slack(const char *path)
{
	sqlite3 *db;
	double v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db,
			       "SELECT 1.0 * sum(unused) / sum(pgsize) FROM dbstat"
			       " WHERE name = 'chunks'",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* Writes the run into a new file at path; returns the writer's seconds
 * (generating the values not counted). */
static double ingest(const char *path, uint32_t m, uint64_t n, uint32_t *ids)
{
	char err[256], p[600];
	const char *suffix[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		unlink(p);
	}
	cs_store *s = cs_store_open(path, CS_OPEN_CREATE, err, sizeof err);
	if (!s)
		die(path, err);
	cs_run_info info = {.kind = "hw", .source = "bench", .name = "scale", .time_unit = "ns"};
	gen g;
	gen_init(&g, m);
	const uint32_t batch = 1000;
	uint64_t *t0 = malloc(batch * sizeof *t0), *t1 = malloc(batch * sizeof *t1);
	double *v = malloc((size_t)batch * m * sizeof *v);
	if (!t0 || !t1 || !v)
		die("malloc", "out of memory");
	double gen_time = 0, t = now_s();
	cs_writer *w = cs_writer_begin(s, &info, err, sizeof err);
	if (!w)
		die("begin", err);
	for (uint32_t k = 0; k < m; k++) {
		char name[64];
		snprintf(name, sizeof name, "metric_%04u.sum", k);
		cs_metric_info mi = {.name = name};
		if (cs_writer_add_metric(w, &mi, &ids[k]))
			die("metric", cs_store_errmsg(s));
	}
	for (uint64_t i = 0; i < n; i += batch) {
		uint32_t nb = n - i < batch ? (uint32_t)(n - i) : batch;
		double g0 = now_s();
		gen_batch(&g, i, nb, t0, t1, v);
		gen_time += now_s() - g0;
		cs_batch b = {0, i, nb, m, ids, t0, t1, v};
		if (cs_writer_append(w, &b))
			die("append", cs_store_errmsg(s));
	}
	if (cs_writer_end(w, "complete", NULL))
		die("end", cs_store_errmsg(s));
	t = now_s() - t - gen_time;
	sqlite3_exec(cs_store_db(s), "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	cs_store_close(s);
	free(t0);
	free(t1);
	free(v);
	free(g.rate);
	return t;
}

int main(int argc, char **argv)
{
	uint32_t m = 20;
	uint64_t n = 1000000;
	const char *dir = "/tmp", *cli = NULL;
	int keep = 0, reuse = 0, repeat = 3;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--metrics") && i + 1 < argc)
			m = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--cli") && i + 1 < argc)
			cli = argv[++i];
		else if (!strcmp(argv[i], "--keep"))
			keep = 1;
		else if (!strcmp(argv[i], "--reuse"))
			reuse = 1;
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else
			die("usage", "--metrics M --samples N [--dir DIR] [--cli PATH] [--keep] [--reuse]");
	}
	if (m < 1 || n < 10000 || repeat < 1 || repeat > 3)
		die("arguments", "--metrics >= 1, --samples >= 10000, --repeat 1..3");
	char path[512];
	snprintf(path, sizeof path, "%s/scale-%ux%llu.db", dir, m, (unsigned long long)n);
	uint64_t total = (uint64_t)m * n;

	uint32_t *ids = malloc(m * sizeof *ids);
	if (!ids)
		die("malloc", "out of memory");
	struct stat st0;
	if (!reuse || stat(path, &st0) != 0) {
		double r[3];
		for (int j = 0; j < repeat; j++)
			r[j] = (double)total / ingest(path, m, n, ids) / 1e6;
		qsort(r, (size_t)repeat, sizeof *r, cmp_d);
		printf("ingest %.2f %.2f Mvalues/s\n", r[repeat - 1], r[repeat / 2]);
	} else {
		for (uint32_t k = 0; k < m; k++)
			ids[k] = k;
	}
	printf("size %.3f %.3f bytes/value\n", file_size(path) / (double)total,
	       file_size(path) / (double)total);
	double slack = chunk_page_slack(path);
	if (slack >= 0)
		printf("page-slack %.3f %.3f fraction\n", slack, slack);

	/* the run's span: t0 of sample i is 1e6 + 1e4 i plus jitter */
	char err[256];
	cs_store *s = cs_store_open(path, CS_OPEN_READONLY, err, sizeof err);
	if (!s)
		die(path, err);
	uint64_t tmin, tmax;
	if (cs_read_run_span(s, 1, &tmin, &tmax))
		die("span", cs_store_errmsg(s));
	cs_store_close(s);
	uint64_t span = tmax - tmin + 1, mid = tmin + span / 2;
	uint32_t one = m / 2;
	query qs[] = {
		{"raw-all", 1, {1, 0, m, ids, mid, mid + span / 100, 0, 0}, 0},
		{"buckets-all", 0, {1, 0, m, ids, tmin, tmax + 1, 0, 0}, 1000},
		{"window-one", 1, {1, 0, 1, &ids[one], mid, mid + 1000 * 10000, 0, 0}, 0},
		{"window1pct-one", 1, {1, 0, 1, &ids[one], mid, mid + span / 100, 0, 0}, 0},
		{"buckets-one", 0, {1, 0, 1, &ids[one], tmin, tmax + 1, 0, 0}, 1000},
	};
	for (size_t j = 0; j < sizeof qs / sizeof *qs; j++) {
		double t[3];
		uint64_t got = 0;
		for (int r = 0; r < 3; r++)
			t[r] = run_query(path, &qs[j], &got);
		qsort(t, 3, sizeof *t, cmp_d);
		printf("%s %.3f %.3f ms\n", qs[j].key, t[0] * 1e3, t[1] * 1e3);
		(void)got;
	}
	/* cold: the one-metric queries read what they decode, not the file */
	const size_t cold[] = {2, 3, 4, 0};
	for (size_t j = 0; j < sizeof cold / sizeof *cold; j++) {
		const query *qq = &qs[cold[j]];
		evict(path);
		double r0 = io_read_bytes();
		double t = run_query(path, qq, NULL);
		double r1 = io_read_bytes();
		double need = rows_bytes(path, &qq->q);
		printf("cold-%s %.2f %.2f ms\n", qq->key, t * 1e3, t * 1e3);
		printf("cold-read-%s %.3f %.3f MB\n", qq->key, (r1 - r0) / 1e6, (r1 - r0) / 1e6);
		printf("cold-rows-%s %.3f %.3f MB\n", qq->key, need / 1e6, need / 1e6);
	}
	if (cli) {
		/* the 1000-sample window through the command line, process start
		 * included: 15 runs, as a process start of a few ms on a busy
		 * machine varies by more than the goal's margin */
		char cmd[1200];
		double t[15];
		snprintf(cmd, sizeof cmd,
			 "%s export 1 --db %s --metric metric_%04u.sum --from @%llu --to @%llu > /dev/null",
			 cli, path, one, (unsigned long long)mid, (unsigned long long)(mid + 1000 * 10000));
		for (int r = 0; r < 15; r++) {
			t[r] = now_s();
			if (system(cmd) != 0)
				die("command failed", cmd);
			t[r] = now_s() - t[r];
		}
		qsort(t, 15, sizeof *t, cmp_d);
		printf("cli-window-one %.2f %.2f ms\n", t[0] * 1e3, t[7] * 1e3);
	}
	if (!keep) {
		unlink(path);
	}
	free(ids);
	return 0;
}
