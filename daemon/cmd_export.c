/*
 * cmd_export.c - `cyclescope export RUN`: a run's series as wide CSV on
 * stdout, raw or bucketed. The raw form is what `import csv` reads, so
 * export -> import round-trips exactly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "csv.h"
#include "reader.h"

static int run_export(int argc, char **argv);

const cs_cmd cs_cmd_export = {
	"export", run_export, "write a run's series as CSV (raw or bucketed)",
	"usage: cyclescope export RUN [--db F] [--metric LIST] [--device N]\n"
	"                         [--from T] [--to T] [--buckets N]\n\n"
	"Writes RUN (an id, name or uuid) to standard output as RFC 4180 CSV:\n"
	"  t0,t1,<metric>,...          one row per sample, metrics as columns;\n"
	"                              an empty field is an absent value\n"
	"A device column comes first when any exported device is not device 0.\n\n"
	"Options:\n"
	"  --metric LIST  comma-separated metric names (default: all, in id order)\n"
	"  --device N     only device N (default: every device, one after another)\n"
	"  --from T       first t0 to include (run's time unit)\n"
	"  --to T         first t0 to leave out\n"
	"  --buckets N    N equal buckets over [from, to): columns\n"
	"                 t0,t1,<m>:min,<m>:max,<m>:mean,<m>:sum,<m>:count per metric\n",
};

typedef struct export_ctx {
	cs_csv w;
	int device_col;
	uint32_t device;
	uint32_t m;
} export_ctx;

static int on_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	export_ctx *e = ctx;
	(void)seq;
	if (e->device_col)
		cs_csv_u64(&e->w, e->device);
	cs_csv_u64(&e->w, t0);
	cs_csv_u64(&e->w, t1);
	for (uint32_t k = 0; k < e->m; k++)
		cs_csv_f64(&e->w, v[k]);
	cs_csv_end_row(&e->w);
	return e->w.rc;
}

static int on_bucket(void *ctx, uint32_t i, uint64_t t0, uint64_t t1, const cs_agg *a)
{
	export_ctx *e = ctx;
	(void)i;
	if (e->device_col)
		cs_csv_u64(&e->w, e->device);
	cs_csv_u64(&e->w, t0);
	cs_csv_u64(&e->w, t1);
	for (uint32_t k = 0; k < e->m; k++) {
		if (a[k].count) {
			cs_csv_f64(&e->w, a[k].min);
			cs_csv_f64(&e->w, a[k].max);
			cs_csv_f64(&e->w, a[k].sum / (double)a[k].count);
			cs_csv_f64(&e->w, a[k].sum);
		} else {
			for (int j = 0; j < 4; j++)
				cs_csv_empty(&e->w);
		}
		cs_csv_u64(&e->w, a[k].count);
	}
	cs_csv_end_row(&e->w);
	return e->w.rc;
}

/* Resolves --metric LIST into ids (all metrics when list is NULL). */
static int resolve_metrics(cs_store *s, int64_t run, const char *list, uint32_t **ids,
			   uint32_t *m)
{
	if (!list)
		return cs_read_metric_ids(s, run, ids, m);
	char *copy = strdup(list);
	uint32_t cap = 1;
	for (const char *c = list; *c; c++)
		cap += *c == ',';
	*ids = malloc(cap * sizeof **ids);
	*m = 0;
	int rc = copy && *ids ? 0 : -ENOMEM;
	char *save = NULL;
	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !rc;
	     tok = strtok_r(NULL, ",", &save))
		rc = cs_read_metric_id(s, run, tok, &(*ids)[(*m)++]);
	free(copy);
	if (!rc && !*m)
		rc = -EINVAL;
	return rc;
}

static int run_export(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_export;
	const char *db = NULL, *metric = NULL, *device = NULL, *from = NULL, *to = NULL,
		   *buckets = NULL;
	const cs_opt opts[] = {
		{"db", &db, NULL},	   {"metric", &metric, NULL}, {"device", &device, NULL},
		{"from", &from, NULL},	   {"to", &to, NULL},	      {"buckets", &buckets, NULL},
		{NULL, NULL, NULL},
	};
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 1, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (npos != 1)
		return cs_cli_usage_error(cmd, "expected a RUN (id, name or uuid)");
	uint64_t dev = 0, t_from = 0, t_to = UINT64_MAX, nb = 0;
	if ((device && cs_cli_u64(cmd, "device", device, &dev)) ||
	    (from && cs_cli_u64(cmd, "from", from, &t_from)) ||
	    (to && cs_cli_u64(cmd, "to", to, &t_to)) ||
	    (buckets && cs_cli_u64(cmd, "buckets", buckets, &nb)))
		return CS_EXIT_USAGE;
	if (buckets && (nb == 0 || nb > 10000000))
		return cs_cli_usage_error(cmd, "--buckets must be 1..10000000");
	if (t_to <= t_from)
		return cs_cli_usage_error(cmd, "--to must be greater than --from");
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), CS_CLI_READ);
	if (!s)
		return CS_EXIT_FAIL;
	int64_t run;
	uint32_t *ids = NULL, m = 0, *devs = NULL, ndev = 0;
	export_ctx e;
	cs_csv_init(&e.w, cs_cli_stdout_sink, NULL);
	rc = cs_read_find_run(s, pos[0], &run);
	if (!rc)
		rc = resolve_metrics(s, run, metric, &ids, &m);
	if (!rc)
		rc = cs_read_devices(s, run, &devs, &ndev);
	if (rc) {
		rc = cs_cli_fail(cmd, "%s", rc == -EINVAL ? "--metric names no metric"
							   : cs_store_errmsg(s));
		goto out;
	}
	if (device) {
		uint32_t found = 0;
		for (uint32_t i = 0; i < ndev; i++)
			found |= devs[i] == dev;
		if (!found) {
			rc = cs_cli_fail(cmd, "run %lld has no samples for device %llu",
					 (long long)run, (unsigned long long)dev);
			goto out;
		}
		devs[0] = (uint32_t)dev;
		ndev = 1;
	}
	e.m = m;
	e.device_col = 0;
	for (uint32_t i = 0; i < ndev; i++)
		e.device_col |= devs[i] != 0;
	if (buckets && !to) {
		uint64_t t_min, t_max;
		rc = cs_read_run_span(s, run, &t_min, &t_max);
		if (rc == -ENODATA) {
			t_min = t_max = 0;
		} else if (rc) {
			rc = cs_cli_fail(cmd, "%s", cs_store_errmsg(s));
			goto out;
		}
		if (!from)
			t_from = t_min;
		t_to = t_max + 1 > t_from ? t_max + 1 : t_from + 1;
	}
	/* header */
	if (e.device_col)
		cs_csv_str(&e.w, "device");
	cs_csv_str(&e.w, "t0");
	cs_csv_str(&e.w, "t1");
	for (uint32_t k = 0; k < m; k++) {
		char name[512];
		rc = cs_read_metric_name(s, run, ids[k], name, sizeof name);
		if (rc) {
			rc = cs_cli_fail(cmd, "%s", cs_store_errmsg(s));
			goto out;
		}
		if (!buckets) {
			cs_csv_str(&e.w, name);
			continue;
		}
		static const char *const stats[] = {"min", "max", "mean", "sum", "count"};
		for (int j = 0; j < 5; j++) {
			char col[600];
			snprintf(col, sizeof col, "%s:%s", name, stats[j]);
			cs_csv_str(&e.w, col);
		}
	}
	cs_csv_end_row(&e.w);
	for (uint32_t i = 0; i < ndev && !rc; i++) {
		cs_scan q = {run, devs[i], m, ids, t_from, t_to};
		e.device = devs[i];
		rc = buckets ? cs_read_buckets(s, &q, (uint32_t)nb, on_bucket, &e, NULL)
			     : cs_read_raw(s, &q, on_row, &e);
	}
	if (!rc)
		rc = cs_csv_flush(&e.w);
	if (rc)
		rc = cs_cli_fail(cmd, "%s", e.w.rc ? "cannot write to standard output"
						    : cs_store_errmsg(s));
out:
	cs_csv_finish(&e.w);
	free(ids);
	free(devs);
	cs_store_close(s);
	return rc ? CS_EXIT_FAIL : CS_EXIT_OK;
}
