/*
 * nsys_stats.c - Nsight Systems' stats reports as text (nsys_stats.h).
 *
 * One pass over the lines. A report starts at a header line whose columns
 * name a trace (Start, Duration or End, Name) or a summary (Time (%) or
 * Total, a count, Name/Range/Operation): as CSV, or in the column format,
 * where the dashes row under the header gives each column's place (names
 * hold single spaces; numbers carry thousands separators). It ends at a
 * blank line or a line of another shape. The report's name comes from the
 * lines nsys prints before it ("[5/8] Executing 'cuda_api_sum' stats
 * report", " ** CUDA API Summary (cuda_api_sum):", "Processing [...] with
 * [.../cuda_api_sum.py]..."); everything else nsys prints is skipped.
 */
#include "nsys_stats.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_reader.h"
#include "krows.h"
#include "log.h"
#include "simrun.h"
#include "text.h"
#include "textin.h"

#define MAX_COLS 48

enum family { F_NONE, F_TRACE, F_SUM };

enum role {
	R_OTHER, R_START, R_END, R_DUR, R_CORR, R_GRID, R_BYTES, R_DEVICE, R_STREAM, R_NAME,
	R_PID, R_TID, R_PCT, R_TOTAL, R_COUNT, R_AVG, R_MED, R_MIN, R_MAX, R_STD, NROLES
};

typedef struct col {
	int role;
	double scale;  /* the header's unit to ns or bytes; 1 */
	int bytes;     /* a size, not a time */
} col;

typedef struct stats {
	cs_imp im;
	cs_producer *p;
	cs_simrun *run;
	int family, report; /* the file's family; the report being read (F_NONE: none) */
	int table;          /* the report is in the column format */
	size_t ncols;
	col cols[MAX_COLS];
	int at[NROLES];     /* the column of each role, -1 */
	size_t span[MAX_COLS]; /* column format: where each column starts */
	char pending[4096]; /* a column-format header, waiting for its dashes */
	char id[64];        /* the report's name, from nsys's lines before it */
	char banner_unit[16];
	cs_krows *items;
	cs_buf fields;
	char why[128];
	uint64_t ranges, skipped_reports, skipped_line;
} stats;

#define fail(st, ...) cs_imp_fail(&(st)->im, __VA_ARGS__)

/* A unit's factor to ns (times) or bytes (sizes, *bytes set); 0: none. */
static double unit_of(const char *u, int *bytes)
{
	static const struct {
		const char *u;
		double f;
		int bytes;
	} t[] = {{"ns", 1, 0},	      {"us", 1e3, 0},	     {"ms", 1e6, 0},	  {"s", 1e9, 0},
		 {"nanoseconds", 1, 0}, {"B", 1, 1},	     {"KB", 1e3, 1},	  {"MB", 1e6, 1},
		 {"GB", 1e9, 1},	{"KiB", 1024, 1},    {"MiB", 1048576, 1}, {"GiB", 1073741824.0, 1}};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (!strcmp(u, t[i].u)) {
			*bytes = t[i].bytes;
			return t[i].f;
		}
	return 0;
}

/* A column's role from its name ("Total Time (ns)": R_TOTAL in ns). */
static void role_of(stats *s, col *c, const char *name)
{
	static const struct {
		const char *name;
		int role;
	} t[] = {{"Start", R_START},	  {"End", R_END},	   {"Duration", R_DUR},
		 {"CorrId", R_CORR},	  {"CorrID", R_CORR},	   {"GrdX", R_GRID},
		 {"Bytes", R_BYTES},	  {"Device", R_DEVICE},	   {"Strm", R_STREAM},
		 {"Name", R_NAME},	  {"Range", R_NAME},	   {"Operation", R_NAME},
		 {"Pid", R_PID},	  {"Tid", R_TID},	   {"Time (%)", R_PCT},
		 {"Time(%)", R_PCT},	  {"Total Time", R_TOTAL}, {"Total", R_TOTAL},
		 {"Instances", R_COUNT},  {"Num Calls", R_COUNT},  {"Calls", R_COUNT},
		 {"Count", R_COUNT},	  {"Operations", R_COUNT}, {"Avg", R_AVG},
		 {"Average", R_AVG},	  {"Med", R_MED},	   {"Median", R_MED},
		 {"Min", R_MIN},	  {"Minimum", R_MIN},	   {"Max", R_MAX},
		 {"Maximum", R_MAX},	  {"StdDev", R_STD}};
	char base[64], unit[16] = "";
	snprintf(base, sizeof base, "%s", name);
	char *paren = strstr(base, " (");
	if (paren && strcmp(base, "Time (%)")) {
		snprintf(unit, sizeof unit, "%.*s", (int)strcspn(paren + 2, ")"), paren + 2);
		*paren = '\0';
	}
	c->role = R_OTHER;
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (!strcmp(base, t[i].name))
			c->role = t[i].role;
	c->bytes = 0;
	c->scale = unit[0] ? unit_of(unit, &c->bytes) : 0;
	if (!c->scale && s->banner_unit[0]) /* the 2020 form: the unit is in the title */
		c->scale = unit_of(s->banner_unit, &c->bytes);
	if (!c->scale)
		c->scale = 1;
}

/* Which report a header's fields start: F_TRACE, F_SUM or F_NONE. */
static int header_kind(stats *s, char **f, size_t n)
{
	if (n < 3 || n > MAX_COLS)
		return F_NONE;
	for (int r = 0; r < NROLES; r++)
		s->at[r] = -1;
	for (size_t i = 0; i < n; i++) {
		role_of(s, &s->cols[i], f[i]);
		s->at[s->cols[i].role] = (int)i;
	}
	s->ncols = n;
	if (s->at[R_START] >= 0 && (s->at[R_DUR] >= 0 || s->at[R_END] >= 0) && s->at[R_NAME] >= 0)
		return F_TRACE;
	if (s->at[R_TOTAL] >= 0 && s->at[R_COUNT] >= 0 && s->at[R_NAME] >= 0)
		return F_SUM;
	return F_NONE;
}

/* Column-format fields: split at runs of two or more spaces. */
static size_t split_spaces(char *line, char **f, size_t max)
{
	size_t n = 0;
	char *p = line;
	while (*p == ' ')
		p++;
	while (*p && n < max) {
		f[n++] = p;
		char *gap = strstr(p, "  ");
		if (!gap)
			break;
		*gap = '\0';
		for (p = gap + 1; *p == ' '; p++)
			;
	}
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(f[i]);
		while (l && f[i][l - 1] == ' ')
			f[i][--l] = '\0';
	}
	return n;
}

static int is_dashes(const char *l)
{
	int any = 0;
	for (; *l; l++) {
		if (*l == '-')
			any = 1;
		else if (*l != ' ')
			return 0;
	}
	return any;
}

/* A number of a cell: thousands separators dropped, times the column's
 * scale; NaN for an empty cell or "-". -1 when it is not one. */
static int cell_number(const col *c, const char *cell, double *v)
{
	char t[64];
	size_t n = 0;
	for (const char *p = cell; *p && n + 1 < sizeof t; p++)
		if (*p != ',')
			t[n++] = *p;
	t[n] = '\0';
	if (!n || !strcmp(t, "-")) {
		*v = NAN;
		return 0;
	}
	char *end;
	double x = strtod(t, &end);
	if (end == t || *end || !isfinite(x))
		return -1;
	*v = c->scale == 1 ? x : cs_text_scaled(t, n, c->scale);
	return 0;
}

/* What a row is about, from the report's name, else its own name. */
static const char *kind_of(stats *s, const char *name, int grid)
{
	if (!strncmp(name, "[CUDA memcpy", 12))
		return "memcpy";
	if (!strncmp(name, "[CUDA memset", 12))
		return "memset";
	if (strstr(s->id, "nvtx"))
		return "nvtx";
	if (strstr(s->id, "osrt") || strstr(s->id, "operating system"))
		return "osrt";
	if (strstr(s->id, "api"))
		return "api";
	if (strstr(s->id, "kern") || grid)
		return "kernel";
	return s->family == F_TRACE ? "api" : "kernel";
}

static int64_t int_cell(stats *s, char **f, int role)
{
	int c = s->at[role];
	if (c < 0 || !*f[c])
		return -1;
	char *end;
	long long v = strtoll(f[c], &end, 10);
	return *end || v < 0 ? -1 : v;
}

static int trace_row(stats *s, char **f)
{
	double t0, d = NAN, t1 = NAN;
	int cs = s->at[R_START], cd = s->at[R_DUR], ce = s->at[R_END];
	if (cell_number(&s->cols[cs], f[cs], &t0) || !(t0 >= 0))
		return fail(s, "'%s' (column %d): expected a start time", f[cs], cs + 1);
	if (cd >= 0 && (cell_number(&s->cols[cd], f[cd], &d) || !(d >= 0)))
		return fail(s, "'%s' (column %d): expected a duration", f[cd], cd + 1);
	if (ce >= 0 && cd < 0 && (cell_number(&s->cols[ce], f[ce], &t1) || !(t1 >= t0)))
		return fail(s, "'%s' (column %d): expected an end at or after the start", f[ce], ce + 1);
	if (cd >= 0)
		t1 = t0 + d;
	if (t1 >= 9e18)
		return fail(s, "the row's times do not fit the time axis");
	const char *name = f[s->at[R_NAME]];
	int grid = s->at[R_GRID] >= 0 && *f[s->at[R_GRID]];
	cs_range r;
	cs_range_init(&r, kind_of(s, name, grid), *name ? name : "(unnamed)", (uint64_t)t0,
		      (uint64_t)t1);
	r.correlation_id = int_cell(s, f, R_CORR);
	r.stream = int_cell(s, f, R_STREAM);
	r.pid = int_cell(s, f, R_PID);
	r.tid = int_cell(s, f, R_TID);
	if (s->at[R_DEVICE] >= 0)
		r.device = cs_simrun_device_of(f[s->at[R_DEVICE]]);
	double b;
	int cb = s->at[R_BYTES];
	if (cb >= 0 && !cell_number(&s->cols[cb], f[cb], &b) && b >= 0 && b < 9e18)
		r.bytes = (int64_t)llround(b);
	if (cs_simrun_range(s->run, &r) < 0)
		return fail(s, "%s", cs_simrun_errmsg(s->run));
	s->ranges++;
	return 0;
}

static int sum_row(stats *s, char **f)
{
	static const struct {
		int role;
		const char *time, *size;
	} m[] = {{R_PCT, "time_percent", "time_percent"}, {R_TOTAL, "total_time", "total_bytes"},
		 {R_COUNT, "count", "count"},		  {R_AVG, "avg_time", "avg_bytes"},
		 {R_MED, "med_time", "med_bytes"},	  {R_MIN, "min_time", "min_bytes"},
		 {R_MAX, "max_time", "max_bytes"},	  {R_STD, "stddev_time", "stddev_bytes"}};
	const char *name = f[s->at[R_NAME]];
	const char *kind = kind_of(s, name, 0);
	size_t it;
	if (cs_krows_item(s->items, name, kind, kind, -1, &it) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
		int c = s->at[m[i].role];
		if (c < 0)
			continue;
		double v;
		if (cell_number(&s->cols[c], f[c], &v))
			return fail(s, "'%s' (column %d): expected a number", f[c], c + 1);
		const col *cc = &s->cols[c];
		int bytes = cc->bytes;
		const char *unit = m[i].role == R_PCT ? "%" : m[i].role == R_COUNT ? "" : bytes ? "B" : "ns";
		int k = cs_krows_metric(s->items, bytes ? m[i].size : m[i].time, unit);
		if (k < 0 || cs_krows_set(s->items, it, k, v, v, v) < 0)
			return -ENOMEM;
		if (m[i].role == R_TOTAL && !bytes)
			cs_krows_duration(s->items, it, v);
	}
	return 0;
}

/* The report's name from the lines nsys prints before it. */
static void banner(stats *s, const char *l)
{
	const char *p, *q;
	if ((p = strstr(l, "Executing '")) && (q = strchr(p + 11, '\'')))
		snprintf(s->id, sizeof s->id, "%.*s", (int)(q - p - 11), p + 11);
	else if (!strncmp(l, " ** ", 4) && (p = strrchr(l, '(')) && (q = strchr(p, ')')))
		snprintf(s->id, sizeof s->id, "%.*s", (int)(q - p - 1), p + 1);
	else if (!strncmp(l, "Processing [", 12) && (p = strstr(l, "] with [")) &&
		 (q = strstr(p, ".py]")) && q > p) {
		const char *b = q;
		while (b > p && b[-1] != '/')
			b--;
		snprintf(s->id, sizeof s->id, "%.*s", (int)(q - b), b);
	} else if (strstr(l, "Statistics")) { /* the 2020 form's titles */
		snprintf(s->id, sizeof s->id, "%.63s", l);
		p = strrchr(l, '(');
		if (p && (q = strchr(p, ')'))) { /* "(nanoseconds)", "(by size in KiB)": its last word */
			const char *w = q;
			while (w > p + 1 && w[-1] != ' ')
				w--;
			snprintf(s->banner_unit, sizeof s->banner_unit, "%.*s", (int)(q - w), w);
		}
	}
	for (char *c = s->id; *c; c++) /* "NVTX", "API", "Kernel" match as "nvtx", ... */
		*c = (char)tolower((unsigned char)*c);
}

static int open_report(stats *s, int kind)
{
	if (s->family && s->family != kind) {
		s->skipped_reports++;
		s->skipped_line = s->im.line;
		s->report = F_NONE;
		s->ncols = 0;
		return 1;
	}
	s->family = kind;
	s->report = kind;
	if (!s->run) {
		char extra[96];
		snprintf(extra, sizeof extra, "\"report\":\"%s\"", kind == F_TRACE ? "trace" : "summary");
		s->run = cs_simrun_open(s->p, s->im.o, "nsys-stats", "hw", "ns", 0, extra, s->im.err,
					s->im.errlen);
		if (!s->run)
			return -EIO;
	}
	return 0;
}

static void end_report(stats *s)
{
	s->report = F_NONE;
	s->table = 0;
	s->id[0] = s->banner_unit[0] = '\0';
}

static int row(stats *s, char **f)
{
	return s->report == F_TRACE ? trace_row(s, f) : sum_row(s, f);
}

static int on_line(void *ctx, char *line, size_t len, uint64_t lineno)
{
	stats *s = ctx;
	s->im.line = lineno;
	while (len && isspace((unsigned char)line[len - 1]))
		line[--len] = '\0';
	char *f[MAX_COLS + 1];
	if (s->pending[0]) { /* a column-format header: its dashes next? */
		char head[4096];
		snprintf(head, sizeof head, "%s", s->pending);
		s->pending[0] = '\0';
		if (is_dashes(line)) {
			size_t n = 0;
			for (size_t i = 0; line[i] && n < MAX_COLS; i++)
				if (line[i] == '-' && (!i || line[i - 1] == ' '))
					s->span[n++] = i;
			char *hf[MAX_COLS + 1];
			size_t hn = split_spaces(head, hf, MAX_COLS + 1);
			int kind = hn == n ? header_kind(s, hf, hn) : F_NONE;
			if (kind) {
				int rc = open_report(s, kind);
				if (rc < 0)
					return rc;
				s->table = rc == 0;
				return 0;
			}
		}
	}
	if (!len) {
		if (s->report)
			end_report(s);
		return 0;
	}
	if (s->report && s->table && line[0] != ' ')
		end_report(s); /* the column format's rows start with a space */
	if (s->report && s->table) { /* each column where the dashes put it */
		size_t off[MAX_COLS];
		s->fields.len = 0;
		for (size_t i = 0; i < s->ncols; i++) {
			size_t a = s->span[i] < len ? s->span[i] : len;
			size_t b = i + 1 < s->ncols && s->span[i + 1] < len ? s->span[i + 1] : len;
			while (a < b && line[a] == ' ')
				a++;
			while (b > a && line[b - 1] == ' ')
				b--;
			off[i] = s->fields.len;
			if (cs_buf_append(&s->fields, line + a, b - a) || cs_buf_put_u8(&s->fields, 0))
				return -ENOMEM;
		}
		for (size_t i = 0; i < s->ncols; i++)
			f[i] = (char *)s->fields.data + off[i];
		return row(s, f);
	}
	if (s->report) { /* CSV rows until a line of another shape */
		long n = cs_csvr_split(line, len, &s->fields, f, MAX_COLS + 1, s->why, sizeof s->why);
		if (n == (long)s->ncols)
			return row(s, f);
		end_report(s);
	}
	if (strchr(line, ',')) {
		long n = cs_csvr_split(line, len, &s->fields, f, MAX_COLS + 1, s->why, sizeof s->why);
		int kind = n > 0 ? header_kind(s, f, (size_t)n) : F_NONE;
		if (kind) {
			int rc = open_report(s, kind);
			return rc < 0 ? rc : 0;
		}
	}
	if (strstr(line, "  ")) { /* maybe a column-format header */
		char copy[4096];
		snprintf(copy, sizeof copy, "%s", line);
		char *hf[MAX_COLS + 1];
		if (header_kind(s, hf, split_spaces(copy, hf, MAX_COLS + 1)))
			snprintf(s->pending, sizeof s->pending, "%s", line);
		return 0;
	}
	banner(s, line);
	return 0;
}

int cs_import_nsys_stats(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
			 char *err, size_t errlen)
{
	stats *s = calloc(1, sizeof *s);
	if (!s || !(s->items = cs_krows_new())) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cs_imp_init(&s->im, o, err, errlen);
	s->p = p;
	s->fields = (cs_buf)CS_BUF_INIT;
	cs_textin_stats st;
	int rc = cs_textin_lines(buf, len, s->im.label, on_line, s, o->progress, o->progress_ctx,
				 &st, err, errlen);
	const char *label = s->im.label;
	if (rc == 0 && !s->family)
		rc = fail(s, "no nsys stats report: expected a header such as 'Start (ns),Duration "
			  "(ns),...,Name' (cuda_gpu_trace) or 'Time (%%)  Total Time (ns)  Instances "
			  "...  Name' (cuda_gpu_kern_sum), as CSV or with its row of dashes");
	if (rc == 0 && s->family == F_SUM)
		rc = cs_krows_write(s->items, s->run, 0, &s->im);
	if (rc == 0 && s->family == F_TRACE && !s->ranges)
		rc = fail(s, "the trace report has no rows");
	if (rc == 0 && s->skipped_reports)
		cs_log(CS_LOG_WARN, "%s: %" PRIu64 " report(s) of another kind (the last at line %"
		       PRIu64 ") not imported beside the %s: import them from a file of their own",
		       label, s->skipped_reports, s->skipped_line,
		       s->family == F_TRACE ? "trace" : "summaries");
	if (rc == 0 && s->family == F_TRACE)
		cs_log(CS_LOG_INFO, "%s: trace: %" PRIu64 " ranges", label, s->ranges);
	else if (rc == 0)
		cs_log(CS_LOG_INFO, "%s: summaries: %zu names, one sample each", label,
		       cs_krows_count(s->items));
	rc = cs_simrun_finish(s->run, p, rc, label, err, errlen);
	cs_krows_free(s->items);
	cs_buf_free(&s->fields);
	free(s);
	return rc;
}

int cs_nsys_stats_sniff(const char *head)
{
	static const char *const marks[] = {"Time (%),Total Time (", "Start (ns),Duration (ns),",
					    " Time (%)  Total Time (", " Total (MB)  Count", " ** CUDA "};
	for (const char *l = head; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
			if (!strncmp(l, marks[i], strlen(marks[i])))
				return 1;
		char one[256]; /* "[3/8] Executing 'cuda_api_sum' stats report" */
		snprintf(one, sizeof one, "%.*s", (int)strcspn(l, "\n"), l);
		if (one[0] == '[' && strstr(one, "] Executing '") && strstr(one, "' stats report"))
			return 1;
	}
	return 0;
}
