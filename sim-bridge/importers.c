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
#include "kineto.h"
#include "ncu_csv.h"
#include "nsys_sqlite.h"
#include "nsys_stats.h"
#include "nvprof.h"
#include "nvsmi.h"
#include "reports.h"
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
	{"ncu-csv", cs_import_ncu_csv, NULL, 1, cs_ncu_csv_sniff, NULL,
	 "\"ID\",\"Process ID\",\"Process Name\",... (ncu --csv)"},
	{"kineto", cs_import_kineto, NULL, 0, cs_kineto_sniff, NULL,
	 "{\"schemaVersion\": 1, \"deviceProperties\": ..., \"traceEvents\": [... (PyTorch profiler)"},
	{"accelsim-stats", cs_import_accelsim_stats, NULL, 1, sniff_stats, NULL,
	 "a line of dashes, a statistic, APPS,<config>... (get_stats.py)"},
	{"accelwattch-hw", cs_import_accelwattch_hw, NULL, 1, sniff_awhw, NULL,
	 "Benchmark,Kernel,... or ,mean HW_power"},
	{"nvidia-smi", cs_import_nvsmi, NULL, 0, cs_nvsmi_sniff, NULL,
	 "timestamp, index, power.draw [W], ... (nvidia-smi --query-gpu --format=csv)"},
	{"nvprof-csv", cs_import_nvprof, NULL, 0, cs_nvprof_sniff, NULL,
	 "\"Start\",\"Duration\",..., \"Device\",\"Kernel\",\"Invocations\",... or "
	 "\"Type\",\"Time(%)\",... (nvprof --csv)"},
	{"nsys-stats", cs_import_nsys_stats, NULL, 0, cs_nsys_stats_sniff, NULL,
	 "Start (ns),Duration (ns),... or ' Time (%)  Total Time (ns)  Instances ...' and its "
	 "dashes, or '[3/8] Executing 'cuda_gpu_kern_sum' stats report' (nsys stats)"},
	{"csv", import_csv_any, NULL, 0, sniff_csv, NULL, "t0,t1[,device],<metric>,..."},
	{"csv-long", cs_import_csv_long, NULL, 0, NULL, NULL,
	 "a header naming a time, a metric and a value column (t,metric,value; "
	 "timestamp,metric_name,metric_value; or name them with --time --metric --value)"},
	{"accelsim-perf", cs_import_accelsim_perf, NULL, 0, sniff_perf, NULL,
	 "gpu_tot_sim_cycle,gpu_sim_cycle,..."},
	{"accelwattch", cs_import_accelwattch, NULL, 0, sniff_aw, NULL,
	 "TOT_INST,FP_INT,... or power,IBP,..."},
	{"pm-cupti-csv", cs_import_pm_cupti_csv, NULL, 0, sniff_pmcupti, NULL,
	 "a header with StartTimestamp,EndTimestamp"},
	{"kernbench", cs_import_kernbench, NULL, 0, sniff_kernbench, NULL,
	 "t_ns,component,stat,value"},
	{"aerialvision", cs_import_aerialvision, NULL, 0, cs_av_sniff, NULL,
	 "globalcyclecount: N lines (gpgpusim_visualizer__*.log.gz)"},
	{"accelsim-log", cs_import_accelsim_log, NULL, 0, cs_accelsim_log_sniff, NULL,
	 "lines starting GPGPU-Sim PTX:, GPGPU-Sim uArch:, kernel_name = or Accel-Sim [build"},
	{"nsys-sqlite", NULL, cs_import_nsys_sqlite, 0, NULL, sniff_nsys,
	 "a SQLite file with StringIds and CUPTI_ACTIVITY_KIND_* tables (nsys export --type "
	 "sqlite; gzipped too)"},
	{"nsys-rep", NULL, cs_import_nsys_rep, 0, NULL, cs_reports_is_nsys,
	 "an Nsight Systems report (.nsys-rep, .qdrep): converted with nsys export"},
	{"ncu-rep", NULL, cs_import_ncu_rep, 0, NULL, cs_reports_is_ncu,
	 "an Nsight Compute report (.ncu-rep): converted with ncu --import --csv"},
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

void cs_importer_hints(const char *buf, size_t len, char *out, size_t outlen)
{
	char first[81];
	cs_textin_peek(buf, len, first, sizeof first);
	first[strcspn(first, "\r\n")] = '\0';
	int binary = 0;
	for (const unsigned char *c = (const unsigned char *)first; *c; c++)
		if (*c < 0x20 && *c != '\t')
			binary = 1;
	size_t off = (size_t)snprintf(out, outlen, "%s%s%s; what each format starts with:",
				      binary ? "it is not text" : "its first line is '",
				      binary ? "" : first, binary ? "" : "'");
	for (size_t i = 0; i < NTABLE && off < outlen; i++)
		off += (size_t)snprintf(out + off, outlen - off, "\n  %-15s %s", table[i].name,
					table[i].looks);
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
