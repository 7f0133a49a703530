/*
 * kineto.c - PyTorch profiler (Kineto) Chrome-trace JSON (kineto.h).
 *
 * yajl hands the document over token by token; a small state machine keeps
 * the place (the top object's member, an event, its args) and fills one
 * event at a time. Ranges are held (names interned) until the end, since
 * baseTimeNanoseconds, which their times count from, comes last.
 */
#define _GNU_SOURCE /* memmem */
#include "kineto.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <pthread.h>

#include <yajl/yajl_parse.h>

#include "buf.h"
#include "json.h"
#include "log.h"
#include "simrun.h"
#include "strmap.h"
#include "textin.h"

enum top { T_OTHER, T_EVENTS, T_DEVPROPS, T_DIST, T_BASE };
enum evkey { E_OTHER, E_PH, E_CAT, E_NAME, E_PID, E_TID, E_TS, E_DUR, E_ARGS };
enum argkey { A_OTHER, A_DEVICE, A_STREAM, A_CORR, A_BYTES, A_GRID, A_BLOCK, A_KEEP };
enum kind { K_SKIP, K_API, K_KERNEL, K_MEMCPY, K_MEMSET, K_NVTX, K_NKIND };
static const char *const kind_names[K_NKIND] = {"", "api", "kernel", "memcpy", "memset", "nvtx"};

/* Categories stored, and what they become. */
#define CAT(name, kind) {name, sizeof name - 1, kind}
static const struct {
	const char *cat;
	size_t len;
	int kind;
} cats[] = {
	CAT("kernel", K_KERNEL),	 CAT("gpu_memcpy", K_MEMCPY),
	CAT("gpu_memset", K_MEMSET),	 CAT("cuda_runtime", K_API),
	CAT("cuda_driver", K_API),	 CAT("user_annotation", K_NVTX),
	CAT("gpu_user_annotation", K_NVTX), CAT("memcpy", K_MEMCPY),
	CAT("memset", K_MEMSET),	 CAT("runtime", K_API),
	CAT("driver", K_API),
};
#undef CAT

/* An NCCL kernel's collective fields kept in args (PyTorch 2.x). */
#define KEPT(name) {name, sizeof name - 1}
static const struct {
	const char *key;
	size_t len;
} kept_args[] = {
	KEPT("Collective name"), KEPT("Seq"), KEPT("Process Group Name"), KEPT("Group size"),
	KEPT("In msg nelems"), KEPT("Out msg nelems"), KEPT("dtype"),
};
#undef KEPT

typedef struct krange {
	int64_t t0, dur;  /* ns, t0 from the base */
	int64_t device, stream, corr, pid, tid, bytes;
	const char *name; /* interned: the map's copy, stable */
	int64_t args;     /* offset into its block's args, -1 none */
	uint8_t kind;
} krange;

/* Ranges in blocks that never move, so that a writer can read finished
 * blocks while the parser fills the next. */
#define BLOCK 8192
#define AHEAD 16 /* blocks the parser may run ahead of the writer */
typedef struct kblock {
	krange r[BLOCK];
	size_t n;
	cs_buf args;
} kblock;

/* The event being read. */
typedef struct event {
	int ph;              /* first byte of "ph", 0 when absent */
	int kind;            /* from cat; -1 when cat absent */
	char cat[40];
	cs_buf name;
	int have_ts, have_dur;
	int64_t ts, dur;
	int64_t pid, tid, device, stream, corr, bytes;
	int64_t grid[3], block[3];
	int ngrid, nblock;
	cs_buf keep;         /* kept args as JSON members, "," separated */
} event;

typedef struct kineto {
	cs_imp im;
	yajl_handle y;
	int depth;
	int top;             /* the top-level member being read */
	int evkey, argkey;
	int in_dev;          /* inside one deviceProperties object */
	int keep_idx;        /* kept arg being read */
	event ev;
	uint64_t nevents;    /* traceEvents entries */
	uint64_t nr;         /* ranges kept */
	cs_strmap names;
	const char *last_name[K_NKIND]; /* the last name interned, by kind */
	size_t last_len[K_NKIND];
	char **name_list;
	size_t nnames, capnames;
	/* ranges, and the hand-over to the writer (stream mode) */
	kblock **blocks;
	size_t nblocks, capblocks;
	size_t published;    /* blocks complete and visible to the writer */
	size_t consumed;     /* blocks the writer has stored (and freed) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int streaming;       /* the writer stores while the parser reads */
	int began;           /* traceEvents reached: the header is known */
	int parsed;          /* the parser is done, parse_rc its result */
	int parse_rc;
	int stop;            /* the writer failed: the parser stops */
	int late;            /* stream mode's guesses were wrong: read again */
	int64_t assumed_base;
	/* metadata */
	int have_base;
	int64_t base;
	cs_buf dist;         /* distributedInfo's scalar members */
	cs_buf labels;       /* "rank":"0",... */
	char devkey[32];
	int64_t dev_id, dev_sms;
	char dev_name[128];
	cs_device_info devs[64];
	char dev_names[64][128];
	size_t ndevs;
	uint64_t per_cat[16];
	char other_cats[8][40];
	uint64_t other_n[8];
	size_t nother;
	uint64_t flows;
	char why[300];       /* a callback's reason for stopping the parse */
} kineto;

/* --- numbers ----------------------------------------------------------- */

/* Microseconds as decimal text to ns: exact to three decimals, the rest
 * rounded half away from zero. 0, or -1 when not a number in range. */
static int us_to_ns(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	uint64_t ip = 0;
	size_t digits = 0;
	for (; i < n && isdigit((unsigned char)s[i]); i++, digits++) {
		if (ip > (UINT64_MAX - 9) / 10)
			return -1;
		ip = ip * 10 + (uint64_t)(s[i] - '0');
	}
	uint64_t frac = 0;
	int fd = 0, round = 0;
	if (i < n && s[i] == '.') {
		for (i++; i < n && isdigit((unsigned char)s[i]); i++, fd++) {
			if (fd < 3)
				frac = frac * 10 + (uint64_t)(s[i] - '0');
			else if (fd == 3)
				round = s[i] >= '5';
		}
		digits += (size_t)fd;
	}
	if (!digits)
		return -1;
	if (i < n) { /* an exponent: through a double */
		char tmp[64];
		if (n >= sizeof tmp)
			return -1;
		memcpy(tmp, s, n);
		tmp[n] = '\0';
		char *end;
		double v = strtod(tmp, &end) * 1e3;
		if (*end || !isfinite(v) || fabs(v) >= 9.2e18)
			return -1;
		*out = (int64_t)llround(v);
		return 0;
	}
	for (int k = fd; k < 3; k++)
		frac *= 10;
	if (ip > (uint64_t)INT64_MAX / 1000 - 1)
		return -1;
	int64_t v = (int64_t)(ip * 1000 + frac) + round;
	*out = neg ? -v : v;
	return 0;
}

/* An integer, or the trailing digits of a string ("stream 7"); -1 none. */
static int64_t int_of(const char *s, size_t n)
{
	if (n && n <= 18) { /* the usual case: digits only */
		int64_t v = 0;
		size_t i = 0;
		while (i < n && (unsigned)(s[i] - '0') < 10)
			v = v * 10 + (s[i++] - '0');
		if (i == n)
			return v;
	}
	size_t e = n;
	while (e && isspace((unsigned char)s[e - 1]))
		e--;
	size_t b = e;
	while (b && isdigit((unsigned char)s[b - 1]))
		b--;
	if (b == e || e - b > 18)
		return -1;
	int64_t v = 0;
	for (size_t i = b; i < e; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

static int stop(kineto *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int stop(kineto *k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(k->why, sizeof k->why, fmt, ap);
	va_end(ap);
	return 0; /* yajl: cancel */
}

/* --- one event ----------------------------------------------------------- */

static void event_reset(event *e)
{
	e->ph = 0;
	e->kind = -1;
	e->cat[0] = '\0';
	e->name.len = 0;
	e->keep.len = 0;
	e->have_ts = e->have_dur = 0;
	e->pid = e->tid = e->device = e->stream = e->corr = e->bytes = -1;
	e->ngrid = e->nblock = 0;
}

static int kind_of(const char *cat, size_t n)
{
	for (size_t i = 0; i < sizeof cats / sizeof *cats; i++)
		if (cats[i].len == n && !strcasecmp(cats[i].cat, cat))
			return cats[i].kind;
	return K_SKIP;
}

static void count_other(kineto *k, const char *cat)
{
	for (size_t i = 0; i < k->nother; i++)
		if (!strcmp(k->other_cats[i], cat)) {
			k->other_n[i]++;
			return;
		}
	if (k->nother < 8) {
		snprintf(k->other_cats[k->nother], sizeof k->other_cats[0], "%s", cat);
		k->other_n[k->nother++] = 1;
	}
}

static int intern(kineto *k, int kind, const char *name, size_t len, const char **out)
{
	/* the last name of each kind first: runs of the same kernel or call
	 * are common, and a compare is cheaper than a hash */
	const char *last = k->last_name[kind];
	if (last && k->last_len[kind] == len && !memcmp(last, name, len)) {
		*out = last;
		return 0;
	}
	size_t v = cs_strmap_get(&k->names, name);
	if (v == SIZE_MAX) {
		if (k->nnames == k->capnames) {
			size_t cap = k->capnames ? k->capnames * 2 : 256;
			char **g = realloc(k->name_list, cap * sizeof *g);
			if (!g)
				return -ENOMEM;
			k->name_list = g;
			k->capnames = cap;
		}
		char *copy = strdup(name);
		if (!copy || cs_strmap_put(&k->names, name, k->nnames) < 0) {
			free(copy);
			return -ENOMEM;
		}
		v = k->nnames;
		k->name_list[k->nnames++] = copy;
	}
	/* its own length: a name with a NUL in it never matches it */
	*out = k->last_name[kind] = k->name_list[v];
	k->last_len[kind] = strlen(*out);
	return 0;
}

/* Makes the blocks up to the current one visible to the writer. */
static void publish(kineto *k, size_t upto)
{
	pthread_mutex_lock(&k->mu);
	k->published = upto;
	pthread_cond_broadcast(&k->cv);
	pthread_mutex_unlock(&k->mu);
}

/* A block with room: the current one, or a new one once the current is
 * full (handed over; in stream mode waiting while the writer is AHEAD
 * blocks behind). NULL when out of memory or the writer stopped. */
static kblock *room(kineto *k)
{
	if (k->nblocks && k->blocks[k->nblocks - 1]->n < BLOCK)
		return k->blocks[k->nblocks - 1];
	if (k->nblocks)
		publish(k, k->nblocks);
	kblock *b = malloc(sizeof *b);
	if (!b)
		return NULL;
	b->n = 0;
	b->args = (cs_buf)CS_BUF_INIT;
	pthread_mutex_lock(&k->mu);
	while (k->streaming && !k->stop && k->nblocks - k->consumed >= AHEAD)
		pthread_cond_wait(&k->cv, &k->mu);
	int ok = !k->stop;
	if (ok && k->nblocks == k->capblocks) {
		size_t cap = k->capblocks ? k->capblocks * 2 : 64;
		kblock **g = realloc(k->blocks, cap * sizeof *g);
		if (g) {
			k->blocks = g;
			k->capblocks = cap;
		}
		ok = g != NULL;
	}
	if (ok)
		k->blocks[k->nblocks++] = b;
	pthread_mutex_unlock(&k->mu);
	if (!ok)
		free(b);
	return ok ? b : NULL;
}

static void put_triple(cs_buf *b, const char *key, const int64_t *v, int n)
{
	cs_json_raw(b, b->len ? ",\"" : "{\"");
	cs_json_raw(b, key);
	cs_json_raw(b, "\":[");
	for (int i = 0; i < n; i++) {
		if (i)
			cs_json_raw(b, ",");
		cs_json_i64(b, v[i]);
	}
	cs_json_raw(b, "]");
}

static int end_event(kineto *k)
{
	event *e = &k->ev;
	k->nevents++;
	if (e->ph == 's' || e->ph == 'f' || e->ph == 't') {
		k->flows++;
		return 1;
	}
	int complete = e->ph == 'X' || (!e->ph && e->have_dur);
	if (!complete || e->kind < 0)
		return 1; /* instants, metadata, counters: nothing to store */
	if (e->kind == K_SKIP) {
		count_other(k, e->cat);
		return 1;
	}
	if (!e->have_ts || !e->have_dur)
		return stop(k, "event %" PRIu64 " (%s \"%.*s\"): expected \"ts\" and \"dur\"",
			    k->nevents, e->cat, (int)(e->name.len < 80 ? e->name.len : 80),
			    e->name.len ? (const char *)e->name.data : "");
	if (e->dur < 0)
		return stop(k, "event %" PRIu64 " (%s): \"dur\" is negative", k->nevents, e->cat);
	kblock *blk = room(k);
	if (!blk)
		return stop(k, "out of memory, or the store failed");
	krange *r = &blk->r[blk->n];
	size_t nlen = e->name.len;
	cs_buf_put_u8(&e->name, 0);
	if (intern(k, e->kind, (const char *)e->name.data, nlen, &r->name) < 0)
		return stop(k, "out of memory");
	r->kind = (uint8_t)e->kind;
	r->t0 = e->ts;
	r->dur = e->dur;
	r->pid = e->pid;
	r->tid = e->tid;
	r->device = e->device;
	/* A GPU event's tid is its stream when args do not say. */
	r->stream = e->stream >= 0 ? e->stream
		    : e->kind == K_KERNEL || e->kind == K_MEMCPY || e->kind == K_MEMSET ? e->tid : -1;
	r->corr = e->corr;
	r->bytes = e->bytes;
	r->args = -1;
	if (e->ngrid || e->nblock || e->keep.len) {
		cs_buf a = CS_BUF_INIT;
		if (e->ngrid)
			put_triple(&a, "grid", e->grid, e->ngrid);
		if (e->nblock)
			put_triple(&a, "block", e->block, e->nblock);
		if (e->keep.len) {
			cs_json_raw(&a, a.len ? "," : "{");
			cs_buf_append(&a, e->keep.data, e->keep.len);
		}
		cs_json_raw(&a, "}");
		r->args = (int64_t)blk->args.len;
		cs_buf_append(&blk->args, a.data, a.len);
		cs_buf_put_u8(&blk->args, 0);
		cs_buf_free(&a);
	}
	k->per_cat[e->kind]++;
	blk->n++;
	k->nr++;
	return 1;
}

/* --- yajl callbacks ------------------------------------------------------ */

static int on_scalar(kineto *k, const char *s, size_t n, int is_str)
{
	if (k->depth == 1) {
		if (k->top == T_BASE && !is_str) {
			char tmp[32];
			if (n >= sizeof tmp)
				return stop(k, "baseTimeNanoseconds: expected an integer");
			memcpy(tmp, s, n);
			tmp[n] = '\0';
			char *end;
			errno = 0;
			long long v = strtoll(tmp, &end, 10);
			if (*end || errno || v < 0)
				return stop(k, "baseTimeNanoseconds: expected a non-negative integer, "
					    "found %s", tmp);
			k->base = v;
			k->have_base = 1;
			if (k->streaming && v != k->assumed_base)
				k->late = 1; /* the ranges stored so far count from another origin */
		}
		return 1;
	}
	if (k->top == T_DIST && k->depth == 2) {
		/* rank, world_size, backend, nccl_version...: scalars kept */
		const char *key = k->devkey;
		cs_json_raw(&k->dist, k->dist.len ? "," : "");
		cs_json_str(&k->dist, key);
		cs_json_raw(&k->dist, ":");
		if (is_str)
			cs_json_strn(&k->dist, s, n);
		else
			cs_buf_append(&k->dist, s, n);
		if (!strcmp(key, "rank") || !strcmp(key, "world_size") || !strcmp(key, "backend")) {
			cs_json_raw(&k->labels, k->labels.len ? "," : "");
			cs_json_str(&k->labels, key);
			cs_json_raw(&k->labels, ":");
			cs_json_strn(&k->labels, s, n);
		}
		return 1;
	}
	if (k->top == T_DEVPROPS && k->in_dev && k->depth == 3) {
		if (!strcmp(k->devkey, "id"))
			k->dev_id = int_of(s, n);
		else if (!strcmp(k->devkey, "numSms"))
			k->dev_sms = int_of(s, n);
		else if (!strcmp(k->devkey, "name") && is_str)
			snprintf(k->dev_name, sizeof k->dev_name, "%.*s", (int)n, s);
		return 1;
	}
	if (k->top != T_EVENTS)
		return 1;
	event *e = &k->ev;
	if (k->depth == 3) {
		switch (k->evkey) {
		case E_PH:
			e->ph = n ? s[0] : 0;
			break;
		case E_CAT: {
			size_t c = n < sizeof e->cat - 1 ? n : sizeof e->cat - 1;
			memcpy(e->cat, s, c);
			e->cat[c] = '\0';
			e->kind = kind_of(e->cat, c);
			break;
		}
		case E_NAME:
			e->name.len = 0;
			cs_buf_append(&e->name, s, n);
			break;
		case E_PID:
			e->pid = int_of(s, n);
			break;
		case E_TID:
			e->tid = int_of(s, n);
			break;
		case E_TS:
		case E_DUR: {
			int64_t v;
			if (is_str || us_to_ns(s, n, &v) < 0)
				return stop(k, "event %" PRIu64 ": \"%s\" is %.*s: expected microseconds",
					    k->nevents + 1, k->evkey == E_TS ? "ts" : "dur",
					    (int)(n < 40 ? n : 40), s);
			if (k->evkey == E_TS) {
				e->ts = v;
				e->have_ts = 1;
			} else {
				e->dur = v;
				e->have_dur = 1;
			}
			break;
		}
		default:
			break;
		}
		return 1;
	}
	if (k->depth == 4) {
		switch (k->argkey) {
		case A_DEVICE:
			e->device = int_of(s, n);
			break;
		case A_STREAM:
			e->stream = int_of(s, n);
			break;
		case A_CORR:
			e->corr = int_of(s, n);
			break;
		case A_BYTES:
			e->bytes = int_of(s, n);
			break;
		case A_KEEP:
			if (e->keep.len)
				cs_json_raw(&e->keep, ",");
			cs_json_str(&e->keep, kept_args[k->keep_idx].key);
			cs_json_raw(&e->keep, ":");
			if (is_str)
				cs_json_strn(&e->keep, s, n);
			else
				cs_buf_append(&e->keep, s, n);
			break;
		default:
			break;
		}
		return 1;
	}
	if (k->depth == 5 && (k->argkey == A_GRID || k->argkey == A_BLOCK) && !is_str) {
		int64_t *v = k->argkey == A_GRID ? e->grid : e->block;
		int *nv = k->argkey == A_GRID ? &e->ngrid : &e->nblock;
		if (*nv < 3)
			v[(*nv)++] = int_of(s, n);
	}
	return 1;
}

static int cb_null(void *ctx) { (void)ctx; return 1; }
static int cb_bool(void *ctx, int b) { (void)ctx; (void)b; return 1; }

static int cb_number(void *ctx, const char *s, size_t n)
{
	return on_scalar(ctx, s, n, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	return on_scalar(ctx, (const char *)s, n, 1);
}

static int cb_start_map(void *ctx)
{
	kineto *k = ctx;
	k->depth++;
	if (k->depth == 3 && k->top == T_EVENTS)
		event_reset(&k->ev);
	else if (k->depth == 3 && k->top == T_DEVPROPS) {
		k->in_dev = 1;
		k->dev_id = -1;
		k->dev_sms = 0;
		k->dev_name[0] = '\0';
	}
	if (k->depth == 4 && k->top == T_EVENTS && k->evkey != E_ARGS)
		k->evkey = E_OTHER;
	return 1;
}

static int key_is(const unsigned char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(s, lit, n);
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t n)
{
	kineto *k = ctx;
	if (k->depth == 1) {
		k->top = key_is(s, n, "traceEvents")	      ? T_EVENTS
			 : key_is(s, n, "deviceProperties")   ? T_DEVPROPS
			 : key_is(s, n, "distributedInfo")    ? T_DIST
			 : key_is(s, n, "baseTimeNanoseconds") ? T_BASE
							      : T_OTHER;
		/* the run was begun without this member */
		if (k->streaming && k->began && (k->top == T_DIST || k->top == T_DEVPROPS))
			k->late = 1;
		return 1;
	}
	if ((k->top == T_DIST && k->depth == 2) || (k->top == T_DEVPROPS && k->depth == 3)) {
		snprintf(k->devkey, sizeof k->devkey, "%.*s", (int)(n < 31 ? n : 31), (const char *)s);
		return 1;
	}
	if (k->top != T_EVENTS)
		return 1;
	if (k->depth == 3) {
		k->evkey = key_is(s, n, "ph")	  ? E_PH
			   : key_is(s, n, "cat")  ? E_CAT
			   : key_is(s, n, "name") ? E_NAME
			   : key_is(s, n, "pid")  ? E_PID
			   : key_is(s, n, "tid")  ? E_TID
			   : key_is(s, n, "ts")	  ? E_TS
			   : key_is(s, n, "dur")  ? E_DUR
			   : key_is(s, n, "args") ? E_ARGS
						  : E_OTHER;
	} else if (k->depth == 4 && k->evkey == E_ARGS) {
		k->argkey = key_is(s, n, "device")	  ? A_DEVICE
			    : key_is(s, n, "stream")	  ? A_STREAM
			    : key_is(s, n, "correlation") ? A_CORR
			    : key_is(s, n, "bytes")	  ? A_BYTES
			    : key_is(s, n, "grid")	  ? A_GRID
			    : key_is(s, n, "block")	  ? A_BLOCK
							  : A_OTHER;
		if (k->argkey == A_OTHER)
			for (size_t i = 0; i < sizeof kept_args / sizeof *kept_args; i++)
				if (kept_args[i].len == n && !memcmp(s, kept_args[i].key, n)) {
					k->argkey = A_KEEP;
					k->keep_idx = (int)i;
				}
	}
	return 1;
}

static int end_device(kineto *k)
{
	if (k->dev_id < 0 || k->dev_id > 1023 || k->ndevs >= 64)
		return 1;
	size_t i = k->ndevs++;
	snprintf(k->dev_names[i], sizeof k->dev_names[i], "%s", k->dev_name);
	k->devs[i] = (cs_device_info){.index = (uint32_t)k->dev_id,
				      .name = k->dev_names[i][0] ? k->dev_names[i] : NULL,
				      .sm_count = k->dev_sms > 0 ? (uint32_t)k->dev_sms : 0};
	return 1;
}

static int cb_end_map(void *ctx)
{
	kineto *k = ctx;
	int rc = 1;
	if (k->depth == 3 && k->top == T_EVENTS)
		rc = end_event(k);
	else if (k->depth == 3 && k->top == T_DEVPROPS && k->in_dev) {
		k->in_dev = 0;
		rc = end_device(k);
	}
	if (k->depth == 4 && k->top == T_EVENTS)
		k->evkey = E_OTHER;
	k->depth--;
	if (k->depth == 1)
		k->top = T_OTHER;
	return rc;
}

static int cb_start_array(void *ctx)
{
	kineto *k = ctx;
	k->depth++;
	if (k->depth == 2 && k->top == T_EVENTS && !k->began) {
		/* what comes before the events (the devices, the ranks) is known */
		pthread_mutex_lock(&k->mu);
		k->began = 1;
		pthread_cond_broadcast(&k->cv);
		pthread_mutex_unlock(&k->mu);
	}
	if (k->depth == 4 && k->top == T_EVENTS)
		k->evkey = E_OTHER; /* an array member of an event: nothing we read */
	return 1;
}

static int cb_end_array(void *ctx)
{
	kineto *k = ctx;
	if (k->depth == 5 && k->top == T_EVENTS)
		k->argkey = A_OTHER;
	k->depth--;
	if (k->depth == 1)
		k->top = T_OTHER;
	return 1;
}

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string, cb_start_map,
	cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

/* --- the run ------------------------------------------------------------- */

static int parse_fail(kineto *k, const unsigned char *data, size_t len)
{
	if (k->why[0])
		return cs_imp_fail(&k->im, "%s", k->why);
	unsigned char *msg = yajl_get_error(k->y, 0, data, len);
	size_t at = yajl_get_bytes_consumed(k->y);
	int rc = cs_imp_fail(&k->im, "not valid JSON near byte %zu of a piece of the text "
			     "(after %" PRIu64 " events): %s", at, k->nevents,
			     msg ? (const char *)msg : "parse error");
	if (msg)
		yajl_free_error(k->y, msg);
	return rc;
}

static int on_chunk(void *ctx, const char *data, size_t len)
{
	kineto *k = ctx;
	pthread_mutex_lock(&k->mu);
	int stopped = k->stop;
	pthread_mutex_unlock(&k->mu);
	if (stopped)
		return -ECANCELED;
	if (yajl_parse(k->y, (const unsigned char *)data, len) != yajl_status_ok)
		return parse_fail(k, (const unsigned char *)data, len);
	return 0;
}

static void build_extra(kineto *k, cs_buf *x)
{
	int base = k->streaming ? k->assumed_base != 0 : k->have_base;
	cs_json_raw(x, "\"time_origin\":");
	cs_json_str(x, base ? "baseTimeNanoseconds" : "ts as written");
	if (base) {
		cs_json_raw(x, ",\"base_time_ns\":");
		cs_json_i64(x, k->streaming ? k->assumed_base : k->base);
	}
	if (k->dist.len) {
		cs_json_raw(x, ",\"distributed\":{");
		cs_buf_append(x, k->dist.data, k->dist.len);
		cs_json_raw(x, "}");
	}
	if (k->labels.len) {
		cs_json_raw(x, ",\"labels\":{");
		cs_buf_append(x, k->labels.data, k->labels.len);
		cs_json_raw(x, "}");
	}
	cs_buf_put_u8(x, 0);
}

static cs_simrun *open_run(kineto *k, cs_producer *p)
{
	cs_buf extra = CS_BUF_INIT;
	build_extra(k, &extra);
	cs_simrun *run = cs_simrun_open(p, k->im.o, "kineto", "hw", "ns", 0,
					(const char *)extra.data, k->im.err, k->im.errlen);
	cs_buf_free(&extra);
	int rc = 0;
	for (size_t i = 0; run && i < k->ndevs && rc == 0; i++) {
		rc = cs_producer_add_device(p, &k->devs[i]);
		if (rc == -EEXIST)
			rc = 0;
	}
	if (rc < 0) {
		snprintf(k->im.err, k->im.errlen, "%s: %s", k->im.label, cs_producer_errmsg(p));
		cs_simrun_finish(run, p, rc, k->im.label, k->im.err, k->im.errlen);
		return NULL;
	}
	return run;
}

/* Stores one block's ranges, their times from base. */
static int store_block(kineto *k, cs_simrun *run, const kblock *b, int64_t base)
{
	for (size_t i = 0; i < b->n; i++) {
		const krange *x = &b->r[i];
		int64_t t0 = x->t0 + base;
		if (t0 < 0 || x->dur > INT64_MAX - t0)
			return cs_imp_fail(&k->im, "a %s range \"%.80s\" starts at %" PRId64 " ns, "
					   "before the time origin: expected ts >= 0",
					   kind_names[x->kind], x->name, t0);
		cs_range g;
		cs_range_init(&g, kind_names[x->kind], x->name, (uint64_t)t0, (uint64_t)(t0 + x->dur));
		g.device = x->device;
		g.stream = x->stream;
		g.correlation_id = x->corr;
		g.pid = x->pid;
		g.tid = x->tid;
		g.bytes = x->bytes;
		g.args = x->args >= 0 ? (const char *)b->args.data + x->args : NULL;
		int rc = cs_simrun_range(run, &g);
		if (rc < 0) {
			snprintf(k->im.err, k->im.errlen, "%s: %s", k->im.label, cs_simrun_errmsg(run));
			return rc;
		}
	}
	return 0;
}

static void free_block(kblock *b)
{
	if (b)
		cs_buf_free(&b->args);
	free(b);
}

/* Reads the whole text; the checks that need all of it. */
static int parse_all(kineto *k, const char *buf, size_t len)
{
	const cs_import_opts *o = k->im.o;
	int rc = cs_textin_chunks(buf, len, k->im.label, on_chunk, k, o->progress, o->progress_ctx,
				  k->im.err, k->im.errlen);
	if (rc == 0 && yajl_complete_parse(k->y) != yajl_status_ok)
		rc = k->why[0] ? cs_imp_fail(&k->im, "%s", k->why)
			       : cs_imp_fail(&k->im, "the JSON ends early (after %" PRIu64
					     " events): a cut-off trace?", k->nevents);
	if (rc == 0 && !k->nevents)
		rc = cs_imp_fail(&k->im, "no \"traceEvents\": expected a PyTorch profiler "
				 "(Chrome trace) JSON object");
	if (rc == 0 && !k->nr)
		rc = cs_imp_fail(&k->im, "%" PRIu64 " events, none of them a kernel, copy, set, "
				 "CUDA API call or annotation with \"ts\" and \"dur\"", k->nevents);
	return rc;
}

typedef struct parse_job {
	kineto *k;
	const char *buf;
	size_t len;
} parse_job;

static void *parser(void *arg)
{
	parse_job *j = arg;
	kineto *k = j->k;
	int rc = parse_all(k, j->buf, j->len);
	pthread_mutex_lock(&k->mu);
	k->parse_rc = rc;
	k->parsed = 1;
	k->published = k->nblocks;
	pthread_cond_broadcast(&k->cv);
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

/* The writer's side of stream mode: the run is begun once the parser is
 * past the header, and each block stored as it fills. */
static int stream_run(kineto *k, cs_producer *p, const char *buf, size_t len)
{
	parse_job job = {k, buf, len};
	pthread_t th;
	if (pthread_create(&th, NULL, parser, &job))
		return -EAGAIN;
	pthread_mutex_lock(&k->mu);
	while (!k->began && !k->parsed)
		pthread_cond_wait(&k->cv, &k->mu);
	pthread_mutex_unlock(&k->mu);
	cs_simrun *run = open_run(k, p);
	int rc = run ? 0 : -EIO;
	for (;;) {
		pthread_mutex_lock(&k->mu);
		while (rc == 0 && k->consumed == k->published && !k->parsed)
			pthread_cond_wait(&k->cv, &k->mu);
		if (rc || k->consumed == k->published) {
			k->stop = rc != 0;
			pthread_cond_broadcast(&k->cv);
			pthread_mutex_unlock(&k->mu);
			break;
		}
		kblock *b = k->blocks[k->consumed];
		pthread_mutex_unlock(&k->mu);
		rc = store_block(k, run, b, k->assumed_base);
		free_block(b);
		pthread_mutex_lock(&k->mu);
		k->blocks[k->consumed++] = NULL;
		pthread_cond_broadcast(&k->cv);
		pthread_mutex_unlock(&k->mu);
	}
	pthread_join(th, NULL);
	if (rc == 0)
		rc = k->parse_rc;
	if (rc == 0 && k->late)
		rc = -EAGAIN; /* read again, holding the ranges */
	if (rc == -EAGAIN)
		k->im.err[0] = '\0';
	if (!run)
		return rc;
	return cs_simrun_finish(run, p, rc, k->im.label, k->im.err, k->im.errlen);
}

static int hold_run(kineto *k, cs_producer *p, const char *buf, size_t len)
{
	int rc = parse_all(k, buf, len);
	if (rc)
		return rc;
	cs_simrun *run = open_run(k, p);
	if (!run)
		return -EIO;
	int64_t base = k->have_base ? k->base : 0;
	for (size_t i = 0; i < k->nblocks && rc == 0; i++)
		rc = store_block(k, run, k->blocks[i], base);
	return cs_simrun_finish(run, p, rc, k->im.label, k->im.err, k->im.errlen);
}

/* Where a plain trace's events count from, read before the events:
 * baseTimeNanoseconds at the end of the text (where Kineto writes it) or
 * at its head; 0 when neither has it. */
static int64_t peek_base(const char *buf, size_t len)
{
	static const char key[] = "\"baseTimeNanoseconds\"";
	const size_t span = 65536;
	for (int pass = 0; pass < 2; pass++) {
		size_t from = pass ? 0 : len > span ? len - span : 0;
		size_t to = pass ? (len < span ? len : span) : len;
		const char *hit = NULL;
		for (const char *q = buf + from; q < buf + to;) {
			const char *f = memmem(q, (size_t)(buf + to - q), key, sizeof key - 1);
			if (!f)
				break;
			hit = f;
			q = f + 1;
		}
		if (!hit)
			continue;
		const char *v = hit + sizeof key - 1;
		while (v < buf + len && (*v == ' ' || *v == ':' || *v == '\n' || *v == '\r' || *v == '\t'))
			v++;
		int64_t n = 0;
		int digits = 0;
		while (v < buf + len && *v >= '0' && *v <= '9' && digits < 19) {
			n = n * 10 + (*v++ - '0');
			digits++;
		}
		return digits ? n : 0;
	}
	return 0;
}

static void reset(kineto *k)
{
	for (size_t i = 0; i < k->nblocks; i++)
		free_block(k->blocks[i]);
	free(k->blocks);
	cs_strmap_free(&k->names);
	for (size_t i = 0; i < k->nnames; i++)
		free(k->name_list[i]);
	free(k->name_list);
	cs_buf_free(&k->ev.name);
	cs_buf_free(&k->ev.keep);
	cs_buf_free(&k->dist);
	cs_buf_free(&k->labels);
	if (k->y)
		yajl_free(k->y);
	pthread_mutex_destroy(&k->mu);
	pthread_cond_destroy(&k->cv);
}

static int import_once(kineto *k, cs_producer *p, const char *buf, size_t len,
		       const cs_import_opts *o, char *err, size_t errlen, int streaming)
{
	memset(k, 0, sizeof *k);
	cs_imp_init(&k->im, o, err, errlen);
	k->ev.name = (cs_buf)CS_BUF_INIT;
	k->ev.keep = (cs_buf)CS_BUF_INIT;
	k->dist = (cs_buf)CS_BUF_INIT;
	k->labels = (cs_buf)CS_BUF_INIT;
	pthread_mutex_init(&k->mu, NULL);
	pthread_cond_init(&k->cv, NULL);
	k->streaming = streaming;
	if (streaming)
		k->assumed_base = peek_base(buf, len);
	k->y = yajl_alloc(&callbacks, NULL, k);
	if (!k->y)
		return -ENOMEM;
	yajl_config(k->y, yajl_dont_validate_strings, 1);
	return streaming ? stream_run(k, p, buf, len) : hold_run(k, p, buf, len);
}

int cs_import_kineto(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		     char *err, size_t errlen)
{
	kineto *k = calloc(1, sizeof *k);
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* A plain trace is stored while it is read; gzip (inflated on its own
	 * thread already), or a plain one laid out otherwise than Kineto
	 * writes it, is read whole first. */
	int rc = import_once(k, p, buf, len, o, err, errlen, !cs_textin_is_gzip(buf, len));
	if (rc == -EAGAIN && k->streaming) {
		reset(k);
		rc = import_once(k, p, buf, len, o, err, errlen, 0);
	}
	if (rc == 0) {
		char other[400] = "";
		size_t at = 0;
		for (size_t i = 0; i < k->nother && at < sizeof other; i++)
			at += (size_t)snprintf(other + at, sizeof other - at, "%s%s %" PRIu64,
					       i ? ", " : "; not imported: ", k->other_cats[i],
					       k->other_n[i]);
		cs_log(CS_LOG_INFO, "%s: %" PRIu64 " events: %" PRIu64 " ranges (api %" PRIu64
		       ", kernel %" PRIu64 ", memcpy %" PRIu64 ", memset %" PRIu64 ", nvtx %" PRIu64
		       "), %" PRIu64 " flow events%s", k->im.label, k->nevents, k->nr,
		       k->per_cat[K_API], k->per_cat[K_KERNEL], k->per_cat[K_MEMCPY],
		       k->per_cat[K_MEMSET], k->per_cat[K_NVTX], k->flows, other);
	}
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "%s: out of memory", k->im.label);
	reset(k);
	free(k);
	return rc;
}

int cs_kineto_sniff(const char *head)
{
	const char *s = head;
	while (*s && isspace((unsigned char)*s))
		s++;
	if (*s != '{')
		return 0;
	return strstr(head, "\"traceEvents\"") || strstr(head, "\"schemaVersion\"") ||
	       strstr(head, "\"deviceProperties\"") || strstr(head, "\"distributedInfo\"");
}
