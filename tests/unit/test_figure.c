/* test_figure.c - the SVG figure renderer and its number formatting: the
 * formatters' documented examples, a figure's structure and well-formedness,
 * empty and hostile data, and the size of a million-sample figure. */
#include <ctype.h>

#include "buf.h"
#include "figure.h"
#include "testutil.h"

/* NAN and INFINITY are floats: spelled as doubles for -Wdouble-promotion */
#define DNAN ((double)NAN)
#define DINF ((double)INFINITY)

static void expect_num(double v, double step, const char *want)
{
	char out[64];
	cs_fig_fmt_num(v, step, out, sizeof out);
	if (strcmp(out, want))
		fail_msg("fmt_num(%g, %g) = '%s', expected '%s'", v, step, out, want);
}

static void expect_time(double v, double step, const char *want)
{
	char out[64];
	cs_fig_fmt_time(v, step, out, sizeof out);
	if (strcmp(out, want))
		fail_msg("fmt_time(%g, %g) = '%s', expected '%s'", v, step, out, want);
}

static void test_fmt_num(void **state)
{
	(void)state;
	/* figure.h's examples */
	expect_num(17545, 5, "17.545k");
	expect_num(15000, 5000, "15k");
	expect_num(0, 5000, "0");
	expect_num(0.25, 0.05, "0.25");
	expect_num(2.5e-6, 0, "2.5\xc2\xb5");
	expect_num(1234567, 0, "1.23M");
	/* the rest of the rules */
	expect_num(DNAN, 1, "n/a");
	expect_num(-15000, 5000, "-15k");
	expect_num(2.5e12, 5e11, "2.5T");
	expect_num(3e9, 1e9, "3G");
	expect_num(7.5, 2.5, "7.5");
	expect_num(0.002, 0.001, "0.002");
	expect_num(5e-10, 0, "0.5n");
	expect_num(999.96, 0, "1k"); /* rounding up moves to the next prefix */
	expect_num(1e-12, 5000, "0"); /* a rounding residue next to a tick is 0 */
	expect_num(-0.2, 1, "0");     /* never "-0" */
	expect_num(42, 0, "42");
	expect_num(1e20, 0, "1e+20"); /* past T: an exponent, not 21 digits */
	expect_num(5e-324, 0, "0");
	char small[4];
	cs_fig_fmt_num(1234567, 0, small, sizeof small);
	assert_string_equal(small, "1.2");
}

static void test_fmt_time(void **state)
{
	(void)state;
	expect_time(25000, 50, "25 \xc2\xb5s");
	expect_time(25050, 50, "25.05 \xc2\xb5s");
	expect_time(1.5e6, 5e5, "1.5 ms");
	expect_time(2.5e9, 5e8, "2.5 s");
	expect_time(120, 2, "120 ns");
	expect_time(0, 5e5, "0 ms");
	expect_time(DNAN, 5e5, "n/a");
	expect_time(-1.5e6, 5e5, "-1.5 ms");
	expect_time(1.5e6, 0, "1.5 ms"); /* no step: the unit by |v| */
	expect_time(0, 0, "0 ns");
	expect_time(999999.6, 0, "1 ms");
}

/* --- SVG helpers --- */

static char *render(const cs_fig *f)
{
	cs_buf b = CS_BUF_INIT;
	assert_int_equal(cs_fig_svg(f, &b), 0);
	assert_int_equal(cs_buf_append(&b, "", 1), 0); /* NUL for strstr */
	return (char *)b.data;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static int has_python(void) { return system("command -v python3 >/dev/null 2>&1") == 0; }

/* Parses svg with Python's XML parser: 1 when well-formed. */
static int well_formed(const char *svg)
{
	const char *path = tu_path("fig.svg");
	tu_write_file(path, svg);
	char cmd[700];
	snprintf(cmd, sizeof cmd,
		 "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '%s'",
		 path);
	return system(cmd) == 0;
}

static void expect_well_formed(const char *svg)
{
	if (!has_python())
		return; /* structure is still checked by the callers */
	if (!well_formed(svg))
		fail_msg("not well-formed XML; kept as %s", tu_path("fig.svg"));
}

static void test_structure(void **state)
{
	(void)state;
	double x0[6], x1[6], y[6], lo[6], hi[6], bx0[3], bx1[3], by[3];
	for (int i = 0; i < 6; i++) {
		x0[i] = 1e9 + i * 1e6;
		x1[i] = x0[i] + 1e6;
		y[i] = 100 + 10 * i;
		lo[i] = y[i] - 5;
		hi[i] = y[i] + 5;
	}
	x1[2] = x0[2] + 5e5; /* a gap: the step path breaks there */
	for (int i = 0; i < 3; i++) {
		bx0[i] = 1e9 + i * 2e6;
		bx1[i] = bx0[i] + 1.5e6;
		by[i] = 3 + i;
	}
	cs_fig_series step = {.label = "sm__throughput [%]", .color = "#1f77b4",
			      .style = CS_FIG_STEP, .n = 6, .x0 = x0, .x1 = x1, .y = y,
			      .lo = lo, .hi = hi};
	cs_fig_series bars = {.label = "kernels", .color = "#ff7f0e", .style = CS_FIG_BARS,
			      .dash = "5 3", .n = 3, .x0 = bx0, .x1 = bx1, .y = by};
	cs_fig_panel panels[2] = {
		{.ytitle = "sm__throughput [%]", .nseries = 1, .series = &step},
		{.ytitle = "kernel time [ms]", .height = 150, .nseries = 1, .series = &bars},
	};
	cs_fig_span spans[3] = {
		{1e9, 1.001e9, "gemm_kernel_with_a_rather_long_name", NULL},
		{1.002e9, 1.004e9, "relu", "#2ca02c"},
		{1.0045e9, 1.0046e9, "tiny", NULL},
	};
	cs_fig_lane lane = {.label = "kernel s7", .color = "#9467bd", .n = 3, .spans = spans};
	double sx0[2] = {1e9, 1.002e9}, sx1[2] = {1.001e9, 1.003e9};
	cs_fig f = {.title = "Throughput per kernel", .caption = "run 3, 6 buckets",
		    .xkind = CS_FIG_X_NS, .x_origin = 1e9, .npanels = 2, .panels = panels,
		    .nlanes = 1, .lanes = &lane, .shade = {2, sx0, sx1}};
	char *svg = render(&f);
	assert_memory_equal(svg, "<?xml", 5);
	assert_non_null(strstr(svg, "xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(svg, "viewBox=\"0 0 960 "));
	assert_non_null(strstr(svg, "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""));
	assert_int_equal(count(svg, "<g class=\"panel\">"), 2);
	assert_int_equal(count(svg, "<clipPath"), 3); /* 2 panels, the lanes */
	assert_int_equal(count(svg, "<g class=\"series\""), 2);
	assert_non_null(strstr(svg, "data-label=\"sm__throughput [%]\""));
	assert_int_equal(count(svg, "<rect class=\"span\""), 3);
	assert_int_equal(count(svg, "<rect class=\"shade\""), 4); /* 2 per panel */
	assert_int_equal(count(svg, "<g class=\"lane\" data-label=\"kernel s7\">"), 1);
	assert_non_null(strstr(svg, "<title>gemm_kernel_with_a_rather_long_name</title>"));
	assert_non_null(strstr(svg, "<title>tiny</title>"));
	/* the 100 us span cannot hold its label; "relu" fits in 2 ms */
	assert_int_equal(count(svg, ">tiny<"), 1);
	assert_int_equal(count(svg, ">relu<"), 2);
	assert_int_equal(count(svg, "class=\"title\""), 1);
	assert_int_equal(count(svg, ">Throughput per kernel</text>"), 1);
	assert_int_equal(count(svg, "class=\"caption\""), 1);
	assert_int_equal(count(svg, "class=\"axis-title\""), 3); /* 2 y, 1 derived x */
	assert_non_null(strstr(svg, ">time since start</text>"));
	/* one legend entry per label, the dash shown */
	assert_int_equal(count(svg, "class=\"legend-entry\""), 2);
	assert_non_null(strstr(svg, "stroke-dasharray=\"5 3\""));
	/* the band: a filled polygon per contiguous run (the gap splits it) */
	assert_int_equal(count(svg, "fill-opacity=\"0.15\""), 2);
	/* the x tick labels carry the unit, under the last panel only */
	assert_non_null(strstr(svg, " ms</text>"));
	assert_null(strstr(svg, "no data in view"));
	expect_well_formed(svg);
	free(svg);
}

static void test_legend_dedupe_and_wrap(void **state)
{
	(void)state;
	double x[2] = {1, 2}, y[2] = {1, 2};
	cs_fig_series se[8];
	char labels[8][64];
	for (int i = 0; i < 8; i++) {
		snprintf(labels[i], sizeof labels[i], "a long legend label number %d", i % 6);
		se[i] = (cs_fig_series){.label = labels[i], .color = "#333", .style = CS_FIG_LINE,
					.n = 2, .x0 = x, .y = y};
	}
	cs_fig_panel p[2] = {{.nseries = 4, .series = se}, {.nseries = 4, .series = se + 4}};
	cs_fig f = {.xkind = CS_FIG_X_PLAIN, .width = 400, .npanels = 2, .panels = p};
	char *svg = render(&f);
	assert_int_equal(count(svg, "class=\"legend-entry\""), 6);
	/* 6 entries of ~240 px in 400 px: one per row */
	assert_int_equal(count(svg, "><path d=\"M40.00,"), 6);
	expect_well_formed(svg);
	free(svg);
}

static void test_all_nan(void **state)
{
	(void)state;
	double x[4] = {0, 1, 2, 3}, y[4] = {DNAN, DNAN, DNAN, DNAN};
	cs_fig_series se = {.label = "empty", .color = "#000", .style = CS_FIG_STEP, .n = 4,
			    .x0 = x, .y = y};
	cs_fig_series none = {.label = "none", .style = CS_FIG_LINE};
	cs_fig_panel p[2] = {{.ytitle = "v", .nseries = 1, .series = &se},
			     {.ylog = 1, .nseries = 1, .series = &none}};
	cs_fig f = {.xkind = CS_FIG_X_CYCLES, .xmin = 5, .xmax = 5, .npanels = 2, .panels = p};
	char *svg = render(&f);
	assert_int_equal(count(svg, "no data in view"), 2);
	assert_non_null(strstr(svg, ">cycles since start</text>"));
	expect_well_formed(svg);
	free(svg);
	/* nothing at all still makes a document */
	cs_fig empty = {.xkind = CS_FIG_X_PLAIN};
	svg = render(&empty);
	assert_non_null(strstr(svg, "</svg>"));
	expect_well_formed(svg);
	free(svg);
}

static void test_million_points(void **state)
{
	(void)state;
	size_t n = 1000000;
	double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
	double *bx1 = malloc(n * sizeof *bx1);
	assert_non_null(x);
	assert_non_null(y);
	assert_non_null(bx1);
	uint64_t seed = 42;
	for (size_t i = 0; i < n; i++) {
		x[i] = (double)i * 1000;
		bx1[i] = x[i] + 1000;
		y[i] = sin((double)i / 5000) * 100 + (double)(tu_rand(&seed) % 100);
	}
	y[n / 2] = 1e6; /* a spike the reduction must keep */
	cs_fig_series se[4] = {
		{.label = "line", .color = "#1f77b4", .style = CS_FIG_LINE, .n = n, .x0 = x, .y = y},
		{.label = "step", .color = "#ff7f0e", .style = CS_FIG_STEP, .n = n, .x0 = x,
		 .x1 = bx1, .y = y, .lo = y, .hi = y},
		{.label = "bars", .color = "#2ca02c", .style = CS_FIG_BARS, .n = n, .x0 = x,
		 .x1 = bx1, .y = y},
		{.label = "points", .color = "#d62728", .style = CS_FIG_POINTS, .n = n, .x0 = x,
		 .y = y},
	};
	size_t spans_n = 200000;
	cs_fig_span *spans = calloc(spans_n, sizeof *spans);
	assert_non_null(spans);
	for (size_t i = 0; i < spans_n; i++)
		spans[i] = (cs_fig_span){x[i * 5], x[i * 5] + 3000, "k", NULL};
	cs_fig_lane lane = {.label = "kernels", .color = "#9467bd", .n = spans_n, .spans = spans};
	for (int k = 0; k < 4; k++) {
		cs_fig_panel p = {.ytitle = "v", .nseries = 1, .series = &se[k]};
		cs_fig f = {.xkind = CS_FIG_X_NS, .npanels = 1, .panels = &p,
			    .nlanes = k == 0, .lanes = &lane};
		char *svg = render(&f);
		size_t len = strlen(svg);
		if (len >= 1000000)
			fail_msg("%s: %zu bytes for a million samples", se[k].label, len);
		/* the spike sets the axis: 1M padded by 5% */
		assert_non_null(strstr(svg, ">1M</text>"));
		if (k == 0)
			expect_well_formed(svg);
		free(svg);
	}
	free(spans);
	free(bx1);
	free(y);
	free(x);
}

static void test_escaping(void **state)
{
	(void)state;
	double x[2] = {1, 2}, y[2] = {3, 4};
	const char *labels[2] = {"p<1>", NULL};
	cs_fig_series se = {.label = "<a&b>", .color = "#000\"/><script>", .style = CS_FIG_POINTS,
			    .n = 2, .x0 = x, .y = y, .labels = labels};
	cs_fig_span sp = {1, 2, "it's \"q\"\x01\xff", NULL};
	cs_fig_lane lane = {.label = "<a&b>", .n = 1, .spans = &sp};
	cs_fig_panel p = {.ytitle = "<a&b>", .nseries = 1, .series = &se};
	cs_fig f = {.title = "<a&b>", .caption = "<a&b>\n", .xtitle = "<a&b>",
		    .xkind = CS_FIG_X_PLAIN, .npanels = 1, .panels = &p, .nlanes = 1,
		    .lanes = &lane};
	char *svg = render(&f);
	assert_null(strstr(svg, "<a&b>"));
	assert_null(strstr(svg, "<script>"));
	assert_null(strstr(svg, "\x01"));
	assert_true(count(svg, "&lt;a&amp;b&gt;") >= 6);
	assert_non_null(strstr(svg, "p&lt;1&gt;"));
	assert_non_null(strstr(svg, "<title>it&#39;s &quot;q&quot;\xef\xbf\xbd</title>"));
	expect_well_formed(svg);
	free(svg);
}

/* No "nan" or "inf" in any case: they are not numbers SVG accepts. */
static void expect_no_nonfinite(const char *svg)
{
	size_t n = strlen(svg);
	char *low = malloc(n + 1);
	assert_non_null(low);
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)svg[i]);
	if (strstr(low, "nan") || strstr(low, "inf"))
		fail_msg("non-finite number printed:\n%s", svg);
	free(low);
}

static void test_nonfinite(void **state)
{
	(void)state;
	double x[8] = {0, 1, DNAN, 3, DINF, 5, 6, -DINF};
	double x1[8] = {1, 2, 3, DNAN, 5, 6, DINF, 8};
	double y[8] = {1, DNAN, 3, DINF, -DINF, 2, 1e308, -1e308};
	double lo[8] = {0, 0, DNAN, 0, 0, DINF, 0, 0};
	const char *labels[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
	cs_fig_series se[4] = {
		{.label = "s", .color = "#000", .style = CS_FIG_STEP, .width = DNAN, .n = 8,
		 .x0 = x, .x1 = x1, .y = y, .lo = lo, .hi = y},
		{.label = "b", .color = "#000", .style = CS_FIG_BARS, .n = 8, .x0 = x, .x1 = x1,
		 .y = y},
		{.label = "l", .color = "#000", .style = CS_FIG_LINE, .width = DINF, .n = 8,
		 .x0 = x, .y = y, .lo = lo, .hi = y},
		{.label = "p", .color = "#000", .style = CS_FIG_POINTS, .n = 8, .x0 = x, .y = y,
		 .labels = labels},
	};
	cs_fig_span sp[2] = {{DNAN, 1, "n", NULL}, {-DINF, DINF, "i", NULL}};
	cs_fig_lane lane = {.label = "l", .n = 2, .spans = sp};
	double sx0[2] = {DNAN, 0}, sx1[2] = {1, DINF};
	for (int log = 0; log < 2; log++) {
		cs_fig_panel p[2] = {{.ylog = log, .zero_line = 1, .height = DNAN, .nseries = 2,
				      .series = se},
				     {.ylog = log, .nseries = 2, .series = se + 2}};
		cs_fig f = {.title = "t", .xkind = log ? CS_FIG_X_PLAIN : CS_FIG_X_NS,
			    .xlog = log, .x_origin = DNAN, .xmin = -DINF, .xmax = DINF,
			    .width = DNAN, .diagonal = 1, .npanels = 2, .panels = p, .nlanes = 1,
			    .lanes = &lane, .shade = {2, sx0, sx1}};
		char *svg = render(&f);
		expect_no_nonfinite(svg);
		expect_well_formed(svg);
		free(svg);
	}
}

static void test_scatter_log(void **state)
{
	(void)state;
	double x[5] = {1e3, 2e4, 3e5, -1, 0}, y[5] = {2e3, 1e4, 5e5, 7, 1};
	cs_fig_series se = {.label = "kernels", .color = "#1f77b4", .style = CS_FIG_POINTS,
			    .n = 5, .x0 = x, .y = y};
	cs_fig_panel p = {.ytitle = "run B [ns]", .ylog = 1, .nseries = 1, .series = &se};
	cs_fig f = {.xkind = CS_FIG_X_PLAIN, .xlog = 1, .xtitle = "run A [ns]", .diagonal = 1,
		    .npanels = 1, .panels = &p};
	char *svg = render(&f);
	assert_int_equal(count(svg, "<circle"), 3 + 1); /* 3 positive points + legend */
	assert_non_null(strstr(svg, "class=\"diagonal\""));
	assert_non_null(strstr(svg, ">10k</text>"));
	assert_non_null(strstr(svg, ">100k</text>"));
	expect_well_formed(svg);
	free(svg);
}

/* The rotated y title sits left of the widest tick label, whatever the
 * panel, and every panel shares the widest one's margin. */
static void test_margin(void **state)
{
	(void)state;
	double x[2] = {0, 1}, ya[2] = {0, 1.2345e9}, yb[2] = {0, 1};
	cs_fig_series a = {.label = "a", .style = CS_FIG_LINE, .n = 2, .x0 = x, .y = ya};
	cs_fig_series b = {.label = "b", .style = CS_FIG_LINE, .n = 2, .x0 = x, .y = yb};
	cs_fig_panel p[2] = {{.ytitle = "bytes", .nseries = 1, .series = &b},
			     {.ytitle = "big", .nseries = 1, .series = &a}};
	cs_fig f = {.xkind = CS_FIG_X_PLAIN, .npanels = 2, .panels = p};
	char *svg = render(&f);
	/* each panel's frame starts at the same x */
	const char *fr = strstr(svg, "fill=\"none\" stroke=\"#333\" stroke-width=\"0.8\"");
	assert_non_null(fr);
	double left = -1;
	for (const char *q = svg; (q = strstr(q, "<rect x=\"")) != NULL; q++) {
		const char *end = strchr(q, '>');
		if (!end || !strstr(q, "fill=\"none\" stroke=\"#333\"") ||
		    strstr(q, "fill=\"none\" stroke=\"#333\"") > end)
			continue;
		double v = strtod(q + 9, NULL);
		if (left < 0)
			left = v;
		assert_true(v == left);
	}
	assert_true(left > 0);
	/* the big panel's title translate x + ~9 px of glyphs clears its labels */
	const char *t = strstr(svg, "class=\"axis-title\" transform=\"translate(");
	t = strstr(t + 1, "class=\"axis-title\" transform=\"translate(");
	assert_non_null(t);
	double tx = strtod(strchr(t, '(') + 1, NULL);
	assert_true(tx - 9 >= 0);
	/* widest label "1.2G" (4 chars, 11 px) ends at left - 7 */
	assert_true(tx + 3 < left - 7 - 4 * 0.6 * 11);
	free(svg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_num),
		cmocka_unit_test(test_fmt_time),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_legend_dedupe_and_wrap),
		cmocka_unit_test(test_all_nan),
		cmocka_unit_test(test_million_points),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_nonfinite),
		cmocka_unit_test(test_scatter_log),
		cmocka_unit_test(test_margin),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tu_cleanup();
	return rc;
}
