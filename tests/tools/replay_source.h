/*
 * replay_source.h - a PM-sampling source that replays recorded batches
 * (cs_replay_*). A test seam, not a feature: it lets the engine (decode
 * loop, windows, batching, drop accounting, output) run end to end on
 * machines without a GPU. The real source is collector/cupti_source.c.
 *
 * Recording format (text, one item per line, '#' comments):
 *   metrics NAME[,NAME...]         the metric order of the values
 *   batch [overflows=N] [lost=N]   starts the next decode's batch
 *   T0 T1 V1 [V2...]               one sample; "nan" for absent
 * Nothing is recorded before the first start. From then on each decode
 * returns the next batch (more=1 while batches remain), also after a
 * stop, as a hardware buffer still holds what it recorded.
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
} cs_replay_opts;

/* Parses text[0..len) (copied). NULL with "line N: ..." in err. The
 * source is owned by whoever it is handed to (the engine destroys it). */
cs_pm_source *cs_replay_source_new(const cs_replay_opts *o, const char *text,
				   size_t len, char *err, size_t errlen);

#endif
