/*
 * simcsv.c - the comma-separated simulator and tool outputs (simcsv.h):
 * Accel-Sim's perf_counter CSV, AccelWattch's metric and power traces,
 * pm_cupti_tools' CSV, KernBench series and the long CSV form. They
 * share one reader: a header line, then rows of plain numbers, every
 * field possibly followed by a ',' (the simulators end each line with
 * one), gzip or not.
 */
#include "simcsv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "csv_reader.h"
#include "log.h"
#include "simrun.h"
#include "textin.h"

#define MAX_COLS 65536

enum fmt { F_PERF, F_WATTCH, F_PMCUPTI, F_LONG, F_KERNBENCH };

typedef struct tbl {
	cs_imp im; /* first: options, label, error buffer, line */
	int fmt;
	cs_simrun *run;
	/* header */
	char **names;
	size_t ncols;
	int *metric;    /* per column: simrun metric, -1 = not a metric */
	int *group;     /* per column: the metric of its NAME_<i> group sum, -1 */
	int *cumul;     /* per column: differenced */
	double *prev;
	int have_prev;
	int col_t0, col_t1; /* time columns (or -1) */
	int col_name, col_name2, col_value; /* long forms */
	/* row state */
	double *vals;
	uint64_t rows;
	uint64_t last_t;
	uint64_t sample_cycles;
	int header_done;
	cs_buf fields; /* one line's fields, split */
	char why[128]; /* what split() found malformed */
} tbl;

#define fail(st, ...) cs_imp_fail(&(st)->im, __VA_ARGS__)

/* Splits line into fields with the CSV tokenizer (csv_reader.h: quoted
 * fields too, read leniently), each trimmed of spaces and tabs and copied into t->fields;
 * one trailing empty field (the trailing comma) is dropped. The number of
 * fields (f holds the first max), or -1 on malformed quoting. */
static long split(tbl *t, const char *line, char **f, size_t max)
{
	cs_csvr r;
	cs_csvr_init(&r, line, strlen(line));
	r.lenient = 1; /* ", " separators, stray quotes: simulators write them */
	t->fields.len = 0;
	size_t n = 0;
	int k;
	do {
		const char *fp;
		size_t fl;
		k = cs_csvr_field(&r, &fp, &fl, t->why, sizeof t->why);
		if (k < 0) {
			cs_csvr_free(&r);
			return -1;
		}
		if (k == CS_CSVR_EOF)
			break;
		while (fl && (*fp == ' ' || *fp == '\t'))
			fp++, fl--;
		while (fl && (fp[fl - 1] == ' ' || fp[fl - 1] == '\t'))
			fl--;
		if (n < max) /* its offset now: the buffer may move */
			f[n] = (char *)(uintptr_t)t->fields.len;
		n++;
		if (cs_buf_append(&t->fields, fp, fl) || cs_buf_put_u8(&t->fields, 0)) {
			cs_csvr_free(&r);
			snprintf(t->why, sizeof t->why, "out of memory");
			return -1;
		}
	} while (k == CS_CSVR_FIELD);
	cs_csvr_free(&r);
	for (size_t i = 0; i < n && i < max; i++)
		f[i] = (char *)t->fields.data + (uintptr_t)f[i];
	if (n && n <= max && !*f[n - 1])
		n--;
	return (long)n;
}

static int number(const char *s, double *v)
{
	if (!*s) {
		*v = NAN;
		return 0;
	}
	/* Most fields are plain non-negative integers: no strtod for them. */
	uint64_t x = 0;
	const char *c = s;
	while (*c >= '0' && *c <= '9' && c - s < 18)
		x = x * 10 + (uint64_t)(*c++ - '0');
	if (!*c) {
		*v = (double)x;
		return 0;
	}
	if ((*s == 'n' || *s == 'N' || *s == '-') && (!strcasecmp(s, "nan") || !strcasecmp(s, "-nan"))) {
		*v = NAN;
		return 0;
	}
	char *end;
	*v = strtod(s, &end);
	return *end ? -1 : 0;
}

/* "name_12" -> prefix length of "name", or 0 when not NAME_<digits>. */
static size_t group_prefix(const char *n)
{
	size_t l = strlen(n), d = l;
	while (d && isdigit((unsigned char)n[d - 1]))
		d--;
	return d < l && d > 1 && n[d - 1] == '_' ? d - 1 : 0;
}

static int is_time_col(const tbl *t, const char *n)
{
	if (t->fmt == F_PERF)
		return !strcmp(n, "gpu_tot_sim_cycle") || !strcmp(n, "gpu_sim_cycle");
	if (t->fmt == F_PMCUPTI)
		return !strcmp(n, "StartTimestamp") || !strcmp(n, "EndTimestamp");
	return 0;
}

static int header(tbl *t, char *line)
{
	char **f = malloc(MAX_COLS * sizeof *f);
	if (!f)
		return -ENOMEM;
	long sn = split(t, line, f, MAX_COLS);
	size_t n = sn < 0 ? 0 : (size_t)sn;
	int rc = 0;
	if (sn < 0) {
		rc = fail(t, "%s", t->why);
		goto out;
	}
	if (n > MAX_COLS) {
		rc = fail(t, "more than %d columns", MAX_COLS);
		goto out;
	}
	if (!n || (n == 1 && !*f[0])) {
		rc = fail(t, "empty header line");
		goto out;
	}
	t->ncols = n;
	t->names = calloc(n + 1, sizeof *t->names);
	t->metric = malloc((n + 1) * sizeof *t->metric);
	t->group = malloc((n + 1) * sizeof *t->group);
	t->cumul = calloc(n + 1, sizeof *t->cumul);
	t->prev = calloc(n + 1, sizeof *t->prev);
	t->vals = calloc(n + 1, sizeof *t->vals);
	if (!t->names || !t->metric || !t->group || !t->cumul || !t->prev || !t->vals) {
		rc = -ENOMEM;
		goto out;
	}
	t->col_t0 = t->col_t1 = t->col_name = t->col_name2 = t->col_value = -1;
	for (size_t i = 0; i < n; i++) {
		if (!*f[i]) {
			rc = fail(t, "column %zu has no name", i + 1);
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(f[j], f[i])) {
				rc = fail(t, "column %zu repeats the name '%s' (column %zu)", i + 1, f[i], j + 1);
				goto out;
			}
		if (!(t->names[i] = strdup(f[i]))) {
			rc = -ENOMEM;
			goto out;
		}
		t->metric[i] = t->group[i] = -1;
	}
	if (t->fmt == F_LONG || t->fmt == F_KERNBENCH) {
		for (size_t i = 0; i < n; i++) {
			const char *c = t->names[i];
			if (!strcmp(c, "t") || !strcmp(c, "t0") || !strcmp(c, "t_ns") || !strcmp(c, "time"))
				t->col_t0 = (int)i;
			else if (!strcmp(c, "t1"))
				t->col_t1 = (int)i;
			else if (!strcmp(c, "metric") || !strcmp(c, "component"))
				t->col_name = (int)i;
			else if (!strcmp(c, "stat"))
				t->col_name2 = (int)i;
			else if (!strcmp(c, "value"))
				t->col_value = (int)i;
		}
		if (t->col_t0 < 0 || t->col_name < 0 || t->col_value < 0)
			rc = fail(t, t->fmt == F_KERNBENCH
				  ? "expected the header t_ns,component,stat,value"
				  : "expected the header t,metric,value (or t0,t1,metric,value)");
		goto out;
	}
	/* AccelWattch's power trace header runs its last two names together
	 * ("CONSTPSTATICP"); the rows carry both values. */
	if (t->fmt == F_WATTCH && !strcmp(t->names[n - 1], "CONSTPSTATICP")) {
		free(t->names[n - 1]);
		t->names[n - 1] = strdup("CONSTP");
		t->names[n] = strdup("STATICP");
		if (!t->names[n - 1] || !t->names[n]) {
			rc = -ENOMEM;
			goto out;
		}
		t->metric[n] = t->group[n] = -1;
		t->ncols = ++n;
	}
	for (size_t i = 0; i < n; i++) {
		const char *c = t->names[i];
		if (is_time_col(t, c)) {
			if (!strcmp(c, "gpu_tot_sim_cycle") || !strcmp(c, "StartTimestamp"))
				t->col_t0 = (int)i;
			else
				t->col_t1 = (int)i;
			if (t->fmt == F_PMCUPTI)
				continue;
			/* The cycle columns are also kept, differenced: cycles per
			 * interval (gpu_sim_cycle) for maps and rates. */
		}
		/* perf_counter: everything is a running total except the
		 * occupancy ratio and the LRC queue gauges. */
		t->cumul[i] = t->fmt == F_PERF && strcmp(c, "occupancy") && !strstr(c, "queue_size") &&
			      !strstr(c, "coalesced_count");
		t->metric[i] = cs_simrun_metric(t->run, c, NULL, NULL);
		if (t->metric[i] < 0) {
			rc = fail(t, "%s", cs_simrun_errmsg(t->run));
			goto out;
		}
		size_t g = group_prefix(c);
		if (g && t->fmt == F_PERF) {
			char gname[512];
			snprintf(gname, sizeof gname, "%.*s", (int)g, c);
			t->group[i] = cs_simrun_metric(t->run, gname, NULL, NULL);
		}
	}
	if (t->fmt == F_PERF && (t->col_t0 < 0 || t->col_t1 < 0))
		rc = fail(t, "expected gpu_tot_sim_cycle and gpu_sim_cycle columns (an Accel-Sim "
			  "perf_counter CSV)");
	if (t->fmt == F_PMCUPTI && (t->col_t0 < 0 || t->col_t1 < 0))
		rc = fail(t, "expected StartTimestamp and EndTimestamp columns (a pm_cupti_tools CSV)");
out:
	free(f);
	return rc;
}

static int long_row(tbl *t, char **f, size_t n)
{
	if (n != t->ncols)
		return fail(t, "expected %zu fields, found %zu", t->ncols, n);
	double tv, t1v = NAN, v;
	if (number(f[t->col_t0], &tv) || !(tv >= 0) || tv != floor(tv))
		return fail(t, "'%s' is not a non-negative integer time", f[t->col_t0]);
	if (t->col_t1 >= 0 && (number(f[t->col_t1], &t1v) || !(t1v >= tv)))
		return fail(t, "t1 '%s' is not a time at or after t0", f[t->col_t1]);
	if (number(f[t->col_value], &v))
		return fail(t, "'%s' is not a number", f[t->col_value]);
	char name[512];
	if (t->col_name2 >= 0)
		snprintf(name, sizeof name, "%s.%s", f[t->col_name], f[t->col_name2]);
	else
		snprintf(name, sizeof name, "%s", f[t->col_name]);
	if (!name[0] || name[0] == '.')
		return fail(t, "empty metric name");
	uint64_t ts = (uint64_t)tv;
	if (t->rows && ts < t->last_t)
		return fail(t, "time %llu is before the previous row's %llu (rows must be in time "
			    "order)", (unsigned long long)ts, (unsigned long long)t->last_t);
	/* Rows with the same time are one sample. */
	if (!t->rows || ts != t->last_t) {
		if (cs_simrun_row(t->run, ts, isnan(t1v) ? ts : (uint64_t)t1v) < 0)
			return fail(t, "%s", cs_simrun_errmsg(t->run));
		t->rows++;
		t->last_t = ts;
	}
	int m = cs_simrun_metric(t->run, name, NULL, NULL);
	if (m < 0)
		return fail(t, "%s", cs_simrun_errmsg(t->run));
	cs_simrun_set(t->run, m, v);
	return 0;
}

static int on_line(void *ctx, char *line, size_t len, uint64_t lineno)
{
	tbl *t = ctx;
	t->im.line = lineno;
	while (len && isspace((unsigned char)line[len - 1]))
		line[--len] = '\0';
	if (!len || line[0] == '#')
		return 0;
	if (!t->header_done) {
		t->header_done = 1;
		return header(t, line);
	}
	char **f = malloc((t->ncols + 2) * sizeof *f);
	if (!f)
		return -ENOMEM;
	long sn = split(t, line, f, t->ncols + 2);
	if (sn < 0) {
		free(f);
		return fail(t, "%s", t->why);
	}
	/* pm_cupti_tools sessions repeat the header (quoted or not): skip it. */
	if (t->fmt == F_PMCUPTI && sn > 0 && !strcmp(f[0], t->names[0])) {
		free(f);
		return 0;
	}
	size_t n = (size_t)sn;
	int rc = 0;
	if (t->fmt == F_LONG || t->fmt == F_KERNBENCH) {
		rc = long_row(t, f, n);
		free(f);
		return rc;
	}
	size_t want = t->ncols;
	if (n != want) {
		rc = fail(t, "expected %zu values (one per header column), found %zu", want, n);
		free(f);
		return rc;
	}
	for (size_t i = 0; i < n; i++)
		if (number(f[i], &t->vals[i])) {
			char shown[40];
			snprintf(shown, sizeof shown, "%.30s", f[i]);
			rc = fail(t, "'%s' is not a number (column %zu%s%s)", shown, i + 1,
				  i < t->ncols ? ", " : "", i < t->ncols ? t->names[i] : "");
			free(f);
			return rc;
		}
	free(f);
	uint64_t t0, t1;
	if (t->fmt == F_WATTCH) {
		t0 = t->rows * t->sample_cycles;
		t1 = t0 + t->sample_cycles;
	} else if (t->fmt == F_PERF) {
		double x = t->vals[t->col_t0] + t->vals[t->col_t1];
		if (!(x >= 0))
			return fail(t, "bad cycle columns");
		t1 = (uint64_t)x;
		t0 = t->rows ? t->last_t : (t1 >= t->sample_cycles ? t1 - t->sample_cycles : 0);
		if (t->rows && t1 <= t->last_t)
			return fail(t, "global cycle %llu does not advance past %llu", (unsigned long long)t1,
				    (unsigned long long)t->last_t);
	} else {
		double a = t->vals[t->col_t0], b = t->vals[t->col_t1];
		if (!(a >= 0) || !(b >= a))
			return fail(t, "StartTimestamp %.0f / EndTimestamp %.0f are not an interval", a, b);
		t0 = (uint64_t)a;
		t1 = (uint64_t)b;
	}
	if (cs_simrun_row(t->run, t0, t1) < 0)
		return fail(t, "%s", cs_simrun_errmsg(t->run));
	for (size_t i = 0; i < t->ncols; i++) {
		if (t->metric[i] < 0)
			continue;
		double v = t->vals[i];
		if (t->cumul[i] && !isnan(v)) {
			double p = t->have_prev ? t->prev[i] : 0;
			t->prev[i] = v;
			v = v >= p ? v - p : v; /* a per-kernel counter restarted */
		}
		cs_simrun_set(t->run, t->metric[i], v);
		if (t->group[i] >= 0)
			cs_simrun_add(t->run, t->group[i], v);
	}
	t->have_prev = 1;
	t->rows++;
	t->last_t = t1;
	return 0;
}

static const struct {
	const char *source, *kind, *unit;
} fmts[] = {
	[F_PERF] = {"accelsim-perf", "sim", "cycle"},
	[F_WATTCH] = {"accelwattch", "sim", "cycle"},
	[F_PMCUPTI] = {"pm-cupti-csv", "hw", "ns"},
	[F_LONG] = {"csv", NULL, NULL},
	[F_KERNBENCH] = {"kernbench", "sim", "ns"},
};

static int import(int fmt, cs_producer *p, const char *buf, size_t len,
		  const cs_import_opts *o, char *err, size_t errlen)
{
	const char *label = o->label ? o->label : "input";
	tbl *t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cs_imp_init(&t->im, o, err, errlen);
	t->fmt = fmt;
	t->sample_cycles = o->sample_cycles ? o->sample_cycles : 500;
	char extra[64];
	snprintf(extra, sizeof extra, "\"sample_cycles\":%llu", (unsigned long long)t->sample_cycles);
	t->run = cs_simrun_open(p, o, fmts[fmt].source, fmts[fmt].kind,
				fmts[fmt].unit ? fmts[fmt].unit : "ns", 0,
				fmt == F_WATTCH ? extra : NULL, err, errlen);
	int rc = t->run ? 0 : -EIO;
	cs_textin_stats st;
	if (rc == 0)
		rc = cs_textin_lines(buf, len, label, on_line, t, o->progress, o->progress_ctx, &st,
				     err, errlen);
	if (rc == 0 && !t->header_done)
		rc = fail(t, "empty file: expected a header line");
	if (rc == 0 && !t->rows)
		rc = fail(t, "no data rows after the header");
	rc = cs_simrun_finish(t->run, p, rc, label, err, errlen);
	for (size_t i = 0; t->names && i < t->ncols; i++)
		free(t->names[i]);
	free(t->names);
	free(t->metric);
	free(t->group);
	free(t->cumul);
	free(t->prev);
	free(t->vals);
	cs_buf_free(&t->fields);
	free(t);
	return rc;
}

int cs_import_accelsim_perf(cs_producer *p, const char *buf, size_t len,
			    const cs_import_opts *o, char *err, size_t errlen)
{
	return import(F_PERF, p, buf, len, o, err, errlen);
}

int cs_import_accelwattch(cs_producer *p, const char *buf, size_t len,
			  const cs_import_opts *o, char *err, size_t errlen)
{
	return import(F_WATTCH, p, buf, len, o, err, errlen);
}

int cs_import_pm_cupti_csv(cs_producer *p, const char *buf, size_t len,
			   const cs_import_opts *o, char *err, size_t errlen)
{
	return import(F_PMCUPTI, p, buf, len, o, err, errlen);
}

int cs_import_csv_long(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		       char *err, size_t errlen)
{
	return import(F_LONG, p, buf, len, o, err, errlen);
}

int cs_import_kernbench(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
			char *err, size_t errlen)
{
	return import(F_KERNBENCH, p, buf, len, o, err, errlen);
}

const char *cs_simcsv_sniff(const char *text)
{
	size_t hl = strcspn(text, "\n");
	char head[4096];
	snprintf(head, sizeof head, "%.*s", (int)(hl < sizeof head - 1 ? hl : sizeof head - 1), text);
	if (!strncmp(head, "gpu_tot_sim_cycle,gpu_sim_cycle,", 32))
		return "accelsim-perf";
	if (!strncmp(head, "TOT_INST,FP_INT,", 16) || !strncmp(head, "power,IBP,", 10))
		return "accelwattch";
	if (strstr(head, "StartTimestamp,EndTimestamp"))
		return "pm-cupti-csv";
	if (!strcmp(head, "t_ns,component,stat,value"))
		return "kernbench";
	if (!strcmp(head, "t,metric,value") || !strcmp(head, "t0,t1,metric,value"))
		return "csv-long";
	if (!strncmp(head, "t0,t1", 5) || !strncmp(head, "\"t0\"", 4))
		return "csv";
	return NULL;
}
