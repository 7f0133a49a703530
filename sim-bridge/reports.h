/*
 * reports.h - Nsight's binary reports (cs_import_nsys_rep,
 * cs_import_ncu_rep): cyclescope reads what the tools export from them,
 * so a report is converted with the tool when it is on PATH,
 *
 *   nsys export --type sqlite --force-overwrite true --output TMP.sqlite F
 *   ncu --import F --csv --page raw > TMP.csv
 *
 * into a temporary directory (TMPDIR, else /tmp) removed afterwards, and
 * that export imported (nsys_sqlite.h, ncu_csv.h). Without the tool, the
 * error says the exact commands to run where it is. Also: a gzipped
 * SQLite export is unpacked the same way (cs_reports_gunzip).
 */
#ifndef CS_REPORTS_H
#define CS_REPORTS_H

#include <stddef.h>

#include "import_csv.h"
#include "producer.h"

int cs_import_nsys_rep(cs_producer *p, const char *path, const cs_import_opts *o, char *err,
		       size_t errlen);
int cs_import_ncu_rep(cs_producer *p, const char *path, const cs_import_opts *o, char *err,
		      size_t errlen);

/* Whether path names an Nsight Systems report (.nsys-rep, .qdrep) or an
 * Nsight Compute report (.ncu-rep), by its name. */
int cs_reports_is_nsys(const char *path);
int cs_reports_is_ncu(const char *path);

/* buf is gzip whose content is a SQLite file: 1, else 0. */
int cs_reports_gzipped_sqlite(const char *buf, size_t len);

/* Unpacks such a file into a new temporary directory: its path into out
 * (remove it with cs_reports_cleanup). 0, or a negative errno with err. */
int cs_reports_gunzip(const char *buf, size_t len, const char *label, char *out, size_t outlen,
		      char *err, size_t errlen);

/* Removes a file made by cs_reports_gunzip and its directory. */
void cs_reports_cleanup(const char *path);

#endif
