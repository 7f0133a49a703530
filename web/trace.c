/*
 * trace.c - a run as Trace Event JSON (trace.h).
 *
 * Times: the format's ts and dur are microseconds; a run in ns is divided
 * by 1000; a run in cycles is put on its clock when it has one (cycles /
 * MHz), else one cycle is written as one nanosecond (the format has no
 * clock of its own; otherData says which). Processes: pid 0 is the host
 * (ranges without a device: API calls, NVTX), pid d + 1 device d. Counter
 * tracks are named with their unit and drop to zero where the run's
 * samples end; an API call and the kernel or copy it launched (the same
 * correlation id) are joined by a flow arrow.
 */
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "ranges.h"
#include "reader.h"
#include "runs.h"
#include "text.h"
#include "totals.h"

#define TRACE_MAX_BYTES (512u << 20) /* a trace bigger than this is refused */
#define TRACE_DEFAULT_METRICS 64     /* more, and a trace asks for them by name */

typedef struct track {
	int pid;
	char label[96];
	int tid;
} track;

typedef struct tw {
	cs_buf *b;
	int first;         /* no event written yet */
	double per_us;     /* run units per trace microsecond */
	track *tr;
	size_t ntr, captr;
	int pids[258];     /* process_name written */
	/* counters */
	int pid;
	char (*names)[256];
	uint32_t m;
	double last_t1;    /* the end of the device's last bucket or sample */
	unsigned char *seen; /* metric k had a value on this device */
	/* flows: API calls by correlation id, ascending, until their kernel */
	struct api_at { int64_t cid; double ts; int pid, tid; } *api;
	size_t napi, capapi;
	int pend_flow;     /* an arrow to write after the current range */
	struct api_at flow_from, flow_to;
	uint64_t max_bytes;
	const cs_trace_req *rq; /* its cancelled() */
	unsigned tick;
} tw;

/* Buckets are read a part at a time, at most this many bucket-metric
 * cells (just under 32 MiB of aggregates, so that the daemon reuses one
 * block from part to part rather than map a new one), whatever buckets and
 * metrics ask. */
#define TRACE_PART_CELLS ((1u << 20) - 1024)

/* -E2BIG past the byte budget, -ECANCELED once the asker has gone (looked
 * at every 64 calls), else 0. */
static int trace_stop(tw *w)
{
	if (w->b->len > w->max_bytes)
		return -E2BIG;
	if (w->rq->cancelled && !(++w->tick & 63) && w->rq->cancelled(w->rq->cancel_ctx))
		return -ECANCELED;
	return 0;
}

static void event_start(tw *w)
{
	cs_json_raw(w->b, w->first ? "\n{" : ",\n{");
	w->first = 0;
}

static void ts_field(tw *w, const char *key, double t)
{
	cs_json_raw(w->b, key);
	cs_buf_printf(w->b, "%.3f", t / w->per_us);
}

static void process(tw *w, int pid, const char *name)
{
	if (pid < 0 || pid >= (int)(sizeof w->pids / sizeof *w->pids) || w->pids[pid])
		return;
	w->pids[pid] = 1;
	event_start(w);
	cs_buf_printf(w->b, "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":", pid);
	cs_json_str(w->b, name);
	cs_json_raw(w->b, "}}");
	event_start(w);
	cs_buf_printf(w->b, "\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"args\":"
		      "{\"sort_index\":%d}}", pid, pid);
}

/* The track (thread) of a label in a process, named on first use. */
static int track_of(tw *w, int pid, const char *label)
{
	for (size_t i = 0; i < w->ntr; i++)
		if (w->tr[i].pid == pid && !strcmp(w->tr[i].label, label))
			return w->tr[i].tid;
	if (w->ntr == w->captr) {
		size_t c = w->captr ? w->captr * 2 : 32;
		track *g = realloc(w->tr, c * sizeof *g);
		if (!g)
			return -1;
		w->tr = g;
		w->captr = c;
	}
	track *t = &w->tr[w->ntr++];
	t->pid = pid;
	snprintf(t->label, sizeof t->label, "%s", label);
	t->tid = (int)w->ntr;
	event_start(w);
	cs_buf_printf(w->b, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":"
		      "{\"name\":", pid, t->tid);
	cs_json_str(w->b, label);
	cs_json_raw(w->b, "}}");
	return t->tid;
}

/* Flow arrows from an API call to what it launched (CUPTI gives both the
 * same correlation id): an API call is remembered; a device range with a
 * remembered id gets the arrow, a "s" event on the call's slice and an "f"
 * on its own (bound to the slice it starts in). The range's own event is
 * open when this is called: the arrow's events are written after it. */
static int flow(tw *w, const char *kind, int device_kind, int64_t cid, double t0, int pid, int tid)
{
	if (!strcmp(kind, "api")) {
		if (w->napi == w->capapi) {
			size_t c = w->capapi ? w->capapi * 2 : 256;
			struct api_at *g = realloc(w->api, c * sizeof *g);
			if (!g)
				return -ENOMEM;
			w->api = g;
			w->capapi = c;
		}
		w->api[w->napi++] = (struct api_at){cid, t0, pid, tid};
		return 0;
	}
	if (!device_kind || !strcmp(kind, "sim-kernel"))
		return 0;
	/* the latest call with that id (ids are not reused within a run) */
	for (size_t i = w->napi; i-- > 0;) {
		if (w->api[i].cid != cid)
			continue;
		w->pend_flow = 1;
		w->flow_from = w->api[i];
		w->flow_to = (struct api_at){cid, t0, pid, tid};
		w->api[i] = w->api[--w->napi]; /* one arrow per call */
		break;
	}
	return 0;
}

/* The flow noted for the range just written, after it. */
static void flow_events(tw *w)
{
	if (!w->pend_flow)
		return;
	w->pend_flow = 0;
	event_start(w);
	cs_buf_printf(w->b, "\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":%lld",
		      (long long)w->flow_from.cid);
	ts_field(w, ",\"ts\":", w->flow_from.ts);
	cs_buf_printf(w->b, ",\"pid\":%d,\"tid\":%d}", w->flow_from.pid, w->flow_from.tid);
	event_start(w);
	cs_buf_printf(w->b, "\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%lld",
		      (long long)w->flow_to.cid);
	ts_field(w, ",\"ts\":", w->flow_to.ts);
	cs_buf_printf(w->b, ",\"pid\":%d,\"tid\":%d}", w->flow_to.pid, w->flow_to.tid);
}

/* Ranges: kernels and copies on their device, per stream; API calls and
 * NVTX on the host, per thread; other kinds one track each. */
static int ranges(cs_store *s, tw *w, int64_t run, uint64_t from, uint64_t to)
{
	cs_ranges_query q = {.run = run, .from = from, .to = to, .window = CS_RANGES_TOUCHING};
	cs_ranges_cursor *cur = cs_ranges_open(s, &q);
	if (!cur)
		return -EIO;
	cs_range_row rr;
	int rc = 0, src;
	while ((src = cs_ranges_next(cur, &rr)) == 1) {
		if ((rc = trace_stop(w)))
			break;
		const char *kind = rr.kind;
		const char *name = rr.name;
		double t0 = (double)rr.t0, t1 = (double)rr.t1;
		int has_dev = (rr.has & CS_RANGE_HAS_DEVICE) && rr.device >= 0;
		int64_t dev = has_dev ? rr.device : -1;
		int has_stream = (rr.has & CS_RANGE_HAS_STREAM) != 0;
		int has_tid = (rr.has & CS_RANGE_HAS_TID) != 0;
		kind = kind ? kind : "range";
		int device_kind = !strcmp(kind, "kernel") || !strcmp(kind, "memcpy") ||
				  !strcmp(kind, "memset") || !strcmp(kind, "graph") ||
				  !strcmp(kind, "sim-kernel");
		int pid = has_dev && dev < 256 ? (int)dev + 1 : 0;
		char label[96], pname[64];
		if (pid) {
			snprintf(pname, sizeof pname, "device %lld", (long long)dev);
			process(w, pid, pname);
		} else {
			process(w, 0, "host");
		}
		const char *group = !strcmp(kind, "memcpy") || !strcmp(kind, "memset") ? "copies"
				    : !strcmp(kind, "kernel") ? "kernels"
				    : !strcmp(kind, "sim-kernel") ? "sim-kernels"
				    : !strcmp(kind, "api") ? "API calls" : kind;
		if (device_kind && has_stream)
			snprintf(label, sizeof label, "%s (stream %lld)", group,
				 (long long)rr.stream);
		else if (!device_kind && has_tid)
			snprintf(label, sizeof label, "%s (thread %lld)", group,
				 (long long)rr.tid);
		else
			snprintf(label, sizeof label, "%s", group);
		int tid = track_of(w, pid, label);
		if (tid < 0) {
			rc = -ENOMEM;
			break;
		}
		event_start(w);
		cs_json_raw(w->b, "\"name\":");
		cs_json_str(w->b, name ? name : "");
		cs_json_raw(w->b, ",\"cat\":");
		cs_json_str(w->b, kind);
		if (t1 > t0) {
			cs_json_raw(w->b, ",\"ph\":\"X\"");
			ts_field(w, ",\"ts\":", t0);
			ts_field(w, ",\"dur\":", t1 - t0);
		} else {
			cs_json_raw(w->b, ",\"ph\":\"i\",\"s\":\"t\"");
			ts_field(w, ",\"ts\":", t0);
		}
		cs_buf_printf(w->b, ",\"pid\":%d,\"tid\":%d,\"args\":{", pid, tid);
		if ((rr.has & CS_RANGE_HAS_CORRELATION) && (rc = flow(w, kind, device_kind,
				rr.correlation_id, t0, pid, tid)) < 0)
			break;
		int f = 1;
		if (rr.has & CS_RANGE_HAS_CORRELATION) {
			cs_buf_printf(w->b, "\"correlation_id\":%lld", (long long)rr.correlation_id);
			f = 0;
		}
		if (rr.has & CS_RANGE_HAS_BYTES)
			cs_buf_printf(w->b, "%s\"bytes\":%lld", f ? "" : ",", (long long)rr.bytes);
		cs_json_raw(w->b, "}}");
		flow_events(w);
	}
	if (rc == 0 && src < 0)
		rc = -EIO;
	cs_ranges_close(cur);
	return rc;
}

static void counter(tw *w, uint32_t k, double t, double v)
{
	event_start(w);
	cs_json_raw(w->b, "\"name\":");
	cs_json_str(w->b, w->names[k]);
	cs_json_raw(w->b, ",\"ph\":\"C\"");
	ts_field(w, ",\"ts\":", t);
	cs_buf_printf(w->b, ",\"pid\":%d,\"args\":{\"value\":", w->pid);
	cs_json_f64(w->b, v);
	cs_json_raw(w->b, "}}");
}

static int on_bucket(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *aggs)
{
	tw *w = ctx;
	int rc = trace_stop(w);
	if (rc)
		return rc;
	(void)i;
	for (uint32_t k = 0; k < w->m; k++)
		if (aggs[k].count) {
			counter(w, k, (double)t0, aggs[k].sum / (double)aggs[k].count);
			w->seen[k] = 1;
			w->last_t1 = fmax(w->last_t1, (double)t1);
		}
	return 0;
}

static int on_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *values)
{
	tw *w = ctx;
	int rc = trace_stop(w);
	if (rc)
		return rc;
	(void)seq;
	for (uint32_t k = 0; k < w->m; k++)
		if (!isnan(values[k])) {
			counter(w, k, (double)t0, values[k]);
			w->seen[k] = 1;
			w->last_t1 = fmax(w->last_t1, (double)t1);
		}
	return 0;
}

int cs_trace_json(cs_store *s, const cs_trace_req *rq, cs_buf *out, char *err, size_t errlen)
{
	int64_t run;
	if (cs_read_find_run(s, rq->run, &run) < 0) {
		snprintf(err, errlen, "no run '%s' in the database", rq->run);
		return -ENOENT;
	}
	cs_run_summary sum;
	if (cs_runs_summary(s, run, &sum) < 0) {
		snprintf(err, errlen, "reading run %lld: %s", (long long)run, cs_store_errmsg(s));
		return -EIO;
	}
	const char *name = sum.name;
	uint64_t tmax = sum.t_max > 0 ? (uint64_t)sum.t_max : 0;
	const char *unit = sum.time_unit;
	int ns = !strcmp(unit, "ns");
	/* a cycle run on its own clock where it has one, else 1 cycle = 1 ns */
	double clock = ns ? 0 : cs_runs_clock(s, run, NULL);
	tw w = {.b = out, .first = 1, .per_us = ns || !(clock > 0) ? 1000.0 : clock / 1e6, .rq = rq,
		.max_bytes = rq->max_bytes ? rq->max_bytes : TRACE_MAX_BYTES};
	/* the metrics */
	uint32_t *all = NULL, nall = 0, *ids = NULL;
	int rc = cs_read_metric_ids(s, run, &all, &nall);
	if (rc == 0 && (!(ids = calloc(nall + 1, sizeof *ids)) ||
			!(w.names = calloc(nall + 1, sizeof *w.names))))
		rc = -ENOMEM;
	/* no metrics asked: all of them, or for a run of more than
	 * TRACE_DEFAULT_METRICS (a simulator's hundreds of statistics), the two
	 * its pages open on */
	char dflt[1024] = "";
	const char *want = rq->metrics && *rq->metrics && strcmp(rq->metrics, "all") ? rq->metrics : NULL;
	if (rc == 0 && !want && !(rq->metrics && !strcmp(rq->metrics, "all")) && nall > TRACE_DEFAULT_METRICS &&
	    cs_runs_default_metrics(s, run, dflt, sizeof dflt) == 0 && *dflt)
		want = dflt;
	for (uint32_t i = 0; rc == 0 && i < nall; i++) {
		char nm[256], u[32] = "", kind[16];
		if (cs_read_metric_name(s, run, all[i], nm, sizeof nm) < 0)
			continue;
		if (want && !cs_list_has(want, nm))
			continue;
		/* the track's name says its unit */
		if (cs_runs_metric_unit(s, run, nm, u, sizeof u, kind, sizeof kind) == 0 && *u)
			snprintf(w.names[w.m], sizeof w.names[w.m], "%.200s [%s]", nm, u);
		else
			snprintf(w.names[w.m], sizeof w.names[w.m], "%s", nm);
		ids[w.m++] = all[i];
	}
	if (rc == 0 && !(w.seen = calloc(w.m + 1, 1)))
		rc = -ENOMEM;
	if (rc == 0 && want && !w.m) {
		snprintf(err, errlen, "run %s has none of the metrics '%s'", name, rq->metrics);
		rc = -ENOENT;
	}
	uint64_t lo = 0, hi = 0;
	int have_samples = rc == 0 && cs_read_run_span(s, run, &lo, &hi) == 0;
	/* the default window: the samples' and the ranges' */
	uint64_t rlo = UINT64_MAX, rhi = 0;
	if (cs_ranges_extent(s, run, &rlo, &rhi) < 0) {
		rlo = UINT64_MAX;
		rhi = 0;
	}
	uint64_t end = tmax > hi ? tmax : hi;
	if (rhi > end)
		end = rhi;
	uint64_t start = have_samples ? (lo < rlo ? lo : rlo) : rlo == UINT64_MAX ? 0 : rlo;
	uint64_t from = rq->from ? rq->from : start, to = rq->to ? rq->to : end + 1;
	if (rc == 0 && to <= from) {
		snprintf(err, errlen, "to must come after from");
		rc = -EINVAL;
	}
	if (rc == 0) {
		cs_json_raw(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"run\":");
		cs_json_str(out, name);
		cs_json_raw(out, ",\"time_unit\":");
		cs_json_str(out, unit);
		cs_json_raw(out, ",\"clock\":");
		char clk[160];
		if (ns)
			snprintf(clk, sizeof clk, "trace microseconds are the run's microseconds");
		else if (clock > 0)
			snprintf(clk, sizeof clk, "the run's cycles at its clock, %.1f MHz", clock / 1e6);
		else
			snprintf(clk, sizeof clk, "the run's cycles, one to a nanosecond (it records no clock)");
		cs_json_str(out, clk);
		cs_buf_printf(out, ",\"metrics\":\"%u of the run's %u%s\"", w.m, nall,
			      w.m < nall ? " (ask for others by name)" : "");
		cs_json_raw(out, ",\"counters\":");
		cs_json_str(out, rq->raw ? "every sample" : "the mean of each bucket");
		cs_json_raw(out, "},\"traceEvents\":[");
		rc = ranges(s, &w, run, from, to);
		if (rc == -EIO)
			snprintf(err, errlen, "reading ranges: %s", cs_store_errmsg(s));
	}
	/* counters, device by device */
	uint32_t *devs = NULL, ndev = 0;
	if (rc == 0 && w.m && have_samples)
		rc = cs_read_devices(s, run, &devs, &ndev);
	for (uint32_t d = 0; rc == 0 && d < ndev; d++) {
		if (devs[d] >= 256)
			continue; /* the format's processes here: the host and 256 devices */
		w.pid = (int)devs[d] + 1;
		char pname[64];
		snprintf(pname, sizeof pname, "device %u", devs[d]);
		process(&w, w.pid, pname);
		cs_scan q = {.run = run, .device = devs[d], .m = w.m, .metrics = ids, .from = from, .to = to};
		uint32_t nb = rq->buckets ? rq->buckets : 2000;
		uint32_t part = TRACE_PART_CELLS / w.m ? TRACE_PART_CELLS / w.m : 1;
		memset(w.seen, 0, w.m);
		w.last_t1 = 0;
		if (rq->raw)
			rc = cs_read_raw(s, &q, on_row, &w);
		for (uint32_t b0 = 0; !rq->raw && rc == 0 && b0 < nb; b0 += part)
			rc = cs_read_buckets_part(s, &q, nb, b0, nb - b0 < part ? nb : b0 + part,
						  on_bucket, &w, NULL);
		/* each counter ends where the samples do, not held to the
		 * trace's end */
		double stop = fmin(w.last_t1, fmin((double)to, (double)hi));
		for (uint32_t k = 0; rc == 0 && k < w.m; k++)
			if (w.seen[k])
				counter(&w, k, stop, 0);
		if (rc < 0 && rc != -E2BIG && rc != -ECANCELED)
			snprintf(err, errlen, "reading run %s: %s", name, cs_store_errmsg(s));
	}
	if (rc == -E2BIG)
		snprintf(err, errlen, "the trace would be over %llu MB: fewer buckets, a window "
			 "(from/to) or fewer metrics", (unsigned long long)(w.max_bytes >> 20));
	if (rc == -ECANCELED)
		snprintf(err, errlen, "cancelled: the client has gone");
	if (rc == 0)
		cs_json_raw(out, "\n]}\n");
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(all);
	free(ids);
	free(devs);
	free(w.names);
	free(w.tr);
	free(w.seen);
	free(w.api);
	return rc;
}
