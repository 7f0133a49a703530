/*
 * prom.h - Prometheus text exposition helpers (cs_prom_*), for GET /metrics.
 */
#ifndef CS_PROM_H
#define CS_PROM_H

#include <stdint.h>

#include "buf.h"

/* Appends "# HELP", "# TYPE" and the sample line of one metric. type is
 * "counter" or "gauge". */
void cs_prom_metric(cs_buf *out, const char *name, const char *type, const char *help,
		    uint64_t value);

#endif
