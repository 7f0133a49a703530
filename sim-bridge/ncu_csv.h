/*
 * ncu_csv.h - Nsight Compute CSV exports (cs_import_ncu_csv): `ncu --csv
 * --page raw` (one row per profiled kernel, one column per metric, a
 * units row second) and `--page details` (one row per kernel and metric,
 * display names with their units). Each becomes a hardware run of
 * kernels: one sample and one `kernel` range per kernel, laid end to end
 * in file order on a cumulative-duration axis (gpu__time_duration, or the
 * details page's Duration; 1 us per kernel without one), metric values
 * converted to base units (ns, byte, Hz: docs/import-formats.md).
 */
#ifndef CS_NCU_CSV_H
#define CS_NCU_CSV_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_ncu_csv(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		      char *err, size_t errlen);

/* Whether text (a file's head) is an ncu CSV: a line starting with
 * "ID","Process ID" (after ncu's ==PROF== lines, if any). */
int cs_ncu_csv_sniff(const char *text);

/* Converts value v in unit u (as ncu prints units: "usecond", "Kbyte",
 * "Ghz", "byte/second", "%") into the base unit, written to base:
 * returns the factor (1 when the unit is not a known scaled one). */
double cs_ncu_unit(const char *u, char *base, size_t baselen);

#endif
