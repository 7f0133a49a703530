/*
 * cmd_import.c - `cyclescope import FORMAT FILE`: turns a file into a run.
 * The formats, their detection and gzip policies live in sim-bridge/
 * (importers.h); this file parses the options and reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "simrun.h"

#include "buf.h"
#include "cmds.h"
#include "collector_lib.h"
#include "importers.h"
#include "json.h"
#include "log.h"
#include "metric_map.h"
#include "producer.h"
#include "ranges_csv.h"
#include "reports.h"
#include "runs.h"

static int run_import(int argc, char **argv);

const cs_cmd cs_cmd_import = {
	"import", run_import, "import simulator or CSV statistics as a run",
	"usage: cyclescope import [FORMAT] FILE [--db F | --socket PATH] [--name NAME]\n"
	"                         [--map F] [--time-unit ns|cycle] [--kind hw|sim]\n"
	"                         [--clock-mhz MHZ] [--sample-cycles N] [--per-bank]\n"
	"                         [--ranges F] [--cumulative NAME,... | --per-window]\n"
	"                         [--format NAME] [--tz ZONE] [--json] [--job J]\n"
	"                         [--rank N] [--label K=V,...]\n"
	"                         [--time COL --metric COL[,COL...] --value COL [--kernel COL]]\n\n"
	"Imports FILE ('-' for stdin; gzip or plain) as one new run. Without FORMAT\n"
	"the format is detected from the content and named on stderr.\n\n"
	"Formats (docs/sim-bridge.md, docs/import-formats.md):\n"
	"  csv            wide CSV t0,t1[,device],<metric>,... (what 'export' writes),\n"
	"                 or the long form (csv-long)\n"
	"  csv-long       one row per time, metric and value (columns by their\n"
	"                 common names, or --time/--metric/--value/--kernel)\n"
	"  nvidia-smi     nvidia-smi --query-gpu=timestamp,... --format=csv logs\n"
	"  nvprof-csv     nvprof --csv reports: --print-gpu-trace, --metrics, summary\n"
	"  nsys-stats     nsys stats reports (CSV or columns; --stats=true job logs)\n"
	"  kineto         PyTorch profiler traces (*.pt.trace.json[.gz])\n"
	"  aerialvision   GPGPU-Sim visualizer log gpgpusim_visualizer__*.log.gz\n"
	"  accelsim-log   Accel-Sim or plain GPGPU-Sim (PTX mode) stdout with\n"
	"                 per-kernel statistics\n"
	"  accelsim-perf  Accel-Sim perf_counter_*.csv.gz\n"
	"  accelwattch    AccelWattch metric or power trace (*_trace_report__*.log.gz)\n"
	"  pm-cupti-csv   Accel-Sim pm_cupti_tools CSV (hardware)\n"
	"  kernbench      KernBench series t_ns,component,stat,value\n"
	"  ncu-csv        Nsight Compute 'ncu --csv --page raw' or '--page details'\n"
	"  nsys-sqlite    Nsight Systems 'nsys export --type sqlite' (kernels, copies,\n"
	"                 API calls, NVTX as ranges; GPU_METRICS as the series)\n"
	"  accelsim-stats Accel-Sim get_stats.py CSV (per-kernel statistics)\n"
	"  accelwattch-hw AccelWattch hardware-profiler CSV (hw_perf.csv, power)\n"
	"  nsys-rep, ncu-rep  Nsight reports: converted with nsys export / ncu\n"
	"                 --import when on PATH (else the command to run is said)\n\n"
	"Options:\n"
	"  --db F          write this database file directly\n"
	"  --socket PATH   send the run to the daemon listening at PATH\n"
	"                  (default: a daemon on the default socket if one runs,\n"
	"                  else $CYCLESCOPE_DB or ./cyclescope.db directly)\n"
	"  --name NAME     run name (default: the file's name)\n"
	"  --job J --rank N --label K=V,...  labels (over the file's own)\n"
	"  --time-unit U   unit of t0/t1: ns (default) or cycle\n"
	"  --kind K        hw or sim (default: hw for ns, sim for cycle)\n"
	"  --clock-mhz MHZ clock of the time axis, recorded with the run\n"
	"  --map F         a metric map (configs/metric-maps/): adds NCU-named\n"
	"                  metrics computed from the simulator's stats\n"
	"  --sample-cycles N  accelwattch: cycles per row (default 500)\n"
	"  --per-bank      aerialvision: also keep per-bank DRAM series\n"
	"  --cumulative NAME,...  these counters are running totals: store\n"
	"                  per-sample deltas (docs/sim-bridge.md)\n"
	"  --per-window    no such check: values as printed\n"
	"  --format NAME   the file's format (as FORMAT; no guessing)\n"
	"  --time COL, --metric COL[,COL...], --value COL, --kernel COL\n"
	"                  the long CSV's columns (several metric columns are\n"
	"                  joined with '.'); naming one implies csv-long\n"
	"  --tz ZONE       nvidia-smi: the zone of its local timestamps (UTC,\n"
	"                  Europe/Berlin, ...; default: this machine's)\n"
	"  --ranges F      also add these ranges to the run: a CSV with the header\n"
	"                  kind,name,t0,t1[,device,stream,correlation_id] (times in\n"
	"                  the run's unit), e.g. kernels from another tool\n"
	"  --json          say what was imported as one JSON object on stdout\n"
	"                  ({\"run\":N,\"name\":...,\"samples\":...,...})\n\n"
	"A file with an error is not imported at all: the message names the file,\n"
	"line and column.\n",
};

/* A progress bar on a terminal: bytes, percent, rate. */
typedef struct progress {
	int on;
	double t0, last;
	const char *label;
} progress;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show_progress(void *ctx, size_t done, size_t total)
{
	progress *pg = ctx;
	double t = now_s();
	if (!pg->on || (t - pg->last < 0.2 && done < total))
		return;
	pg->last = t;
	double el = t - pg->t0 > 1e-6 ? t - pg->t0 : 1e-6;
	int width = 30, fill = total ? (int)((double)done / (double)total * width) : width;
	fprintf(stderr, "\r%-24.24s [%.*s%*s] %5.1f%%  %.1f/%.1f MB  %.1f MB/s", pg->label, fill,
		"##############################", width - fill, "",
		total ? 100.0 * (double)done / (double)total : 100.0, (double)done / 1e6,
		(double)total / 1e6, (double)done / 1e6 / el);
	if (done >= total)
		fputc('\n', stderr);
}

static int run_import(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_import;
	/* NCU-named metrics that come without a unit get the catalog's */
	cs_producer_unit_source(cs_colllib_unit);
	const char *db = NULL, *name = NULL, *unit = NULL, *kind = NULL, *mhz = NULL;
	const char *socket_path = NULL, *map_path = NULL, *cycles = NULL, *ranges_path = NULL;
	const char *cumulative = NULL, *forced = NULL, *tz = NULL;
	const char *job = NULL, *rank = NULL, *label_kv = NULL;
	const char *col_time = NULL, *col_metric = NULL, *col_value = NULL, *col_kernel = NULL;
	int per_bank = 0, json = 0, per_window = 0;
	const cs_opt opts[] = {
		{"json", NULL, &json},
		{"db", &db, NULL},	   {"name", &name, NULL}, {"time-unit", &unit, NULL},
		{"kind", &kind, NULL},	   {"clock-mhz", &mhz, NULL}, {"socket", &socket_path, NULL},
		{"map", &map_path, NULL},  {"sample-cycles", &cycles, NULL},
		{"per-bank", NULL, &per_bank}, {"ranges", &ranges_path, NULL},
		{"cumulative", &cumulative, NULL}, {"per-window", NULL, &per_window},
		{"format", &forced, NULL}, {"tz", &tz, NULL},
		{"time", &col_time, NULL}, {"metric", &col_metric, NULL},
		{"value", &col_value, NULL}, {"kernel", &col_kernel, NULL},
		{"job", &job, NULL}, {"rank", &rank, NULL}, {"label", &label_kv, NULL},
		{NULL, NULL, NULL},
	};
	const char *pos[2];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 2, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (npos < 1)
		return cs_cli_usage_error(cmd, "expected [FORMAT] FILE");
	const char *format = npos == 2 ? pos[0] : NULL, *file = pos[npos - 1];
	if (forced && format && strcmp(forced, format))
		return cs_cli_usage_error(cmd, "two formats named: '%s' and --format %s", format,
					  forced);
	if (forced)
		format = forced;
	if (!format && (col_time || col_metric || col_value || col_kernel))
		format = "csv-long"; /* naming its columns says what the file is */
	char known[512];
	cs_importer_names(known, sizeof known);
	const cs_importer *im = cs_importer_find(format);
	if (format && !im)
		return cs_cli_usage_error(cmd, "unknown format '%s' (known: %s)", format, known);
	uint64_t sample_cycles = 0;
	if (cycles && (cs_cli_u64(cmd, "sample-cycles", cycles, &sample_cycles) < 0 || !sample_cycles))
		return cs_cli_usage_error(cmd, "--sample-cycles must be a positive integer");
	if (unit && strcmp(unit, "ns") && strcmp(unit, "cycle"))
		return cs_cli_usage_error(cmd, "--time-unit must be ns or cycle, not '%s'", unit);
	if (cumulative && per_window)
		return cs_cli_usage_error(cmd, "--cumulative and --per-window exclude each other");
	if (kind && strcmp(kind, "hw") && strcmp(kind, "sim"))
		return cs_cli_usage_error(cmd, "--kind must be hw or sim, not '%s'", kind);
	double clock_hz = 0;
	if (mhz) {
		char *end;
		clock_hz = strtod(mhz, &end) * 1e6;
		if (*end || !(clock_hz > 0 && clock_hz < 1e12))
			return cs_cli_usage_error(cmd, "--clock-mhz: expected a positive "
						       "number, got '%s'", mhz);
	}
	char err[1024];
	cs_mmap *map = NULL;
	if (map_path) {
		cs_cli_input mi;
		if (cs_cli_read_file(map_path, &mi, err, sizeof err))
			return cs_cli_fail(cmd, "--map %s", err);
		map = cs_mmap_parse(mi.data ? mi.data : "", mi.len, map_path, err, sizeof err);
		cs_cli_free_file(&mi);
		if (!map)
			return cs_cli_fail(cmd, "%s", err);
	}
	cs_range *ranges = NULL;
	size_t nranges = 0;
	if (ranges_path) {
		cs_cli_input ri;
		if (cs_cli_read_file(ranges_path, &ri, err, sizeof err)) {
			cs_mmap_free(map);
			return cs_cli_fail(cmd, "--ranges %s", err);
		}
		rc = cs_ranges_csv_parse(ri.data ? ri.data : "", ri.len, ranges_path, &ranges, &nranges,
					 err, sizeof err);
		cs_cli_free_file(&ri);
		if (rc < 0) {
			cs_mmap_free(map);
			return cs_cli_fail(cmd, "%s", err);
		}
	}
	/* A daemon that is running owns the database: send it the run. With
	 * --db, or when no daemon listens, write the file directly. */
	char sock[512];
	cs_producer *p = NULL;
	cs_store *s = NULL;
	const char *path = cs_cli_db_path(db);
	char unpacked[4300] = "";
	const char *sqlite_path = file;
	cs_cli_input in = {0};
	cs_buf labels = CS_BUF_INIT;
	if ((job || rank || label_kv) &&
	    (rc = cs_cli_labels(cmd, job, rank, label_kv, &labels)) != 0)
		goto done;
	if (cs_cli_read_file(file, &in, err, sizeof err)) {
		rc = cs_cli_fail(cmd, "%s", err);
		goto done;
	}
	/* A gzipped SQLite export is unpacked into a temporary file first. */
	if (cs_reports_gzipped_sqlite(in.data, in.len)) {
		if (cs_reports_gunzip(in.data, in.len, file, unpacked, sizeof unpacked, err,
				      sizeof err)) {
			rc = cs_cli_fail(cmd, "%s", err);
			goto done;
		}
		sqlite_path = unpacked;
	}
	/* A SQLite file given as text (a cyclescope database, an nsys export)
	 * would fail deep in a parser with a line that means nothing. */
	int is_sqlite = unpacked[0] || (in.len >= 16 && !memcmp(in.data, "SQLite format 3", 16));
	if (!im && strcmp(file, "-") && (im = cs_importer_detect_file(sqlite_path)))
		fprintf(stderr, "cyclescope import: %s looks like %s\n", file, im->name);
	int by_path = im && !im->read;
	if (by_path && !strcmp(file, "-")) {
		rc = cs_cli_fail(cmd, "%s is read from a file, not standard input", im->name);
		goto done;
	}
	if (is_sqlite && !by_path) {
		rc = cs_cli_fail(cmd, "%s is a SQLite database, not %s%s: a cyclescope "
				 "database is read with --db %s; an Nsight Systems export "
				 "(nsys-sqlite) has tables this one lacks (StringIds and "
				 "CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS or GPU_METRICS)", file,
				 format ? "a file of format " : "one of the import formats",
				 format ? format : "", file);
		goto done;
	}
	if (!im) {
		int config;
		im = cs_importer_detect(in.data ? in.data : "", in.len, &config);
		if (config) {
			rc = cs_cli_fail(cmd, "%s is a GPGPU-Sim/Accel-Sim config file (its option "
					 "lines, -gpgpu_...), not statistics: import what the simulator "
					 "printed (stdout, the visualizer log) instead", file);
			goto done;
		}
		if (!im) {
			char hints[4096];
			cs_importer_hints(in.data ? in.data : "", in.len, hints, sizeof hints);
			rc = cs_cli_fail(cmd, "%s: cannot tell the format from the content: %s\n"
					 "Name the format: cyclescope import FORMAT %s (or --format "
					 "FORMAT)", file, hints, file);
			goto done;
		}
		fprintf(stderr, "cyclescope import: %s looks like %s\n", file, im->name);
	}
	if (socket_path) {
		if (!(p = cs_producer_socket(socket_path, err, sizeof err))) {
			rc = cs_cli_fail(cmd, "%s", err);
			goto done;
		}
	} else if (!db) {
		cs_producer_default_socket(sock, sizeof sock);
		if (access(sock, F_OK) == 0 && (p = cs_producer_socket(sock, err, sizeof err)))
			socket_path = sock;
	}
	if (!p) {
		s = cs_cli_open(cmd, path, CS_CLI_WRITE);
		p = s ? cs_producer_direct(s) : NULL;
		if (!p) {
			rc = CS_EXIT_FAIL;
			goto done;
		}
	}
	progress pg = {.on = isatty(2) && in.len > (8u << 20), .t0 = now_s(),
		       .label = cs_simrun_base_name(file)};
	cs_import_opts io = {
		.label = strcmp(file, "-") ? file : "stdin",
		.name = name,
		.time_unit = unit,
		.kind = kind,
		.clock_hz = clock_hz,
		.map = map,
		.per_bank = per_bank,
		.cumulative = cumulative,
		.per_window = per_window,
		.sample_cycles = sample_cycles,
		.col_time = col_time,
		.col_metric = col_metric,
		.col_value = col_value,
		.col_kernel = col_kernel,
		.tz = tz,
		.progress = pg.on ? show_progress : NULL,
		.progress_ctx = &pg,
	};
	/* What the importer found (its accounting, counts) is said at info
	 * level: shown unless CYCLESCOPE_LOG asks otherwise. */
	enum cs_log_level was = cs_log_get_level();
	if (!getenv("CYCLESCOPE_LOG") && was < CS_LOG_INFO)
		cs_log_set_level(CS_LOG_INFO);
	cs_producer_extra_ranges(p, ranges, nranges);
	if (labels.len)
		cs_producer_labels(p, (const char *)labels.data);
	rc = cs_importer_run(im, p, in.data, in.len, sqlite_path, &io, err, sizeof err);
	cs_log_set_level(was);
	int64_t run = cs_producer_run(p);
	if (rc) {
		rc = cs_cli_fail(cmd, "%s (nothing was imported)", err);
	} else if (!s) {
		const char *label = cs_producer_run_label(p); /* "run <uuid>" */
		if (json) {
			cs_buf b = CS_BUF_INIT;
			int first = 1;
			cs_json_raw(&b, "{");
			cs_json_key(&b, &first, "run_uuid");
			cs_json_str(&b, strncmp(label, "run ", 4) ? label : label + 4);
			cs_json_key(&b, &first, "name");
			cs_json_str(&b, name ? name : io.label);
			cs_json_key(&b, &first, "socket");
			cs_json_str(&b, socket_path);
			cs_json_raw(&b, "}\n");
			fwrite(b.data, 1, b.len, stdout);
			cs_buf_free(&b);
		} else {
			cs_cli_say("imported %s '%s' through the daemon at %s (%llu samples, "
				   "committed)", label, name ? name : io.label, socket_path,
				   (unsigned long long)cs_producer_acked_samples(p));
		}
		rc = CS_EXIT_OK;
	} else {
		cs_run_summary sum;
		int srs = cs_runs_summary(s, run, &sum);
		if (srs == 0 && json) {
			cs_buf b = CS_BUF_INIT;
			int first = 1;
			cs_json_raw(&b, "{");
			cs_json_key(&b, &first, "run");
			cs_json_i64(&b, run);
			cs_json_key(&b, &first, "name");
			cs_json_str(&b, sum.name);
			cs_json_key(&b, &first, "samples");
			cs_json_i64(&b, sum.samples);
			cs_json_key(&b, &first, "metrics");
			cs_json_i64(&b, sum.metrics);
			cs_json_key(&b, &first, "devices");
			cs_json_i64(&b, sum.devices);
			cs_json_key(&b, &first, "db");
			cs_json_str(&b, path);
			cs_json_raw(&b, "}\n");
			fwrite(b.data, 1, b.len, stdout);
			cs_buf_free(&b);
		} else if (srs == 0) {
			cs_cli_say("imported run %lld '%s': %lld samples x %lld metrics on %lld "
				   "device(s) into %s", (long long)run, sum.name, (long long)sum.samples,
				   (long long)sum.metrics, (long long)sum.devices, path);
		}
		rc = CS_EXIT_OK;
	}
done:
	cs_buf_free(&labels);
	if (unpacked[0])
		cs_reports_cleanup(unpacked);
	cs_producer_free(p);
	cs_store_close(s);
	cs_cli_free_file(&in);
	cs_mmap_free(map);
	cs_ranges_csv_free(ranges, nranges);
	return rc;
}
