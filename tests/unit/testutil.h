/*
 * testutil.h - shared helpers for the cmocka unit tests: a private temp
 * directory per test binary and small data generators.
 */
#ifndef CS_TESTUTIL_H
#define CS_TESTUTIL_H

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

/* A fresh directory under $TMPDIR, removed by tu_cleanup(). */
static char tu_dir_g[256];

static inline const char *tu_dir(void)
{
	if (!tu_dir_g[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tu_dir_g, sizeof tu_dir_g, "%s/cstest.XXXXXX",
			 base && *base ? base : "/tmp");
		if (!mkdtemp(tu_dir_g))
			abort();
	}
	return tu_dir_g;
}

/* A path inside the temp dir; returns a static buffer (one of 4). */
static inline const char *tu_path(const char *name)
{
	static char bufs[4][512];
	static int next;
	char *b = bufs[next++ & 3];
	snprintf(b, sizeof bufs[0], "%s/%s", tu_dir(), name);
	return b;
}

static inline void tu_cleanup(void)
{
	if (tu_dir_g[0]) {
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_dir_g);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tu_dir_g);
	}
}

/* xorshift64*: deterministic data for tests. */
static inline uint64_t tu_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 2685821657736338717ull;
}

static inline int tu_same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static inline void tu_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	fclose(f);
}

/* The first column of the first row of sql as an integer; -1 when the
 * statement yields no row. Fails the test when it does not prepare. */
static inline int64_t tu_q1(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	int64_t v = -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

#endif
