/*
 * nvprof.c - nvprof's CSV output (nvprof.h).
 *
 * One pass over the lines. "==PID==" and "========" lines (nvprof's own
 * messages) are skipped; a report starts at its header line, found by its
 * content; the trace and summary reports have a units row under it ("us,
 * us,,,KB,..."), one unit per column. Lines of another shape inside a
 * report are the application's own output, skipped and counted; a cut last
 * line is tolerated with a warning. Trace rows go straight out as ranges;
 * per-kernel and per-name rows are kept and written at the end, one
 * sample each, end to end (a kernel's metrics have no time of their own:
 * 1 us each; a summary row lasts its total time).
 */
#include "nvprof.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "csv_reader.h"
#include "krows.h"
#include "log.h"
#include "simrun.h"
#include "text.h"
#include "textin.h"

#define MAX_COLS 64

enum report { R_NONE, R_TRACE, R_METRICS, R_SUMMARY, R_SKIP };

typedef struct nvprof {
	cs_imp im;
	cs_producer *p;
	cs_simrun *run;
	int family;   /* R_TRACE, or R_METRICS/R_SUMMARY for per-item reports */
	int report;
	size_t ncols;
	char *names[MAX_COLS];
	double scale[MAX_COLS]; /* the units row's factor to ns or bytes; 0 = none */
	char colunit[MAX_COLS][16];
	int units_next;         /* the next line may be the units row */
	int c_start, c_dur, c_name, c_corr, c_dev, c_stream, c_size, c_grid;
	int c_kernel, c_metric, c_min, c_max, c_avg, c_type, c_pct, c_time, c_calls;
	cs_krows *items;      /* metrics and summary rows */
	cs_buf fields;
	char why[128];
	char pend_err[256];
	uint64_t pend_line;
	uint64_t foreign, ranges, skipped_reports;
	char skipped_what[128];
} nvprof;

#define fail(st, ...) cs_imp_fail(&(st)->im, __VA_ARGS__)

static int col(const nvprof *n, const char *name)
{
	for (size_t i = 0; i < n->ncols; i++)
		if (!strcmp(n->names[i], name))
			return (int)i;
	return -1;
}

/* Which report a header line (its fields) starts. */
static int report_of(char **f, long nf)
{
	if (nf >= 8 && !strcmp(f[0], "Device") && !strcmp(f[1], "Kernel") &&
	    !strcmp(f[2], "Invocations") &&
	    (!strcmp(f[3], "Metric Name") || !strcmp(f[3], "Event Name")))
		return R_METRICS;
	if (nf >= 3 && !strcmp(f[0], "Start") && !strcmp(f[1], "Duration"))
		return R_TRACE;
	if (nf >= 7 && ((!strcmp(f[0], "Type") && !strcmp(f[1], "Time(%)")) ||
			(!strcmp(f[0], "Time(%)") && !strcmp(f[1], "Time"))))
		return R_SUMMARY;
	return R_NONE;
}

/* A unit's factor: time to ns, size to bytes; 0 when not one of those. */
static double unit_scale(const char *u)
{
	static const struct {
		const char *u;
		double f;
	} t[] = {{"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}, {"B", 1}, {"KB", 1024},
		 {"MB", 1048576}, {"GB", 1073741824.0}};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (!strcmp(u, t[i].u))
			return t[i].f;
	return 0;
}

/* A units row: every field empty or a unit ("us", "KB", "%", "GB/s"). */
static int units_row(nvprof *n, char **f, long nf)
{
	if ((size_t)nf != n->ncols)
		return 0;
	for (long i = 0; i < nf; i++)
		if (*f[i] && !unit_scale(f[i]) && strcmp(f[i], "%") && !strstr(f[i], "/s"))
			return 0;
	for (long i = 0; i < nf; i++) {
		n->scale[i] = unit_scale(f[i]);
		snprintf(n->colunit[i], sizeof n->colunit[i], "%s", f[i]);
	}
	return 1;
}

/* A number with its unit glued on or after a space ("12.5", "47.79%",
 * "542.36ms"); *unit points at the unit (may be ""), *len is the number's
 * length. */
static int quantity(const char *s, double *v, const char **unit, size_t *len)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(*v) || !isdigit((unsigned char)end[-1]))
		return -1;
	*len = (size_t)(end - s);
	while (*end == ' ')
		end++;
	*unit = end;
	return 0;
}

/* A field in the column's unit (the units row's, else its own) as ns or
 * bytes. */
static int scaled(nvprof *n, int c, const char *s, double *v)
{
	const char *u;
	size_t len;
	if (quantity(s, v, &u, &len))
		return -1;
	double f = *u ? unit_scale(u) : n->scale[c] ? n->scale[c] : 1;
	if (!f)
		return -1;
	*v = cs_text_scaled(s, len, f);
	return 0;
}

/* A metric's value: a number, a percentage, a rate (stored in GB/s) or a
 * utilization level ("Low (1)" is 1). unit gets its unit. */
static int metric_value(const char *s, double *v, char *unit, size_t ulen)
{
	static const struct {
		const char *u;
		double f;
	} rates[] = {{"B/s", 1e-9}, {"KB/s", 1e-6}, {"MB/s", 1e-3}, {"GB/s", 1}, {"TB/s", 1e3}};
	unit[0] = '\0';
	const char *p = strchr(s, '(');
	if (p && isalpha((unsigned char)s[0])) { /* Idle (0), Low (1) ... Max (10) */
		char *end;
		*v = strtod(p + 1, &end);
		if (end == p + 1 || *end != ')')
			return -1;
		snprintf(unit, ulen, "level");
		return 0;
	}
	const char *u;
	size_t len;
	if (quantity(s, v, &u, &len))
		return -1;
	if (!*u)
		return 0;
	if (!strcmp(u, "%")) {
		snprintf(unit, ulen, "%%");
		return 0;
	}
	for (size_t i = 0; i < sizeof rates / sizeof *rates; i++)
		if (!strcmp(u, rates[i].u)) {
			*v = cs_text_scaled(s, len, rates[i].f);
			snprintf(unit, ulen, "GB/s");
			return 0;
		}
	return -1;
}

static int header(nvprof *n, int report, char **f, long nf)
{
	for (size_t i = 0; i < n->ncols; i++)
		free(n->names[i]);
	n->ncols = 0;
	if (nf > MAX_COLS)
		return fail(n, "more than %d columns", MAX_COLS);
	for (long i = 0; i < nf; i++) {
		if (!(n->names[i] = strdup(f[i])))
			return -ENOMEM;
		n->scale[i] = 0;
		n->colunit[i][0] = '\0';
		n->ncols++;
	}
	int family = report == R_TRACE ? R_TRACE : R_METRICS;
	if (n->family && n->family != family) {
		static const char *const what[] = {"", "a trace", "a metrics report", "a summary"};
		n->skipped_reports++;
		snprintf(n->skipped_what, sizeof n->skipped_what, "%s (line %" PRIu64 ")", what[report],
			 n->im.line);
		n->report = R_SKIP;
		return 0;
	}
	n->family = family;
	n->report = report;
	n->units_next = report != R_METRICS;
	n->c_start = col(n, "Start"), n->c_dur = col(n, "Duration"), n->c_name = col(n, "Name");
	n->c_corr = col(n, "Correlation_ID"), n->c_dev = col(n, "Device");
	n->c_stream = col(n, "Stream"), n->c_size = col(n, "Size"), n->c_grid = col(n, "Grid X");
	n->c_kernel = col(n, "Kernel"), n->c_metric = col(n, "Metric Name");
	if (n->c_metric < 0)
		n->c_metric = col(n, "Event Name");
	n->c_min = col(n, "Min"), n->c_max = col(n, "Max"), n->c_avg = col(n, "Avg");
	n->c_type = col(n, "Type"), n->c_pct = col(n, "Time(%)"), n->c_time = col(n, "Time");
	n->c_calls = col(n, "Calls");
	if (report == R_TRACE && n->c_name < 0)
		return fail(n, "a trace report without a Name column");
	if (report == R_SUMMARY && (n->c_name < 0 || n->c_time < 0 || n->c_calls < 0))
		return fail(n, "a summary report without its Time, Calls and Name columns");
	if (report == R_METRICS && (n->c_min < 0 || n->c_max < 0 || n->c_avg < 0))
		return fail(n, "a metrics report without its Min, Max and Avg columns");
	return 0;
}

/* A trace row: one range. */
static int trace_row(nvprof *n, char **f)
{
	double t0, d;
	if (scaled(n, n->c_start, f[n->c_start], &t0) || !(t0 >= 0))
		return fail(n, "Start '%s': expected a time (in the units row's unit)", f[n->c_start]);
	if (scaled(n, n->c_dur, f[n->c_dur], &d) || !(d >= 0))
		return fail(n, "Duration '%s': expected a time (in the units row's unit)",
			    f[n->c_dur]);
	if (t0 + d >= 9e18)
		return fail(n, "Start + Duration does not fit the time axis");
	char *name = f[n->c_name];
	int64_t corr = -1;
	size_t nl = strlen(name);
	if (nl > 3 && name[nl - 1] == ']') { /* "kernel [1183]": its correlation id */
		char *b = strrchr(name, '[');
		char *end;
		long long v = b ? strtoll(b + 1, &end, 10) : -1;
		if (b && b > name && b[-1] == ' ' && end == name + nl - 1 && v >= 0) {
			corr = v;
			b[-1] = '\0';
		}
	}
	if (n->c_corr >= 0 && *f[n->c_corr]) {
		char *end;
		long long v = strtoll(f[n->c_corr], &end, 10);
		if (*end || v < 0)
			return fail(n, "Correlation_ID '%s': expected an integer", f[n->c_corr]);
		corr = v;
	}
	const char *kind = !strncmp(name, "[CUDA memcpy", 12) ? "memcpy"
			   : !strncmp(name, "[CUDA memset", 12) ? "memset"
			   : n->c_grid >= 0 ? "kernel" : "api";
	cs_range r;
	cs_range_init(&r, kind, *name ? name : "(unnamed)", (uint64_t)t0, (uint64_t)(t0 + d));
	r.correlation_id = corr;
	if (n->c_dev >= 0)
		r.device = cs_simrun_device_of(f[n->c_dev]);
	if (n->c_stream >= 0 && *f[n->c_stream]) {
		char *end;
		long long v = strtoll(f[n->c_stream], &end, 10);
		if (!*end && v >= 0)
			r.stream = v;
	}
	double bytes;
	if (n->c_size >= 0 && *f[n->c_size] && !scaled(n, n->c_size, f[n->c_size], &bytes) &&
	    bytes >= 0 && bytes < 9e18)
		r.bytes = (int64_t)llround(bytes);
	if (cs_simrun_range(n->run, &r) < 0)
		return fail(n, "%s", cs_simrun_errmsg(n->run));
	n->ranges++;
	return 0;
}

/* A metrics or events row: one value of one kernel. */
static int metric_row(nvprof *n, char **f)
{
	const char *cell[3] = {f[n->c_avg], f[n->c_min], f[n->c_max]};
	double v[3];
	char unit[16] = "", u[16];
	for (int i = 0; i < 3; i++) {
		if (metric_value(cell[i], &v[i], u, sizeof u))
			return fail(n, "%s of '%s': '%s' is not a number, a percentage, a rate (GB/s) "
				    "or a level such as 'Low (1)'", i == 0 ? "Avg" : i == 1 ? "Min" : "Max",
				    f[n->c_metric], cell[i]);
		if (!unit[0])
			snprintf(unit, sizeof unit, "%s", u);
	}
	if (!*f[n->c_metric])
		return fail(n, "an empty Metric Name");
	size_t it;
	int m;
	if (cs_krows_item(n->items, f[n->c_kernel], f[0], "kernel", cs_simrun_device_of(f[0]),
			  &it) < 0 ||
	    (m = cs_krows_metric(n->items, f[n->c_metric], unit)) < 0 ||
	    cs_krows_set(n->items, it, m, v[0], v[1], v[2]) < 0 ||
	    (m = cs_krows_metric(n->items, "invocations", "")) < 0)
		return -ENOMEM;
	char *end;
	double inv = strtod(f[2], &end);
	return cs_krows_set(n->items, it, m, *end ? (double)NAN : inv, NAN, NAN);
}

/* A summary row: one name's times. */
static int summary_row(nvprof *n, char **f)
{
	static const char *const what[] = {"time_percent", "total_time", "calls", "avg_time",
					   "min_time", "max_time"};
	int cols[] = {n->c_pct, n->c_time, n->c_calls, n->c_avg, n->c_min, n->c_max};
	double v[6];
	for (int i = 0; i < 6; i++) {
		v[i] = NAN;
		if (cols[i] < 0 || !*f[cols[i]])
			continue;
		const char *u;
		size_t len;
		if (i == 0 || i == 2 ? quantity(f[cols[i]], &v[i], &u, &len) || (*u && strcmp(u, "%"))
				     : scaled(n, cols[i], f[cols[i]], &v[i]))
			return fail(n, "%s '%s': expected a %s", n->names[cols[i]], f[cols[i]],
				    i == 0 ? "percentage" : i == 2 ? "count" : "time");
	}
	const char *type = n->c_type >= 0 ? f[n->c_type] : "GPU activities";
	const char *name = f[n->c_name];
	const char *kind = !strcmp(type, "API calls") ? "api"
			   : !strncmp(name, "[CUDA memcpy", 12) ? "memcpy"
			   : !strncmp(name, "[CUDA memset", 12) ? "memset"
			   : !strcmp(type, "GPU activities") ? "kernel" : "activity";
	size_t it;
	if (cs_krows_item(n->items, name, type, kind, -1, &it) < 0)
		return -ENOMEM;
	cs_krows_duration(n->items, it, v[1]);
	for (int i = 0; i < 6; i++) {
		int m = cs_krows_metric(n->items, what[i], i == 0 ? "%" : i == 2 ? "" : "ns");
		if (m < 0 || cs_krows_set(n->items, it, m, v[i], v[i], v[i]) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int open_run(nvprof *n, const cs_import_opts *o, char *err, size_t errlen)
{
	static const char *const reports[] = {"", "trace", "metrics", "summary"};
	char extra[64];
	snprintf(extra, sizeof extra, "\"report\":\"%s\"", reports[n->report]);
	n->run = cs_simrun_open(n->p, o, "nvprof", "hw", "ns", 0, extra, err, errlen);
	return n->run ? 0 : -EIO;
}

static int on_line(void *ctx, char *line, size_t len, uint64_t lineno)
{
	nvprof *n = ctx;
	if (n->pend_err[0]) { /* the cut row was not the last */
		n->im.line = n->pend_line;
		return fail(n, "%s", n->pend_err);
	}
	n->im.line = lineno;
	while (len && isspace((unsigned char)line[len - 1]))
		line[--len] = '\0';
	if (!len || !strncmp(line, "==", 2))
		return 0; /* nvprof's own lines: "==1234== ...", "======== ..." */
	char *f[MAX_COLS + 1];
	long nf = cs_csvr_split(line, len, &n->fields, f, MAX_COLS + 1, n->why, sizeof n->why);
	int rep = nf > 0 ? report_of(f, nf < MAX_COLS ? nf : MAX_COLS) : R_NONE;
	if (rep)
		return header(n, rep, f, nf);
	if (n->report == R_NONE || n->report == R_SKIP) {
		if (n->report == R_NONE)
			n->foreign++;
		return 0;
	}
	if (n->units_next) {
		n->units_next = 0;
		if (nf > 0 && units_row(n, f, nf))
			return 0;
	}
	if (nf != (long)n->ncols) {
		int row_like = line[0] == '"' || (n->report == R_TRACE &&
						  isdigit((unsigned char)line[0]) && strchr(line, ','));
		if (!row_like) { /* the application's own output */
			n->foreign++;
			return 0;
		}
		snprintf(n->pend_err, sizeof n->pend_err, "expected %zu fields (one per header "
			 "column), found %ld", n->ncols, nf);
		n->pend_line = lineno;
		return 0;
	}
	if (!n->run && open_run(n, n->im.o, n->im.err, n->im.errlen))
		return -EIO;
	return n->report == R_TRACE ? trace_row(n, f)
	       : n->report == R_METRICS ? metric_row(n, f) : summary_row(n, f);
}

int cs_import_nvprof(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		     char *err, size_t errlen)
{
	nvprof *n = calloc(1, sizeof *n);
	if (!n) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cs_imp_init(&n->im, o, err, errlen);
	n->p = p;
	n->fields = (cs_buf)CS_BUF_INIT;
	if (!(n->items = cs_krows_new())) {
		free(n);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cs_textin_stats st;
	int rc = cs_textin_lines(buf, len, n->im.label, on_line, n, o->progress, o->progress_ctx,
				 &st, err, errlen);
	const char *label = n->im.label;
	if (rc == 0 && n->pend_err[0])
		cs_log(CS_LOG_WARN, "%s:%" PRIu64 ": the file ends inside this row (%s): it is not "
		       "imported", label, n->pend_line, n->pend_err);
	if (rc == 0 && !n->family)
		rc = fail(n, "no nvprof CSV report: expected a header such as \"Start\",\"Duration\","
			  "... (--print-gpu-trace), \"Device\",\"Kernel\",\"Invocations\",\"Metric "
			  "Name\",... (--metrics) or \"Type\",\"Time(%%)\",... (the summary), written "
			  "with --csv");
	if (rc == 0 && !n->run)
		rc = fail(n, "the report has no rows (\"No kernels were profiled\"?)");
	if (rc == 0 && n->family != R_TRACE)
		rc = cs_krows_write(n->items, n->run, n->family == R_METRICS, &n->im);
	if (rc == 0 && n->foreign)
		cs_log(CS_LOG_INFO, "%s: %" PRIu64 " line(s) that are not report rows were skipped "
		       "(the application's own output)", label, n->foreign);
	if (rc == 0 && n->skipped_reports)
		cs_log(CS_LOG_WARN, "%s: %" PRIu64 " report(s) of another kind, the last %s, not "
		       "imported beside the %s: import them from a file of their own", label,
		       n->skipped_reports, n->skipped_what, n->family == R_TRACE ? "trace" : "reports");
	if (rc == 0)
		cs_log(CS_LOG_INFO, "%s: %s: %zu %s", label, n->family == R_TRACE ? "trace" : "report",
		       n->family == R_TRACE ? (size_t)n->ranges : cs_krows_count(n->items),
		       n->family == R_TRACE ? "ranges" : "kernels or names, one sample each");
	rc = cs_simrun_finish(n->run, p, rc, label, err, errlen);
	for (size_t i = 0; i < n->ncols; i++)
		free(n->names[i]);
	cs_krows_free(n->items);
	cs_buf_free(&n->fields);
	free(n);
	return rc;
}

int cs_nvprof_sniff(const char *head)
{
	static const char *const heads[] = {"\"Device\",\"Kernel\",\"Invocations\",",
					    "\"Start\",\"Duration\",", "\"Type\",\"Time(%)\",\"Time\",",
					    "Time(%),Time,Calls,"};
	for (const char *l = head; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		for (size_t i = 0; i < sizeof heads / sizeof *heads; i++)
			if (!strncmp(l, heads[i], strlen(heads[i])))
				return 1;
	return 0;
}
