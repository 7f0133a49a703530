/*
 * aerialvision.c - the visualizer log importer (aerialvision.h).
 *
 * A sample's lines are parsed into (metric, value) pairs as they come;
 * the sample's time is only known at its globalcyclecount line and it
 * ends at STmemlatdist, so the pairs are kept until then and written as
 * one row. Cumulative series keep their previous raw value (by series
 * name, including per-bank ones that are not stored) to become deltas.
 *
 * Running totals where per-window values are expected: some builds print
 * the L2 counters (Ltworeadhit and friends) as totals over the run. The
 * first DETECT samples are held back; a windowed scalar that never
 * decreases over them (at least 8, and it grows at least 3 times) while
 * other per-window counters go down is taken as cumulative, said on stderr,
 * and stored as per-sample deltas from then on (held samples included).
 * --cumulative NAME,... forces it, --per-window turns the check off.
 */
#include "aerialvision.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "simrun.h"
#include "text.h"
#include "textin.h"

#define MAX_VALUES 65536

enum key_kind {
	K_SKIP,       /* CFLog: PC histograms, not a time series */
	K_SM_WINDOW,  /* per-SM array, value as is (ShdrCTACount) */
	K_SM_CUMUL,   /* per-SM array, cumulative */
	K_CH_SUM,     /* "<ch> <v>", windowed counts: total = sum */
	K_CH_MEAN,    /* "<ch> <v>", windowed ratios: total = mean */
	K_BANK_CUMUL, /* "<ch> <bank> <v>", cumulative */
	K_ARRAY,      /* breakdown array, windowed: NAME[i] */
	K_WARPDIV,    /* WarpDivergenceBreakdown: named bins */
	K_SCALAR,     /* windowed scalar */
	K_SCALAR_CUMUL,
	K_CYCLE,      /* globalcyclecount */
	K_END,        /* STmemlatdist: an array, and the sample's end */
	K_UNKNOWN,
};

static const struct {
	const char *key;
	int kind;
	const char *unit;
} keys[] = {
	{"ShdrCTACount", K_SM_WINDOW, "cta"},
	{"shaderinsncount", K_SM_CUMUL, "thread_inst"},
	{"shaderwarpinsncount", K_SM_CUMUL, "warp_inst"},
	{"shaderwarpdiv", K_SM_CUMUL, "divergence"},
	{"dramncmd", K_CH_SUM, "command"},
	{"dramnop", K_CH_SUM, "command"},
	{"dramnact", K_CH_SUM, "command"},
	{"dramnpre", K_CH_SUM, "command"},
	{"dramnreq", K_CH_SUM, "request"},
	{"dramavemrqs", K_CH_MEAN, "request"},
	{"dramutil", K_CH_MEAN, "percent"},
	{"drameff", K_CH_MEAN, "percent"},
	{"dramglobal_acc_r", K_BANK_CUMUL, "dram_atom"},
	{"dramglobal_acc_w", K_BANK_CUMUL, "dram_atom"},
	{"dramlocal_acc_r", K_BANK_CUMUL, "dram_atom"},
	{"dramlocal_acc_w", K_BANK_CUMUL, "dram_atom"},
	{"dramconst_acc_r", K_BANK_CUMUL, "dram_atom"},
	{"dramtexture_acc_r", K_BANK_CUMUL, "dram_atom"},
	{"WarpDivergenceBreakdown", K_WARPDIV, "cycle"},
	{"WarpIssueSlotBreakdown", K_ARRAY, "warp_inst"},
	{"WarpIssueDynamicIdBreakdown", K_ARRAY, "warp_inst"},
	{"LDmemlatdist", K_ARRAY, "cycle"},
	{"STmemlatdist", K_END, "cycle"},
	{"ctas_completed", K_SCALAR, "cta"},
	{"Ltwowritemiss", K_SCALAR, "access"},
	{"Ltwowritehit", K_SCALAR, "access"},
	{"Ltworeadmiss", K_SCALAR, "access"},
	{"Ltworeadhit", K_SCALAR, "access"},
	{"averagemflatency", K_SCALAR, "cycle"},
	{"gpgpu_n_l1cache_bkconflict", K_SCALAR_CUMUL, "conflict"},
	{"gpgpu_n_cache_bkconflict", K_SCALAR_CUMUL, "conflict"},
	{"gpgpu_n_shmem_bkconflict", K_SCALAR_CUMUL, "conflict"},
	{"globalcyclecount", K_CYCLE, "cycle"},
	{"globalinsncount", K_SCALAR_CUMUL, "thread_inst"},
	{"globaltotinsncount", K_SCALAR_CUMUL, "thread_inst"},
};

/* A string -> index table (open addressing), for series' previous raw
 * values and the metric cache. */
typedef struct strtab {
	char **names;
	int *slot;
	size_t n, cap, hcap;
} strtab;

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int strtab_get(strtab *t, const char *name, int *created)
{
	if (t->hcap) {
		for (size_t i = fnv(name) & (t->hcap - 1);; i = (i + 1) & (t->hcap - 1)) {
			if (!t->slot[i])
				break;
			if (!strcmp(t->names[t->slot[i] - 1], name)) {
				*created = 0;
				return t->slot[i] - 1;
			}
		}
	}
	if ((t->n + 1) * 2 > t->hcap) {
		size_t hc = t->hcap ? t->hcap * 2 : 256;
		int *slot = calloc(hc, sizeof *slot);
		if (!slot)
			return -ENOMEM;
		for (size_t k = 0; k < t->n; k++) {
			size_t i = fnv(t->names[k]) & (hc - 1);
			while (slot[i])
				i = (i + 1) & (hc - 1);
			slot[i] = (int)k + 1;
		}
		free(t->slot);
		t->slot = slot;
		t->hcap = hc;
	}
	if (t->n == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 256;
		char **g = realloc(t->names, c * sizeof *g);
		if (!g)
			return -ENOMEM;
		t->names = g;
		t->cap = c;
	}
	if (!(t->names[t->n] = strdup(name)))
		return -ENOMEM;
	size_t i = fnv(name) & (t->hcap - 1);
	while (t->slot[i])
		i = (i + 1) & (t->hcap - 1);
	t->slot[i] = (int)t->n + 1;
	*created = 1;
	return (int)t->n++;
}

static void strtab_free(strtab *t)
{
	for (size_t k = 0; k < t->n; k++)
		free(t->names[k]);
	free(t->names);
	free(t->slot);
}

typedef struct pair {
	int metric;
	double v;
	int add; /* sum into the metric (totals) rather than set */
} pair;

/* What one line of a sample does, learned the first time a line of that
 * shape (same key, value count, channel and bank) is seen at that
 * position in a sample: which values (raw or differenced through a
 * cumulative series' slot) go into which metrics. Every later sample
 * replays it without building a name or looking one up. */
typedef struct lval {
	int src;   /* index into the line's numbers */
	int dslot; /* cumulative series slot, -1 = the value as is */
} lval;

typedef struct lop {
	int val;
	int metric;
	int add;
} lop;

typedef struct lprog {
	char key[64];
	int unknown; /* learned from an unknown key */
	size_t nvals;
	double ch, bank;
	int mean_key; /* K_CH_MEAN key index, -1 */
	int valid;
	lval *v;
	size_t nv, capv;
	lop *op;
	size_t nop, capop;
} lprog;

typedef struct av {
	cs_imp im; /* first: options, label, error buffer, line */
	cs_simrun *run;
	/* cumulative series: name -> previous raw value */
	strtab prev_names;
	double *prev;
	/* the sample being read */
	pair *pairs;
	size_t npairs, cappairs;
	int have_cycle;
	uint64_t cycle;
	unsigned chan_count[64]; /* per K_CH_MEAN key seen this sample */
	/* time axis */
	uint64_t offset, last_cycle, last_t1, kernel_t0;
	unsigned kernels, samples_in_kernel;
	uint64_t samples;
	long nsm;      /* SM count, from the first per-SM array */
	long channels; /* highest channel id + 1 */
	uint64_t first_period;
	unsigned unknown_reported; /* line shapes with unknown keys */
	uint64_t unknown_lines;    /* lines with unknown keys */
	/* running-total detection */
	int *cand;                 /* candidate metrics (windowed scalars) */
	size_t ncand, capcand;
	unsigned char *is_cum;     /* per metric: taken as a running total */
	size_t nmet;               /* its entries */
	int deciding;              /* holding samples back */
	struct held *held;
	size_t nheld;
	unsigned skipped_cflog;
	double vals[MAX_VALUES];
	size_t nvals;
	lprog *prog;        /* per line position within a sample */
	size_t nprog;
	size_t lix;         /* this line's position in the sample */
	lprog *cur;         /* the program being learned */
	double dv[MAX_VALUES];
} av;

#define fail(st, ...) cs_imp_fail(&(st)->im, __VA_ARGS__)

#define DETECT 64 /* samples held back to recognise running totals */

/* A sample held back: its span and what its row gets. */
typedef struct held {
	uint64_t t0, t1;
	pair *ops;
	size_t n;
} held;


/* Grows the per-metric flags to hold metric m. */
static int per_metric(av *a, int m)
{
	if ((size_t)m < a->nmet)
		return 0;
	size_t n = (size_t)m + 64;
	unsigned char *c = realloc(a->is_cum, n);
	if (!c)
		return -ENOMEM;
	memset(c + a->nmet, 0, n - a->nmet);
	a->is_cum = c;
	a->nmet = n;
	return 0;
}

static int metric(av *a, const char *name, const char *unit)
{
	int k = cs_simrun_metric(a->run, name, unit, NULL);
	if (k < 0)
		fail(a, "%s", cs_simrun_errmsg(a->run));
	return k;
}

/* The slot of a cumulative series (its previous raw value). */
static int delta_slot(av *a, const char *series)
{
	int created;
	int k = strtab_get(&a->prev_names, series, &created);
	if (k < 0)
		return k;
	if (created) {
		double *g = realloc(a->prev, a->prev_names.cap * sizeof *g);
		if (!g)
			return -ENOMEM;
		a->prev = g;
		a->prev[k] = 0;
	}
	return k;
}

/* The delta since the series' previous value; a value below it means the
 * counter restarted (a new kernel). */
static double delta_apply(av *a, int k, double v)
{
	double p = a->prev[k];
	a->prev[k] = v;
	return v >= p ? v - p : v;
}

/* Learning a line's program. */
static int val(av *a, int src, const char *series)
{
	lprog *g = a->cur;
	if (g->nv == g->capv) {
		size_t c = g->capv ? g->capv * 2 : 8;
		lval *n = realloc(g->v, c * sizeof *n);
		if (!n)
			return -ENOMEM;
		g->v = n;
		g->capv = c;
	}
	int slot = -1;
	if (series && (slot = delta_slot(a, series)) < 0)
		return slot;
	g->v[g->nv] = (lval){src, slot};
	return (int)g->nv++;
}

static int op(av *a, int v, int m, int add)
{
	if (v < 0)
		return v;
	if (m < 0)
		return m;
	lprog *g = a->cur;
	if (g->nop == g->capop) {
		size_t c = g->capop ? g->capop * 2 : 8;
		lop *n = realloc(g->op, c * sizeof *n);
		if (!n)
			return -ENOMEM;
		g->op = n;
		g->capop = c;
	}
	g->op[g->nop++] = (lop){v, m, add};
	return 0;
}

static int put(av *a, int m, double v, int add)
{
	if (m < 0)
		return m;
	if (a->npairs == a->cappairs) {
		size_t c = a->cappairs ? a->cappairs * 2 : 1024;
		pair *g = realloc(a->pairs, c * sizeof *g);
		if (!g)
			return -ENOMEM;
		a->pairs = g;
		a->cappairs = c;
	}
	a->pairs[a->npairs++] = (pair){m, v, add};
	return 0;
}

#define KEY_CFLOG (-2)

static int find_key(const char *key)
{
	if (!strncmp(key, "CFLog", 5))
		return KEY_CFLOG;
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		if (!strcmp(keys[i].key, key))
			return (int)i;
	return -1;
}

static const char *warpdiv_bin(size_t i, char *buf, size_t len)
{
	if (i == 0)
		return "W0_Idle";
	if (i == 1)
		return "W0_Scoreboard";
	if (i == 2)
		return "Stall";
	snprintf(buf, len, "W%zu_%zu", (i - 3) * 4 + 1, (i - 3) * 4 + 4);
	return buf;
}

/* Parses the numbers after the colon into a->vals. */
static int numbers(av *a, const char *key, char *s)
{
	a->nvals = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (a->nvals == MAX_VALUES)
			return fail(a, "more than %d values after %s", MAX_VALUES, key);
		char *end = s;
		double v;
		/* Most values are plain non-negative integers. */
		uint64_t x = 0;
		while (*end >= '0' && *end <= '9' && end - s < 18)
			x = x * 10 + (uint64_t)(*end++ - '0');
		if (end > s && (!*end || *end == ' ' || *end == '\t'))
			v = (double)x;
		else
			v = strtod(s, &end);
		if (end == s || (*end && *end != ' ' && *end != '\t')) {
			char shown[40];
			size_t n = strcspn(s, " \t");
			snprintf(shown, sizeof shown, "%.*s", (int)(n < 30 ? n : 30), s);
			return fail(a, "'%s' is not a number (in the values of %s)", shown, key);
		}
		if ((*s == 'n' || *s == 'N' || *s == '-') && (!strncasecmp(s, "nan", 3) || !strncasecmp(s, "-nan", 4)))
			v = NAN;
		a->vals[a->nvals++] = v;
		s = end;
	}
	return 0;
}

static int sm_count(av *a, const char *key)
{
	if (a->nsm < 0) {
		a->nsm = (long)a->nvals;
		return 0;
	}
	if ((long)a->nvals != a->nsm)
		return fail(a, "expected %ld values after %s (one per SM, as in the first "
			    "per-SM line), found %zu", a->nsm, key, a->nvals);
	return 0;
}

static int end_sample(av *a);

/* A windowed scalar metric whose values are checked for running totals. */
static int candidate(av *a, int m)
{
	if (m < 0 || a->im.o->per_window)
		return m < 0 ? m : 0;
	for (size_t i = 0; i < a->ncand; i++)
		if (a->cand[i] == m)
			return 0;
	if (a->ncand == a->capcand) {
		size_t c = a->capcand ? a->capcand * 2 : 16;
		int *g = realloc(a->cand, c * sizeof *g);
		if (!g)
			return -ENOMEM;
		a->cand = g;
		a->capcand = c;
	}
	a->cand[a->ncand++] = m;
	return per_metric(a, m);
}

/* A channel or bank number: a whole number in [0, 4096). */
static bool small_index(double v)
{
	return v >= 0 && v < 4096 && v == floor(v);
}

/* Builds the program for a line (the slow path, once per line shape). */
static int learn(av *a, const char *key, int ki, int kind)
{
	const char *unit = ki >= 0 ? keys[ki].unit : NULL;
	char name[256], series[256];
	int rc = 0;
	lprog *g = a->cur;
	switch (kind) {
	case K_SKIP:
		a->skipped_cflog++;
		return 0;
	case K_SM_WINDOW:
	case K_SM_CUMUL: {
		if ((rc = sm_count(a, key)))
			return rc;
		int total = metric(a, key, unit);
		for (size_t i = 0; i < a->nvals && rc == 0; i++) {
			snprintf(name, sizeof name, "%s.sm[%zu]", key, i);
			int v = val(a, (int)i, kind == K_SM_CUMUL ? name : NULL);
			rc = op(a, v, metric(a, name, unit), 0);
			if (rc == 0)
				rc = op(a, v, total, 1);
		}
		return rc;
	}
	case K_CH_SUM:
	case K_CH_MEAN: {
		if (a->nvals != 2 || !small_index(a->vals[0]))
			return fail(a, "expected '%s: <channel> <value>' with the channel a whole number "
				    "below 4096, found %zu numbers", key, a->nvals);
		long ch = (long)a->vals[0];
		if (ch + 1 > a->channels)
			a->channels = ch + 1;
		snprintf(name, sizeof name, "%s.ch[%ld]", key, ch);
		int v = val(a, 1, NULL);
		if ((rc = op(a, v, metric(a, name, unit), 0)))
			return rc;
		if (kind == K_CH_MEAN)
			g->mean_key = ki;
		return op(a, v, metric(a, key, unit), 1);
	}
	case K_BANK_CUMUL: {
		if (a->nvals != 3 || !small_index(a->vals[0]) || !small_index(a->vals[1]))
			return fail(a, "expected '%s: <channel> <bank> <value>' with channel and bank "
				    "whole numbers below 4096, found %zu numbers", key, a->nvals);
		long ch = (long)a->vals[0], bank = (long)a->vals[1];
		snprintf(series, sizeof series, "%s.ch[%ld].bank[%ld]", key, ch, bank);
		int v = val(a, 2, series);
		if (a->im.o->per_bank && (rc = op(a, v, metric(a, series, unit), 0)))
			return rc;
		snprintf(name, sizeof name, "%s.ch[%ld]", key, ch);
		if ((rc = op(a, v, metric(a, name, unit), 1)))
			return rc;
		return op(a, v, metric(a, key, unit), 1);
	}
	case K_WARPDIV:
	case K_ARRAY:
	case K_END:
		for (size_t i = 0; i < a->nvals && rc == 0; i++) {
			char bin[32];
			if (kind == K_WARPDIV)
				snprintf(name, sizeof name, "%s.%s", key, warpdiv_bin(i, bin, sizeof bin));
			else
				snprintf(name, sizeof name, "%s[%zu]", key, i);
			rc = op(a, val(a, (int)i, NULL), metric(a, name, unit), 0);
		}
		return rc;
	case K_SCALAR:
	case K_SCALAR_CUMUL: {
		if (a->nvals != 1)
			return fail(a, "expected one value after %s, found %zu", key, a->nvals);
		/* --cumulative names are differenced by simrun */
		int forced = kind == K_SCALAR && cs_list_has(a->im.o->cumulative, key);
		int m = metric(a, key, unit);
		if (kind == K_SCALAR && !forced && strcmp(key, "averagemflatency") &&
		    (rc = candidate(a, m)) < 0)
			return rc;
		return op(a, val(a, 0, kind == K_SCALAR_CUMUL ? key : NULL), m, 0);
	}
	default: /* K_UNKNOWN: kept, said once per line shape */
		g->unknown = 1;
		if (a->unknown_reported < 20)
			cs_log(CS_LOG_WARN, "%s:%llu: unknown key '%s' kept as a generic metric",
			       a->im.label, (unsigned long long)a->im.line, key);
		a->unknown_reported++;
		if (a->nvals == 1) {
			int m = metric(a, key, NULL);
			if (!cs_list_has(a->im.o->cumulative, key) && (rc = candidate(a, m)) < 0)
				return rc;
			return op(a, val(a, 0, NULL), m, 0);
		}
		for (size_t i = 0; i < a->nvals && rc == 0; i++) {
			snprintf(name, sizeof name, "%s[%zu]", key, i);
			rc = op(a, val(a, (int)i, NULL), metric(a, name, NULL), 0);
		}
		return rc;
	}
}

static int run_prog(av *a, const lprog *g)
{
	for (size_t i = 0; i < g->nv; i++) {
		double x = a->vals[g->v[i].src];
		a->dv[i] = g->v[i].dslot >= 0 ? delta_apply(a, g->v[i].dslot, x) : x;
	}
	for (size_t i = 0; i < g->nop; i++) {
		int rc = put(a, g->op[i].metric, a->dv[g->op[i].val], g->op[i].add);
		if (rc)
			return rc;
	}
	if (g->mean_key >= 0 && g->mean_key < 64)
		a->chan_count[g->mean_key]++;
	return 0;
}

static int key_line(av *a, const char *key, char *vals)
{
	int rc = numbers(a, key, vals);
	if (rc)
		return rc;
	size_t lix = a->lix++;
	if (lix < a->nprog) {
		lprog *g = &a->prog[lix];
		if (g->valid && g->nvals == a->nvals && !strcmp(g->key, key) &&
		    (a->nvals < 2 || (g->ch == a->vals[0] && (a->nvals < 3 || g->bank == a->vals[1])))) {
			a->unknown_lines += (uint64_t)g->unknown;
			if ((rc = run_prog(a, g)))
				return rc;
			return !strcmp(key, "STmemlatdist") ? end_sample(a) : 0;
		}
	}
	int ki = find_key(key);
	int kind = ki == KEY_CFLOG ? K_SKIP : ki < 0 ? K_UNKNOWN : keys[ki].kind;
	if (kind == K_CYCLE) {
		if (a->nvals != 1 || !(a->vals[0] >= 0) || a->vals[0] >= 9.2e18)
			return fail(a, "expected one cycle count (below 2^63) after globalcyclecount");
		a->cycle = (uint64_t)a->vals[0];
		a->have_cycle = 1;
		return 0;
	}
	/* Learn this line's program at its position (replacing another shape). */
	if (lix >= a->nprog) {
		size_t n = lix + 1 > a->nprog * 2 ? lix + 1 : a->nprog * 2;
		lprog *gr = realloc(a->prog, n * sizeof *gr);
		if (!gr)
			return -ENOMEM;
		memset(gr + a->nprog, 0, (n - a->nprog) * sizeof *gr);
		a->prog = gr;
		a->nprog = n;
	}
	lprog *g = &a->prog[lix];
	g->valid = 0;
	g->unknown = 0;
	g->nv = g->nop = 0;
	g->mean_key = -1;
	snprintf(g->key, sizeof g->key, "%s", key);
	g->nvals = a->nvals;
	g->ch = a->nvals >= 1 ? a->vals[0] : 0;
	g->bank = a->nvals >= 2 ? a->vals[1] : 0;
	a->cur = g;
	if ((rc = learn(a, key, ki, kind)))
		return rc;
	a->unknown_lines += (uint64_t)g->unknown;
	/* Only keys of at most 63 bytes can be matched again. */
	g->valid = strlen(key) < sizeof g->key;
	if ((rc = run_prog(a, g)))
		return rc;
	return kind == K_END ? end_sample(a) : 0;
}

static int close_kernel(av *a)
{
	if (!a->kernels)
		return 0;
	char name[64];
	snprintf(name, sizeof name, "kernel %u", a->kernels);
	cs_range r;
	cs_range_init(&r, "sim-kernel", name, a->kernel_t0, a->last_t1);
	r.device = 0;
	int rc = cs_simrun_range(a->run, &r);
	return rc < 0 ? fail(a, "%s", cs_simrun_errmsg(a->run)) : 0;
}

/* Writes one row. */
static int emit(av *a, uint64_t t0, uint64_t t1, const pair *ops, size_t n)
{
	if (cs_simrun_row(a->run, t0, t1) < 0)
		return fail(a, "%s", cs_simrun_errmsg(a->run));
	for (size_t i = 0; i < n; i++) {
		if (ops[i].add)
			cs_simrun_add(a->run, ops[i].metric, ops[i].v);
		else
			cs_simrun_set(a->run, ops[i].metric, ops[i].v);
	}
	return 0;
}

/* After the held samples (or at the end, when fewer): which windowed
 * scalars are running totals; then the held samples are written. */
static int decide(av *a)
{
	a->deciding = 0;
	/* Other counters that go down: evidence of per-window values. */
	int others_drop = 0;
	for (size_t h = 1; h < a->nheld && !others_drop; h++)
		for (size_t i = 0; i < a->held[h].n && !others_drop; i++) {
			const pair *q = &a->held[h].ops[i];
			if (q->add)
				continue;
			int cand = 0;
			for (size_t c = 0; c < a->ncand; c++)
				cand |= a->cand[c] == q->metric;
			for (size_t j = 0; !cand && j < a->held[h - 1].n; j++)
				if (a->held[h - 1].ops[j].metric == q->metric && !a->held[h - 1].ops[j].add) {
					others_drop |= q->v < a->held[h - 1].ops[j].v;
					break;
				}
		}
	for (size_t c = 0; others_drop && a->nheld >= 8 && c < a->ncand; c++) {
		int m = a->cand[c];
		double prev = NAN;
		size_t seen = 0, ups = 0, downs = 0;
		for (size_t h = 0; h < a->nheld; h++)
			for (size_t i = 0; i < a->held[h].n; i++)
				if (a->held[h].ops[i].metric == m && !a->held[h].ops[i].add) {
					double v = a->held[h].ops[i].v;
					if (isnan(v))
						break;
					if (!isnan(prev)) {
						ups += v > prev;
						downs += v < prev;
					}
					prev = v;
					seen++;
					break;
				}
		if (seen >= 8 && !downs && ups >= 3) {
			a->is_cum[m] = 1;
			cs_simrun_cumulative(a->run, m);
			char name[256];
			if (cs_simrun_metric_name(a->run, m, name, sizeof name) < 0)
				snprintf(name, sizeof name, "metric %d", m);
			cs_log(CS_LOG_WARN, "%s: %s looks cumulative (it never decreases over the first %zu "
			       "samples while other per-window counters do): stored as per-sample deltas; "
			       "--per-window keeps it as printed", a->im.label, name, seen);
		}
	}
	int rc = 0;
	for (size_t h = 0; h < a->nheld; h++) {
		if (rc == 0)
			rc = emit(a, a->held[h].t0, a->held[h].t1, a->held[h].ops, a->held[h].n);
		free(a->held[h].ops);
	}
	free(a->held);
	a->held = NULL;
	a->nheld = 0;
	return rc;
}

/* Holds a sample back while running totals are being recognised. */
static int hold(av *a, uint64_t t0, uint64_t t1)
{
	if (!a->held && !(a->held = calloc(DETECT, sizeof *a->held)))
		return -ENOMEM;
	held *h = &a->held[a->nheld];
	if (!(h->ops = malloc((a->npairs + 1) * sizeof *h->ops)))
		return -ENOMEM;
	memcpy(h->ops, a->pairs, a->npairs * sizeof *h->ops);
	h->n = a->npairs;
	h->t0 = t0;
	h->t1 = t1;
	return ++a->nheld == DETECT ? decide(a) : 0;
}

static int end_sample(av *a)
{
	if (!a->have_cycle)
		return fail(a, "sample %llu ended (STmemlatdist) without a globalcyclecount line",
			    (unsigned long long)a->samples + 1);
	int rc;
	/* A cycle count that does not increase starts the next kernel. */
	if (!a->samples || a->cycle <= a->last_cycle) {
		if ((rc = close_kernel(a)))
			return rc;
		a->offset = a->last_t1;
		a->kernel_t0 = a->last_t1;
		a->kernels++;
		a->samples_in_kernel = 0;
		a->last_cycle = 0;
	}
	if (!a->first_period)
		a->first_period = a->cycle;
	uint64_t t0 = a->offset + a->last_cycle, t1 = a->offset + a->cycle;
	/* Ratio totals are means over the channels that reported: one more
	 * op, setting the mean. */
	size_t nops = a->npairs;
	for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
		if (keys[k].kind != K_CH_MEAN || !a->chan_count[k])
			continue;
		int m = metric(a, keys[k].key, keys[k].unit);
		double sum = 0;
		int any = 0;
		for (size_t i = 0; i < nops; i++)
			if (a->pairs[i].metric == m && a->pairs[i].add) {
				sum += a->pairs[i].v;
				any = 1;
			}
		if (any && (rc = put(a, m, sum / a->chan_count[k], 0)))
			return rc;
	}
	if ((rc = a->deciding ? hold(a, t0, t1) : emit(a, t0, t1, a->pairs, a->npairs)))
		return rc;
	memset(a->chan_count, 0, sizeof a->chan_count);
	a->lix = 0;
	a->npairs = 0;
	a->have_cycle = 0;
	a->last_cycle = a->cycle;
	a->last_t1 = t1;
	a->samples++;
	a->samples_in_kernel++;
	return 0;
}

static int on_line(void *ctx, char *line, size_t len, uint64_t lineno)
{
	av *a = ctx;
	a->im.line = lineno;
	while (len && isspace((unsigned char)line[len - 1]))
		line[--len] = '\0';
	if (!len)
		return 0;
	char *colon = strchr(line, ':');
	if (!colon) {
		char shown[48];
		snprintf(shown, sizeof shown, "%.40s", line);
		return fail(a, "expected 'key: values', found '%s'", shown);
	}
	*colon = '\0';
	char *key = line;
	while (*key == ' ')
		key++;
	size_t kl = strlen(key);
	while (kl && key[kl - 1] == ' ')
		key[--kl] = '\0';
	if (!kl || strlen(key) > 200)
		return fail(a, "expected a key before ':'");
	for (const char *c = key; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return fail(a, "'%s' is not a visualizer key (letters, digits, '_')", key);
	return key_line(a, key, colon + 1);
}

int cs_av_sniff(const char *text)
{
	return strstr(text, "globalcyclecount:") || strstr(text, "ShdrCTACount:") ||
	       (!strncmp(text, "CFLog", 5) && strchr(text, ':'));
}

int cs_import_aerialvision(cs_producer *p, const char *buf, size_t len,
			   const cs_import_opts *o, char *err, size_t errlen)
{
	const char *label = o->label ? o->label : "input";
	av *a = calloc(1, sizeof *a);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cs_imp_init(&a->im, o, err, errlen);
	a->nsm = -1;
	a->deciding = !o->per_window;
	a->run = cs_simrun_open(p, o, "aerialvision", "sim", "cycle", 0, NULL, err, errlen);
	int rc = a->run ? 0 : -EIO;
	cs_textin_stats st;
	if (rc == 0)
		rc = cs_textin_lines(buf, len, label, on_line, a, o->progress, o->progress_ctx, &st,
				     err, errlen);
	if (rc == 0 && a->npairs) /* a last sample without its STmemlatdist line */
		rc = fail(a, "the file ends inside sample %llu (no STmemlatdist line): truncated?",
			  (unsigned long long)a->samples + 1);
	if (rc == 0 && !a->samples)
		rc = fail(a, "no complete visualizer sample (globalcyclecount ... STmemlatdist)");
	if (rc == 0 && a->deciding)
		rc = decide(a);
	if (rc == 0)
		rc = close_kernel(a);
	if (rc == 0) {
		cs_log(CS_LOG_INFO, "%s: %llu samples, %u kernels, %ld SMs, %ld DRAM channels, "
		       "every %llu cycles", label, (unsigned long long)a->samples, a->kernels,
		       a->nsm, a->channels, (unsigned long long)a->first_period);
		if (a->unknown_lines)
			cs_log(CS_LOG_WARN, "%s: %llu lines with unknown keys were kept as generic metrics",
			       label, (unsigned long long)a->unknown_lines);
		/* a running total restarts at most once per kernel */
		cs_simrun_restarts(a->run, a->kernels);
	}
	rc = cs_simrun_finish(a->run, p, rc, label, err, errlen);
	for (size_t i = 0; i < a->nprog; i++) {
		free(a->prog[i].v);
		free(a->prog[i].op);
	}
	free(a->prog);
	strtab_free(&a->prev_names);
	for (size_t h = 0; h < a->nheld; h++)
		free(a->held[h].ops);
	free(a->held);
	free(a->cand);
	free(a->is_cum);
	free(a->prev);
	free(a->pairs);
	free(a);
	return rc;
}
