/*
 * test_simbridge.c - the sim-bridge's shared parts: text input (plain,
 * multi-member gzip, truncated and corrupt gzip, long lines, CRLF), metric
 * maps (parsing, evaluation, errors) and the run builder (growing metric
 * sets, maps applied per row) into a real database.
 */
#include "testutil.h"

#include <sqlite3.h>
#include <zlib.h>

#include "buf.h"
#include "metric_map.h"
#include "simrun.h"
#include "store.h"
#include "store_int.h" /* cs_store_db: to look at what was written */
#include "textin.h"

typedef struct lines {
	cs_buf all;
	uint64_t n;
	int stop_at;
} lines;

static int collect(void *ctx, char *line, size_t len, uint64_t lineno)
{
	lines *l = ctx;
	assert_int_equal(strlen(line), len);
	l->n = lineno;
	cs_buf_append(&l->all, line, len);
	cs_buf_put_u8(&l->all, '|');
	return l->stop_at && (int)lineno == l->stop_at ? 7 : 0;
}

/* One gzip member holding text. */
static void gz_member(cs_buf *out, const char *text)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	unsigned char tmp[4096];
	z.next_in = (unsigned char *)(uintptr_t)text;
	z.avail_in = (uInt)strlen(text);
	int rc;
	do {
		z.next_out = tmp;
		z.avail_out = sizeof tmp;
		rc = deflate(&z, Z_FINISH);
		cs_buf_append(out, tmp, sizeof tmp - z.avail_out);
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
}

static void test_plain_and_gzip(void **state)
{
	char err[256];
	lines l = {0};
	const char *text = "a: 1\r\nb: 2\n\nlast without newline";
	assert_int_equal(cs_textin_lines(text, strlen(text), "t", collect, &l, NULL, NULL, NULL, err,
					 sizeof err), 0);
	cs_buf_put_u8(&l.all, 0);
	assert_string_equal((char *)l.all.data, "a: 1|b: 2||last without newline|");
	assert_int_equal(l.n, 4);
	cs_buf_free(&l.all);

	/* Three members, a line split across two of them. */
	cs_buf gz = {0};
	gz_member(&gz, "x: 1\ny: ");
	gz_member(&gz, "2\n");
	gz_member(&gz, "z: 3\n");
	lines g = {0};
	cs_textin_stats st;
	assert_true(cs_textin_is_gzip((char *)gz.data, gz.len));
	assert_int_equal(cs_textin_lines((char *)gz.data, gz.len, "t.gz", collect, &g, NULL, NULL, &st,
					 err, sizeof err), 0);
	cs_buf_put_u8(&g.all, 0);
	assert_string_equal((char *)g.all.data, "x: 1|y: 2|z: 3|");
	assert_int_equal(st.members, 3);
	assert_int_equal(st.lines, 3);
	char head[8];
	assert_int_equal(cs_textin_peek((char *)gz.data, gz.len, head, sizeof head), 7);
	assert_string_equal(head, "x: 1\ny:");
	cs_buf_free(&g.all);

	/* A callback's value stops the walk and comes back. */
	lines s = {.stop_at = 2};
	assert_int_equal(cs_textin_lines((char *)gz.data, gz.len, "t.gz", collect, &s, NULL, NULL, NULL,
					 err, sizeof err), 7);
	cs_buf_free(&s.all);

	/* Truncated inside the last member. */
	lines t = {0};
	err[0] = 0;
	assert_int_equal(cs_textin_lines((char *)gz.data, gz.len - 5, "t.gz", collect, &t, NULL, NULL,
					 NULL, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "t.gz: truncated gzip stream: the data ends inside member 3"));
	cs_buf_free(&t.all);

	/* Bytes after a member that are not another member. */
	cs_buf junk = {0};
	cs_buf_append(&junk, gz.data, gz.len);
	cs_buf_append(&junk, "JUNK", 4);
	lines j = {0};
	assert_int_equal(cs_textin_lines((char *)junk.data, junk.len, "j.gz", collect, &j, NULL, NULL,
					 NULL, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "expected another gzip member or the end of the file"));
	cs_buf_free(&j.all);

	/* Corrupt deflate data. */
	cs_buf bad = {0};
	cs_buf_append(&bad, gz.data, gz.len);
	for (size_t i = 12; i < 20 && i < bad.len; i++)
		bad.data[i] ^= 0x5a;
	lines c = {0};
	assert_true(cs_textin_lines((char *)bad.data, bad.len, "c.gz", collect, &c, NULL, NULL, NULL,
				    err, sizeof err) < 0);
	assert_non_null(strstr(err, "c.gz: "));
	cs_buf_free(&c.all);
	cs_buf_free(&bad);
	cs_buf_free(&junk);
	cs_buf_free(&gz);
}

static void test_maps(void **state)
{
	char err[256];
	const char *text =
		"# a comment\n"
		"\n"
		"dram__bytes_read.sum = 32 * \"total dram reads\"   # bytes\n"
		"lts__hit.pct = 100 * L2_cache_stats_breakdown[GLOBAL_ACC_R][HIT] / (L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS])\n"
		"smsp__inst_executed.sum = sum(\"m_num_sim_winsn_*\") - -1\n";
	cs_mmap *m = cs_mmap_parse(text, strlen(text), "t.map", err, sizeof err);
	assert_non_null(m);
	assert_int_equal(cs_mmap_count(m), 3);
	assert_string_equal(cs_mmap_target(m, 0), "dram__bytes_read.sum");
	assert_int_equal(cs_mmap_line(m, 1), 4);
	assert_int_equal(cs_mmap_names(m), 4);
	int glob;
	assert_string_equal(cs_mmap_name(m, 0, &glob), "total dram reads");
	assert_int_equal(glob, 0);
	assert_string_equal(cs_mmap_name(m, 3, &glob), "m_num_sim_winsn_*");
	assert_int_equal(glob, 1);
	double v[4] = {10, 25, 100, 7};
	assert_true(cs_mmap_eval(m, 0, v) == 320);
	assert_true(cs_mmap_eval(m, 1, v) == 25);
	assert_true(cs_mmap_eval(m, 2, v) == 8);
	assert_true(cs_mmap_uses(m, 1, 1) && !cs_mmap_uses(m, 1, 0));
	v[2] = 0; /* division by zero: absent */
	assert_true(isnan(cs_mmap_eval(m, 1, v)));
	v[0] = NAN; /* an absent term: absent */
	assert_true(isnan(cs_mmap_eval(m, 0, v)));
	cs_mmap_free(m);

	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"x = \n", "t.map:1:4: expected a number"},
		{"x y\n", "t.map:1:3: expected 'NCU_METRIC = EXPRESSION'"},
		{"x = (a + b\n", "t.map:1:11: expected ')'"},
		{"x = a $ b\n", "t.map:1:7: unexpected '$' after the expression"},
		{"x = \"open\n", "t.map:1:5: unclosed '\"'"},
		{"x = sum(a)\n", "sum() takes a quoted glob"},
		{"\n\nx = a\nx = b\n", "t.map:4:1: 'x' is already mapped on line 3"},
		{"x = rate(a\n", "t.map:1:11: expected ')' to close rate("},
		{"x = delta()\n", "t.map:1:11: unexpected ')'"},
		{"x = 2 * delta(a + )\n", "t.map:1:19: unexpected ')'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		err[0] = 0;
		assert_null(cs_mmap_parse(bad[i].text, strlen(bad[i].text), "t.map", err, sizeof err));
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': got '%s', wanted '%s'", bad[i].text, err, bad[i].msg);
	}
}

/* rate() divides by the sample's length; delta() differences against
 * the previous sample, skipping absent ones, absent at the first. */
static void test_map_rate_delta(void **state)
{
	char err[256];
	const char *text = "r = 2 * rate(a + b)\n"
			   "d = delta(a) + 0 * b\n"
			   "q = rate(a) / rate(b)\n"
			   "dd = delta(a) - delta(b)\n";
	cs_mmap *m = cs_mmap_parse(text, strlen(text), "t.map", err, sizeof err);
	assert_non_null(m);
	assert_int_equal(cs_mmap_state_len(m), 3);
	assert_true(cs_mmap_is_rate(m, 0) && !cs_mmap_is_rate(m, 1) && cs_mmap_is_rate(m, 2));
	double st[3];
	cs_mmap_state_init(m, st);
	double v[2] = {100, 20};
	assert_true(cs_mmap_eval_sample(m, 0, v, 40, st) == 6);
	assert_true(isnan(cs_mmap_eval_sample(m, 0, v, 0, st)));
	assert_true(isnan(cs_mmap_eval(m, 0, v)));
	assert_true(cs_mmap_eval_sample(m, 2, v, 7, st) == 5);
	/* a cumulative a: 100, 130, (absent), 190 -> absent, 30, absent, 60 */
	const double a[] = {100, 130, NAN, 190}, want[] = {NAN, 30, NAN, 60};
	for (int i = 0; i < 4; i++) {
		v[0] = a[i];
		double d = cs_mmap_eval_sample(m, 1, v, 1, st);
		if (isnan(want[i]) ? !isnan(d) : d != want[i])
			fail_msg("sample %d: delta %g, wanted %g", i, d, want[i]);
	}
	/* two delta()s in one entry keep separate state */
	v[0] = 10, v[1] = 1;
	assert_true(isnan(cs_mmap_eval_sample(m, 3, v, 1, st)));
	v[0] = 15, v[1] = 4;
	assert_true(cs_mmap_eval_sample(m, 3, v, 1, st) == 2);
	assert_true(isnan(cs_mmap_eval_sample(m, 3, v, 1, NULL)));
	cs_mmap_free(m);
}

/* Metrics appearing mid-file, many rows (several batches), a map. */
static void test_simrun(void **state)
{
	char err[256];
	cs_store *s = cs_store_open(tu_path("simrun.db"), CS_OPEN_CREATE, err, sizeof err);
	assert_non_null(s);
	cs_producer *p = cs_producer_direct(s);
	const char *map_text = "both = a + b\ntotal = sum(\"c_*\")\nnever = missing\n";
	cs_mmap *map = cs_mmap_parse(map_text, strlen(map_text), "m", err, sizeof err);
	assert_non_null(map);
	cs_run_info info = {.kind = "sim", .source = "test", .time_unit = "cycle"};
	cs_simrun *r = cs_simrun_begin(p, &info, map, err, sizeof err);
	assert_non_null(r);
	int a = cs_simrun_metric(r, "a", "x", NULL);
	int b = cs_simrun_metric(r, "b", NULL, NULL);
	assert_int_equal(cs_simrun_metric(r, "a", NULL, NULL), a);
	char name[32];
	for (uint64_t i = 0; i < 50000; i++) {
		assert_int_equal(cs_simrun_row(r, i * 10, i * 10 + 10), 0);
		cs_simrun_set(r, a, (double)i);
		if (i >= 100)
			cs_simrun_set(r, b, 1);
		/* 300 more metrics appear from row 1000 on */
		for (int k = 0; i >= 1000 && k < 300; k++) {
			snprintf(name, sizeof name, "c_%d", k);
			int c = cs_simrun_metric(r, name, NULL, NULL);
			assert_true(c >= 0);
			cs_simrun_add(r, c, 1);
			cs_simrun_add(r, c, 1);
		}
	}
	assert_int_equal(cs_simrun_row(r, 5, 6), -EINVAL); /* time goes back */
	assert_non_null(strstr(cs_simrun_errmsg(r), "time goes back"));
	assert_int_equal(cs_simrun_rows(r), 50000);
	assert_int_equal(cs_simrun_end(r, err, sizeof err), 0);
	cs_producer_free(p);
	sqlite3 *db = cs_store_db(s);
	assert_int_equal(tu_q1(db, "SELECT samples FROM runs"), 50000);
	assert_int_equal(tu_q1(db, "SELECT count(*) FROM metrics"), 2 + 300 + 2);
	assert_int_equal(tu_q1(db, "SELECT sum(value) FROM series WHERE run=1 AND metric='a'"),
			 49999LL * 50000 / 2);
	assert_int_equal(tu_q1(db, "SELECT count(*) FROM series WHERE run=1 AND metric='b'"), 49900);
	assert_int_equal(tu_q1(db, "SELECT sum(value) FROM series WHERE run=1 AND metric='c_299'"), 2 * 49000);
	/* both = a + b only where b is there; total sums the 300 c_* */
	assert_int_equal(tu_q1(db, "SELECT count(*) FROM series WHERE run=1 AND metric='both'"), 49900);
	assert_int_equal(tu_q1(db, "SELECT max(value) FROM series WHERE run=1 AND metric='total'"), 600);
	assert_int_equal(tu_q1(db, "SELECT count(*) FROM metrics WHERE name='never'"), 0);
	cs_mmap_free(map);
	cs_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_gzip),
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_map_rate_delta),
		cmocka_unit_test(test_simrun),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tu_cleanup();
	return rc;
}
