/*
 * trace.c - a run as Trace Event JSON (trace.h).
 *
 * Times: the format's ts and dur are microseconds; a run in ns is divided
 * by 1000, a run in cycles is written one cycle to one microsecond (the
 * format has no other clock; otherData says so). Processes: pid 0 is the
 * host (ranges without a device: API calls, NVTX), pid d + 1 device d.
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
		int f = 1;
		if (rr.has & CS_RANGE_HAS_CORRELATION) {
			cs_buf_printf(w->b, "\"correlation_id\":%lld", (long long)rr.correlation_id);
			f = 0;
		}
		if (rr.has & CS_RANGE_HAS_BYTES)
			cs_buf_printf(w->b, "%s\"bytes\":%lld", f ? "" : ",", (long long)rr.bytes);
		cs_json_raw(w->b, "}}");
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
	(void)t1;
	for (uint32_t k = 0; k < w->m; k++)
		if (aggs[k].count)
			counter(w, k, (double)t0, aggs[k].sum / (double)aggs[k].count);
	return 0;
}

static int on_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *values)
{
	tw *w = ctx;
	int rc = trace_stop(w);
	if (rc)
		return rc;
	(void)seq;
	(void)t1;
	for (uint32_t k = 0; k < w->m; k++)
		if (!isnan(values[k]))
			counter(w, k, (double)t0, values[k]);
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
	tw w = {.b = out, .first = 1, .per_us = ns ? 1000.0 : 1.0, .rq = rq,
		.max_bytes = rq->max_bytes ? rq->max_bytes : TRACE_MAX_BYTES};
	/* the metrics */
	uint32_t *all = NULL, nall = 0, *ids = NULL;
	int rc = cs_read_metric_ids(s, run, &all, &nall);
	if (rc == 0 && (!(ids = calloc(nall + 1, sizeof *ids)) ||
			!(w.names = calloc(nall + 1, sizeof *w.names))))
		rc = -ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < nall; i++) {
		char nm[256];
		if (cs_read_metric_name(s, run, all[i], nm, sizeof nm) < 0)
			continue;
		if (!rq->metrics || !*rq->metrics || cs_list_has(rq->metrics, nm)) {
			snprintf(w.names[w.m], sizeof w.names[w.m], "%s", nm);
			ids[w.m++] = all[i];
		}
	}
	if (rc == 0 && rq->metrics && *rq->metrics && !w.m) {
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
		cs_json_str(out, ns ? "trace microseconds are the run's microseconds"
				    : "trace microseconds are the run's cycles (1 cycle = 1 us)");
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
		if (rq->raw)
			rc = cs_read_raw(s, &q, on_row, &w);
		for (uint32_t b0 = 0; !rq->raw && rc == 0 && b0 < nb; b0 += part)
			rc = cs_read_buckets_part(s, &q, nb, b0, nb - b0 < part ? nb : b0 + part,
						  on_bucket, &w, NULL);
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
	return rc;
}
