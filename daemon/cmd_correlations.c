/*
 * cmd_correlations.c - `cyclescope correlations`: the suite correlations
 * saved with `correlate --suite --save` (corrs.h): listed, one shown
 * whole, one deleted, or their trend as an SVG figure.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "corrs.h"
#include "suite_out.h"

static int run_correlations(int argc, char **argv);

const cs_cmd cs_cmd_correlations = {
	"correlations", run_correlations, "list saved suite correlations and draw their trend",
	"usage: cyclescope correlations [--db F] [--json]\n"
	"       cyclescope correlations show ID [--db F]\n"
	"       cyclescope correlations delete ID [--db F]\n"
	"       cyclescope correlations trend [-o FILE.svg] [--db F]\n\n"
	"The suite correlations kept by 'correlate --suite --save [--label TEXT]'\n"
	"(docs/correlation.md): a line per saved correlation, statistic and\n"
	"configuration with its pairs, Pearson r, MAPE, kernels within 10% and\n"
	"aggregate error; --json the same as GET /api/v1/correlations (each with the\n"
	"command that made it). show prints one's whole answer (its JSON); delete\n"
	"removes one; trend draws each statistic's MAPE per configuration across them,\n"
	"in the order saved, so a simulator change that made things worse shows.\n",
};

static void when(int64_t ns, char *out, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(out, len, "%Y-%m-%d %H:%M", &tm);
	else
		snprintf(out, len, "-");
}

static int list(const cs_cmd *cmd, cs_store *s, int json)
{
	cs_buf b = {0};
	int rc;
	if (json) {
		rc = cs_corrs_json(s, &b);
		if (rc == 0)
			cs_buf_printf(&b, "\n");
	} else {
		cs_corr_point *p = NULL;
		size_t n = 0;
		rc = cs_corrs_points(s, &p, &n);
		if (rc == 0)
			cs_buf_printf(&b, "%4s  %-16s  %-20s  %-28s  %-14s %6s %8s %8s %6s %9s\n", "ID", "SAVED (UTC)",
				      "LABEL", "STATISTIC", "CONFIGURATION", "PAIRS", "PEARSON", "MAPE%",
				      "IN_10%", "AGGR_ERR%");
		for (size_t i = 0; rc == 0 && i < n; i++) {
			char t[32];
			when(p[i].created_ns, t, sizeof t);
			cs_buf_printf(&b, "%4lld  %-16s  %-20.20s  %-28.28s  %-14.14s %6lld %8.4f %8.2f %6lld %9.2f\n",
				      (long long)p[i].id, t, p[i].label, p[i].statistic, p[i].configuration,
				      (long long)p[i].pairs, p[i].pearson, p[i].mape_pct,
				      (long long)p[i].within_10pct, p[i].aggregate_error_pct);
		}
		free(p);
	}
	int wrote = rc == 0 && fwrite(b.data, 1, b.len, stdout) == b.len;
	cs_buf_free(&b);
	return rc < 0 ? cs_cli_fail(cmd, "%s", cs_store_errmsg(s))
	       : !wrote ? cs_cli_fail(cmd, "writing the output failed") : CS_EXIT_OK;
}

static int run_correlations(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_correlations;
	const char *db = NULL, *outfile = NULL;
	int json = 0;
	const cs_opt opts[] = {
		{"db", &db, NULL}, {"json", NULL, &json}, {"output", &outfile, NULL}, {NULL, NULL, NULL},
	};
	const char *pos[2];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 2, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	const char *verb = npos ? pos[0] : "list";
	int show = !strcmp(verb, "show"), del = !strcmp(verb, "delete"), trend = !strcmp(verb, "trend");
	if (!show && !del && !trend && strcmp(verb, "list"))
		return cs_cli_usage_error(cmd, "unknown action '%s' (show, delete or trend)", verb);
	uint64_t id = 0;
	if ((show || del) && (npos != 2 || cs_cli_u64(cmd, "ID", pos[1], &id) < 0))
		return npos != 2 ? cs_cli_usage_error(cmd, "%s: expected ID", verb) : CS_EXIT_USAGE;
	if ((!show && !del && npos > 1))
		return cs_cli_usage_error(cmd, "unexpected argument '%s'", pos[1]);
	cs_store *s = cs_cli_open(cmd, cs_cli_db_path(db), del ? CS_CLI_READ : CS_CLI_READONLY);
	if (!s)
		return CS_EXIT_FAIL;
	cs_buf b = {0};
	char err[1024];
	if (!npos || !strcmp(verb, "list")) {
		rc = list(cmd, s, json);
	} else if (del) {
		rc = cs_corrs_delete(s, (int64_t)id);
		rc = rc == -ENOENT ? cs_cli_fail(cmd, "no saved correlation %llu", (unsigned long long)id)
		     : rc < 0 ? cs_cli_fail(cmd, "%s", cs_store_errmsg(s)) : CS_EXIT_OK;
	} else if (show) {
		rc = cs_corrs_result(s, (int64_t)id, &b);
		if (rc == 0)
			cs_buf_printf(&b, "\n");
		rc = rc == -ENOENT ? cs_cli_fail(cmd, "no saved correlation %llu", (unsigned long long)id)
		     : rc < 0 ? cs_cli_fail(cmd, "%s", cs_store_errmsg(s))
		     : fwrite(b.data, 1, b.len, stdout) == b.len ? CS_EXIT_OK
								  : cs_cli_fail(cmd, "writing the output failed");
	} else {
		rc = cs_suite_trend_svg(s, &b, err, sizeof err);
		rc = rc < 0 ? cs_cli_fail(cmd, "%s", err) : cs_cli_write(cmd, outfile, b.data, b.len, 1, json);
	}
	cs_buf_free(&b);
	cs_store_close(s);
	return rc;
}
