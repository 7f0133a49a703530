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
#include "strmap.h"
#include "text.h"
#include "textin.h"

#define MAX_COLS 65536

enum fmt { F_PERF, F_WATTCH, F_PMCUPTI, F_LONG, F_KERNBENCH };

#define MAX_NAME_COLS 8
#define NO_KERNEL UINT32_MAX

/* One row of a long form: read in file order, written in time order. */
typedef struct lrow {
	uint64_t t0, t1; /* t1: UINT64_MAX when the file has no end column */
	uint64_t line;
	double v;
	int metric;
	uint32_t kernel; /* NO_KERNEL: none */
} lrow;

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
	/* long forms: the name columns (joined with '.'), value, kernel */
	int col_name[MAX_NAME_COLS];
	size_t ncol_name;
	int col_value, col_kernel;
	lrow *lr;            /* the rows, kept to be put in time order */
	size_t nlr, caplr;
	char **kern;         /* kernel names, interned */
	size_t nkern, capkern;
	cs_strmap kmap;      /* kernel name -> index */
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

/* Splits line into fields (cs_csvr_split: quoted fields too, read
 * leniently), one trailing empty field (the trailing comma) dropped. The
 * number of fields (f holds the first max), or -1 on malformed quoting. */
static long split(tbl *t, const char *line, char **f, size_t max)
{
	long n = cs_csvr_split(line, strlen(line), &t->fields, f, max, t->why, sizeof t->why);
	if (n > 0 && (size_t)n <= max && !*f[n - 1])
		n--;
	return n;
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

/* --- the long forms: one row per time, metric and value -------------- */

/* The long form's columns by their common names (any case). */
static const char *const times[] = {"t", "t0", "t_ns", "time", "timestamp", "ts", "time_ns",
				    "Time (ns)", "start", NULL};
static const char *const ends[] = {"t1", "end", NULL};
static const char *const metrics[] = {"metric", "metric_name", "Metric Name", "counter", "event",
				      "name", NULL};
static const char *const values[] = {"value", "metric_value", "Metric Value", "val", NULL};
static const char *const kernels[] = {"kernel", "kernel_name", "Kernel Name", "range",
				      "range_name", NULL};

/* The column called name: exactly, else ignoring case; -1 when none. */
static int column(const tbl *t, const char *name, size_t len)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strlen(t->names[i]) == len && !strncmp(t->names[i], name, len))
			return (int)i;
	for (size_t i = 0; i < t->ncols; i++)
		if (strlen(t->names[i]) == len && !strncasecmp(t->names[i], name, len))
			return (int)i;
	return -1;
}

/* The first of the common names a column has, or -1. */
static int common(const tbl *t, const char *const *names)
{
	for (; *names; names++) {
		int c = column(t, *names, strlen(*names));
		if (c >= 0)
			return c;
	}
	return -1;
}

/* The column an option names, or -1 with the error said. */
static int named(tbl *t, const char *opt, const char *name)
{
	int c = column(t, name, strlen(name));
	if (c < 0) {
		char have[512] = "";
		for (size_t i = 0, o = 0; i < t->ncols && o < sizeof have - 1; i++)
			o += (size_t)snprintf(have + o, sizeof have - o, "%s'%s'", i ? ", " : "",
					      t->names[i]);
		fail(t, "%s '%s': no such column (the header has %s)", opt, name, have);
	}
	return c;
}

/* Chooses the long form's columns: the options' names, else the common
 * ones (t, time, timestamp, ...; metric, name, ...; value; kernel). */
static int long_columns(tbl *t)
{
	const cs_import_opts *o = t->im.o;
	if (t->fmt == F_KERNBENCH) {
		t->col_t0 = column(t, "t_ns", 4);
		t->col_name[0] = column(t, "component", 9);
		t->col_name[1] = column(t, "stat", 4);
		t->ncol_name = 2;
		t->col_value = column(t, "value", 5);
		if (t->col_t0 < 0 || t->col_name[0] < 0 || t->col_name[1] < 0 || t->col_value < 0)
			return fail(t, "expected the header t_ns,component,stat,value");
		return 0;
	}
	t->col_t0 = o->col_time ? named(t, "--time", o->col_time) : common(t, times);
	if (o->col_time && t->col_t0 < 0)
		return -EINVAL;
	t->col_t1 = common(t, ends);
	if (t->col_t1 == t->col_t0)
		t->col_t1 = -1;
	if (o->col_metric) {
		const char *p = o->col_metric, *item;
		size_t len;
		while (cs_list_next(&p, &item, &len)) {
			char one[256];
			snprintf(one, sizeof one, "%.*s", (int)len, item);
			if (t->ncol_name == MAX_NAME_COLS)
				return fail(t, "--metric: at most %d columns", MAX_NAME_COLS);
			if ((t->col_name[t->ncol_name++] = named(t, "--metric", one)) < 0)
				return -EINVAL;
		}
	} else if ((t->col_name[0] = common(t, metrics)) >= 0) {
		t->ncol_name = 1;
	}
	t->col_value = o->col_value ? named(t, "--value", o->col_value) : common(t, values);
	if (o->col_value && t->col_value < 0)
		return -EINVAL;
	t->col_kernel = o->col_kernel ? named(t, "--kernel", o->col_kernel) : common(t, kernels);
	if (o->col_kernel && t->col_kernel < 0)
		return -EINVAL;
	if (t->col_t0 < 0 || !t->ncol_name || t->col_value < 0)
		return fail(t, "a long CSV needs a time, a metric and a value column; this header has "
			    "no %s column by a common name: name them with --time COL --metric "
			    "COL[,COL...] --value COL [--kernel COL]",
			    t->col_t0 < 0 ? "time (t, time, timestamp)"
			    : !t->ncol_name ? "metric (metric, name, counter)" : "value");
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
	t->col_t0 = t->col_t1 = t->col_value = t->col_kernel = -1;
	t->ncol_name = 0;
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
		rc = long_columns(t);
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

/* A kernel name's index, interned. */
static int kernel_id(tbl *t, const char *name, uint32_t *id)
{
	size_t k = cs_strmap_get(&t->kmap, name);
	if (k != SIZE_MAX) {
		*id = (uint32_t)k;
		return 0;
	}
	if (t->nkern == t->capkern) {
		size_t cap = t->capkern ? t->capkern * 2 : 64;
		char **g = realloc(t->kern, cap * sizeof *g);
		if (!g)
			return -ENOMEM;
		t->kern = g;
		t->capkern = cap;
	}
	if (!(t->kern[t->nkern] = strdup(name)) || cs_strmap_put(&t->kmap, name, t->nkern) < 0) {
		free(t->kern[t->nkern]);
		return -ENOMEM;
	}
	*id = (uint32_t)t->nkern++;
	return 0;
}

static int long_row(tbl *t, char **f, size_t n)
{
	if (n != t->ncols)
		return fail(t, "expected %zu fields, found %zu", t->ncols, n);
	double tv, t1v = NAN, v;
	if (number(f[t->col_t0], &tv) || !(tv >= 0) || tv != floor(tv) || tv >= 9.2e18)
		return fail(t, "'%s' (column %s) is not a non-negative integer time",
			    f[t->col_t0], t->names[t->col_t0]);
	if (t->col_t1 >= 0 && (number(f[t->col_t1], &t1v) || !(t1v >= tv) || t1v >= 9.2e18))
		return fail(t, "'%s' (column %s) is not a time at or after '%s'", f[t->col_t1],
			    t->names[t->col_t1], f[t->col_t0]);
	if (number(f[t->col_value], &v))
		return fail(t, "'%s' (column %s) is not a number", f[t->col_value],
			    t->names[t->col_value]);
	char name[512];
	size_t off = 0;
	for (size_t i = 0; i < t->ncol_name && off < sizeof name; i++)
		off += (size_t)snprintf(name + off, sizeof name - off, "%s%s", i ? "." : "",
					f[t->col_name[i]]);
	if (!name[0] || name[0] == '.' || name[strlen(name) - 1] == '.')
		return fail(t, "empty metric name");
	uint32_t kern = NO_KERNEL;
	if (t->col_kernel >= 0 && *f[t->col_kernel] && kernel_id(t, f[t->col_kernel], &kern) < 0)
		return -ENOMEM;
	int m = cs_simrun_metric(t->run, name, NULL, NULL);
	if (m < 0)
		return fail(t, "%s", cs_simrun_errmsg(t->run));
	if (t->nlr == t->caplr) {
		size_t cap = t->caplr ? t->caplr * 2 : 4096;
		lrow *g = realloc(t->lr, cap * sizeof *g);
		if (!g)
			return fail(t, "out of memory keeping %zu rows", t->nlr);
		t->lr = g;
		t->caplr = cap;
	}
	t->lr[t->nlr++] = (lrow){(uint64_t)tv, isnan(t1v) ? UINT64_MAX : (uint64_t)t1v,
				 t->im.line, v, m, kern};
	t->rows++;
	return 0;
}

static int cmp_lrow(const void *x, const void *y)
{
	const lrow *a = x, *b = y;
	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* A kernel's stretch of consecutive samples, open until a sample lacks it. */
typedef struct kspan {
	uint64_t t0, t1;
	uint64_t last_sample; /* the sample it was last seen in + 1; 0: closed */
} kspan;

static int close_span(tbl *t, kspan *k, uint32_t id)
{
	cs_range r;
	cs_range_init(&r, "kernel", t->kern[id], k->t0, k->t1);
	k->last_sample = 0;
	if (cs_simrun_range(t->run, &r) < 0)
		return fail(t, "%s", cs_simrun_errmsg(t->run));
	return 0;
}

/* The kept rows in time order: the rows of one time are one sample,
 * which lasts until the next (or to its rows' t1); each kernel's
 * stretch of consecutive samples is a range. */
static int long_write(tbl *t)
{
	int sorted = 1;
	for (size_t i = 1; i < t->nlr && sorted; i++)
		sorted = t->lr[i].t0 >= t->lr[i - 1].t0;
	if (!sorted)
		qsort(t->lr, t->nlr, sizeof *t->lr, cmp_lrow);
	size_t nm = 0;
	for (size_t i = 0; i < t->nlr; i++)
		if ((size_t)t->lr[i].metric + 1 > nm)
			nm = (size_t)t->lr[i].metric + 1;
	uint64_t *seen = calloc(nm ? nm : 1, sizeof *seen); /* sample + 1 it was set in */
	uint64_t *where = calloc(nm ? nm : 1, sizeof *where);
	kspan *ks = calloc(t->nkern ? t->nkern : 1, sizeof *ks);
	uint32_t *open = malloc((t->nkern ? t->nkern : 1) * sizeof *open); /* open spans */
	size_t nopen = 0;
	int rc = seen && where && ks && open ? 0 : -ENOMEM;
	uint64_t sample = 0, prev_t0 = 0;
	for (size_t i = 0; i < t->nlr && rc == 0;) {
		size_t j = i;
		uint64_t t1 = t->lr[i].t1;
		while (j < t->nlr && t->lr[j].t0 == t->lr[i].t0) {
			if (t->lr[j].t1 != UINT64_MAX && (t1 == UINT64_MAX || t->lr[j].t1 > t1))
				t1 = t->lr[j].t1;
			j++;
		}
		/* No end column: until the next sample; the last as long as the
		 * one before it. */
		if (t1 == UINT64_MAX && j < t->nlr)
			t1 = t->lr[j].t0;
		else if (t1 == UINT64_MAX)
			t1 = t->lr[i].t0 + (sample ? t->lr[i].t0 - prev_t0 : 0);
		prev_t0 = t->lr[i].t0;
		sample++;
		t->im.line = t->lr[i].line;
		if (cs_simrun_row(t->run, t->lr[i].t0, t1) < 0) {
			rc = fail(t, "%s", cs_simrun_errmsg(t->run));
			break;
		}
		for (size_t k = i; k < j && rc == 0; k++) {
			const lrow *r = &t->lr[k];
			if (seen[r->metric] == sample) {
				char mn[256] = "";
				cs_simrun_metric_name(t->run, r->metric, mn, sizeof mn);
				t->im.line = r->line;
				rc = fail(t, "'%s' has a second value at time %llu (the first at line "
					  "%llu)%s", mn, (unsigned long long)r->t0,
					  (unsigned long long)where[r->metric], t->col_kernel >= 0
					  ? ": rows of one time are one sample, whatever their kernel"
					  : "");
				break;
			}
			seen[r->metric] = sample;
			where[r->metric] = r->line;
			cs_simrun_set(t->run, r->metric, r->v);
			if (r->kernel == NO_KERNEL)
				continue;
			kspan *sp = &ks[r->kernel];
			if (!sp->last_sample) {
				sp->t0 = r->t0;
				sp->t1 = t1;
				open[nopen++] = r->kernel;
			}
			if (t1 > sp->t1)
				sp->t1 = t1;
			sp->last_sample = sample + 1;
		}
		/* Kernels absent from this sample end where they were last seen. */
		size_t keep = 0;
		for (size_t o = 0; o < nopen && rc == 0; o++) {
			if (ks[open[o]].last_sample == sample + 1)
				open[keep++] = open[o];
			else
				rc = close_span(t, &ks[open[o]], open[o]);
		}
		nopen = keep;
		i = j;
	}
	for (size_t o = 0; o < nopen && rc == 0; o++)
		rc = close_span(t, &ks[open[o]], open[o]);
	free(seen);
	free(where);
	free(ks);
	free(open);
	return rc;
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
		if (!(x >= 0) || x >= 9.2e18)
			return fail(t, "gpu_tot_sim_cycle + gpu_sim_cycle is %.6g: not a cycle count "
				    "below 2^63", x);
		t1 = (uint64_t)x;
		t0 = t->rows ? t->last_t : (t1 >= t->sample_cycles ? t1 - t->sample_cycles : 0);
		if (t->rows && t1 <= t->last_t)
			return fail(t, "global cycle %llu does not advance past %llu", (unsigned long long)t1,
				    (unsigned long long)t->last_t);
	} else {
		double a = t->vals[t->col_t0], b = t->vals[t->col_t1];
		if (!(a >= 0) || !(b >= a) || b >= 9.2e18)
			return fail(t, "StartTimestamp %.0f / EndTimestamp %.0f are not an interval of "
				    "times below 2^63 ns", a, b);
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
	if (rc == 0 && (fmt == F_LONG || fmt == F_KERNBENCH))
		rc = long_write(t);
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
	for (size_t i = 0; i < t->nkern; i++)
		free(t->kern[i]);
	free(t->kern);
	cs_strmap_free(&t->kmap);
	free(t->lr);
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

static int one_of(const char *f, size_t len, const char *const *names)
{
	for (; *names; names++)
		if (strlen(*names) == len && !strncasecmp(*names, f, len))
			return 1;
	return 0;
}

/* A header of two to six columns, one each named as a time, a metric and
 * a value are commonly named, the rest an end time or a kernel. */
static int long_header(const char *head)
{
	int have_t = 0, have_m = 0, have_v = 0, n = 0;
	for (const char *f = head; n < 7; n++) {
		size_t len = strcspn(f, ",");
		const char *e = f + len;
		while (f < e && (*f == ' ' || *f == '"'))
			f++;
		size_t l = (size_t)(e - f);
		while (l && (f[l - 1] == ' ' || f[l - 1] == '"' || f[l - 1] == '\r'))
			l--;
		if (!have_t && one_of(f, l, times))
			have_t = 1;
		else if (!have_m && one_of(f, l, metrics))
			have_m = 1;
		else if (!have_v && one_of(f, l, values))
			have_v = 1;
		else if (!one_of(f, l, ends) && !one_of(f, l, kernels))
			return 0;
		if (!*e)
			break;
		f = e + 1;
	}
	return n < 6 && have_t && have_m && have_v;
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
	if (long_header(head))
		return "csv-long";
	if (!strncmp(head, "t0,t1", 5) || !strncmp(head, "\"t0\"", 4))
		return "csv";
	return NULL;
}
