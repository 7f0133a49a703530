/*
 * accelsim_log.c - Accel-Sim / GPGPU-Sim stdout with per-kernel
 * statistics (accelsim_log.h).
 *
 * The file is read twice. The first pass learns every stat's name and
 * the file's structure: its statistics blocks (from a "kernel_name = "
 * line to the next; gpu_sim_cycle and gpu_tot_sim_cycle give the block's
 * cycles), kernel launches ("launching kernel name: N uid: U
 * [cuda_stream_id: S]"), completions ("Destroy streams for kernel U:")
 * and exact starts ("gpgpu_sim::set_kernel_done start_cycle=A,
 * end_cycle=B"). Plain GPGPU-Sim (PTX mode, 3.x and 4.x) prints no launch
 * lines: there a kernel is launched by "GPGPU-Sim PTX: pushing kernel
 * 'NAME' to stream S, gridDim= ..." (no uid: pushes are matched to uids
 * by name, in order) and given its uid by the first "GPGPU-Sim uArch:
 * Shader N bind to kernel U 'NAME'"; a completion of a uid never seen
 * takes the oldest unmatched push, or, with none, spans its block. From
 * that it decides the file's accounting:
 *
 *  - interval: gpu_tot_sim_cycle advances by gpu_sim_cycle, so each
 *    block covers the cycles since the previous one (stock GPGPU-Sim and
 *    Accel-Sim, one stream or several). With launch and completion lines
 *    every kernel's extent is rebuilt: from its launch (the end of the
 *    last block printed before the launch line, or set_kernel_done's
 *    start_cycle) to the end of the block its completion precedes. Logs
 *    without them (GPGPU-Sim 3.x) have one kernel per block.
 *  - per-kernel: each block's gpu_sim_cycle is the finishing kernel's own
 *    duration ending at gpu_tot_sim_cycle, and blocks overlap (a fork that
 *    runs graphics and compute together): each block is that kernel's own
 *    statistics, its sample spans exactly the kernel, samples are written
 *    in order of start, and the run's meta says kernel_accounting
 *    "per-kernel" so kernel-level correlation takes them whole.
 *
 * The second pass writes one sample per block. Inside a block every
 * "KEY = NUMBER" line (optionally with '%' or "GB/Sec" after the number;
 * tab-indented breakdown lines included) is a stat; the per-channel DRAM
 * blocks are skipped (their totals are printed elsewhere). Cumulative
 * stats are differenced against the previous block's value (as
 * Accel-Sim's get_stats.py does); the per-stream cache breakdowns of
 * stream-stats builds ("*_breakdown[...]", printed for the finishing
 * kernel's stream only) against the previous value of the same stream,
 * so a block holds its kernel's own breakdown. Per-kernel values and
 * ratios are kept as printed.
 */
#include "accelsim_log.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "simrun.h"
#include "textin.h"

#define MAX_STATS 8192
#define MAX_STREAMS 256
#define MAX_CYCLE 9007199254740992.0 /* 2^53: cycle counts stay exact */

typedef struct stat {
	char *name;
	int metric;
	int cumulative;
	int per_stream; /* a cache breakdown: cumulative per stream */
	double last;   /* the previous block's raw value (cumulative) */
	double *slast; /* per stream slot (per_stream) */
	double now;    /* this block's raw value, NaN until seen */
} stat;

/* A statistics block, as the first pass saw it. */
typedef struct block {
	uint64_t line;
	double cyc, tot;       /* gpu_sim_cycle, gpu_tot_sim_cycle (NaN = absent) */
	uint64_t t0, t1;       /* its sample */
	int64_t stream;        /* kernel_stream_id, -1 */
	char *names;           /* the kernel_name line's names */
	int64_t first_uid;     /* the kernel_launch_uid line's first uid */
	unsigned nuids;
	size_t kernel;         /* the kernel it completes (SIZE_MAX: none known) */
} block;

/* A kernel, from its launch line (or, in a log without them, its block). */
typedef struct kern {
	char *name;
	int64_t uid, stream;
	uint64_t launch_line, done_line;
	size_t after_block;    /* blocks printed before its launch line */
	size_t done_block;     /* the block its completion precedes; SIZE_MAX */
	double start_exact;    /* set_kernel_done start_cycle, NaN */
	int completed;
	uint64_t t0, t1;
} kern;

typedef struct alog {
	cs_imp im; /* first: options, label, error buffer, line */
	cs_simrun *run;
	stat *st;
	size_t nst, capst;
	int collect; /* first pass: names and structure */
	int in_kernel;
	int in_dram_block;
	/* structure (first pass) */
	block *bl;
	size_t nbl, capbl;
	kern *kn;
	size_t nkn, capkn;
	size_t *uid_hash;     /* kernel index + 1 by uid, open addressing */
	size_t hcap;
	char pend_err[512];   /* a malformed structure line, failed only if
				 another line follows it (else: the file was
				 cut inside it) */
	uint64_t pend_line;
	size_t *done_pending; /* kernels completed since the last block */
	size_t ndone, capdone;
	double pending_start; /* a set_kernel_done not yet tied to a kernel */
	int have_launches, have_dones, per_kernel;
	int have_trace;       /* Accel-Sim's "launching kernel" lines: strict uids */
	int have_pushes;      /* GPGPU-Sim's "pushing kernel" lines */
	size_t push_cursor;   /* no push before it lacks a uid */
	/* second pass */
	size_t cur;           /* block index */
	int64_t streams[MAX_STREAMS];
	size_t nstreams;
	/* per-kernel accounting: rows kept to be written in order of start */
	double *rows;
	struct start *order;
	double clocks[4]; /* core, icnt, l2, dram in Hz */
	int have_clocks;
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
	if (!s && !a->collect) /* both passes read the same lines */
		return fail(a, "'%s' was not seen in the first pass", name);
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
		memset(s, 0, sizeof *s);
		s->name = strdup(name);
		if (!s->name)
			return -ENOMEM;
		s->cumulative = is_cumulative(name);
		s->per_stream = s->cumulative && strstr(name, "_breakdown[") != NULL;
		s->metric = -1;
		s->now = NAN;
	}
	s->now = v;
	return 0;
}

/* Grows a[*cap] of elem-sized entries to hold n + 1. */
static int grow(void **a, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	void *g = realloc(*a, c * elem);
	if (!g)
		return -ENOMEM;
	*a = g;
	*cap = c;
	return 0;
}

static size_t uid_slot(int64_t uid, size_t cap)
{
	uint64_t h = (uint64_t)uid * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 17) & (cap - 1);
}

static kern *kernel_by_uid(alog *a, int64_t uid)
{
	if (!a->hcap)
		return NULL;
	for (size_t i = uid_slot(uid, a->hcap);; i = (i + 1) & (a->hcap - 1)) {
		if (!a->uid_hash[i])
			return NULL;
		if (a->kn[a->uid_hash[i] - 1].uid == uid)
			return &a->kn[a->uid_hash[i] - 1];
	}
}

/* Indexes kernel j by its uid. */
static int index_uid(alog *a, size_t j)
{
	if ((a->nkn + 1) * 2 > a->hcap) {
		size_t cap = a->hcap ? a->hcap * 2 : 256;
		size_t *h = calloc(cap, sizeof *h);
		if (!h)
			return -ENOMEM;
		for (size_t k = 0; k < a->nkn; k++) {
			if (a->kn[k].uid < 0 || k == j)
				continue;
			size_t i = uid_slot(a->kn[k].uid, cap);
			while (h[i])
				i = (i + 1) & (cap - 1);
			h[i] = k + 1;
		}
		free(a->uid_hash);
		a->uid_hash = h;
		a->hcap = cap;
	}
	size_t i = uid_slot(a->kn[j].uid, a->hcap);
	while (a->uid_hash[i])
		i = (i + 1) & (a->hcap - 1);
	a->uid_hash[i] = j + 1;
	return 0;
}

/* A malformed launch, completion or set_kernel_done line: an error,
 * unless it is the file's last line (a log cut off inside it). */
static int structure_error(alog *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int structure_error(alog *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->pend_err, sizeof a->pend_err, fmt, ap);
	va_end(ap);
	a->pend_line = a->im.line;
	return 0;
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* "launching kernel name: NAME uid: U [cuda_stream_id: S]" */
static int on_launch(alog *a, const char *s)
{
	char name[1024];
	const char *u = strstr(s, " uid: ");
	if (!u)
		return structure_error(a, "expected 'launching kernel name: NAME uid: N'");
	snprintf(name, sizeof name, "%.*s", (int)(u - s), s);
	trim(name);
	char *end;
	errno = 0;
	long long uid = strtoll(u + 6, &end, 10);
	if (end == u + 6 || uid < 0 || errno)
		return structure_error(a, "expected a kernel uid (a non-negative integer) after 'uid: '");
	long long stream = -1;
	const char *cs = strstr(end, "cuda_stream_id:");
	if (cs) {
		const char *v = cs + 15;
		unsigned long long sv = strtoull(v, &end, 10);
		if (end == v)
			return structure_error(a, "expected a stream id after 'cuda_stream_id:'");
		stream = sv > (unsigned long long)INT64_MAX ? -1 : (long long)sv; /* -1 printed as %llu */
	}
	kern *old = kernel_by_uid(a, uid);
	if (old)
		return fail(a, "kernel uid %lld launched twice (first at line %" PRIu64 ")", uid,
			    old->launch_line);
	if (grow((void **)&a->kn, &a->capkn, a->nkn, sizeof *a->kn) < 0)
		return -ENOMEM;
	kern *k = &a->kn[a->nkn];
	memset(k, 0, sizeof *k);
	if (!(k->name = strdup(name)))
		return -ENOMEM;
	a->nkn++;
	k->uid = uid;
	k->stream = stream;
	k->launch_line = a->im.line;
	k->after_block = a->nbl;
	k->done_block = SIZE_MAX;
	k->start_exact = NAN;
	a->have_launches = a->have_trace = 1;
	return index_uid(a, a->nkn - 1);
}

/* A new kernel at the current line (uid -1: not known yet). */
static kern *new_kernel(alog *a, const char *name, size_t nlen, int64_t stream)
{
	if (grow((void **)&a->kn, &a->capkn, a->nkn, sizeof *a->kn) < 0)
		return NULL;
	kern *k = &a->kn[a->nkn];
	memset(k, 0, sizeof *k);
	if (name && !(k->name = strndup(name, nlen)))
		return NULL;
	a->nkn++;
	k->uid = -1;
	k->stream = stream;
	k->launch_line = a->im.line;
	k->after_block = a->nbl;
	k->done_block = SIZE_MAX;
	k->start_exact = NAN;
	return k;
}

/* The oldest push not yet given a uid, of this name (NULL: any); it gets
 * uid. NULL when there is none. The scan starts at the oldest push still
 * without one. */
static kern *claim_push(alog *a, const char *name, int64_t uid)
{
	while (a->push_cursor < a->nkn && (a->kn[a->push_cursor].uid >= 0 ||
					    a->kn[a->push_cursor].completed))
		a->push_cursor++;
	for (size_t j = a->push_cursor; j < a->nkn; j++) {
		kern *k = &a->kn[j];
		if (k->uid >= 0 || k->completed || (name && (!k->name || strcmp(k->name, name))))
			continue;
		k->uid = uid;
		return uid < 0 || index_uid(a, j) == 0 ? k : NULL;
	}
	return NULL;
}

/* "GPGPU-Sim PTX: pushing kernel 'NAME' to stream S, gridDim= ..." */
static int on_push(alog *a, const char *s)
{
	const char *q = strchr(s, '\'');
	const char *to = q ? strstr(q, "' to stream ") : NULL;
	if (!q || !to)
		return structure_error(a, "expected 'pushing kernel 'NAME' to stream N, ...'");
	char *end;
	unsigned long long stream = strtoull(to + 12, &end, 10);
	if (end == to + 12)
		return structure_error(a, "expected a stream number after 'to stream '");
	a->have_pushes = a->have_launches = 1;
	return new_kernel(a, q + 1, (size_t)(to - q - 1),
			  stream > (unsigned long long)INT64_MAX ? -1 : (int64_t)stream) ? 0 : -ENOMEM;
}

/* "GPGPU-Sim uArch: Shader N bind to kernel U 'NAME'": the first of a uid
 * ties it to its push (or, with none, launches it here). */
static int on_bind(alog *a, const char *s)
{
	char *end;
	errno = 0;
	long long uid = strtoll(s, &end, 10);
	const char *q = strchr(end, '\'');
	const char *qe = q ? strrchr(q + 1, '\'') : NULL;
	if (end == s || uid < 0 || errno || !q || !qe)
		return structure_error(a, "expected 'bind to kernel N 'NAME''");
	if (kernel_by_uid(a, uid))
		return 0;
	char *name = strndup(q + 1, (size_t)(qe - q - 1));
	if (!name)
		return -ENOMEM;
	kern *k = claim_push(a, name, uid);
	int rc = 0;
	if (!k && (k = new_kernel(a, name, strlen(name), -1)) != NULL) {
		k->uid = uid;
		rc = index_uid(a, a->nkn - 1);
	} else if (!k) {
		rc = -ENOMEM;
	}
	free(name);
	a->have_launches = 1;
	return rc;
}

/* "Destroy streams for kernel U: size N" */
static int on_done(alog *a, const char *s)
{
	char *end;
	errno = 0;
	long long uid = strtoll(s, &end, 10);
	if (end == s || *end != ':' || errno)
		return structure_error(a, "expected 'Destroy streams for kernel N: size M'");
	kern *k = kernel_by_uid(a, uid);
	if (!k && a->have_trace)
		return fail(a, "completion of kernel uid %lld, which was never launched (no "
			    "'launching kernel' line for it before)", uid);
	/* GPGPU-Sim: the oldest push without a uid, else a kernel known only
	 * by its completion (it spans the block it ends) */
	if (!k && !(k = claim_push(a, NULL, uid))) {
		if (!(k = new_kernel(a, NULL, 0, -1)))
			return -ENOMEM;
		k->uid = uid;
		k->after_block = SIZE_MAX;
		if (index_uid(a, a->nkn - 1) < 0)
			return -ENOMEM;
	}
	if (k->done_line)
		return fail(a, "kernel uid %lld completes twice (first at line %" PRIu64 ")", uid,
			    k->done_line);
	k->done_line = a->im.line;
	if (!isnan(a->pending_start)) {
		k->start_exact = a->pending_start;
		a->pending_start = NAN;
	}
	if (grow((void **)&a->done_pending, &a->capdone, a->ndone, sizeof *a->done_pending) < 0)
		return -ENOMEM;
	a->done_pending[a->ndone++] = (size_t)(k - a->kn);
	a->have_dones = 1;
	return 0;
}

/* "gpgpu_sim::set_kernel_done start_cycle=A, end_cycle=B": the exact
 * start of the kernel whose completion comes next. */
static int on_set_done(alog *a, const char *s)
{
	const char *p = strstr(s, "start_cycle");
	if (!p)
		return 0;
	p += 11;
	while (*p == ' ' || *p == '=' || *p == ':')
		p++;
	char *end;
	double v = strtod(p, &end);
	if (end == p || !(v >= 0) || v > MAX_CYCLE)
		return structure_error(a, "expected a cycle count after 'start_cycle='");
	/* After its completion line: that kernel's; before it: the next's. */
	if (a->ndone && isnan(a->kn[a->done_pending[a->ndone - 1]].start_exact))
		a->kn[a->done_pending[a->ndone - 1]].start_exact = v;
	else
		a->pending_start = v;
	return 0;
}

/* The first pass's view of a "KEY = value" line of the current block. */
static int block_stat(alog *a, const char *key, double x, const char *v)
{
	if (!a->nbl || !a->in_kernel)
		return 0;
	block *b = &a->bl[a->nbl - 1];
	if (!strcmp(key, "gpu_sim_cycle"))
		b->cyc = x;
	else if (!strcmp(key, "gpu_tot_sim_cycle"))
		b->tot = x;
	else if (!strcmp(key, "kernel_stream_id"))
		b->stream = x >= 0 && x < 9.2e18 ? (int64_t)x : -1; /* -1 printed as %llu */
	else if (!strcmp(key, "kernel_launch_uid")) {
		for (const char *c = v; *c;) {
			while (*c == ' ')
				c++;
			if (!*c)
				break;
			char *end;
			errno = 0;
			long long uid = strtoll(c, &end, 10);
			if (end == c || errno)
				break;
			if (!b->nuids)
				b->first_uid = uid;
			if (a->have_trace && !kernel_by_uid(a, uid))
				return fail(a, "the statistics block lists kernel uid %lld, which was "
					    "never launched (no 'launching kernel' line for it before)", uid);
			b->nuids++;
			c = end;
		}
	}
	return 0;
}

static int new_block(alog *a, const char *names)
{
	if (grow((void **)&a->bl, &a->capbl, a->nbl, sizeof *a->bl) < 0)
		return -ENOMEM;
	block *b = &a->bl[a->nbl];
	memset(b, 0, sizeof *b);
	b->line = a->im.line;
	b->cyc = b->tot = NAN;
	b->stream = -1;
	b->first_uid = -1;
	b->kernel = SIZE_MAX;
	if (!(b->names = strdup(names)))
		return -ENOMEM;
	trim(b->names);
	a->nbl++;
	/* The completions printed since the last block end with this one. */
	for (size_t i = 0; i < a->ndone; i++) {
		a->kn[a->done_pending[i]].done_block = a->nbl - 1;
		if (b->kernel == SIZE_MAX)
			b->kernel = a->done_pending[i];
	}
	a->ndone = 0;
	return 0;
}

/* The stream slot of a per-stream breakdown, or -1. */
static int stream_slot(alog *a, int64_t stream)
{
	for (size_t i = 0; i < a->nstreams; i++)
		if (a->streams[i] == stream)
			return (int)i;
	if (a->nstreams == MAX_STREAMS)
		return -2;
	a->streams[a->nstreams] = stream;
	return (int)a->nstreams++;
}

/* The second pass at the end of a block: its values into its row. */
static int end_block(alog *a)
{
	if (!a->in_kernel)
		return 0;
	a->in_kernel = 0;
	if (a->cur >= a->nbl)
		return 0; /* a block the file ends inside: said after the pass */
	block *b = &a->bl[a->cur++];
	double *row = NULL;
	if (a->per_kernel) {
		row = a->rows + (size_t)(b - a->bl) * a->nst;
	} else if (cs_simrun_row(a->run, b->t0, b->t1) < 0) {
		a->im.line = b->line;
		return fail(a, "block at line %" PRIu64 ": %s", b->line, cs_simrun_errmsg(a->run));
	}
	int slot = b->stream >= 0 ? stream_slot(a, b->stream) : -1;
	if (slot == -2)
		return fail(a, "more than %d streams print per-stream breakdowns", MAX_STREAMS);
	for (size_t i = 0; i < a->nst; i++) {
		stat *s = &a->st[i];
		double v;
		if (!s->cumulative) {
			v = s->now;
		} else if (isnan(s->now)) {
			v = 0; /* not printed this time (old non-zero-only form): unchanged */
		} else if (s->per_stream && slot >= 0) {
			if (!s->slast && !(s->slast = calloc(MAX_STREAMS, sizeof *s->slast)))
				return -ENOMEM;
			v = s->now - s->slast[slot];
			s->slast[slot] = s->now;
		} else {
			v = s->now - s->last;
			s->last = s->now;
		}
		if (row) {
			row[i] = v;
		} else {
			if (s->metric < 0 &&
			    (s->metric = cs_simrun_metric(a->run, s->name, NULL, NULL)) < 0)
				return fail(a, "%s", cs_simrun_errmsg(a->run));
			cs_simrun_set(a->run, s->metric, v);
		}
		s->now = NAN;
	}
	return 0;
}

static int on_line(void *ctx, char *line, size_t len, uint64_t lineno)
{
	alog *a = ctx;
	(void)len;
	if (a->pend_err[0]) { /* the malformed line was not the last */
		a->im.line = a->pend_line;
		return fail(a, "%s", a->pend_err);
	}
	a->im.line = lineno;
	const char *s = line;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!strncmp(s, "kernel_name = ", 14) || !strcmp(s, "kernel_name =")) {
		if (a->collect) {
			a->in_kernel = 1;
			a->in_dram_block = 0;
			return new_block(a, s + (s[13] ? 14 : 13));
		}
		int rc = end_block(a);
		if (rc)
			return rc;
		a->in_kernel = 1;
		a->in_dram_block = 0;
		return 0;
	}
	/* The structure lines: read in the first pass, never stats. */
	if (!strncmp(s, "launching kernel name: ", 23))
		return a->collect ? on_launch(a, s + 23) : 0;
	if (!strncmp(s, "Destroy streams for kernel ", 27))
		return a->collect ? on_done(a, s + 27) : 0;
	if (!strncmp(s, "GPGPU-Sim PTX: pushing kernel ", 30))
		return a->collect ? on_push(a, s + 30) : 0;
	if (!strncmp(s, "GPGPU-Sim uArch: Shader ", 24)) {
		const char *b = strstr(s + 24, " bind to kernel ");
		return a->collect && b ? on_bind(a, b + 16) : 0;
	}
	if (strstr(s, "set_kernel_done") && strstr(s, "start_cycle"))
		return a->collect ? on_set_done(a, s) : 0;
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
	if (a->collect) {
		int rc = block_stat(a, key, x, v);
		if (rc)
			return rc;
	}
	if (!strcmp(key, "kernel_launch_uid") || !strcmp(key, "kernel_stream_id"))
		return 0;
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
					    "Accel-Sim [build", "launching kernel name: "};
	for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
		if (line_starts(text, marks[i]))
			return 1;
	return 0;
}

/* Between the passes: checks the blocks' cycles, chooses the accounting
 * and puts every block and kernel on the cycle axis. */
static int analyse(alog *a)
{
	double prev = 0;
	size_t last_ok = a->nbl;
	for (size_t i = 0; i < a->nbl; i++) {
		block *b = &a->bl[i];
		int last = i + 1 == a->nbl;
		a->im.line = b->line;
		if (isnan(b->cyc) || isnan(b->tot) || (last && b->tot < prev)) {
			if (last && i) { /* cut off inside its block */
				cs_log(CS_LOG_WARN, "%s:%" PRIu64 ": the file ends inside this statistics "
				       "block (%s): it is not imported", a->im.label, b->line,
				       isnan(b->cyc) || isnan(b->tot) ? "no gpu_sim_cycle and "
				       "gpu_tot_sim_cycle" : "its gpu_tot_sim_cycle is cut");
				last_ok = i;
				break;
			}
			if (isnan(b->cyc) || isnan(b->tot))
				return fail(a, "kernel '%s' (block %zu) has no usable gpu_sim_cycle and "
					    "gpu_tot_sim_cycle lines", b->names, i + 1);
		}
		if (!(b->cyc >= 0) || !(b->tot >= 0))
			return fail(a, "negative %s (%.0f)", !(b->cyc >= 0) ? "gpu_sim_cycle" :
				    "gpu_tot_sim_cycle", !(b->cyc >= 0) ? b->cyc : b->tot);
		if (b->cyc > MAX_CYCLE || b->tot > MAX_CYCLE)
			return fail(a, "%s %.6g is not a cycle count (at most 2^53)", b->cyc > MAX_CYCLE ?
				    "gpu_sim_cycle" : "gpu_tot_sim_cycle", b->cyc > MAX_CYCLE ? b->cyc : b->tot);
		if (b->tot < prev)
			return fail(a, "gpu_tot_sim_cycle goes back from %.0f to %.0f", prev, b->tot);
		if (b->tot < b->cyc)
			return fail(a, "gpu_tot_sim_cycle %.0f is less than this block's gpu_sim_cycle "
				    "%.0f", b->tot, b->cyc);
		if (b->tot - b->cyc != prev)
			a->per_kernel = 1;
		prev = b->tot;
	}
	if (last_ok < a->nbl) {
		free(a->bl[last_ok].names);
		a->nbl = last_ok;
	}
	for (size_t i = 0; i < a->nbl; i++) {
		block *b = &a->bl[i];
		b->t1 = (uint64_t)b->tot;
		b->t0 = a->per_kernel ? (uint64_t)(b->tot - b->cyc) : (i ? a->bl[i - 1].t1 : 0);
	}
	if (!a->have_dones) {
		/* One kernel per block, named by its kernel_name line. */
		for (size_t i = 0; i < a->nbl; i++) {
			block *b = &a->bl[i];
			if (grow((void **)&a->kn, &a->capkn, a->nkn, sizeof *a->kn) < 0)
				return -ENOMEM;
			kern *k = NULL;
			if (b->nuids == 1 && a->have_launches)
				k = kernel_by_uid(a, b->first_uid);
			if (!k && a->have_pushes)
				k = claim_push(a, b->names, b->nuids == 1 ? b->first_uid : -1);
			if (!k) {
				k = &a->kn[a->nkn++];
				memset(k, 0, sizeof *k);
				if (!(k->name = strdup(b->names)))
					return -ENOMEM;
				k->uid = b->nuids == 1 ? b->first_uid : -1;
				k->stream = b->stream;
				k->start_exact = NAN;
			}
			if (!k->completed)
				k->t0 = b->t0;
			if (k->stream < 0)
				k->stream = b->stream;
			k->completed = 1;
			k->t1 = b->t1;
			b->kernel = (size_t)(k - a->kn);
		}
		return 0;
	}
	for (size_t j = 0; j < a->nkn; j++) {
		kern *k = &a->kn[j];
		if (k->done_block == SIZE_MAX || k->done_block >= a->nbl)
			continue;
		block *b = &a->bl[k->done_block];
		k->completed = 1;
		k->t1 = b->t1;
		if (!k->name && !(k->name = strndup(b->names, strcspn(b->names, " "))))
			return -ENOMEM;
		if (a->per_kernel || k->after_block == SIZE_MAX)
			k->t0 = b->t0;
		else if (!isnan(k->start_exact) && k->start_exact <= (double)k->t1)
			k->t0 = (uint64_t)k->start_exact;
		else
			k->t0 = k->after_block ? a->bl[k->after_block - 1].t1 : 0;
		if (k->stream < 0)
			k->stream = b->stream;
	}
	return 0;
}

typedef struct start {
	uint64_t t0;
	size_t block;
} start;

static int cmp_start(const void *x, const void *y)
{
	const start *p = x, *q = y;
	if (p->t0 != q->t0)
		return p->t0 < q->t0 ? -1 : 1;
	return p->block < q->block ? -1 : p->block > q->block;
}

/* After the second pass: the kept rows in order of start (per-kernel
 * accounting), the kernel ranges, and what the file was. */
static int finish(alog *a)
{
	int rc = 0;
	if (a->per_kernel) {
		for (size_t i = 0; i < a->nbl; i++)
			a->order[i] = (start){a->bl[i].t0, i};
		qsort(a->order, a->nbl, sizeof *a->order, cmp_start);
		for (size_t r = 0; r < a->nbl && rc == 0; r++) {
			block *b = &a->bl[a->order[r].block];
			if ((rc = cs_simrun_row(a->run, b->t0, b->t1)) < 0)
				return fail(a, "%s", cs_simrun_errmsg(a->run));
			const double *row = a->rows + a->order[r].block * a->nst;
			for (size_t i = 0; i < a->nst; i++) {
				stat *s = &a->st[i];
				if (s->metric < 0 &&
				    (s->metric = cs_simrun_metric(a->run, s->name, NULL, NULL)) < 0)
					return fail(a, "%s", cs_simrun_errmsg(a->run));
				cs_simrun_set(a->run, s->metric, row[i]);
			}
		}
	}
	size_t done = 0, unfinished = 0;
	char names[512] = "";
	for (size_t j = 0; j < a->nkn && rc == 0; j++) {
		kern *k = &a->kn[j];
		if (!k->completed) {
			size_t l = strlen(names);
			char uid[32] = "";
			if (k->uid >= 0)
				snprintf(uid, sizeof uid, "uid %" PRId64 " ", k->uid);
			if (l < sizeof names - 100)
				snprintf(names + l, sizeof names - l, "%s%s'%.40s'%s",
					 unfinished ? ", " : "", uid, k->name ? k->name : "?",
					 k->done_line ? " (completed, its statistics block cut)"
					 : k->uid < 0 ? " (pushed, not completed)" : "");
			unfinished++;
			continue;
		}
		cs_range r;
		cs_range_init(&r, "sim-kernel", k->name, k->t0, k->t1);
		r.device = 0;
		r.correlation_id = k->uid;
		r.stream = k->stream;
		if ((rc = cs_simrun_range(a->run, &r)) < 0)
			return fail(a, "%s", cs_simrun_errmsg(a->run));
		done++;
	}
	const char *label = a->im.label;
	if (unfinished && (a->have_dones || a->have_pushes))
		cs_log(CS_LOG_WARN, "%s: the file ends inside %zu unfinished kernel(s), not imported: %s "
		       "(cut off?); the %zu finished kernel(s) were", label, unfinished, names, done);
	cs_log(CS_LOG_INFO, "%s: %s accounting: %s; %zu blocks, %zu kernels, %zu stats", label,
	       a->per_kernel ? "per-kernel" : a->have_dones ? "interval" : "block",
	       a->per_kernel ? "each block is its finishing kernel's own statistics "
			       "(gpu_tot_sim_cycle does not advance by gpu_sim_cycle)"
	       : a->have_dones ? "each block covers the cycles since the previous one; kernels "
				 "span their launch to their completion"
			       : "one kernel per block", a->nbl, done, a->nst);
	return rc;
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
	a->pending_start = NAN;
	cs_textin_stats st;
	/* Pass 1: every stat's name (the old stdout form prints non-zero
	 * values only, so a stat may first appear in a later block; knowing
	 * every name first lets each row say 0 for it) and the structure. */
	a->collect = 1;
	int rc = cs_textin_lines(buf, len, label, on_line, a, NULL, NULL, &st, err, errlen);
	a->collect = 0;
	a->in_kernel = 0;
	if (rc == 0 && a->pend_err[0]) {
		cs_log(CS_LOG_WARN, "%s:%" PRIu64 ": the file ends inside this line (%s): ignored",
		       label, a->pend_line, a->pend_err);
		a->pend_err[0] = '\0';
	}
	size_t nst1 = a->nst;
	if (rc == 0 && !a->nbl)
		rc = fail(a, "no 'kernel_name = ' line: not an Accel-Sim/GPGPU-Sim stdout log with "
			  "per-kernel statistics");
	if (rc == 0)
		rc = analyse(a);
	if (rc == 0 && !a->nbl)
		rc = fail(a, "the file ends inside its first statistics block: nothing to import");
	if (rc == 0 && a->per_kernel) {
		a->rows = malloc((a->nbl * (a->nst ? a->nst : 1)) * sizeof *a->rows);
		a->order = malloc(a->nbl * sizeof *a->order);
		if (!a->rows || !a->order)
			rc = fail(a, "out of memory keeping %zu blocks to order them", a->nbl);
	}
	char extra[512];
	int n = snprintf(extra, sizeof extra, "\"kernel_accounting\":\"%s\"",
			 a->per_kernel ? "per-kernel" : a->have_dones ? "interval" : "block");
	if (a->have_clocks)
		snprintf(extra + n, sizeof extra - (size_t)n, ",\"clock_domains_hz\":{\"core\":%.0f,"
			 "\"icnt\":%.0f,\"l2\":%.0f,\"dram\":%.0f}", a->clocks[0], a->clocks[1],
			 a->clocks[2], a->clocks[3]);
	if (rc == 0 && !(a->run = cs_simrun_open(p, o, "accelsim-log", "sim", "cycle",
						 a->have_clocks ? a->clocks[0] : 0, extra, err,
						 errlen)))
		rc = -EIO;
	/* Pass 2: the values. */
	if (rc == 0)
		rc = cs_textin_lines(buf, len, label, on_line, a, o->progress, o->progress_ctx, &st,
				     err, errlen);
	if (rc == 0)
		rc = end_block(a);
	if (rc == 0 && a->nst != nst1)
		rc = fail(a, "the second pass found %zu stats, the first %zu", a->nst, nst1);
	if (rc == 0)
		rc = finish(a);
	rc = cs_simrun_finish(a->run, p, rc, label, err, errlen);
	for (size_t i = 0; i < a->nst; i++) {
		free(a->st[i].name);
		free(a->st[i].slast);
	}
	for (size_t i = 0; i < a->nbl; i++)
		free(a->bl[i].names);
	for (size_t i = 0; i < a->nkn; i++)
		free(a->kn[i].name);
	free(a->st);
	free(a->bl);
	free(a->kn);
	free(a->done_pending);
	free(a->uid_hash);
	free(a->rows);
	free(a->order);
	free(a);
	return rc;
}
