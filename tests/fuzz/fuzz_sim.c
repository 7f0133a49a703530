/*
 * fuzz_sim.c - libFuzzer target: every simulator importer and the metric
 * map parser on any bytes, into an in-memory store. The first byte picks
 * the importer. A run must end complete or leave nothing behind.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accelsim_log.h"
#include "aerialvision.h"
#include "kineto.h"
#include "log.h"
#include "metric_map.h"
#include "nsys_stats.h"
#include "nvprof.h"
#include "nvsmi.h"
#include "producer.h"
#include "simcsv.h"
#include "store.h"

typedef int (*import_fn)(cs_producer *, const char *, size_t, const cs_import_opts *, char *,
			 size_t);

static const import_fn fns[] = {
	cs_import_aerialvision, cs_import_accelsim_log, cs_import_accelsim_perf,
	cs_import_accelwattch,	cs_import_pm_cupti_csv, cs_import_kernbench,
	cs_import_csv_long,	cs_import_nvsmi,	cs_import_nvprof,
	cs_import_nsys_stats,	cs_import_kineto,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static cs_store *s;
	static unsigned uses;
	char err[1024];
	if (size < 1)
		return 0;
	cs_log_set_level(CS_LOG_ERROR);
	unsigned pick = data[0] % (sizeof fns / sizeof *fns + 1);
	const char *buf = (const char *)data + 1;
	size_t len = size - 1;
	if (pick == sizeof fns / sizeof *fns) {
		/* Parsed maps are evaluated too: two samples, so delta() has
		 * state and rate() a length. */
		cs_mmap *m = cs_mmap_parse(buf, len, "fuzz.map", err, sizeof err);
		size_t nn = cs_mmap_names(m), ns = cs_mmap_state_len(m);
		double *v = calloc(nn + 1, sizeof *v), *state = calloc(ns + 1, sizeof *state);
		cs_mmap_state_init(m, state);
		for (int pass = 0; v && state && pass < 2; pass++)
			for (size_t i = 0; i < cs_mmap_count(m); i++) {
				for (size_t k = 0; k < nn; k++)
					v[k] = (double)(k + (size_t)pass * 3);
				(void)cs_mmap_eval_sample(m, i, v, pass ? 0 : 100, state);
			}
		free(v);
		free(state);
		cs_mmap_free(m);
		return 0;
	}
	if (!s || ++uses % 500 == 0) {
		cs_store_close(s);
		s = cs_store_open(":memory:", CS_OPEN_CREATE, err, sizeof err);
		if (!s)
			abort();
	}
	cs_producer *p = cs_producer_direct(s);
	cs_import_opts o = {.label = "fuzz", .per_bank = data[0] & 0x80};
	fns[pick](p, buf, len, &o, err, sizeof err);
	cs_producer_free(p);
	return 0;
}
