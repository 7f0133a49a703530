/*
 * accelsim_log.c - Accel-Sim / GPGPU-Sim stdout with per-kernel
 * statistics (accelsim_log.h).
 *
 * A kernel block runs from its "kernel_name = " line to the next one (or
 * the end). Inside it every "KEY = NUMBER" line (optionally with '%' or
 * "GB/Sec" after the number; tab-indented breakdown lines included) is a
 * stat. The per-channel DRAM blocks ("DRAM[i]: ...", whose keys repeat per
 * channel) are skipped: their totals are printed elsewhere. Cumulative
 * stats are differenced against the previous kernel's value (as
 * Accel-Sim's get_stats.py does); per-kernel values and ratios are kept
 * as printed. Each kernel becomes one sample over
 * [gpu_tot_sim_cycle - gpu_sim_cycle, gpu_tot_sim_cycle) and a
 * sim-kernel range named after it.
 */
#include "accelsim_log.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "simrun.h"
#include "textin.h"

#define MAX_STATS 8192

typedef struct stat {
	char *name;
	int metric;
	int cumulative;
	double last;   /* the previous kernel's raw value (cumulative) */
	double now;    /* this kernel's raw value, NaN until seen */
} stat;

typedef struct alog {
	cs_imp im; /* first: options, label, error buffer, line */
	cs_simrun *run;
	stat *st;
	size_t nst, capst;
	int collect; /* first pass: learn every stat's name */
	int in_kernel;
	int in_dram_block;
	char kname[1024];
	int64_t kuid;
	unsigned kernels;
	uint64_t kline;
	double clocks[4]; /* core, icnt, l2, dram in Hz */
	int have_clocks;
	uint64_t last_t1;
} alog;

#define fail(st, ...) cs_imp_fail(&(st)->im, __VA_ARGS__)

/* Values printed per kernel, or as rates, averages, maxima: kept as
 * they are. Everything else is a running total. */
static int is_cumulative(const char *k)
{
	static const char *const as_is[] = {
		"gpu_sim_cycle", "gpu_sim_insn", "max_total_param_size", "gpu_total_sim_rate",
	};
	static const char *const parts[] = {
		"rate", "ipc", "occupancy", "util", "parallism", "_BW", "latency", "Locality",
		"Parallism", "ratio", "max", "avg", "average", "Para",
	};
	for (size_t i = 0; i < sizeof as_is / sizeof *as_is; i++)
		if (!strcmp(k, as_is[i]))
			return 0;
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
		if (strstr(k, parts[i]))
			return 0;
	return 1;
}

static stat *find_stat(alog *a, const char *name)
{
	for (size_t i = a->nst; i-- > 0;)
		if (!strcmp(a->st[i].name, name))
			return &a->st[i];
	return NULL;
}

static int add_stat(alog *a, const char *name, double v)
{
	stat *s = find_stat(a, name);
	if (!s) {
		if (a->nst == MAX_STATS)
			return fail(a, "more than %d distinct stats", MAX_STATS);
		if (a->nst == a->capst) {
			size_t cap = a->capst ? a->capst * 2 : 256;
			stat *g = realloc(a->st, cap * sizeof *g);
			if (!g)
				return -ENOMEM;
			a->st = g;
			a->capst = cap;
		}
		s = &a->st[a->nst++];
		s->name = strdup(name);
		if (!s->name)
			return -ENOMEM;
		s->cumulative = is_cumulative(name);
		s->last = 0;
		s->metric = -1;
	}
	s->now = v;
	return 0;
}

static int end_kernel(alog *a)
{
	if (!a->in_kernel)
		return 0;
	a->in_kernel = 0;
	stat *cyc = find_stat(a, "gpu_sim_cycle"), *tot = find_stat(a, "gpu_tot_sim_cycle");
	if (!cyc || !tot || isnan(cyc->now) || isnan(tot->now) || tot->now < cyc->now) {
		a->im.line = a->kline;
		return fail(a, "kernel '%s' (block %u) has no usable gpu_sim_cycle and "
			    "gpu_tot_sim_cycle lines", a->kname, a->kernels);
	}
	uint64_t t1 = (uint64_t)tot->now, t0 = t1 - (uint64_t)cyc->now;
	int rc = cs_simrun_row(a->run, t0, t1);
	if (rc < 0) {
		a->im.line = a->kline;
		return fail(a, "kernel '%s': %s", a->kname, cs_simrun_errmsg(a->run));
	}
	for (size_t i = 0; i < a->nst; i++) {
		stat *s = &a->st[i];
		if (s->metric < 0) {
			s->metric = cs_simrun_metric(a->run, s->name, NULL, NULL);
			if (s->metric < 0)
				return fail(a, "%s", cs_simrun_errmsg(a->run));
		}
		double v;
		if (!s->cumulative) {
			v = s->now;
		} else if (isnan(s->now)) {
			v = 0; /* not printed this time (old non-zero-only form): unchanged */
		} else {
			v = s->now - s->last;
			s->last = s->now;
		}
		cs_simrun_set(a->run, s->metric, v);
		s->now = NAN;
	}
	cs_range r;
	cs_range_init(&r, "sim-kernel", a->kname, t0, t1);
	r.device = 0;
	r.correlation_id = a->kuid;
	if (cs_simrun_range(a->run, &r) < 0)
		return fail(a, "%s", cs_simrun_errmsg(a->run));
	a->last_t1 = t1;
	return 0;
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

static int on_line(void *ctx, char *line, size_t len, uint64_t lineno)
{
	alog *a = ctx;
	(void)len;
	a->im.line = lineno;
	const char *s = line;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!strncmp(s, "kernel_name = ", 14) || !strcmp(s, "kernel_name =")) {
		if (a->collect) {
			a->in_kernel = 1;
			a->in_dram_block = 0;
			return 0;
		}
		int rc = end_kernel(a);
		if (rc)
			return rc;
		snprintf(a->kname, sizeof a->kname, "%s", s + (s[13] ? 14 : 13));
		trim(a->kname);
		a->in_kernel = 1;
		a->in_dram_block = 0;
		a->kuid = -1;
		a->kernels++;
		a->kline = lineno;
		return 0;
	}
	if (!strncmp(s, "GPGPU-Sim uArch: clock freqs: ", 30)) {
		double c[4];
		if (sscanf(s + 30, "%lf:%lf:%lf:%lf", &c[0], &c[1], &c[2], &c[3]) == 4) {
			memcpy(a->clocks, c, sizeof c);
			a->have_clocks = 1;
		}
		return 0;
	}
	if (!a->in_kernel)
		return 0;
	if (!strncmp(s, "DRAM[", 5)) {
		a->in_dram_block = 1;
		return 0;
	}
	if (!strncmp(s, "=========", 9) || !strncmp(s, "L2_cache_bank[", 14))
		a->in_dram_block = 0;
	if (a->in_dram_block || *s == '-')
		return 0;
	const char *eq = strstr(s, " = ");
	size_t eqlen = 3;
	if (!eq) {
		eq = strstr(s, "=");
		eqlen = 1;
	}
	if (!eq || eq == s || memchr(s, ':', (size_t)(eq - s)) || memchr(s, ',', (size_t)(eq - s)))
		return 0;
	char key[512];
	size_t kl = (size_t)(eq - s);
	if (kl >= sizeof key)
		return 0;
	memcpy(key, s, kl);
	key[kl] = '\0';
	trim(key);
	for (const char *c = key; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_[] ", *c))
			return 0;
	const char *v = eq + eqlen;
	while (*v == ' ' || *v == '\t')
		v++;
	char *end;
	double x = strtod(v, &end);
	if (end == v)
		return 0;
	if (!strncmp(v, "-nan", 4) || !strncmp(v, "nan", 3))
		x = NAN;
	while (*end == ' ')
		end++;
	if (*end == '%')
		end++;
	else if (!strncmp(end, "GB/Sec", 6))
		end += 6;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end) /* "0 days, ...", "10240/654 = ...", "{8:10240,}": not one number */
		return 0;
	if (!strcmp(key, "kernel_launch_uid")) {
		a->kuid = (int64_t)x;
		return 0;
	}
	if (!strcmp(key, "kernel_stream_id"))
		return 0;
	return add_stat(a, key, a->collect ? (double)NAN : x);
}

/* Whether a line of text starts with prefix. */
static int line_starts(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, prefix, n))
			return 1;
	return 0;
}

/* The simulator's own lines, at the start of a line: "GPGPU-Sim PTX:",
 * "GPGPU-Sim uArch:", "GPGPU-Sim: ", "kernel_name = ", "gpu_sim_cycle = ",
 * Accel-Sim's banner. Prose that mentions the simulators (a README) is
 * not a log. */
int cs_accelsim_log_sniff(const char *text)
{
	static const char *const marks[] = {"GPGPU-Sim PTX:", "GPGPU-Sim uArch:", "GPGPU-Sim: ",
					    "GPGPU-Sim ** ", "kernel_name = ", "gpu_sim_cycle = ",
					    "Accel-Sim [build"};
	for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
		if (line_starts(text, marks[i]))
			return 1;
	return 0;
}

int cs_import_accelsim_log(cs_producer *p, const char *buf, size_t len,
			   const cs_import_opts *o, char *err, size_t errlen)
{
	const char *label = o->label ? o->label : "input";
	alog *a = calloc(1, sizeof *a);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cs_imp_init(&a->im, o, err, errlen);
	/* The run's metadata carries the four clock domains, which the log
	 * prints before the first kernel. */
	cs_textin_stats st;
	int rc = 0;
	{
		/* The clock line is near the top: peek at the head only. */
		size_t n = len < (4u << 20) ? len : (4u << 20);
		char *text = malloc(n + 1);
		if (text) {
			size_t got = cs_textin_peek(buf, len, text, n + 1);
			const char *c = strstr(text, "GPGPU-Sim uArch: clock freqs: ");
			double cl[4];
			if (c && got && sscanf(c + 30, "%lf:%lf:%lf:%lf", &cl[0], &cl[1], &cl[2], &cl[3]) == 4) {
				memcpy(a->clocks, cl, sizeof cl);
				a->have_clocks = 1;
			}
			free(text);
		}
	}
	char extra[256];
	snprintf(extra, sizeof extra, "\"clock_domains_hz\":{\"core\":%.0f,\"icnt\":%.0f,"
		 "\"l2\":%.0f,\"dram\":%.0f}", a->clocks[0], a->clocks[1], a->clocks[2], a->clocks[3]);
	a->run = cs_simrun_open(p, o, "accelsim-log", "sim", "cycle",
				a->have_clocks ? a->clocks[0] : 0, a->have_clocks ? extra : NULL, err, errlen);
	if (!a->run)
		rc = -EIO;
	/* Two passes: the old stdout form prints non-zero values only, so a
	 * stat may first appear in a later kernel; knowing every name first
	 * lets each kernel's row say 0 for it instead of nothing. */
	a->collect = 1;
	if (rc == 0)
		rc = cs_textin_lines(buf, len, label, on_line, a, NULL, NULL, &st, err, errlen);
	a->collect = 0;
	a->in_kernel = 0;
	if (rc == 0)
		rc = cs_textin_lines(buf, len, label, on_line, a, o->progress, o->progress_ctx, &st,
				     err, errlen);
	if (rc == 0)
		rc = end_kernel(a);
	if (rc == 0 && !a->kernels)
		rc = fail(a, "no 'kernel_name = ' line: not an Accel-Sim/GPGPU-Sim stdout log with "
			  "per-kernel statistics");
	if (rc == 0) {
		cs_log(CS_LOG_INFO, "%s: %u kernels, %zu stats each", label, a->kernels, a->nst);
	}
	rc = cs_simrun_finish(a->run, p, rc, label, err, errlen);
	for (size_t i = 0; i < a->nst; i++)
		free(a->st[i].name);
	free(a->st);
	free(a);
	return rc;
}
