/*
 * test_source.h - a PM-sampling source that makes samples from the clock
 * (cs_test_source_new): a test seam in the injection library, chosen with
 * CYCLESCOPE_SOURCE=test (docs/collector.md), so that a real process can
 * load the collector through InitializeInjection, register with a real
 * daemon and be armed and triggered on a machine without a GPU.
 *
 * While started it completes one sample per interval on the grid of the
 * wall clock (CLOCK_REALTIME, as CUPTI stamps): sample k spans
 * [k * interval, (k + 1) * interval) ns, and metric j of device d has the
 * value cs_test_source_value(k, j, d), so a test recomputes every stored
 * value on its own. A decode returns the samples completed since the last
 * one (after a stop, those completed before it).
 */
#ifndef CS_TEST_SOURCE_H
#define CS_TEST_SOURCE_H

#include <stdint.h>

#include "source.h"

/* (k mod 997) * (j + 1) + d: small exact integers. */
double cs_test_source_value(uint64_t k, uint32_t metric, uint32_t device);

/* The source for device; NULL when out of memory. */
cs_pm_source *cs_test_source_new(uint32_t device);

#endif
