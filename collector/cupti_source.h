/*
 * cupti_source.h - the PM-sampling source on CUPTI (cs_cupti_source_*).
 */
#ifndef CS_CUPTI_SOURCE_H
#define CS_CUPTI_SOURCE_H

#include <stdint.h>

#include "source.h"

/* A source for CUDA device ordinal device; nothing touches the GPU until
 * the engine's control thread configures it. NULL when out of memory. */
cs_pm_source *cs_cupti_source_new(uint32_t device);

#endif
