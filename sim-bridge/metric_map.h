/*
 * metric_map.h - simulator-stat to NCU-metric maps (cs_mmap_*), the
 * map files in configs/metric-maps/ (format in docs/sim-bridge.md):
 *
 *   # comment
 *   lts__t_sectors_srcunit_tex_op_read.sum = L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]
 *   dram__bytes_read.sum = 32 * "total dram reads"
 *   sm__inst_executed.sum = sum("m_num_sim_winsn_*")
 *
 * The right side is an expression of + - * / ( ), numbers, stat names
 * (bare when made of letters, digits and _ . [ ], else in double quotes)
 * sum("GLOB") over every stat whose name matches GLOB, sum_sm("NAME")
 * over the per-SM family NAME.sm[i], rate(EXPR) (EXPR per cycle of the
 * sample) and delta(EXPR) (EXPR minus its value at the previous sample:
 * a cumulative stat made per-interval; absent at the first sample). A
 * term whose stat is absent in a sample makes the result absent.
 *
 * Parsing takes (buf, len) and does no I/O. Immutable after parsing.
 */
#ifndef CS_METRIC_MAP_H
#define CS_METRIC_MAP_H

#include <stddef.h>

typedef struct cs_mmap cs_mmap;

/* NULL with "LABEL:LINE:COL: ..." in err. */
cs_mmap *cs_mmap_parse(const char *buf, size_t len, const char *label, char *err,
		       size_t errlen);
void cs_mmap_free(cs_mmap *m);

/* Entries (target = expression). */
size_t cs_mmap_count(const cs_mmap *m);
const char *cs_mmap_target(const cs_mmap *m, size_t i);
unsigned cs_mmap_line(const cs_mmap *m, size_t i);

/* The names the expressions use: each is a plain stat name or, when
 * is_glob, a sum("GLOB") pattern. The caller supplies one value per
 * name to cs_mmap_eval. */
size_t cs_mmap_names(const cs_mmap *m);
const char *cs_mmap_name(const cs_mmap *m, size_t k, int *is_glob);

/* Entry i evaluated with values[k] for name k (NaN = absent), for one
 * sample cycles long. state carries delta()'s previous values from one
 * sample to the next: cs_mmap_state_len(m) doubles, set up with
 * cs_mmap_state_init and passed for every sample in time order (NULL:
 * delta() is absent). cs_mmap_eval is this with no sample length and no
 * state (rate() and delta() absent). */
double cs_mmap_eval_sample(const cs_mmap *m, size_t i, const double *values, double cycles,
			   double *state);
double cs_mmap_eval(const cs_mmap *m, size_t i, const double *values);
size_t cs_mmap_state_len(const cs_mmap *m);
void cs_mmap_state_init(const cs_mmap *m, double *state);

/* 1 when entry i uses rate(): its values are per cycle, not counts. */
int cs_mmap_is_rate(const cs_mmap *m, size_t i);

/* 1 when entry i uses name k. */
int cs_mmap_uses(const cs_mmap *m, size_t i, size_t k);

#endif
