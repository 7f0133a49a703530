/*
 * importers.c - the table of import formats (importers.h). Its order is
 * the order in which content is guessed: the formats with the most
 * specific header first (Nsight Compute's, Accel-Sim's tables), then the
 * CSV dialects (one header line each), then the simulator logs.
 */
#include "importers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accelsim_log.h"
#include "accelsim_tables.h"
#include "aerialvision.h"
#include "ncu_csv.h"
#include "nsys_sqlite.h"
#include "nvprof.h"
#include "nvsmi.h"
#include "simcsv.h"
#include "textin.h"

#define HEAD_BYTES 65536 /* what the sniffers see of a file */

/* --- sniffers for the formats whose module recognises several --------- */

static int is_tables(const char *head, const char *name)
{
	const char *t = cs_accelsim_tables_sniff(head);
	return t && !strcmp(t, name);
}
static int sniff_stats(const char *head) { return is_tables(head, "accelsim-stats"); }
static int sniff_awhw(const char *head) { return is_tables(head, "accelwattch-hw"); }

static int is_simcsv(const char *head, const char *name)
{
	const char *f = cs_simcsv_sniff(head);
	return f && !strcmp(f, name);
}
static int sniff_csv(const char *head)
{
	return is_simcsv(head, "csv") || is_simcsv(head, "csv-long");
}
static int sniff_perf(const char *head) { return is_simcsv(head, "accelsim-perf"); }
static int sniff_aw(const char *head) { return is_simcsv(head, "accelwattch"); }
static int sniff_pmcupti(const char *head) { return is_simcsv(head, "pm-cupti-csv"); }
static int sniff_kernbench(const char *head) { return is_simcsv(head, "kernbench"); }
static int sniff_nsys(const char *path) { return cs_nsys_sqlite_sniff(path) == 1; }

/* csv is the wide form unless its header names the long one; the wide
 * form is read uncompressed. */
static int import_csv_any(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
			  char *err, size_t errlen)
{
	char head[4096];
	cs_textin_peek(buf, len, head, sizeof head);
	if (is_simcsv(head, "csv-long"))
		return cs_import_csv_long(p, buf, len, o, err, errlen);
	if (cs_textin_is_gzip(buf, len)) {
		snprintf(err, errlen, "%s: a gzip file; the wide csv form is read uncompressed "
			 "(zcat it first)", o->label);
		return -EINVAL;
	}
	return cs_import_csv(p, buf, len, o, err, errlen);
}

static const cs_importer table[] = {
	{"ncu-csv", cs_import_ncu_csv, NULL, 1, cs_ncu_csv_sniff, NULL},
	{"accelsim-stats", cs_import_accelsim_stats, NULL, 1, sniff_stats, NULL},
	{"accelwattch-hw", cs_import_accelwattch_hw, NULL, 1, sniff_awhw, NULL},
	{"nvidia-smi", cs_import_nvsmi, NULL, 0, cs_nvsmi_sniff, NULL},
	{"nvprof-csv", cs_import_nvprof, NULL, 0, cs_nvprof_sniff, NULL},
	{"csv", import_csv_any, NULL, 0, sniff_csv, NULL},
	{"csv-long", cs_import_csv_long, NULL, 0, NULL, NULL},
	{"accelsim-perf", cs_import_accelsim_perf, NULL, 0, sniff_perf, NULL},
	{"accelwattch", cs_import_accelwattch, NULL, 0, sniff_aw, NULL},
	{"pm-cupti-csv", cs_import_pm_cupti_csv, NULL, 0, sniff_pmcupti, NULL},
	{"kernbench", cs_import_kernbench, NULL, 0, sniff_kernbench, NULL},
	{"aerialvision", cs_import_aerialvision, NULL, 0, cs_av_sniff, NULL},
	{"accelsim-log", cs_import_accelsim_log, NULL, 0, cs_accelsim_log_sniff, NULL},
	{"nsys-sqlite", NULL, cs_import_nsys_sqlite, 0, NULL, sniff_nsys},
};
#define NTABLE (sizeof table / sizeof *table)

const cs_importer *cs_importer_find(const char *name)
{
	for (size_t i = 0; name && i < NTABLE; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

void cs_importer_names(char *buf, size_t len)
{
	size_t off = 0;
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < NTABLE && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", table[i].name);
}

const cs_importer *cs_importer_detect(const char *buf, size_t len, int *config)
{
	const cs_importer *found = NULL;
	*config = 0;
	char *head = malloc(HEAD_BYTES);
	if (!head)
		return NULL;
	cs_textin_peek(buf, len, head, HEAD_BYTES);
	for (size_t i = 0; i < NTABLE && !found; i++)
		if (table[i].sniff && table[i].sniff(head))
			found = &table[i];
	/* a simulator's stdout starts with its option dump: only without the
	 * simulator's own lines is it a config file */
	if (!found)
		*config = cs_gpgpusim_config_sniff(head);
	free(head);
	return found;
}

const cs_importer *cs_importer_detect_file(const char *path)
{
	for (size_t i = 0; i < NTABLE; i++)
		if (table[i].sniff_file && table[i].sniff_file(path))
			return &table[i];
	return NULL;
}

int cs_importer_run(const cs_importer *im, cs_producer *p, const char *buf, size_t len,
		    const char *path, const cs_import_opts *o, char *err, size_t errlen)
{
	if (!im->read) {
		if (!path || !strcmp(path, "-")) {
			snprintf(err, errlen, "%s is read from a file, not standard input", im->name);
			return -EINVAL;
		}
		return im->read_file(p, path, o, err, errlen);
	}
	if (im->plain_only && cs_textin_is_gzip(buf, len)) {
		snprintf(err, errlen, "%s: a gzip file; this format is read uncompressed (zcat it "
			 "first)", o->label);
		return -EINVAL;
	}
	return im->read(p, buf, len, o, err, errlen);
}
