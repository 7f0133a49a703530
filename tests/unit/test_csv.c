/* test_csv.c - the CSV tokenizer, the generic importer's errors, the CSV
 * writer, and export -> import round trips. */
#include <unistd.h>

#include "csv.h"
#include "csv_reader.h"
#include "import_csv.h"
#include "reader.h"
#include "store.h"
#include "store_int.h" /* cs_store_db: to look at what was written */
#include "testutil.h"
#include "text.h"

static cs_store *fresh(void)
{
	char err[256];
	unlink(tu_path("c.db"));
	cs_store *s = cs_store_open(tu_path("c.db"), CS_OPEN_CREATE, err, sizeof err);
	assert_non_null(s);
	return s;
}

static int64_t count_runs(cs_store *s)
{
	sqlite3_stmt *st;
	sqlite3_prepare_v2(cs_store_db(s), "SELECT count(*) FROM runs", -1, &st, NULL);
	sqlite3_step(st);
	int64_t n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void test_tokenizer(void **state)
{
	(void)state;
	const char text[] = "a,\"b,c\",\"say \"\"hi\"\"\"\r\n\n1,,\"multi\nline\"\n2";
	cs_csvr r;
	cs_csvr_init(&r, text, sizeof text - 1);
	const char *f;
	size_t n;
	char err[128];
	const char *want[] = {"a", "b,c", "say \"hi\"", "1", "", "multi\nline", "2"};
	int ends[] = {0, 0, 1, 0, 0, 1, 1};
	uint64_t lines[] = {1, 1, 1, 3, 3, 4, 5};
	for (int i = 0; i < 7; i++) {
		int rc = cs_csvr_field(&r, &f, &n, err, sizeof err);
		assert_int_equal(rc, ends[i] ? CS_CSVR_LAST : CS_CSVR_FIELD);
		assert_int_equal(n, strlen(want[i]));
		assert_memory_equal(f, want[i], n);
		if (r.line != lines[i])
			fail_msg("field %d: line %llu, expected %llu", i,
				 (unsigned long long)r.line, (unsigned long long)lines[i]);
	}
	assert_int_equal(cs_csvr_field(&r, &f, &n, err, sizeof err), CS_CSVR_EOF);
	cs_csvr_free(&r);
	const char bad1[] = "a,\"open";
	cs_csvr_init(&r, bad1, sizeof bad1 - 1);
	assert_int_equal(cs_csvr_field(&r, &f, &n, err, sizeof err), CS_CSVR_FIELD);
	assert_int_equal(cs_csvr_field(&r, &f, &n, err, sizeof err), CS_CSVR_ERROR);
	assert_non_null(strstr(err, "never closed"));
	cs_csvr_free(&r);
	const char bad2[] = "a\"b";
	cs_csvr_init(&r, bad2, sizeof bad2 - 1);
	assert_int_equal(cs_csvr_field(&r, &f, &n, err, sizeof err), CS_CSVR_ERROR);
	cs_csvr_free(&r);
}

static void expect_import_error(const char *text, const char *needle)
{
	cs_store *s = fresh();
	cs_import_opts o = {.label = "in.csv"};
	char err[512] = "";
	cs_producer *p = cs_producer_direct(s);
	int rc = cs_import_csv(p, text, strlen(text), &o, err, sizeof err);
	cs_producer_free(p);
	if (rc == 0)
		fail_msg("import of %s succeeded, expected '%s'", text, needle);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
	/* nothing half-imported is left behind */
	assert_int_equal(count_runs(s), 0);
	cs_store_close(s);
}

static void test_import_errors(void **state)
{
	(void)state;
	expect_import_error("", "in.csv:1: empty file");
	expect_import_error("1,2,3\n4,5,6\n", "in.csv:1:1: expected a header row");
	expect_import_error("t0,a\n1,2\n", "in.csv:1: header must name both t0 and t1 (it names t0 only)");
	expect_import_error("t0,t1\n1,2\n", "header names no metric column");
	expect_import_error("t0,t1,a,a\n", "in.csv:1:4: metric 'a' appears twice");
	expect_import_error("t0,t1,a,\n", "in.csv:1:4: empty column name");
	expect_import_error("t0,t1,a,b\n0,10,1,2\n10,20,3\n",
			    "in.csv:3: expected 4 fields as in the header, found 3");
	expect_import_error("t0,t1,a\n0,10,1\n10,20,3,4\n",
			    "in.csv:3:4: expected 3 fields as in the header, found more");
	expect_import_error("t0,t1,a,b\n0,10,1,2\n10,20,3,x7\n",
			    "in.csv:3:4: metric 'b': expected a number or an empty field, found 'x7'");
	expect_import_error("t0,t1,a\n0,10,1\n-5,20,3\n",
			    "in.csv:3:1: t0: expected a non-negative integer time below 2^63, found '-5'");
	expect_import_error("t0,t1,a\n0,10,1\n10,1.5,3\n", "in.csv:3:2: t1: expected");
	expect_import_error("t0,t1,a\n0,10,1\n10,20,3\n10,20,4\n",
			    "in.csv:4: t0 10 does not increase (the previous row of device 0 has t0 10)");
	expect_import_error("t0,t1,a\n0,10,1\n20,15,3\n", "in.csv:3: t1 15 is before t0 20");
	expect_import_error("device,t0,t1,a\nzero,0,10,1\n", "in.csv:2:1: device: expected an integer");
	expect_import_error("t0,t1,a\n0,10,\"1\n", "quoted field never closed");
	/* an error deep in a big file still leaves nothing behind */
	cs_buf big = CS_BUF_INIT;
	cs_buf_append(&big, "t0,t1,a\n", 8);
	for (int i = 0; i < 20000; i++) {
		char line[64];
		int n = snprintf(line, sizeof line, "%d,%d,%d\n", i * 10, i * 10 + 10, i);
		cs_buf_append(&big, line, (size_t)n);
	}
	cs_buf_append(&big, "200000,200010,oops\n", 19);
	cs_buf_put_u8(&big, 0);
	expect_import_error((const char *)big.data, "in.csv:20002:3: metric 'a'");
	cs_buf_free(&big);
}

static int mem_sink(void *ctx, const void *p, size_t n)
{
	return cs_buf_append(ctx, p, n);
}

static void test_writer_formats(void **state)
{
	(void)state;
	cs_buf out = CS_BUF_INIT;
	cs_csv w;
	cs_csv_init(&w, mem_sink, &out);
	cs_csv_str(&w, "plain");
	cs_csv_str(&w, "with,comma");
	cs_csv_str(&w, "q\"uote");
	cs_csv_f64(&w, NAN);
	cs_csv_f64(&w, 0.1);
	cs_csv_f64(&w, -0.0);
	cs_csv_f64(&w, 123456789012.0);
	cs_csv_f64(&w, 1.0 / 3.0);
	cs_csv_i64(&w, -42);
	cs_csv_u64(&w, UINT64_MAX);
	cs_csv_end_row(&w);
	assert_int_equal(cs_csv_finish(&w), 0);
	cs_buf_put_u8(&out, 0);
	assert_string_equal((const char *)out.data,
			    "plain,\"with,comma\",\"q\"\"uote\",,0.1,-0,123456789012,"
			    "0.3333333333333333,-42,18446744073709551615\r\n");
	cs_buf_free(&out);
	/* shortest round-trip form for awkward doubles */
	uint64_t seed = 9;
	for (int i = 0; i < 10000; i++) {
		uint64_t bits = tu_rand(&seed);
		double v;
		memcpy(&v, &bits, 8);
		if (isnan(v))
			continue;
		char tmp[32];
		cs_format_f64(tmp, v);
		double back = strtod(tmp, NULL);
		if (!tu_same_bits(v, back))
			fail_msg("%s does not read back as %a", tmp, v);
	}
}

typedef struct exp_ctx {
	cs_csv *w;
	uint32_t m;
	uint32_t dev;
} exp_ctx;

static int export_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	exp_ctx *e = ctx;
	(void)seq;
	cs_csv_u64(e->w, e->dev);
	cs_csv_u64(e->w, t0);
	cs_csv_u64(e->w, t1);
	for (uint32_t k = 0; k < e->m; k++)
		cs_csv_f64(e->w, v[k]);
	cs_csv_end_row(e->w);
	return 0;
}

/* Exports run as device,t0,t1,<metrics> into out. */
static void export_run(cs_store *s, int64_t run, cs_buf *out)
{
	uint32_t *ids, m, *devs, nd;
	assert_int_equal(cs_read_metric_ids(s, run, &ids, &m), 0);
	assert_int_equal(cs_read_devices(s, run, &devs, &nd), 0);
	cs_csv w;
	cs_csv_init(&w, mem_sink, out);
	cs_csv_str(&w, "device");
	cs_csv_str(&w, "t0");
	cs_csv_str(&w, "t1");
	for (uint32_t k = 0; k < m; k++) {
		char name[128];
		assert_int_equal(cs_read_metric_name(s, run, ids[k], name, sizeof name), 0);
		cs_csv_str(&w, name);
	}
	cs_csv_end_row(&w);
	for (uint32_t d = 0; d < nd; d++) {
		exp_ctx e = {&w, m, devs[d]};
		cs_scan q = {.run = run, .device = devs[d], .m = m, .metrics = ids, .from = 0, .to = UINT64_MAX};
		assert_int_equal(cs_read_raw(s, &q, export_row, &e), 0);
	}
	assert_int_equal(cs_csv_finish(&w), 0);
	free(ids);
	free(devs);
}

static void test_roundtrip(void **state)
{
	(void)state;
	cs_store *s = fresh();
	/* metric names with CSV-special characters, absent values, awkward
	 * doubles, two devices, t0 with gaps */
	cs_buf in = CS_BUF_INIT;
	const char *hdr = "device,t0,t1,lts__t_sectors.sum,\"odd,name\",ratio\r\n";
	cs_buf_append(&in, hdr, strlen(hdr));
	uint64_t seed = 3;
	for (int d = 0; d < 2; d++) {
		for (int i = 0; i < 9000; i++) {
			char line[200];
			double r = (double)(tu_rand(&seed) % 1000000) / 997.0;
			char rs[32] = "";
			if (i % 7)
				cs_format_f64(rs, r);
			int n = snprintf(line, sizeof line, "%d,%d,%d,%llu,%s,%s\r\n", d,
					 i * 100 + (i > 5000 ? 77777 : 0),
					 i * 100 + 100 + (i > 5000 ? 77777 : 0),
					 (unsigned long long)(tu_rand(&seed) % 100000000),
					 i % 3 ? "" : "-0", rs);
			cs_buf_append(&in, line, (size_t)n);
		}
	}
	cs_import_opts o = {.label = "round.csv", .time_unit = "cycle"};
	int64_t run, run2;
	char err[512];
	cs_producer *p = cs_producer_direct(s);
	if (cs_import_csv(p, (const char *)in.data, in.len, &o, err, sizeof err))
		fail_msg("%s", err);
	run = cs_producer_run(p);
	cs_buf out = CS_BUF_INIT;
	export_run(s, run, &out);
	assert_int_equal(out.len, in.len);
	assert_memory_equal(out.data, in.data, in.len);
	/* and once more through the importer: identical again */
	if (cs_import_csv(p, (const char *)out.data, out.len, &o, err, sizeof err))
		fail_msg("%s", err);
	run2 = cs_producer_run(p);
	cs_producer_free(p);
	cs_buf out2 = CS_BUF_INIT;
	export_run(s, run2, &out2);
	assert_int_equal(out2.len, in.len);
	assert_memory_equal(out2.data, in.data, in.len);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(cs_store_db(s),
			   "SELECT kind, time_unit, status, samples FROM runs WHERE id = ?1", -1,
			   &st, NULL);
	sqlite3_bind_int64(st, 1, run);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "sim");
	assert_string_equal((const char *)sqlite3_column_text(st, 1), "cycle");
	assert_string_equal((const char *)sqlite3_column_text(st, 2), "complete");
	assert_int_equal(sqlite3_column_int64(st, 3), 18000);
	sqlite3_finalize(st);
	cs_buf_free(&in);
	cs_buf_free(&out);
	cs_buf_free(&out2);
	cs_store_close(s);
}

/* Doubles print as the shortest text that reads back as them (Dragonbox):
 * random bit patterns and ratios read back bit for bit through strtod, one
 * digit fewer (printf's correctly rounded %.*e) does not, and known values
 * print as Python's repr prints them (computed with python3). */
static void test_shortest_doubles(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *text;
	} known[] = {
		{1.0 / 3, "0.3333333333333333"},
		{0.1 + 0.2, "0.30000000000000004"},
		{5e-324, "5e-324"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{2.5e-05, "2.5e-05"},
		{123456.789, "123456.789"},
		{1e-7 / 3, "3.3333333333333334e-08"},
		{-0.001, "-0.001"},
		{2.2250738585072014e-308, "2.2250738585072014e-308"},
		{1234567890123456.8, "1234567890123456.8"},
	};
	char out[32], shorter[40];
	for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
		cs_format_f64(out, known[i].v);
		assert_string_equal(out, known[i].text);
	}
	uint64_t seed = 99;
	for (int i = 0; i < 300000; i++) {
		double v;
		if (i % 2) {
			uint64_t bits = tu_rand(&seed) << 32 ^ tu_rand(&seed);
			memcpy(&v, &bits, 8);
		} else {
			v = (double)(tu_rand(&seed) % 100000000) / (double)(1 + tu_rand(&seed) % 9999);
		}
		if (isnan(v) || isinf(v))
			continue;
		cs_format_f64(out, v);
		double back = strtod(out, NULL);
		if (memcmp(&back, &v, 8) != 0)
			fail_msg("%a printed as %s, reads back as %a", v, out, back);
		int digits = 0, lead = 1;
		for (const char *c = out; *c && *c != 'e'; c++) {
			if (*c < '0' || *c > '9' || (lead && *c == '0'))
				continue;
			lead = 0;
			digits++;
		}
		if (digits > 1 && (strchr(out, '.') || strchr(out, 'e'))) {
			snprintf(shorter, sizeof shorter, "%.*e", digits - 2, v);
			if (strtod(shorter, NULL) == v)
				fail_msg("%a printed as %s, but %s reads back too", v, out, shorter);
		}
	}
}

/* Times as options and addresses give them: the values are the spec's own
 * arithmetic (1.5 ms is 1500000 ns), not the parser's output. */
static void test_time_parse(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		double value;
		cs_time_unit unit;
		int absolute, exact;
		uint64_t whole;
	} ok[] = {
		{"0", 0, CS_TIME_RUN, 0, 1, 0},
		{"2e6", 2e6, CS_TIME_RUN, 0, 0, 0},
		{"1.5ms", 1.5e6, CS_TIME_NS, 0, 0, 0},
		{"200us", 2e5, CS_TIME_NS, 0, 0, 0},
		{"200\xc2\xb5s", 2e5, CS_TIME_NS, 0, 0, 0},
		{"2s", 2e9, CS_TIME_NS, 0, 0, 0},
		{"352.706667us", 352706.667, CS_TIME_NS, 0, 0, 0},
		{"30000cyc", 30000, CS_TIME_CYCLE, 0, 1, 30000},
		{"7cycles", 7, CS_TIME_CYCLE, 0, 1, 7},
		{"@1796393411000000123", 1796393411000000123.0, CS_TIME_RUN, 1, 1, 1796393411000000123ull},
		{"@5ns", 5, CS_TIME_NS, 1, 1, 5},
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		cs_time_spec t;
		char err[256] = "";
		assert_int_equal(cs_time_parse(ok[i].in, &t, err, sizeof err), 0);
		assert_true(t.value == ok[i].value);
		assert_int_equal(t.unit, ok[i].unit);
		assert_int_equal(t.absolute, ok[i].absolute);
		assert_int_equal(!!t.exact, ok[i].exact);
		if (ok[i].exact)
			assert_true(t.whole == ok[i].whole);
	}
	static const char *const bad[] = {"", "@", "ms", ".", "-1", "1.2.3", "1xs", "0x10", "1 ms",
					  "inf", "nan", "1e", "1e-3", "@@1", "1ms2"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cs_time_spec t;
		char err[256] = "";
		assert_int_equal(cs_time_parse(bad[i], &t, err, sizeof err), -EINVAL);
		assert_non_null(strstr(err, "'"));
	}
	uint64_t ns;
	int abs;
	char err[256];
	assert_int_equal(cs_time_ns("2.5ms", &ns, &abs, err, sizeof err), 0);
	assert_true(ns == 2500000 && !abs);
	assert_int_equal(cs_time_ns("@42", &ns, &abs, err, sizeof err), 0);
	assert_true(ns == 42 && abs);
	assert_int_equal(cs_time_ns("3cyc", &ns, &abs, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "in ns"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shortest_doubles),
		cmocka_unit_test(test_tokenizer),
		cmocka_unit_test(test_import_errors),
		cmocka_unit_test(test_writer_formats),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_time_parse),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tu_cleanup();
	return rc;
}
