/*
 * source.h - the PM-sampling source interface (cs_pm_source): configure,
 * start, stop and decode one device's periodic sampler into batches of
 * completed samples.
 *
 * The real source (cupti_source.c) drives cupti_pmsampling.h; everything
 * above this interface (the engine: decode loop, windows, batching, drop
 * accounting, output) only sees these calls, so it is tested on machines
 * without a GPU by a source that replays recorded batches
 * (tests/tools/replay_source.c).
 *
 * Threads: every call on one source comes from the engine's control
 * thread, one at a time (CUPTI does not document PM objects as thread
 * safe, so the engine never shares them).
 */
#ifndef CS_SOURCE_H
#define CS_SOURCE_H

#include <stddef.h>
#include <stdint.h>

/* What one decode call produced. Arrays are owned by the source and valid
 * until its next call. Samples come as the hardware stamped them: the
 * engine checks them (zero-length, end before start, backwards) and
 * drops the first one after each start. */
typedef struct cs_pm_batch {
	uint32_t n;             /* completed samples in this batch */
	const uint64_t *t0;     /* n sample start times, ns */
	const uint64_t *t1;     /* n sample end times, ns */
	const double *values;   /* n * nmetrics, sample-major; NaN = absent */
	uint64_t overflows;     /* hardware-buffer overflow events seen */
	uint64_t lost;          /* samples the source could not read (their
				   info or values refused) */
	int more;               /* 1: records remain, decode again at once */
} cs_pm_batch;

/* What the engine asks of a device's sampler. */
typedef struct cs_pm_config {
	const char *const *metrics; /* borrowed for the call */
	size_t nmetrics;
	uint64_t interval_ns;
	size_t buffer_bytes;      /* hardware buffer */
	uint32_t max_samples;     /* counter-data slots per decode pass */
} cs_pm_config;

/* What configure learned, for the run's metadata. Strings are owned by
 * the source and live as long as it does. */
typedef struct cs_pm_setup {
	const char *trigger;      /* "gpu_time_interval" or "gpu_sysclk_interval" */
	uint64_t interval;        /* in ns or SYS cycles, per trigger */
	const char *device_name;  /* may be NULL */
	const char *chip;         /* may be NULL */
	const char *uuid;         /* may be NULL */
	uint32_t sm_count;
	double clock_hz;
	double mem_clock_hz;
	uint64_t bytes_per_sample; /* hardware estimate, 0 = unknown */
	const char *availability; /* which counter-availability image the
				     config was made with: "device" (the
				     device's own) or "none" (the empty-image
				     path device-level counters may need);
				     NULL = not applicable */
	double sysclk_hz;         /* the SYS clock the interval was converted
				     with (sysclk trigger), 0 = n/a */
	size_t buffer_bytes;      /* the hardware buffer used (the config's,
				     or more when that held too little);
				     0 = the config's */
} cs_pm_setup;

typedef struct cs_pm_source cs_pm_source;

typedef struct cs_pm_source_ops {
	/* Validates cfg (single pass, known metrics) and prepares the
	 * sampler; fills *setup. 0 or a negative errno with one clear line
	 * in err (naming the metric that breaks the set, the privilege to
	 * grant, the profiler already holding the counters). */
	int (*configure)(cs_pm_source *s, const cs_pm_config *cfg,
			 cs_pm_setup *setup, char *err, size_t errlen);
	int (*start)(cs_pm_source *s, char *err, size_t errlen);
	int (*stop)(cs_pm_source *s, char *err, size_t errlen);
	/* Drains what the hardware has recorded into *out. 0 or a negative
	 * errno; a failed decode is reported once by the engine, which then
	 * stops using the source. */
	int (*decode)(cs_pm_source *s, cs_pm_batch *out, char *err, size_t errlen);
	/* Changes the sampling interval of a configured, stopped sampler
	 * (a daemon's command between windows); *interval gets the value in
	 * the trigger's unit, as cs_pm_setup.interval. NULL = cannot. 0 or
	 * a negative errno with the reason in err. */
	int (*set_interval)(cs_pm_source *s, uint64_t interval_ns, uint64_t *interval,
			    char *err, size_t errlen);
	/* Releases everything; after stop when started. */
	void (*destroy)(cs_pm_source *s);
} cs_pm_source_ops;

struct cs_pm_source {
	const cs_pm_source_ops *ops;
	uint32_t device; /* CUDA ordinal */
	void *impl;      /* the implementation's state */
};

#endif
