/*
 * aerialvision.h - GPGPU-Sim's visualizer log (cs_av_*): the
 * gpgpusim_visualizer__*.log.gz that -visualizer_enabled 1 writes, one
 * sample every -gpgpu_runtime_stat core cycles, each sample its own gzip
 * member, ending with its STmemlatdist line.
 *
 * Every key becomes metrics (docs/sim-bridge.md has the naming scheme):
 * per-SM arrays as NAME.sm[i] plus the all-SM sum NAME; per-channel DRAM
 * lines as NAME.ch[c] plus the total (or mean, for ratios); per-bank
 * access counts summed per channel (per bank too with per_bank);
 * breakdown arrays as NAME[i] or named bins. Cumulative keys become
 * per-interval deltas, window keys stay. The per-kernel globalcyclecount
 * is stitched into one cycle axis and each kernel is a sim-kernel range.
 * Unknown keys are kept as generic metrics and reported once.
 */
#ifndef CS_AERIALVISION_H
#define CS_AERIALVISION_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_aerialvision(cs_producer *p, const char *buf, size_t len,
			   const cs_import_opts *opts, char *err, size_t errlen);

/* 1 when the text looks like a visualizer log. */
int cs_av_sniff(const char *text);

#endif
