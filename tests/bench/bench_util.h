/*
 * bench_util.h - what the C benchmarks share: a monotonic clock, a file's
 * size with its WAL, and a double comparison for qsort.
 */
#ifndef CS_BENCH_UTIL_H
#define CS_BENCH_UTIL_H

#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Bytes of path and of its -wal beside it. */
static inline double file_size(const char *path)
{
	struct stat st;
	char p[600];
	double total = 0;
	const char *suffix[] = {"", "-wal"};
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		if (stat(p, &st) == 0)
			total += (double)st.st_size;
	}
	return total;
}

static inline int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#endif
