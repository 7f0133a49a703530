/* apply.c - wire frames onto the batch writer; see apply.h. */
#include "apply.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cs_apply {
	cs_store *s;
	const cs_apply_hooks *h;
	void *ctx;
	char *host, *cmdline; /* from HELLO */
	char *uuid;           /* the open (or last) run's, for its ACK */
	int64_t pid;
	cs_writer *w; /* the open run, or NULL */
	int failed;   /* the run failed: drop the rest of it */
	uint32_t nmap;
	uint32_t *map_from, *map_to; /* producer metric id -> store id, sorted */
	uint32_t *ids;               /* scratch for one SAMPLES frame */
	uint32_t ids_cap;
	uint32_t devs[CS_APPLY_MAX_DEVICES]; /* device indices of the open run */
	uint32_t ndevs;
};

#define HOOK(a, name, ...) ((a)->h->name ? (a)->h->name((a)->ctx, __VA_ARGS__) : (void)0)

cs_apply *cs_apply_new(cs_store *s, const cs_apply_hooks *hooks, void *ctx)
{
	cs_apply *a = calloc(1, sizeof *a);
	if (a) {
		a->s = s;
		a->h = hooks;
		a->ctx = ctx;
	}
	return a;
}

void cs_apply_free(cs_apply *a)
{
	if (!a)
		return;
	free(a->host);
	free(a->cmdline);
	free(a->uuid);
	free(a->map_from);
	free(a->map_to);
	free(a->ids);
	free(a);
}

int64_t cs_apply_run(const cs_apply *a) { return a->w ? cs_writer_run(a->w) : 0; }
uint64_t cs_apply_samples(const cs_apply *a) { return a->w ? cs_writer_samples(a->w) : 0; }
int cs_apply_failed(const cs_apply *a) { return a->failed; }
int64_t cs_apply_pid(const cs_apply *a) { return a->pid; }
const char *cs_apply_host(const cs_apply *a) { return a->host && *a->host ? a->host : NULL; }
const char *cs_apply_uuid(const cs_apply *a) { return a->uuid; }

static void forget_run(cs_apply *a)
{
	a->w = NULL;
	a->nmap = 0;
	a->ndevs = 0;
}

void cs_apply_cut(cs_apply *a)
{
	forget_run(a);
	a->failed = 1;
}

static void refuse(cs_apply *a, const char *frame, const char *why)
{
	HOOK(a, refused, frame, why);
	a->failed = 1;
}

/* A store call failed: the caller takes the whole store down (and has
 * cut a), or only this run fails. */
static void store_failed(cs_apply *a, const char *frame, int rc)
{
	if (a->h->store_failed && a->h->store_failed(a->ctx, frame, rc))
		return;
	refuse(a, frame, cs_store_errmsg(a->s));
}

/* Ends the open run (committed when this returns 0) and forgets it. */
static int end_run(cs_apply *a, int complete, const cs_run_counters *counters)
{
	if (!a->w)
		return 0;
	complete = complete && !a->failed;
	int64_t run = cs_writer_run(a->w);
	HOOK(a, ending, run);
	int rc = cs_writer_end(a->w, complete ? "complete" : "incomplete", counters);
	forget_run(a); /* the writer is freed, even on failure */
	a->failed = 0;
	HOOK(a, ended, run, complete, rc);
	return rc;
}

int cs_apply_abandon(cs_apply *a)
{
	if (!a->w)
		return 0;
	a->failed = 1;
	end_run(a, 0, NULL);
	return 1;
}

/* Notes device idx of the open run; -1 past CS_APPLY_MAX_DEVICES. */
static int note_device(cs_apply *a, uint32_t idx)
{
	for (uint32_t i = 0; i < a->ndevs; i++)
		if (a->devs[i] == idx)
			return 0;
	if (a->ndevs == CS_APPLY_MAX_DEVICES)
		return -1;
	a->devs[a->ndevs++] = idx;
	return 0;
}

static int map_lookup(const cs_apply *a, uint32_t from, uint32_t *to)
{
	uint32_t lo = 0, hi = a->nmap;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a->map_from[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < a->nmap && a->map_from[lo] == from) {
		*to = a->map_to[lo];
		return 1;
	}
	return 0;
}

static int map_insert(cs_apply *a, uint32_t from, uint32_t to)
{
	uint32_t *f = realloc(a->map_from, (a->nmap + 1) * sizeof *f);
	if (f)
		a->map_from = f;
	uint32_t *t = realloc(a->map_to, (a->nmap + 1) * sizeof *t);
	if (t)
		a->map_to = t;
	if (!f || !t)
		return -ENOMEM;
	uint32_t i = a->nmap;
	while (i > 0 && a->map_from[i - 1] > from) {
		a->map_from[i] = a->map_from[i - 1];
		a->map_to[i] = a->map_to[i - 1];
		i--;
	}
	a->map_from[i] = from;
	a->map_to[i] = to;
	a->nmap++;
	return 0;
}

static void run_begin(cs_apply *a, const cs_wire_run_begin *b)
{
	char err[512];
	end_run(a, 0, NULL);
	free(a->uuid);
	a->uuid = *b->uuid ? strdup(b->uuid) : malloc(37);
	if (!a->uuid) {
		refuse(a, "RUN_BEGIN", "out of memory");
		return;
	}
	if (!*b->uuid)
		cs_store_uuid(a->uuid);
	cs_run_info info = {
		.kind = b->kind == CS_WIRE_KIND_SIM ? "sim" : "hw",
		.source = *b->source ? b->source : "producer",
		.name = *b->name ? b->name : NULL,
		.time_unit = b->time_unit == CS_WIRE_UNIT_CYCLE ? "cycle" : "ns",
		.uuid = a->uuid,
		.host = cs_apply_host(a),
		.cmdline = a->cmdline && *a->cmdline ? a->cmdline : NULL,
		.meta = *b->meta ? b->meta : NULL,
		.pid = a->pid,
		.start_ns = b->start_ns,
		.clock_hz = b->clock_hz,
	};
	a->failed = 0;
	const char *no = a->h->refuse_begin ? a->h->refuse_begin(a->ctx, err, sizeof err) : NULL;
	if (no) {
		HOOK(a, ack, CS_WIRE_ACK_FAILED, 0, no);
		refuse(a, "RUN_BEGIN", no);
		return;
	}
	a->w = cs_writer_begin(a->s, &info, err, sizeof err);
	if (!a->w) {
		/* the store may degrade; either way this run is refused */
		if (a->h->store_failed)
			a->h->store_failed(a->ctx, "RUN_BEGIN", cs_store_last_rc(a->s));
		refuse(a, "RUN_BEGIN", err);
		return;
	}
	HOOK(a, begun, cs_writer_run(a->w));
}

static void add_metrics(cs_apply *a, const cs_wire_metrics *ms)
{
	if (a->nmap + ms->count > CS_WIRE_MAX_METRICS) {
		char err[80];
		snprintf(err, sizeof err, "more than %u metrics in one run", CS_WIRE_MAX_METRICS);
		refuse(a, "METRICS", err);
		return;
	}
	for (uint32_t i = 0; i < ms->count; i++) {
		const cs_wire_metric *wm = &ms->v[i];
		uint32_t id;
		if (map_lookup(a, wm->id, &id)) {
			refuse(a, "METRICS", "a metric id was declared twice");
			return;
		}
		cs_metric_info mi = {wm->name, *wm->unit ? wm->unit : NULL,
				     cs_wire_metric_kind_name(wm->kind), wm->cumulative};
		int rc = cs_writer_add_metric(a->w, &mi, &id);
		if (rc) {
			store_failed(a, "METRICS", rc);
			return;
		}
		if (map_insert(a, wm->id, id)) {
			refuse(a, "METRICS", "out of memory");
			return;
		}
		HOOK(a, metric_added, id);
	}
}

static void append(cs_apply *a, const cs_wire_samples *x)
{
	if (note_device(a, x->device) < 0) {
		HOOK(a, dropped, x->n);
		refuse(a, "SAMPLES", "more than 256 devices in one run");
		return;
	}
	if (x->m > a->ids_cap) {
		uint32_t *ids = realloc(a->ids, x->m * sizeof *ids);
		if (!ids) {
			refuse(a, "SAMPLES", "out of memory");
			return;
		}
		a->ids = ids;
		a->ids_cap = x->m;
	}
	for (uint32_t k = 0; k < x->m; k++) {
		if (!map_lookup(a, x->metrics[k], &a->ids[k])) {
			char err[80];
			snprintf(err, sizeof err, "metric id %u was never declared", x->metrics[k]);
			HOOK(a, dropped, x->n);
			refuse(a, "SAMPLES", err);
			return;
		}
	}
	cs_batch b = {x->device, x->seq0, x->n, x->m, a->ids, x->t0, x->t1, x->values};
	int rc = cs_writer_append(a->w, &b);
	if (rc) {
		HOOK(a, dropped, x->n);
		store_failed(a, "SAMPLES", rc);
		return;
	}
	HOOK(a, appended, &b);
}

static void run_end(cs_apply *a, const cs_wire_run_end *e)
{
	if (e->status == CS_WIRE_DISCARD) {
		int64_t run = cs_writer_run(a->w);
		HOOK(a, ending, run);
		cs_writer_discard(a->w);
		forget_run(a);
		a->failed = 0;
		/* a deletion that failed may have rolled back what other runs
		 * wrote: the store's state, not this run's (no ACK of it) */
		if (cs_store_tx_lost(a->s) && a->h->store_failed &&
		    a->h->store_failed(a->ctx, "RUN_END", -EIO))
			return;
		HOOK(a, discarded, run);
		HOOK(a, ack, CS_WIRE_ACK_DISCARDED, 0, "");
		return;
	}
	cs_run_counters counters = {e->dropped, e->overflows, e->bad_records, e->empty_samples};
	uint64_t samples = cs_writer_samples(a->w);
	int complete = e->status == CS_WIRE_COMPLETE && !a->failed;
	if (end_run(a, complete, &counters))
		HOOK(a, ack, CS_WIRE_ACK_FAILED, 0, cs_store_errmsg(a->s));
	else
		HOOK(a, ack, complete ? CS_WIRE_ACK_COMPLETE : CS_WIRE_ACK_INCOMPLETE, samples, "");
}

void cs_apply_frame(cs_apply *a, cs_wire_msg *m)
{
	if (m->type != CS_WIRE_HELLO && m->type != CS_WIRE_RUN_BEGIN && !a->w) {
		if (m->type == CS_WIRE_SAMPLES)
			HOOK(a, dropped, m->u.samples.n);
		if (!a->failed)
			refuse(a, cs_wire_type_name(m->type), "no run is open (send RUN_BEGIN first)");
		return;
	}
	if (a->failed && m->type != CS_WIRE_RUN_END && m->type != CS_WIRE_RUN_BEGIN) {
		if (m->type == CS_WIRE_SAMPLES)
			HOOK(a, dropped, m->u.samples.n);
		return;
	}
	switch (m->type) {
	case CS_WIRE_HELLO:
		free(a->host);
		free(a->cmdline);
		a->host = m->u.hello.host;
		a->cmdline = m->u.hello.cmdline;
		m->u.hello.host = m->u.hello.cmdline = NULL;
		a->pid = m->u.hello.pid;
		break;
	case CS_WIRE_RUN_BEGIN:
		run_begin(a, &m->u.run_begin);
		break;
	case CS_WIRE_DEVICE: {
		cs_wire_device *d = &m->u.device;
		if (note_device(a, d->index) < 0) {
			refuse(a, "DEVICE", "more than 256 devices in one run");
			return;
		}
		cs_device_info di = {d->index, *d->name ? d->name : NULL, *d->chip ? d->chip : NULL,
				     *d->uuid ? d->uuid : NULL, d->sm_count, d->clock_hz,
				     d->mem_clock_hz};
		int rc = cs_writer_add_device(a->w, &di);
		if (rc)
			store_failed(a, "DEVICE", rc);
		else
			HOOK(a, device_added, d->index);
		break;
	}
	case CS_WIRE_METRICS:
		add_metrics(a, &m->u.metrics);
		break;
	case CS_WIRE_SAMPLES:
		append(a, &m->u.samples);
		break;
	case CS_WIRE_RANGES:
		for (uint32_t i = 0; i < m->u.ranges.count; i++) {
			cs_wire_range *r = &m->u.ranges.v[i];
			cs_range rg = {cs_wire_range_kind_name(r->kind), r->name, r->t0, r->t1,
				       r->device, r->stream, r->correlation_id, r->pid, r->tid,
				       r->bytes, NULL};
			int rc = cs_writer_add_range(a->w, &rg);
			if (rc) {
				store_failed(a, "RANGES", rc);
				return;
			}
			HOOK(a, range_added, &rg);
		}
		break;
	case CS_WIRE_RUN_END:
		run_end(a, &m->u.run_end);
		break;
	default:
		refuse(a, cs_wire_type_name(m->type), "not a producer frame");
		break;
	}
}
