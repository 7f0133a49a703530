/*
 * replay_source.h - a PM-sampling source that replays recorded batches
 * (cs_replay_*). A test seam, not a feature: it lets the engine (decode
 * loop, windows, batching, drop accounting, output) run end to end on
 * machines without a GPU. The real source is collector/cupti_source.c.
 *
 * Recording format (text, one item per line, '#' comments):
 *   metrics NAME[,NAME...]         the metric order of the values
 *   start                          (optional) begins what the next start
 *                                  records; without any, one segment
 *   batch [overflows=N] [lost=N]   starts the next decode's batch
 *   T0 T1 V1 [V2...]               one sample; "nan" for absent
 * Samples are replayed as written, bad ones included (T1 < T0, zero,
 * backwards, zero-length, gaps). Nothing is recorded before the first
 * start. Start k exposes segment k (the last one again when there are
 * fewer); each decode returns its next batch (more=1 while batches of
 * the segment remain), also after a stop, as a hardware buffer still
 * holds what it recorded.
 */
#ifndef CS_REPLAY_SOURCE_H
#define CS_REPLAY_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "source.h"

typedef struct cs_replay_opts {
	uint32_t device;
	const char *fail_configure; /* non-NULL: configure fails with this */
	const char *trigger;        /* NULL = "gpu_time_interval" */
	int rebase;                 /* shift times so the first sample of each
				       start begins at the wall clock */
	unsigned decode_delay_us;   /* sleep in each decode */
	unsigned configure_delay_ms; /* sleep in configure (a slow device) */
	unsigned stop_delay_ms;     /* sleep in stop (a hanging sampler) */
	int *destroyed;             /* set to 1 by destroy, when not NULL */
	unsigned *starts;           /* counts starts, when not NULL */
	int endless;                /* every decode says "more", with no
				       samples (a stop reason that never
				       becomes END_OF_RECORDS) */
} cs_replay_opts;

/* Parses text[0..len) (copied). NULL with "line N: ..." in err. The
 * source is owned by whoever it is handed to (the engine destroys it). */
cs_pm_source *cs_replay_source_new(const cs_replay_opts *o, const char *text,
				   size_t len, char *err, size_t errlen);

#endif
