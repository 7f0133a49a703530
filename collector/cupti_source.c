/*
 * cupti_source.c - the real PM-sampling source (source.h) on
 * cupti_pmsampling.h, one per device. Every call comes from the engine's
 * control thread.
 *
 * Choices, with the reasons in reference/cupti.md:
 *  - GPU_TIME_INTERVAL (ns) except on Turing and GA100, which only have
 *    the SYS-clock trigger; the run metadata says which was used.
 *  - KEEP_LATEST where supported (not Turing): an overflow then costs
 *    the oldest records instead of ending the session (a KEEP_OLDEST
 *    overflow was measured to be permanent). Overflows are counted.
 *  - The counter-data image holds a decode period and a stall (at most
 *    IMAGE_MAX_BYTES); decode passes append to it and its samples are
 *    evaluated as they complete; it is restored from a pristine copy at
 *    half use when no sample is in progress, or when full (never
 *    re-sized: another maxSamples breaks later initialisations).
 *  - Only completed samples are evaluated, and handed up as stamped: the
 *    engine sorts out zero-length, inverted and zero-stamped ones.
 *  - The set is configured against the device's counter-availability
 *    image; when that refuses it, the metrics it refuses are dropped
 *    (their columns empty), or with drop_unavailable off the whole set
 *    goes against the empty image (on an H200 that sampler delivered
 *    nothing); the run's metadata says which.
 *  - The config image stays alive until Disable (CUPTI keeps the
 *    pointer).
 */
#include "cupti_source.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include "catalog.h"
#include "collector.h"
#include "log.h"

/* Turing and GA100 sample every N SYS-clock cycles. The driver reports
 * no SYS clock, so the device's reported clock (CU_DEVICE_ATTRIBUTE_
 * CLOCK_RATE) converts ns to cycles, 1 GHz when even that is missing; the
 * stored samples carry their real ns timestamps either way. */
#define FALLBACK_SYSCLK_HZ 1e9
/* The counter-data image's bound. On an H200 an image took about 30 KB a
 * sample slot for 9 metrics (3 KB for 3), so the slots for 110 ms at
 * 10 us made a 409 MB image whose every restore and decode stalled the
 * control thread; past this bound it gets fewer slots and a decode takes
 * more passes (the hardware buffer holds the samples meanwhile). */
#define IMAGE_MAX_BYTES (32u << 20)
#define IMAGE_MIN_SLOTS 64u
/* A hardware buffer too small for the engine's slots is raised, at most
 * to this (GPU memory). */
#define BUFFER_RAISE_MAX ((size_t)1 << 30)

typedef struct cupti_src {
	char chip[64];
	char name[256];
	char uuid[48];
	const char **metrics; /* copies: the metrics sampled */
	size_t nmetrics;
	size_t nall;          /* the set's metrics; a batch row has nall values */
	size_t *col;          /* metrics[k] is column col[k] of a row */
	int drop_unavailable; /* a metric the device's availability refuses is
				 dropped (its column NaN), not the set moved
				 to the empty image */
	void *host;           /* CUPTI host object: evaluates samples */
	uint8_t *config;      /* alive until Disable */
	size_t config_size;
	uint8_t *avail;
	CUpti_PmSampling_Object *obj;
	uint8_t *image, *pristine;
	size_t image_size;
	uint32_t max_samples;
	int sysclk;
	double sysclk_hz;     /* what the interval was converted with */
	size_t buffer_bytes;
	int in_overflow;      /* the last decode reported an overflow */
	size_t next_sample;   /* the image's first sample not yet evaluated */
	int straddled;        /* the image was full with a sample begun in it:
				 the next image's first sample is its tail */
	const char *save_dir; /* borrowed; NULL = no recording */
	unsigned save_left;   /* decode passes still to save */
	unsigned saved;       /* passes saved so far */
	const char *avail_used; /* "device" or "none": the config's availability image */
	/* where a decode's time goes, logged at each stop */
	uint64_t passes, evaluated, decode_ns, eval_ns, restore_ns;
	/* one batch */
	uint64_t *t0, *t1;
	double *values;
	double *row;
} cupti_src;

/* Driver calls for device facts, resolved from the libcuda already in
 * the process (we are loaded by it), so the library needs no libcuda at
 * link time and loads on machines without a driver. */
typedef int (*cu_get_fn)(int *dev, int ordinal);
typedef int (*cu_attr_fn)(int *v, int attrib, int dev);
typedef int (*cu_name_fn)(char *name, int len, int dev);
typedef int (*cu_uuid_fn)(unsigned char uuid[16], int dev);

/* dlsym's object pointer into a function pointer, the POSIX way. */
#define CUDA_SYM(fp, name)                                                     \
	do {                                                                   \
		void *sym_ = cuda_sym(name);                                   \
		memcpy(&(fp), &sym_, sizeof(fp));                              \
	} while (0)

static void *cuda_sym(const char *name)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *f = h ? dlsym(h, name) : NULL;
	if (h)
		dlclose(h);
	return f;
}

static void device_facts(cupti_src *c, uint32_t ordinal, cs_pm_setup *setup)
{
	cu_get_fn get;
	cu_attr_fn attr;
	cu_name_fn nm;
	cu_uuid_fn uu;
	CUDA_SYM(get, "cuDeviceGet");
	CUDA_SYM(attr, "cuDeviceGetAttribute");
	CUDA_SYM(nm, "cuDeviceGetName");
	CUDA_SYM(uu, "cuDeviceGetUuid_v2");
	int dev = 0;
	if (!get || get(&dev, (int)ordinal) != 0)
		return;
	if (nm && nm(c->name, (int)sizeof c->name, dev) == 0)
		setup->device_name = c->name;
	unsigned char u[16];
	if (uu && uu(u, dev) == 0) {
		snprintf(c->uuid, sizeof c->uuid,
			 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
			 u[12], u[13], u[14], u[15]);
		setup->uuid = c->uuid;
	}
	int v;
	/* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16, CLOCK_RATE 13 (kHz),
	 * MEMORY_CLOCK_RATE 36 (kHz) */
	if (attr && attr(&v, 16, dev) == 0)
		setup->sm_count = (uint32_t)v;
	if (attr && attr(&v, 13, dev) == 0)
		setup->clock_hz = v * 1e3;
	if (attr && attr(&v, 36, dev) == 0)
		setup->mem_clock_hz = v * 1e3;
}

static void privilege_hint(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s: insufficient privileges for GPU performance counters; run "
		 "as root or with CAP_SYS_ADMIN (containers: --cap-add SYS_ADMIN), or allow all "
		 "users with 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in "
		 "/etc/modprobe.d/ and a reboot", what);
}

static uint64_t mono_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The message for a refused reservation of the counters. Only
 * HARDWARE_BUSY says another client holds them; any other code is named
 * as it is (with its number), so an environment problem is not read as a
 * busy GPU. */
static void busy_hint(char *err, size_t errlen, CUptiResult rc)
{
	if (rc == CUPTI_ERROR_HARDWARE_BUSY || rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		snprintf(err, errlen, "the counters are busy (%s, CUPTI code %d): another "
			 "profiler holds them on this GPU (nsys GPU metrics, ncu, another "
			 "cyclescope run, or DCGM profiling: 'dcgmi profile --pause' while you "
			 "sample)", cs_cupti_error(rc), (int)rc);
	else
		snprintf(err, errlen, "CUPTI refused PM sampling (%s, CUPTI code %d)",
			 cs_cupti_error(rc), (int)rc);
}

static int fail_rc(CUptiResult rc)
{
	switch (rc) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		return -EPERM;
	case CUPTI_ERROR_OUT_OF_MEMORY:
		return -ENOMEM;
	case CUPTI_ERROR_NOT_SUPPORTED:
		return -ENOTSUP;
	default:
		return -EIO;
	}
}

/* cuptiProfilerInitialize once per process (its deinit is not
 * refcounted, so it is never undone). */
static pthread_once_t profiler_once = PTHREAD_ONCE_INIT;
static CUptiResult profiler_rc;

static void profiler_init(void)
{
	CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
	profiler_rc = cuptiProfilerInitialize(&p);
}

/* The catalog's verdict, for a set the device refused. */
static void explain_set(const char *chip, const cs_pm_config *cfg, char *err, size_t errlen)
{
	cs_cat_check chk;
	char why[256];
	if (cs_catalog_check(chip, cfg->metrics, cfg->nmetrics, &chk, why, sizeof why) == 0 &&
	    chk.reason[0])
		snprintf(err, errlen, "metric set invalid: %s", chk.reason);
}

/* Whether names[0..n) make one pass against avail (NULL = none). */
static int set_fits(const char *chip, const uint8_t *avail, const char *const *names, size_t n)
{
	void *host = NULL;
	uint8_t *img = NULL;
	size_t size = 0, passes = 0;
	char err[256];
	int rc = cs_catalog_config(chip, avail, names, n, &host, &img, &size, &passes, err,
				   sizeof err);
	free(img);
	cs_catalog_host_free(host);
	return rc == 0 && passes == 1;
}

/* The first metric of cfg that makes the set fail or need more than one
 * pass against avail (NULL = none), or -1. */
static long first_breaking(const char *chip, const uint8_t *avail, const cs_pm_config *cfg)
{
	for (size_t k = 1; k <= cfg->nmetrics; k++)
		if (!set_fits(chip, avail, cfg->metrics, k))
			return (long)k - 1;
	return -1;
}

/* (Re)builds c->config and c->host for names[0..n) against avail (NULL =
 * the empty image), freeing the ones before. */
static int build_config(cupti_src *c, const uint8_t *avail, const char *const *names, size_t n,
			size_t *passes, char *err, size_t errlen)
{
	free(c->config);
	cs_catalog_host_free(c->host);
	c->config = NULL;
	c->host = NULL;
	return cs_catalog_config(c->chip, avail, names, n, &c->host, &c->config,
				 &c->config_size, passes, err, errlen);
}

/* The set less the metrics the device's availability image refuses one
 * by one. 0 when something was dropped and the rest fits one pass against
 * the device's image: then c->metrics/col keep the others. Else
 * c->metrics is as it was (c->config is rebuilt by the next try). */
static int drop_unavailable(cupti_src *c, uint32_t device, const cs_pm_config *cfg,
			    char *err, size_t errlen)
{
	size_t n = cfg->nmetrics, kept = 0, passes = 0;
	const char **names = calloc(n, sizeof *names);
	size_t *cols = calloc(n, sizeof *cols);
	int rc = -ENOMEM;
	if (!names || !cols)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (set_fits(c->chip, c->avail, &cfg->metrics[i], 1)) {
			names[kept] = c->metrics[i];
			cols[kept++] = i;
		}
	rc = -EINVAL;
	if (kept == 0 || kept == n ||
	    build_config(c, c->avail, names, kept, &passes, err, errlen) < 0 || passes != 1)
		goto out;
	/* it fits: the dropped ones go, the kept ones move down */
	char dropped[512] = "";
	size_t off = 0;
	for (size_t i = 0, k = 0; i < n; i++) {
		if (k < kept && cols[k] == i) {
			c->metrics[k] = c->metrics[i];
			c->col[k++] = i;
			continue;
		}
		if (off < sizeof dropped)
			off += (size_t)snprintf(dropped + off, sizeof dropped - off, "%s%s",
						off ? ", " : "", c->metrics[i]);
		free((char *)c->metrics[i]);
	}
	for (size_t k = kept; k < n; k++)
		c->metrics[k] = NULL;
	c->nmetrics = kept;
	cs_log(CS_LOG_WARN, "collector: device %u: not available on this device: %s; sampling "
	       "the other %zu of %zu metrics (their columns stay empty)", device, dropped, kept, n);
	rc = 0;
out:
	free(names);
	free(cols);
	return rc;
}

/* The config image for cfg: against the device's availability image,
 * then against none. Fills c->host/config, *used. */
static int make_config(cupti_src *c, uint32_t device, const cs_pm_config *cfg,
		       const char **used, char *err, size_t errlen)
{
	size_t passes = 0;
	char first_err[512] = "";
	int rc = build_config(c, c->avail, c->metrics, c->nmetrics, &passes, first_err,
			      sizeof first_err);
	if (rc == 0 && passes == 1) {
		*used = "device";
		return 0;
	}
	if (c->drop_unavailable) {
		int d = drop_unavailable(c, device, cfg, err, errlen);
		if (d == 0)
			*used = "device";
		if (d == 0 || d == -ENOMEM)
			return d;
	}
	rc = build_config(c, NULL, c->metrics, c->nmetrics, &passes, err, errlen);
	if (rc == 0 && passes == 1) {
		*used = "none";
		cs_log(CS_LOG_INFO, "collector: device %u: the device's counter availability "
		       "refuses the set (%s); configured without it (device-level counters)",
		       device, first_err[0] ? first_err : "more than one pass");
		return 0;
	}
	/* Refused both ways: name the metric that breaks it on this device
	 * (one host configuration per prefix, only on this failure path). */
	long bad = first_breaking(c->chip, c->avail, cfg);
	if (rc == 0)
		snprintf(err, errlen, "the metric set needs %zu passes on %s; PM sampling takes one",
			 passes, c->chip);
	explain_set(c->chip, cfg, err, errlen);
	if (bad >= 0) {
		size_t len = strlen(err);
		snprintf(err + len, errlen - len, " (on this device the set breaks at '%s', "
			 "metric %ld of %zu)", cfg->metrics[bad], bad + 1, cfg->nmetrics);
	}
	return -EINVAL;
}

/* The message for a failed cuptiPmSamplingEnable. */
static void enable_error(CUptiResult rc, size_t buffer_bytes, char *err, size_t errlen)
{
	if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		privilege_hint(err, errlen, "enabling PM sampling");
	else if (rc == CUPTI_ERROR_OUT_OF_MEMORY)
		snprintf(err, errlen, "out of memory enabling PM sampling (%s): no room for the "
			 "sampling object next to the application (the %zu MiB hardware buffer "
			 "comes next; a smaller --buffer-mb leaves more)", cs_cupti_error(rc),
			 buffer_bytes >> 20);
	else
		busy_hint(err, errlen, rc);
}

/* The SetConfig of c's configuration at interval_ns: the SYS-clock
 * trigger (in cycles of sysclk_hz) on Turing and GA100, where the time
 * trigger is missing; keep-latest where the hardware has it. */
static void set_config_params(const cupti_src *c, uint64_t interval_ns,
			      CUpti_PmSampling_SetConfig_Params *sc)
{
	memset(sc, 0, sizeof *sc);
	sc->structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE;
	sc->pPmSamplingObject = c->obj;
	sc->configSize = c->config_size;
	sc->pConfig = c->config;
	sc->hardwareBufferSize = c->buffer_bytes;
	if (c->sysclk) {
		sc->triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL;
		sc->samplingInterval = (uint64_t)((double)interval_ns * c->sysclk_hz / 1e9);
		if (!sc->samplingInterval)
			sc->samplingInterval = 1;
		sc->hwBufferAppendMode = !strncmp(c->chip, "TU", 2)
			? CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST
			: CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
	} else {
		sc->triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
		sc->samplingInterval = interval_ns;
		sc->hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
	}
}

/* --- the recording for offline evaluation (save_dir) ----------------- */

/* Writes len bytes to save_dir/name; a failure is one warning and ends
 * the recording (the sampling goes on). */
static int save_file(cupti_src *c, const char *name, const void *buf, size_t len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", c->save_dir, name);
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(buf, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = 0;
	if (!ok) {
		cs_log(CS_LOG_WARN, "collector: cannot write %s; the recording stops", path);
		c->save_left = 0;
		return -EIO;
	}
	return 0;
}

/* index-devD.txt, appended: a line of text. */
static void save_index(cupti_src *c, uint32_t device, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void save_index(cupti_src *c, uint32_t device, const char *fmt, ...)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/index-dev%u.txt", c->save_dir, device);
	FILE *f = fopen(path, "a");
	if (!f) {
		c->save_left = 0;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* After configure: the config image and the index's header. */
static void save_setup(cupti_src *c, uint32_t device, const cs_pm_setup *setup)
{
	/* one process's recording per directory: the index is created
	 * exclusively, and a process that finds one saves nothing */
	char name[64], path[4096];
	snprintf(path, sizeof path, "%s/index-dev%u.txt", c->save_dir, device);
	FILE *f = fopen(path, "wx");
	if (!f) {
		cs_log(CS_LOG_WARN, "collector: %s: %s; this process saves no recording "
		       "(one process's per directory)", path, strerror(errno));
		c->save_left = 0;
		return;
	}
	fclose(f);
	snprintf(name, sizeof name, "config-dev%u.bin", device);
	if (save_file(c, name, c->config, c->config_size) < 0)
		return;
	save_index(c, device, "chip %s\nconfig_size %zu\ncounter_data_size %zu\nmax_samples %u\n"
		   "interval %llu\ntrigger %s\navailability %s\nmetrics", c->chip, c->config_size,
		   c->image_size, c->max_samples, (unsigned long long)setup->interval,
		   setup->trigger, setup->availability ? setup->availability : "-");
	for (size_t i = 0; i < c->nmetrics; i++)
		save_index(c, device, " %s", c->metrics[i]);
	save_index(c, device, "\n");
}

static int cs_configure(cs_pm_source *s, const cs_pm_config *cfg, cs_pm_setup *setup,
			char *err, size_t errlen)
{
	cupti_src *c = s->impl;
	CUptiResult rc;
	int ret = 0;
	pthread_once(&profiler_once, profiler_init);
	if (profiler_rc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "CUPTI is not usable: cuptiProfilerInitialize: %s (CUPTI code %d)",
			 cs_cupti_error(profiler_rc), (int)profiler_rc);
		return fail_rc(profiler_rc);
	}
	device_facts(c, s->device, setup);

	CUpti_Profiler_DeviceSupported_Params ds = {CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
	ds.cuDevice = (CUdevice)s->device;
	ds.api = CUPTI_PROFILER_PM_SAMPLING;
	if ((rc = cuptiProfilerDeviceSupported(&ds)) != CUPTI_SUCCESS) {
		snprintf(err, errlen, "cannot ask whether PM sampling is supported: %s",
			 cs_cupti_error(rc));
		return fail_rc(rc);
	}
	if (ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
		const char *why = ds.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED
			? "the GPU is older than Turing (PM sampling needs compute capability 7.5+)"
			: ds.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED
			? "vGPU without profiling enabled"
			: ds.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED
			? "confidential compute is on"
			: ds.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "SLI is on"
			: ds.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "a CMP (mining) board"
			: ds.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "WSL without profiling"
			: "CUPTI says this configuration is unsupported";
		snprintf(err, errlen, "PM sampling is not supported on %s: %s",
			 setup->device_name ? setup->device_name : "this GPU", why);
		return -ENOTSUP;
	}
	CUpti_Device_GetChipName_Params cn = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	cn.deviceIndex = s->device;
	if ((rc = cuptiDeviceGetChipName(&cn)) != CUPTI_SUCCESS) {
		snprintf(err, errlen, "cannot read the chip name: %s", cs_cupti_error(rc));
		return fail_rc(rc);
	}
	snprintf(c->chip, sizeof c->chip, "%s", cn.pChipName);
	setup->chip = c->chip;

	CUpti_PmSampling_GetCounterAvailability_Params ca = {
		CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
	ca.deviceIndex = s->device;
	if ((rc = cuptiPmSamplingGetCounterAvailability(&ca)) == CUPTI_SUCCESS &&
	    (c->avail = malloc(ca.counterAvailabilityImageSize))) {
		ca.pCounterAvailabilityImage = c->avail;
		rc = cuptiPmSamplingGetCounterAvailability(&ca);
	}
	if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
		privilege_hint(err, errlen, "counter availability");
		return -EPERM;
	}
	if (rc != CUPTI_SUCCESS) {
		busy_hint(err, errlen, rc);
		return fail_rc(rc);
	}

	c->nall = c->nmetrics = cfg->nmetrics;
	c->metrics = calloc(cfg->nmetrics, sizeof *c->metrics);
	c->col = calloc(cfg->nmetrics, sizeof *c->col);
	if (!c->metrics || !c->col)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->nmetrics; i++) {
		c->col[i] = i;
		if (!(c->metrics[i] = strdup(cfg->metrics[i])))
			return -ENOMEM;
	}

	const char *used = NULL;
	if ((ret = make_config(c, s->device, cfg, &used, err, errlen)) < 0)
		return ret;
	setup->availability = used;
	c->avail_used = used;
	setup->bytes_per_sample = cs_catalog_sample_bytes(c->config, c->config_size);

	CUpti_PmSampling_Enable_Params en = {CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
	en.deviceIndex = s->device;
	if ((rc = cuptiPmSamplingEnable(&en)) != CUPTI_SUCCESS) {
		enable_error(rc, cfg->buffer_bytes, err, errlen);
		return fail_rc(rc);
	}
	c->obj = en.pPmSamplingObject;

	c->sysclk = !strncmp(c->chip, "TU", 2) || !strcmp(c->chip, "GA100");
	c->sysclk_hz = setup->clock_hz > 0 ? setup->clock_hz : FALLBACK_SYSCLK_HZ;
	c->buffer_bytes = cfg->buffer_bytes;
	/* The hardware buffer holds at least what one decode period and a
	 * control-thread stall record (the engine's slots). On an H200 an
	 * 8 MiB buffer at 1 us (5 ms of samples) overflowed between decodes
	 * and CUPTI's decoder failed (CUPTI_ERROR_UNKNOWN) or raised SIGFPE
	 * inside libnvperf_host, killing the application, in 4 of 4 runs;
	 * 256 MiB at the same interval never did. */
	if (setup->bytes_per_sample && cfg->max_samples &&
	    setup->bytes_per_sample * cfg->max_samples > c->buffer_bytes &&
	    c->buffer_bytes < BUFFER_RAISE_MAX) {
		size_t need = (size_t)setup->bytes_per_sample * cfg->max_samples;
		need = (need + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
		if (need > BUFFER_RAISE_MAX)
			need = BUFFER_RAISE_MAX;
		cs_log(CS_LOG_WARN, "collector: device %u: a %zu MiB hardware buffer holds %.1f ms "
		       "at %llu ns; using %zu MiB, what %u samples take (a buffer that overflows "
		       "between decodes can crash CUPTI's decoder)", s->device,
		       c->buffer_bytes >> 20,
		       (double)(c->buffer_bytes / setup->bytes_per_sample) * cfg->interval_ns / 1e6,
		       (unsigned long long)cfg->interval_ns, need >> 20, cfg->max_samples);
		c->buffer_bytes = need;
	}
	setup->buffer_bytes = c->buffer_bytes;
	CUpti_PmSampling_SetConfig_Params sc;
	set_config_params(c, cfg->interval_ns, &sc);
	if (c->sysclk)
		setup->sysclk_hz = c->sysclk_hz;
	setup->trigger = c->sysclk ? "gpu_sysclk_interval" : "gpu_time_interval";
	setup->interval = sc.samplingInterval;
	rc = cuptiPmSamplingSetConfig(&sc);
	if (rc != CUPTI_SUCCESS && used && !strcmp(used, "device")) {
		/* Built against the device's image and still refused: once more
		 * against none, the path device-level counters may need (the
		 * refused image was not kept by CUPTI). */
		size_t passes = 0;
		char e2[256];
		if (build_config(c, NULL, c->metrics, c->nmetrics, &passes, e2, sizeof e2) == 0 &&
		    passes == 1) {
			sc.pConfig = c->config;
			sc.configSize = c->config_size;
			if ((rc = cuptiPmSamplingSetConfig(&sc)) == CUPTI_SUCCESS)
				setup->availability = c->avail_used = "none";
		}
	}
	if (rc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "PM sampling refused the configuration (%s, CUPTI code %d)%s",
			 cs_cupti_error(rc), (int)rc,
			 rc == CUPTI_ERROR_NOT_SUPPORTED ? ": the set needs more than one pass"
			 : rc == CUPTI_ERROR_OUT_OF_MEMORY && c->buffer_bytes > cfg->buffer_bytes
			 ? ": no GPU memory for the hardware buffer, raised for this interval; "
			   "sample less often"
			 : rc == CUPTI_ERROR_OUT_OF_MEMORY ? ": no GPU memory for the hardware "
							     "buffer; lower --buffer-mb"
			 : "");
		return fail_rc(rc);
	}

	c->max_samples = cfg->max_samples ? cfg->max_samples : 4096;
	CUpti_PmSampling_GetCounterDataSize_Params gs = {
		CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
	gs.pPmSamplingObject = c->obj;
	gs.pMetricNames = c->metrics;
	gs.numMetrics = c->nmetrics;
	gs.maxSamples = c->max_samples;
	if ((rc = cuptiPmSamplingGetCounterDataSize(&gs)) != CUPTI_SUCCESS) {
		snprintf(err, errlen, "sizing the counter data: %s", cs_cupti_error(rc));
		return fail_rc(rc);
	}
	c->image_size = gs.counterDataSize;
	if (c->image_size > IMAGE_MAX_BYTES && c->max_samples > IMAGE_MIN_SLOTS) {
		size_t per = c->image_size / c->max_samples;
		uint32_t fit = (uint32_t)(IMAGE_MAX_BYTES / (per ? per : 1));
		gs.maxSamples = fit < IMAGE_MIN_SLOTS ? IMAGE_MIN_SLOTS : fit;
		if ((rc = cuptiPmSamplingGetCounterDataSize(&gs)) != CUPTI_SUCCESS) {
			snprintf(err, errlen, "sizing the counter data: %s", cs_cupti_error(rc));
			return fail_rc(rc);
		}
		cs_log(CS_LOG_INFO, "collector: device %u: %u slots would take a %zu-byte counter "
		       "data image; %u slots (%zu bytes), decoded in more passes", s->device,
		       c->max_samples, c->image_size, gs.maxSamples, (size_t)gs.counterDataSize);
		c->max_samples = gs.maxSamples;
		c->image_size = gs.counterDataSize;
	}
	c->image = malloc(c->image_size);
	c->pristine = malloc(c->image_size);
	c->t0 = malloc(c->max_samples * sizeof *c->t0);
	c->t1 = malloc(c->max_samples * sizeof *c->t1);
	c->values = malloc((size_t)c->max_samples * c->nall * sizeof *c->values);
	c->row = malloc(c->nmetrics * sizeof *c->row);
	if (!c->image || !c->pristine || !c->t0 || !c->t1 || !c->values || !c->row) {
		snprintf(err, errlen, "out of memory for a %zu-byte counter data image", c->image_size);
		return -ENOMEM;
	}
	CUpti_PmSampling_CounterDataImage_Initialize_Params ci = {
		CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	ci.pPmSamplingObject = c->obj;
	ci.counterDataSize = c->image_size;
	ci.pCounterData = c->image;
	if ((rc = cuptiPmSamplingCounterDataImageInitialize(&ci)) != CUPTI_SUCCESS) {
		snprintf(err, errlen, "initialising the counter data: %s", cs_cupti_error(rc));
		return fail_rc(rc);
	}
	memcpy(c->pristine, c->image, c->image_size);
	cs_log(CS_LOG_INFO, "collector: device %u: counter data image %zu bytes for %u samples per "
	       "decode pass; %zu-byte config image", s->device, c->image_size, c->max_samples,
	       c->config_size);
	if (c->save_left)
		save_setup(c, s->device, setup);
	return 0;
}

static int cs_start(cs_pm_source *s, char *err, size_t errlen)
{
	cupti_src *c = s->impl;
	/* a new start: no sample of before it continues in the image */
	if (c->next_sample || c->straddled) {
		memcpy(c->image, c->pristine, c->image_size);
		c->next_sample = 0;
		c->straddled = 0;
	}
	CUpti_PmSampling_Start_Params p = {CUpti_PmSampling_Start_Params_STRUCT_SIZE};
	p.pPmSamplingObject = c->obj;
	CUptiResult rc = cuptiPmSamplingStart(&p);
	if (rc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "%s", cs_cupti_error(rc));
		return fail_rc(rc);
	}
	return 0;
}

static int cs_stop(cs_pm_source *s, char *err, size_t errlen)
{
	cupti_src *c = s->impl;
	CUpti_PmSampling_Stop_Params p = {CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
	p.pPmSamplingObject = c->obj;
	CUptiResult rc = cuptiPmSamplingStop(&p);
	if (c->passes)
		cs_log(CS_LOG_INFO, "collector: device %u: %llu decode passes, %llu samples: CUPTI "
		       "decode %.1f ms, evaluation %.1f ms (%.2f us a sample), image restore %.1f ms",
		       s->device, (unsigned long long)c->passes, (unsigned long long)c->evaluated,
		       c->decode_ns / 1e6, c->eval_ns / 1e6,
		       c->evaluated ? c->eval_ns / 1e3 / (double)c->evaluated : 0.0,
		       c->restore_ns / 1e6);
	if (c->passes && !c->evaluated)
		cs_log(CS_LOG_WARN, "collector: device %u: PM sampling ran but the GPU delivered no "
		       "samples (config made against the %s counter-availability image)",
		       s->device, c->avail_used && !strcmp(c->avail_used, "none")
		       ? "empty (device-level counters)" : "device's");
	if (rc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "%s", cs_cupti_error(rc));
		return fail_rc(rc);
	}
	return 0;
}

static int cs_decode(cs_pm_source *s, cs_pm_batch *out, char *err, size_t errlen)
{
	cupti_src *c = s->impl;
	memset(out, 0, sizeof *out);
	CUpti_PmSampling_DecodeData_Params dd = {CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
	dd.pPmSamplingObject = c->obj;
	dd.pCounterDataImage = c->image;
	dd.counterDataImageSize = c->image_size;
	uint64_t t_dec = mono_now_ns();
	CUptiResult drc = cuptiPmSamplingDecodeData(&dd);
	uint64_t t_eval = mono_now_ns();
	c->passes++;
	c->decode_ns += t_eval - t_dec;
	/* An overflow is counted when it begins, not on every pass that
	 * still reports it (keep-oldest overflows last). */
	int overflow = dd.overflow || drc == CUPTI_ERROR_OUT_OF_MEMORY;
	if (overflow && !c->in_overflow)
		out->overflows = 1;
	c->in_overflow = overflow;
	if (drc != CUPTI_SUCCESS && drc != CUPTI_ERROR_OUT_OF_MEMORY) {
		snprintf(err, errlen, "decode: %s", cs_cupti_error(drc));
		return fail_rc(drc);
	}
	CUpti_PmSampling_GetCounterDataInfo_Params di = {
		CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
	di.pCounterDataImage = c->image;
	di.counterDataImageSize = c->image_size;
	CUptiResult irc = cuptiPmSamplingGetCounterDataInfo(&di);
	if (irc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "counter data info: %s", cs_cupti_error(irc));
		return fail_rc(irc);
	}
	size_t done = di.numCompletedSamples;
	if (done > c->max_samples)
		done = c->max_samples;
	/* Decode appends to the image; it is restored only when full. A
	 * restore after every pass dropped the records a sample still in
	 * progress had in it, and the sample completed in the next image
	 * with lower values (on an H200: 2-5% of sm__inst_executed, more
	 * the more passes). When the image is full with a sample begun, the
	 * next image's first sample is that sample's tail: counted as lost. */
	size_t first = c->next_sample;
	if (c->straddled && first == 0 && done > 0) {
		first = 1;
		out->lost++;
		c->straddled = 0;
	}
	uint32_t n = 0;
	for (size_t i = first; i < done; i++) {
		CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {
			CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
		si.pPmSamplingObject = c->obj;
		si.pCounterDataImage = c->image;
		si.counterDataImageSize = c->image_size;
		si.sampleIndex = i;
		if (cuptiPmSamplingCounterDataGetSampleInfo(&si) != CUPTI_SUCCESS) {
			out->lost++;
			continue;
		}
		double *row = c->values + (size_t)n * c->nall;
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
		ev.pHostObject = c->host;
		ev.pCounterDataImage = c->image;
		ev.counterDataImageSize = c->image_size;
		ev.rangeIndex = i;
		ev.ppMetricNames = c->metrics;
		ev.numMetrics = c->nmetrics;
		ev.pMetricValues = c->row;
		int ok = cuptiProfilerHostEvaluateToGpuValues(&ev) == CUPTI_SUCCESS;
		for (size_t k = 0; k < c->nall; k++)
			row[k] = NAN;
		for (size_t k = 0; ok && k < c->nmetrics; k++)
			row[c->col[k]] = c->row[k];
		c->t0[n] = si.startTimestamp;
		c->t1[n] = si.endTimestamp;
		n++;
		if (c->save_left)
			save_index(c, s->device, "pass %u sample %zu %llu %llu\n", c->saved + 1, i,
				   (unsigned long long)si.startTimestamp,
				   (unsigned long long)si.endTimestamp);
	}
	uint64_t t_rest = mono_now_ns();
	c->eval_ns += t_rest - t_eval;
	c->evaluated += n;
	if (c->save_left && n) {
		char name[64];
		snprintf(name, sizeof name, "counterdata-dev%u-%04u.bin", s->device, ++c->saved);
		if (save_file(c, name, c->image, c->image_size) == 0)
			c->save_left--;
	}
	c->next_sample = done > c->next_sample ? done : c->next_sample;
	/* A pristine image again when it is half used and no sample is in
	 * progress (nothing is cut), or when it is full (a sample in
	 * progress is cut and its tail counted lost). A restore of a large
	 * image costs milliseconds. */
	int full = dd.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL ||
		   c->next_sample >= c->max_samples;
	int clean = c->next_sample >= c->max_samples / 2 && di.numPopulatedSamples <= done;
	if (full || clean) {
		c->straddled = di.numPopulatedSamples > done;
		memcpy(c->image, c->pristine, c->image_size);
		c->next_sample = 0;
	}
	c->restore_ns += mono_now_ns() - t_rest;
	out->n = n;
	out->t0 = c->t0;
	out->t1 = c->t1;
	out->values = c->values;
	/* END_OF_RECORDS: the hardware buffer is empty; COUNTER_DATA_FULL and
	 * OTHER (seen with valid samples) mean decode again now. The engine
	 * bounds the passes. */
	out->more = drc == CUPTI_SUCCESS &&
		    dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
	return 0;
}

static void cs_destroy(cs_pm_source *s)
{
	if (!s)
		return;
	cupti_src *c = s->impl;
	if (c) {
		if (c->obj) {
			CUpti_PmSampling_Disable_Params p = {CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
			p.pPmSamplingObject = c->obj;
			cuptiPmSamplingDisable(&p);
		}
		cs_catalog_host_free(c->host);
		for (size_t i = 0; c->metrics && i < c->nall; i++)
			free((char *)c->metrics[i]);
		free(c->metrics);
		free(c->col);
		free(c->config);
		free(c->avail);
		free(c->image);
		free(c->pristine);
		free(c->t0);
		free(c->t1);
		free(c->values);
		free(c->row);
		free(c);
	}
	free(s);
}

/* The same configuration again with another interval: CUPTI takes a new
 * SetConfig on an enabled, stopped object. The counter-data image keeps
 * its size, which the engine's limits allow for (never a shorter
 * interval than the one it was sized with). */
static int cs_set_interval(cs_pm_source *s, uint64_t interval_ns, uint64_t *interval,
			   char *err, size_t errlen)
{
	cupti_src *c = s->impl;
	if (!c->obj) {
		snprintf(err, errlen, "the sampler is not configured");
		return -EINVAL;
	}
	CUpti_PmSampling_SetConfig_Params sc;
	set_config_params(c, interval_ns, &sc);
	CUptiResult rc = cuptiPmSamplingSetConfig(&sc);
	if (rc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "PM sampling refused the new interval (%s)", cs_cupti_error(rc));
		return fail_rc(rc);
	}
	*interval = sc.samplingInterval;
	return 0;
}

static const cs_pm_source_ops cupti_ops = {
	.configure = cs_configure,
	.set_interval = cs_set_interval,
	.start = cs_start,
	.stop = cs_stop,
	.decode = cs_decode,
	.destroy = cs_destroy,
};

cs_pm_source *cs_cupti_source_new(uint32_t device, int drop_unavailable, const char *save_dir,
				  unsigned save_passes)
{
	cs_pm_source *s = calloc(1, sizeof *s);
	cupti_src *c = calloc(1, sizeof *c);
	if (!s || !c) {
		free(s);
		free(c);
		return NULL;
	}
	s->ops = &cupti_ops;
	s->device = device;
	s->impl = c;
	c->drop_unavailable = drop_unavailable;
	c->save_dir = save_dir && *save_dir ? save_dir : NULL;
	c->save_left = c->save_dir ? save_passes : 0;
	return s;
}
