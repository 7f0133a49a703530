/*
 * inject.c - InitializeInjection and the CUPTI callbacks: the glue
 * between CUDA and the engine.
 *
 * CUDA calls InitializeInjection inside cuInit when CUDA_INJECTION64_PATH
 * names this library. It reads its settings from the environment
 * (`cyclescope run` writes them; docs/collector.md lists them),
 * subscribes to CUPTI and returns 1. The output (output.h) opens only
 * when the first sample or range arrives. When a device's first context
 * appears, the context-created callback hands its sampler to the engine's
 * control thread and waits (at most START_WAIT_MS) until it is configured
 * and started, so the application's first kernel is sampled; when the
 * device's last context is being destroyed its sampler is stopped and
 * drained, and a new context starts it again. A CUPTI fatal error ends
 * every CUPTI call (CUPTI finalises itself); at exit the samplers are
 * stopped and drained but never disabled (Disable and the host deinit
 * can double-free inside libnvperf_host at exit).
 *
 * Callbacks run on the application's threads and only timestamp, copy
 * and queue (engine.h). Every failure becomes one stderr line through
 * the log and the application runs on, unprofiled or partly profiled;
 * nothing here calls exit or abort or writes to stdout.
 *
 * The collector's one mutable context is `g` (STYLE.md rule 6), set up
 * once under pthread_once.
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_result.h>

#include "buf.h"
#include "catalog.h"
#include "collector.h"
#include "control.h"
#include "cupti_source.h"
#include "engine.h"
#include "hooks.h"
#include "json.h"
#include "log.h"
#include "output.h"
#include "patterns.h"
#include "store.h"
#include "test_source.h"
#include "text.h"
#include "wire.h"

#define DEFAULT_METRICS \
	"gr__cycles_elapsed.max,gpu__time_duration.sum,sm__cycles_active.avg," \
	"lts__t_sectors.sum,dram__bytes_read.sum,dram__bytes_write.sum," \
	"pcie__read_bytes.sum,pcie__write_bytes.sum"
#define DEFAULT_APIS CS_COLLECTOR_DEFAULT_APIS
#define ACTIVITY_BUFFER (4u << 20)
#define MAX_DEVICES 64
#define NVTX_OPEN_MAX 4096
#define START_WAIT_MS 5000 /* a context callback waits this long for its sampler
			      (CYCLESCOPE_START_WAIT_MS; 0 = not at all) */
#define STOP_WAIT_MS 5000  /* and a context teardown for the drain */
#define SEND_TIMEOUT_MS 10000
#define DECODE_MS 10
#define STALL_MS 100       /* control-thread stall one image covers (the
			      hardware buffer holds longer ones); an image
			      is restored only when full, so a bigger one
			      cuts a sample in two less often */

__attribute__((visibility("default"))) int InitializeInjection(void);

typedef struct nvtx_open {
	uint32_t id;
	uint64_t t0;
	int64_t tid;
	char name[120];
} nvtx_open;

static struct {
	int on;                 /* subscribed and collecting */
	atomic_int finished;
	atomic_int cupti_dead;  /* a fatal error: CUPTI finalised itself */
	atomic_int contexts_seen;
	CUpti_SubscriberHandle sub;
	cs_hook_table hooks;
	cs_pat *kernels;
	int window;
	int nvtx;
	char devices[MAX_DEVICES]; /* 1 = sample it (from CYCLESCOPE_DEVICES) */
	pthread_mutex_t dev_mu;    /* added[], contexts[] */
	char added[MAX_DEVICES];
	int contexts[MAX_DEVICES]; /* live contexts per device */
	atomic_int async_open;  /* window mode: async calls awaiting a sync point */
	cs_engine *engine;
	cs_out *out;
	cs_link *link;          /* the daemon's commands, when one is there */
	int mode;               /* cs_engine_mode */
	int test;               /* CYCLESCOPE_SOURCE=test: no CUPTI at all */
	pthread_t test_tid;     /* its stand-in for the application's calls */
	int test_thread;        /* test_tid was started */
	atomic_int test_stop;
	const char *status_path;
	const char *save_dir;   /* CYCLESCOPE_SAVE_IMAGES: recording for offline evaluation */
	unsigned save_passes;
	unsigned start_wait_ms; /* how long a new context waits for its sampler */
	int drop_unavailable;   /* CYCLESCOPE_UNAVAILABLE=drop (default) or none */
	char name[256];
	char cmdline[4096];
	pid_t pid;
	pthread_mutex_t nvtx_mu;
	nvtx_open nvtx_open[NVTX_OPEN_MAX];
	unsigned nvtx_n;
	cs_metric_info *metrics;
	char **metric_names; /* one allocation (cs_words) */
	size_t nmetrics;
} g = {.nvtx_mu = PTHREAD_MUTEX_INITIALIZER, .dev_mu = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	uint64_t x;
	if (cs_parse_u64(v, &x)) {
		cs_log(CS_LOG_WARN, "collector: %s='%s' is not a number; using %llu", name, v,
		       (unsigned long long)dflt);
		return dflt;
	}
	return x;
}

static uint64_t now_ns(void)
{
	uint64_t t = 0;
	if (g.test) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	cuptiGetTimestamp(&t);
	return t;
}

static int64_t tid_now(void)
{
	return (int64_t)syscall(SYS_gettid);
}

/* --- devices: PM sampling follows the device's contexts ---------------- */

/* A context was created on dev: its first one sets up the sampler before
 * the callback returns (the application's first kernel is sampled); one
 * on a device whose contexts had all gone restarts it. */
static void context_up(uint32_t dev)
{
	if (dev >= MAX_DEVICES || !g.devices[dev] || atomic_load(&g.cupti_dead))
		return;
	/* Requests go to the engine in the order of the context events
	 * (under dev_mu, without waiting); the wait comes after. */
	pthread_mutex_lock(&g.dev_mu);
	int first = !g.added[dev];
	int resume = !first && g.contexts[dev] == 0;
	g.added[dev] = 1;
	g.contexts[dev]++;
	cs_pm_source *src = first ? cs_cupti_source_new(dev, g.drop_unavailable, g.save_dir, g.save_passes) : NULL;
	if (src)
		cs_engine_add_source(g.engine, src, 0);
	else if (resume)
		cs_engine_resume_device(g.engine, dev, 0);
	pthread_mutex_unlock(&g.dev_mu);
	/* With a wait of 0 the sampler is set up while the application goes
	 * on (its first kernel may run unsampled), for drivers in which the
	 * control thread's CUPTI calls wait on the context being created. */
	if ((src || resume) && g.start_wait_ms &&
	    cs_engine_sync(g.engine, g.start_wait_ms) == -ETIMEDOUT)
		cs_log(CS_LOG_WARN, "collector: device %u: PM sampling not set up within %u ms; "
		       "the application goes on and sampling starts when it is "
		       "(CYCLESCOPE_START_WAIT_MS=0 does not wait at all)", dev, g.start_wait_ms);
}

/* A context of dev is being destroyed: with its last one, the sampler is
 * stopped and drained (bounded); other devices go on. */
static void context_down(uint32_t dev)
{
	if (dev >= MAX_DEVICES || !g.devices[dev] || atomic_load(&g.cupti_dead))
		return;
	pthread_mutex_lock(&g.dev_mu);
	int last = g.added[dev] && g.contexts[dev] > 0 && --g.contexts[dev] == 0;
	if (last)
		cs_engine_park_device(g.engine, dev, 0);
	pthread_mutex_unlock(&g.dev_mu);
	if (last && cs_engine_sync(g.engine, STOP_WAIT_MS) == -ETIMEDOUT)
		cs_log(CS_LOG_WARN, "collector: device %u: sampler not stopped within %u ms at "
		       "a context teardown; going on", dev, STOP_WAIT_MS);
}

/* --- activity records: device-side kernels, copies, memsets, NVTX ----- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, ACTIVITY_BUFFER);
	*size = *buffer ? ACTIVITY_BUFFER : 0;
	*max_records = 0;
}

static const char *copy_kind(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
		return "memcpy HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		return "memcpy DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return "memcpy DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return "memcpy PtoP";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return "memcpy HtoH";
	default:
		return "memcpy";
	}
}

static void nvtx_marker(const CUpti_ActivityMarker2 *m)
{
	pthread_mutex_lock(&g.nvtx_mu);
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		if (g.nvtx_n < NVTX_OPEN_MAX) {
			nvtx_open *o = &g.nvtx_open[g.nvtx_n++];
			o->id = m->id;
			o->t0 = m->timestamp;
			o->tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD
				? (int64_t)m->objectId.pt.threadId : -1;
			snprintf(o->name, sizeof o->name, "%s", m->name ? m->name : "");
		}
	} else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		for (unsigned i = g.nvtx_n; i-- > 0;) {
			if (g.nvtx_open[i].id != m->id)
				continue;
			nvtx_open o = g.nvtx_open[i];
			g.nvtx_open[i] = g.nvtx_open[--g.nvtx_n];
			pthread_mutex_unlock(&g.nvtx_mu);
			cs_range r;
			cs_range_init(&r, "nvtx", o.name, o.t0, m->timestamp);
			r.tid = o.tid;
			r.pid = g.pid;
			cs_engine_range(g.engine, &r);
			return;
		}
	}
	pthread_mutex_unlock(&g.nvtx_mu);
}

/* A range for device-side work from an activity record. */
static void device_range(cs_range *r, const char *kind, const char *name, uint64_t t0,
			 uint64_t t1, uint32_t device, uint32_t stream, uint32_t correlation,
			 int64_t bytes)
{
	cs_range_init(r, kind, name, t0, t1);
	r->device = device;
	r->stream = stream;
	r->correlation_id = correlation;
	r->bytes = bytes;
	r->pid = g.pid;
}

static void activity_record(const CUpti_Activity *rec)
{
	cs_range r;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
		if (!k->name || cs_pat_match(g.kernels, k->name) < 0)
			return;
		device_range(&r, "kernel", k->name, k->start, k->end, k->deviceId, k->streamId,
			     k->correlationId, -1);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
		device_range(&r, "memcpy", copy_kind(m->copyKind), m->start, m->end, m->deviceId,
			     m->streamId, m->correlationId, (int64_t)m->bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
		device_range(&r, "memset", "memset", m->start, m->end, m->deviceId, m->streamId,
			     m->correlationId, (int64_t)m->bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MARKER:
		nvtx_marker((const CUpti_ActivityMarker2 *)rec);
		return;
	default:
		return;
	}
	cs_engine_range(g.engine, &r);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	while (g.engine && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
		activity_record(rec);
	size_t dropped = 0;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		cs_log(CS_LOG_WARN, "collector: CUPTI dropped %zu activity records", dropped);
	free(buffer);
}

/* --- API callbacks ----------------------------------------------------- */

static void finish(void);

static void api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			 const CUpti_CallbackData *cb)
{
	int d = domain == CUPTI_CB_DOMAIN_DRIVER_API ? CS_HOOK_DRIVER : CS_HOOK_RUNTIME;
	if (cbid >= g.hooks.n[d])
		return;
	int matched = g.hooks.on[d][cbid];
	int cls = g.hooks.cls[d][cbid];
	const char *base = g.hooks.base[d][cbid] ? g.hooks.base[d][cbid] : cb->functionName;
	/* Armed and idle (ranges only in windows, none open): nothing to time
	 * or record. ENTER leaves 0, so a call that began outside a window
	 * is not recorded at its EXIT either; one that began inside is. */
	int wanted = g.window || cs_engine_ranges_wanted(g.engine);
	if (cb->callbackSite == CUPTI_API_ENTER) {
		uint64_t t = wanted ? now_ns() : 0;
		if (cb->correlationData)
			*cb->correlationData = t;
		if (matched && g.window)
			cs_engine_window_open(g.engine, base, t);
		return;
	}
	if (!wanted && !(cb->correlationData && *cb->correlationData))
		return;
	uint64_t t1 = now_ns();
	uint64_t t0 = cb->correlationData ? *cb->correlationData : t1;
	if (matched && t0) {
		cs_range r;
		cs_range_init(&r, "api", base, t0, t1);
		r.correlation_id = cb->correlationId;
		r.pid = g.pid;
		r.tid = tid_now();
		uint32_t dev;
		if (cb->context && cuptiGetDeviceId(cb->context, &dev) == CUPTI_SUCCESS)
			r.device = dev;
		cs_engine_range(g.engine, &r);
	}
	if (!g.window)
		return;
	/* Window mode: a synchronous call's window ends at its EXIT; an
	 * asynchronous one's at the next synchronisation point. */
	if (matched && cls == CS_API_ASYNC) {
		atomic_fetch_add(&g.async_open, 1);
	} else if (matched) {
		cs_engine_window_close(g.engine, t1);
	}
	if (cls == CS_API_SYNC_POINT) {
		int n = atomic_exchange(&g.async_open, 0);
		while (n-- > 0)
			cs_engine_window_close(g.engine, t1);
	}
}

static void CUPTIAPI callback(void *userdata, CUpti_CallbackDomain domain,
			      CUpti_CallbackId cbid, const void *data)
{
	if (!g.on || atomic_load(&g.finished))
		return;
	if (atomic_load(&g.cupti_dead) && domain != CUPTI_CB_DOMAIN_STATE)
		return;
	switch (domain) {
	case CUPTI_CB_DOMAIN_RUNTIME_API:
	case CUPTI_CB_DOMAIN_DRIVER_API:
		api_callback(domain, cbid, data);
		break;
	case CUPTI_CB_DOMAIN_RESOURCE: {
		const CUpti_ResourceData *rd = data;
		uint32_t dev;
		if (!rd->context || atomic_load(&g.cupti_dead) ||
		    cuptiGetDeviceId(rd->context, &dev) != CUPTI_SUCCESS)
			break;
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
			atomic_fetch_add(&g.contexts_seen, 1);
			context_up(dev);
		} else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			context_down(dev);
		}
		break;
	}
	case CUPTI_CB_DOMAIN_STATE:
		if (cbid == CUPTI_CBID_STATE_FATAL_ERROR && !atomic_exchange(&g.cupti_dead, 1)) {
			/* CUPTI calls cuptiFinalize itself: no CUPTI call from us
			 * after this one, not even a stop; what was queued is still
			 * written at exit. */
			const CUpti_StateData *sd = data;
			cs_log(CS_LOG_ERROR, "collector: CUPTI reported a fatal error (%s); sampling "
			       "ends, what was recorded is kept",
			       sd->notification.message ? sd->notification.message : "");
			cs_engine_abandon_sources(g.engine);
		}
		break;
	default:
		break;
	}
}

/* --- start and end ----------------------------------------------------- */

/* Ends the collection once, at process exit: activity flushed (unless
 * CUPTI is gone), samplers stopped and drained but left enabled, the run
 * ended, one status line for `cyclescope run`. Bounded: a stuck sampler
 * or output is left behind (and leaked) rather than waited for. The
 * engine handle is never freed (late callbacks on other threads find it
 * closed). */
static void finish(void)
{
	if (!g.on || atomic_exchange(&g.finished, 1))
		return;
	if (g.test) {
		atomic_store(&g.test_stop, 1);
		if (g.test_thread)
			pthread_join(g.test_tid, NULL);
	} else if (!atomic_load(&g.cupti_dead)) {
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	}
	/* the link reads no more: the run's end reads its ACK */
	cs_link_stop(g.link);
	cs_engine_stats st;
	int rc = cs_engine_close(g.engine, "complete", &st);
	if (rc != -ETIMEDOUT && rc != -EBUSY)
		cs_link_free(g.link); /* else the control thread may still reply */
	g.link = NULL;
	const char *why = atomic_load(&g.contexts_seen) == 0
		? "the program created no CUDA context"
		: "the program did no GPU work the collector could see";
	cs_out_finish(g.out, rc, &st, why);
	g.out = NULL;
}

static void at_exit(void)
{
	finish();
}

static void in_child(void)
{
	/* A fork without exec: the engine's threads did not come along, and
	 * the parent's connection is not the child's to keep open. */
	g.on = 0;
	cs_out_child(g.out);
}

static void read_cmdline(void)
{
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n = f ? fread(g.cmdline, 1, sizeof g.cmdline - 1, f) : 0;
	if (f)
		fclose(f);
	g.cmdline[n] = '\0';
	const char *argv0 = g.cmdline;
	const char *slash = strrchr(argv0, '/');
	snprintf(g.name, sizeof g.name, "%.255s", env_or("CYCLESCOPE_NAME", slash ? slash + 1 : argv0));
	for (size_t i = 0; n && i < n - 1; i++)
		if (!g.cmdline[i])
			g.cmdline[i] = ' ';
}

static int parse_devices(const char *list)
{
	if (!list || !*list || !strcmp(list, "all")) {
		memset(g.devices, 1, sizeof g.devices);
		return 0;
	}
	memset(g.devices, 0, sizeof g.devices);
	const char *s = list;
	while (*s) {
		char *end;
		unsigned long d = strtoul(s, &end, 10);
		if (end == s || d >= MAX_DEVICES || (*end && *end != ','))
			return -1;
		g.devices[d] = 1;
		s = *end ? end + 1 : end;
	}
	return 0;
}

/* Units and kinds from the catalog (CUPTI host API), after the split. */
static int describe_metrics(void)
{
	g.metrics = calloc(g.nmetrics ? g.nmetrics : 1, sizeof *g.metrics);
	if (!g.metrics)
		return -1;
	const char *chip = env_or("CYCLESCOPE_CHIP", "GH100");
	for (size_t i = 0; i < g.nmetrics; i++) {
		cs_cat_metric m;
		cs_metric_info *mi = &g.metrics[i];
		mi->name = g.metric_names[i];
		if (!g.test && cs_catalog_describe(chip, mi->name, &m) == 0) {
			mi->unit = m.unit ? strdup(m.unit) : NULL;
			mi->kind = m.kind ? strdup(m.kind) : NULL;
		}
	}
	return 0;
}

static int subscribe(void)
{
	char holder[256] = "";
	CUpti_SubscriberParams sp = {CUpti_SubscriberParams_STRUCT_SIZE};
	sp.subscriberName = "cyclescope";
	sp.oldSubscriberName = holder;
	sp.oldSubscriberSize = sizeof holder;
	CUptiResult rc = cuptiSubscribe_v2(&g.sub, callback, NULL, &sp);
	if (rc == CUPTI_SUCCESS)
		return 0;
	char why[512];
	if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		snprintf(why, sizeof why, "another CUPTI client is already attached (%s): "
			 "nsys, ncu, cuda-gdb or a framework profiler (torch.profiler, JAX); "
			 "cyclescope is off for this process", holder[0] ? holder : "unnamed");
	else
		snprintf(why, sizeof why, "CUPTI is not usable here (%s): no NVIDIA driver "
			 "or GPU, or a driver older than this CUPTI; the application runs "
			 "unprofiled", cs_cupti_error(rc));
	cs_log(CS_LOG_ERROR, "collector: %s", why);
	cs_out_status_none(g.status_path, why);
	return -1;
}

static void enable_callbacks(void)
{
	static const CUpti_CallbackDomain dom[2] = {CUPTI_CB_DOMAIN_RUNTIME_API,
						    CUPTI_CB_DOMAIN_DRIVER_API};
	for (int d = 0; d < 2; d++)
		for (size_t id = 1; id < g.hooks.n[d]; id++)
			if (g.hooks.on[d][id] ||
			    (g.window && g.hooks.cls[d][id] == CS_API_SYNC_POINT))
				cuptiEnableCallback(1, g.sub, dom[d], (CUpti_CallbackId)id);
	cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
			    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR);
}

/* The device-side record kinds (kernels, copies, memsets, NVTX) on or
 * off. */
static void activity_kinds(int on)
{
	CUptiResult (*fn)(CUpti_ActivityKind) = on ? cuptiActivityEnable : cuptiActivityDisable;
	fn(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	fn(CUPTI_ACTIVITY_KIND_MEMCPY);
	fn(CUPTI_ACTIVITY_KIND_MEMSET);
	if (g.nvtx)
		fn(CUPTI_ACTIVITY_KIND_MARKER);
}

/* Armed with ranges only in windows: device-side records are taken only
 * while a window samples (CUPTI's kernel records cost every launch
 * something); called by the engine's control thread. */
static void on_sampling(void *ctx, int on)
{
	(void)ctx;
	if (atomic_load(&g.cupti_dead) || atomic_load(&g.finished))
		return;
	if (!on)
		cuptiActivityFlushAll(0); /* the window's records, before they stop */
	activity_kinds(on);
}

static void enable_activity(int idle)
{
	CUptiResult rc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (rc != CUPTI_SUCCESS) {
		cs_log(CS_LOG_WARN, "collector: no device-side ranges (activity API: %s)",
		       cs_cupti_error(rc));
		return;
	}
	if (!idle)
		activity_kinds(1);
	/* Deliver buffers every 100 ms so ranges stream during the run. */
	cuptiActivityFlushPeriod(100);
}

/* A setting that keeps the collector off: one stderr line, one status
 * line. */
static void refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void refuse(const char *fmt, ...)
{
	char why[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	cs_log(CS_LOG_ERROR, "collector: %s; not collecting", why);
	cs_out_status_none(g.status_path, why);
}

/* The job this process belongs to, for grouping ranks on the daemon's
 * collectors page: --job, else what the launcher exported. */
static const char *job_id(void)
{
	static const char *const vars[] = {"CYCLESCOPE_JOB", "SLURM_JOB_ID",
					   "TORCHELASTIC_RUN_ID", "LSB_JOBID", "PBS_JOBID",
					   "FLUX_JOB_ID"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			return getenv(vars[i]);
	return "";
}

/* This process's rank in its job: --rank, else what the launcher
 * exported (torchrun, Slurm, Open MPI, MPICH/PMI). "" when none says. */
static const char *rank_id(void)
{
	static const char *const vars[] = {"CYCLESCOPE_RANK", "RANK", "SLURM_PROCID",
					   "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			return getenv(vars[i]);
	return "";
}

/* The first of vars that is set and not empty, or NULL. */
static const char *first_env(const char *const *vars, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			return getenv(vars[i]);
	return NULL;
}

/* The run's labels as {"labels":{...}}: its job and rank, its local rank
 * and the world size as the launcher exported them, the host, the GPU a
 * single-GPU process was given, then CYCLESCOPE_LABELS=k=v,k=v. */
static char *labels_json(const char *job, const char *rank)
{
	static const char *const local[] = {"LOCAL_RANK", "SLURM_LOCALID",
					    "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
					    "PMI_LOCAL_RANK"};
	static const char *const world[] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE",
					    "PMI_SIZE", "PMIX_SIZE"};
	const char *lr = first_env(local, sizeof local / sizeof *local);
	const char *ws = first_env(world, sizeof world / sizeof *world);
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	char host[256] = "";
	if (gethostname(host, sizeof host - 1))
		host[0] = '\0';
	cs_buf b = CS_BUF_INIT;
	int first = 1;
	cs_json_raw(&b, "{\"labels\":{");
	const char *kv[] = {"job", job, "rank", rank, "local_rank", lr, "world_size", ws,
			    "host", host,
			    /* one GPU given: that is the device (a list says nothing) */
			    "device", vis && *vis && !strchr(vis, ',') ? vis : NULL};
	for (size_t i = 0; i < sizeof kv / sizeof *kv; i += 2)
		if (kv[i + 1] && *kv[i + 1]) {
			cs_json_key(&b, &first, kv[i]);
			cs_json_str(&b, kv[i + 1]);
		}
	/* k=v,k=v; a pair without '=' is skipped */
	const char *more = getenv("CYCLESCOPE_LABELS");
	for (const char *p = more; p && *p;) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		if (eq && eq > p) {
			char key[128];
			snprintf(key, sizeof key, "%.*s", (int)(eq - p < 127 ? eq - p : 127), p);
			cs_json_key(&b, &first, key);
			cs_json_strn(&b, eq + 1, n - (size_t)(eq - p) - 1);
		}
		p += n + (p[n] == ',');
	}
	cs_json_raw(&b, "}}");
	if (cs_buf_put_u8(&b, 0)) {
		cs_buf_free(&b);
		return NULL;
	}
	return (char *)b.data;
}

/* CYCLESCOPE_SOURCE=test: what an application's hooked calls would add,
 * one cudaLaunchKernel range every 10 ms. */
static void *test_app(void *arg)
{
	(void)arg;
	int64_t tid = tid_now();
	while (!atomic_load(&g.test_stop)) {
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
		uint64_t t0 = now_ns();
		cs_range r;
		cs_range_init(&r, "api", "cudaLaunchKernel", t0, t0 + 1000);
		r.pid = g.pid;
		r.tid = tid;
		cs_engine_range(g.engine, &r);
	}
	return NULL;
}

/* CYCLESCOPE_SOURCE=test: the clock's samplers for CYCLESCOPE_TEST_DEVICES
 * devices and the stand-in application, no CUPTI call at all. */
static void start_test(void)
{
	unsigned n = (unsigned)env_u64("CYCLESCOPE_TEST_DEVICES", 1);
	for (unsigned d = 0; d < n && d < MAX_DEVICES; d++) {
		cs_pm_source *src = cs_test_source_new(d);
		if (src)
			cs_engine_add_source(g.engine, src, START_WAIT_MS);
	}
	if (pthread_create(&g.test_tid, NULL, test_app, NULL) == 0)
		g.test_thread = 1;
	else
		cs_log(CS_LOG_WARN, "collector: test source: no application thread");
}

static void init_once(void)
{
	char err[512];
	const char *level = getenv("CYCLESCOPE_LOG");
	if (level && !strcmp(level, "debug"))
		cs_log_set_level(CS_LOG_DEBUG);
	else if (level && !strcmp(level, "info"))
		cs_log_set_level(CS_LOG_INFO);
	g.pid = getpid();
	g.status_path = getenv("CYCLESCOPE_STATUS");
	read_cmdline();
	const char *mode = env_or("CYCLESCOPE_MODE", "continuous");
	g.mode = !strcmp(mode, "window")  ? CS_ENGINE_WINDOW
		 : !strcmp(mode, "armed") ? CS_ENGINE_ARMED
		 : !strcmp(mode, "continuous") ? CS_ENGINE_CONTINUOUS
					       : -1;
	if (g.mode < 0) {
		refuse("CYCLESCOPE_MODE='%s': expected continuous, window or armed", mode);
		return;
	}
	g.window = g.mode == CS_ENGINE_WINDOW;
	const char *ranges = env_or("CYCLESCOPE_RANGES",
				    g.mode == CS_ENGINE_ARMED ? "in-windows" : "always");
	if (strcmp(ranges, "always") && strcmp(ranges, "in-windows")) {
		refuse("CYCLESCOPE_RANGES='%s': expected always or in-windows", ranges);
		return;
	}
	g.test = !strcmp(env_or("CYCLESCOPE_SOURCE", "cupti"), "test");
	g.nvtx = env_u64("CYCLESCOPE_NVTX", 0) != 0;
	g.start_wait_ms = (unsigned)env_u64("CYCLESCOPE_START_WAIT_MS", START_WAIT_MS);
	/* a copy: the program may change its environment */
	if (getenv("CYCLESCOPE_SAVE_IMAGES") && *getenv("CYCLESCOPE_SAVE_IMAGES"))
		g.save_dir = strdup(getenv("CYCLESCOPE_SAVE_IMAGES"));
	g.save_passes = (unsigned)env_u64("CYCLESCOPE_SAVE_PASSES", 4);
	g.drop_unavailable = strcmp(env_or("CYCLESCOPE_UNAVAILABLE", "drop"), "none") != 0;
	if (parse_devices(getenv("CYCLESCOPE_DEVICES")) < 0) {
		refuse("CYCLESCOPE_DEVICES='%s': expected 'all' or device ordinals like 0,1",
		       getenv("CYCLESCOPE_DEVICES"));
		return;
	}
	cs_pat *apis = cs_pat_parse(env_or("CYCLESCOPE_APIS", DEFAULT_APIS), err, sizeof err);
	g.kernels = cs_pat_parse(env_or("CYCLESCOPE_KERNELS", "*"), err, sizeof err);
	if (!apis || !g.kernels) {
		refuse("%s", err);
		cs_pat_free(apis);
		return;
	}
	int rc = g.test ? 0 : cs_hooks_build(apis, &g.hooks, err, sizeof err);
	cs_pat_free(apis);
	if (rc < 0) {
		refuse("%s", err);
		return;
	}
	g.metric_names = cs_words(env_or("CYCLESCOPE_METRICS", DEFAULT_METRICS), &g.nmetrics);
	if (!g.metric_names) {
		refuse("out of memory");
		return;
	}
	if (!g.test && subscribe() < 0)
		return;
	if (describe_metrics() < 0) {
		refuse("out of memory");
		if (!g.test)
			cuptiUnsubscribe(g.sub);
		return;
	}
	uint64_t interval = env_u64("CYCLESCOPE_INTERVAL_NS", 100000);
	if (!interval) {
		refuse("CYCLESCOPE_INTERVAL_NS=0: expected a sampling interval in ns");
		return;
	}
	/* What a command may set: never below the interval the counter-data
	 * image is sized for, and a range that makes sense. */
	uint64_t min_interval = env_u64("CYCLESCOPE_MIN_INTERVAL_NS", interval);
	uint64_t max_dflt = interval <= UINT64_MAX / 100 ? interval * 100 : UINT64_MAX;
	uint64_t max_interval = env_u64("CYCLESCOPE_MAX_INTERVAL_NS", max_dflt);
	if (min_interval < interval) {
		cs_log(CS_LOG_WARN, "collector: CYCLESCOPE_MIN_INTERVAL_NS=%llu is below the "
		       "interval (%llu ns) the decode passes are sized for; using %llu",
		       (unsigned long long)min_interval, (unsigned long long)interval,
		       (unsigned long long)interval);
		min_interval = interval;
	}
	if (max_interval < min_interval) {
		cs_log(CS_LOG_WARN, "collector: CYCLESCOPE_MAX_INTERVAL_NS=%llu is below the "
		       "smallest interval (%llu ns); using that", (unsigned long long)max_interval,
		       (unsigned long long)min_interval);
		max_interval = min_interval;
	}
	uint64_t buffer_mb = env_u64("CYCLESCOPE_BUFFER_MB", 256);
	cs_out_opts oo = {
		.db_only = !strcmp(env_or("CYCLESCOPE_OUTPUT", "auto"), "db"),
		.db = env_or("CYCLESCOPE_DB", "cyclescope.db"),
		.send_timeout_ms = SEND_TIMEOUT_MS,
		.status_path = g.status_path,
		.info = {.kind = "hw", .source = "collector", .name = g.name, .time_unit = "ns",
			 .cmdline = g.cmdline, .pid = g.pid},
	};
	g.out = cs_out_new(&oo);
	const char *job = job_id();
	const char *rank = rank_id();
	char devices[32];
	snprintf(devices, sizeof devices, "0-%llu",
		 (unsigned long long)env_u64("CYCLESCOPE_TEST_DEVICES", 1) - 1);
	cs_link_opts lo = {
		.mode = g.mode == CS_ENGINE_ARMED ? CS_WIRE_MODE_ARMED
			: g.window ? CS_WIRE_MODE_WINDOW : CS_WIRE_MODE_CONTINUOUS,
		.job = job,
		.devices = g.test ? devices : env_or("CYCLESCOPE_DEVICES", "all"),
		.metrics = env_or("CYCLESCOPE_METRICS", DEFAULT_METRICS),
		.min_interval_ns = min_interval,
		.max_interval_ns = max_interval,
	};
	/* A daemon to talk to: register now, so it can arm and trigger this
	 * process before it records anything. */
	if (g.out && !oo.db_only) {
		g.link = cs_link_start(&lo, g.out, err, sizeof err);
		if (!g.link && g.mode == CS_ENGINE_ARMED)
			cs_log(CS_LOG_WARN, "collector: armed, but no daemon takes commands (%s); "
			       "nothing will be sampled", err);
	}
	/* key, value pairs up to the first NULL; the job and rank are labels */
	const char *meta_kv[7] = {"collector", "libcyclescope_collector",
				  "apis", env_or("CYCLESCOPE_APIS", DEFAULT_APIS),
				  "kernels", env_or("CYCLESCOPE_KERNELS", "*")};
	char *labels = labels_json(job, rank);
	cs_engine_opts o = {
		.metrics = g.metrics,
		.nmetrics = g.nmetrics,
		.interval_ns = interval,
		.buffer_bytes = (size_t)buffer_mb << 20,
		.max_samples = cs_engine_slots(interval, DECODE_MS, STALL_MS),
		.decode_ms = DECODE_MS,
		.mode = g.mode,
		.keep_sources = !g.test,
		.meta_kv = meta_kv,
		.meta = labels,
		.ranges_in_windows = !strcmp(ranges, "in-windows"),
		.min_interval_ns = min_interval,
		.max_interval_ns = max_interval,
		.on_reply = cs_link_reply_fn,
		.reply_ctx = g.link,
		.on_sampling = !g.test && g.mode == CS_ENGINE_ARMED &&
				!strcmp(ranges, "in-windows") ? on_sampling : NULL,
	};
	g.engine = g.out ? cs_engine_new(&o, &cs_out_sink_ops, g.out, err, sizeof err) : NULL;
	free(labels); /* the engine keeps a copy */
	if (!g.engine) {
		refuse("%s", g.out ? err : "out of memory");
		if (!g.test)
			cuptiUnsubscribe(g.sub);
		cs_link_free(g.link);
		g.link = NULL;
		cs_out_free(g.out);
		g.out = NULL;
		return;
	}
	cs_link_set_engine(g.link, g.engine);
	g.on = 1;
	if (g.test) {
		start_test();
	} else {
		enable_callbacks();
		enable_activity(o.on_sampling != NULL);
	}
	atexit(at_exit);
	pthread_atfork(NULL, NULL, in_child);
	cs_log(CS_LOG_INFO, "collector: %zu metrics, %zu API callbacks hooked, %s mode, "
	       "interval %llu ns%s", g.nmetrics, cs_hooks_count(&g.hooks), mode,
	       (unsigned long long)interval, g.link ? ", registered with the daemon" : "");
}

int InitializeInjection(void)
{
	pthread_once(&g_once, init_once);
	/* 1 even when collection is off: the application must run on. */
	return 1;
}
