/*
 * cupti_source.h - the PM-sampling source on CUPTI (cs_cupti_source_*).
 */
#ifndef CS_CUPTI_SOURCE_H
#define CS_CUPTI_SOURCE_H

#include <stdint.h>

#include "source.h"

/* A source for CUDA device ordinal device; nothing touches the GPU until
 * the engine's control thread configures it. NULL when out of memory.
 * When the device's counter-availability image refuses the set,
 * drop_unavailable samples the metrics it accepts (the others' columns
 * NaN, named in one warning); else the whole set is configured against
 * the empty image.
 * save_dir (borrowed for the source's life; NULL = off) keeps a recording
 * that the CUPTI host API evaluates again without a GPU: save_dir/
 * config-devD.bin (the config image), counterdata-devD-NNNN.bin (the
 * counter-data image after each of the first save_passes decode passes
 * that completed samples) and index-devD.txt (chip, metrics, image size,
 * and per pass the samples' timestamps as `pass N sample I T0 T1`). */
cs_pm_source *cs_cupti_source_new(uint32_t device, int drop_unavailable, const char *save_dir,
				  unsigned save_passes);

#endif
