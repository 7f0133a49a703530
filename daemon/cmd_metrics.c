/*
 * cmd_metrics.c - `cyclescope metrics`: the offline PM-sampling catalog of
 * a chip and single-pass checks of metric sets, through the CUPTI host
 * API (no GPU or driver needed) in libcyclescope_collector.so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmds.h"
#include "collector_lib.h"
#include "json.h"

static int run_metrics(int argc, char **argv);

const cs_cmd cs_cmd_metrics = {
	"metrics", run_metrics, "list PM-sampling metrics of a chip, check a metric set",
	"usage: cyclescope metrics [--chip GH100] [--check LIST|@FILE] [--all] [--json]\n\n"
	"Without --check, lists every metric PM sampling accepts in one pass on the\n"
	"chip (base metrics with their default rollup: .sum, .ratio,\n"
	".avg.pct_of_peak_sustained_elapsed), with kind, unit, hardware unit and\n"
	"description; --all adds the ones needing more passes (passes > 1) or refused\n"
	"(passes 0). Columns are tab-separated: name, kind, unit, hw, passes, description.\n\n"
	"--check says whether a set fits one pass, the estimated hardware-buffer bytes\n"
	"per sample, and otherwise which metric breaks it (exit status 1). LIST is\n"
	"comma-separated; @FILE reads names from a file or a shipped set\n"
	"(@hopper-l2, @general, @memory-io: configs/metric-sets/).\n\n"
	"Works offline through the CUPTI host API; the chip names are CUPTI's (GH100\n"
	"for H100/H200, GA100, AD102, GB100, ...).\n",
};

typedef struct list_ctx {
	int json;
	size_t n;
	cs_buf out;
} list_ctx;

static int print_metric(void *c, const cs_cat_metric *m)
{
	list_ctx *ctx = c;
	if (ctx->json) {
		cs_buf *b = &ctx->out;
		int first = 1;
		cs_json_raw(b, ctx->n ? ",\n{" : "{");
		cs_json_key(b, &first, "name");
		cs_json_str(b, m->name);
		cs_json_key(b, &first, "kind");
		cs_json_str(b, m->kind);
		cs_json_key(b, &first, "unit");
		cs_json_str(b, m->unit);
		cs_json_key(b, &first, "hw_unit");
		cs_json_str(b, m->hw_unit);
		cs_json_key(b, &first, "passes");
		cs_json_i64(b, m->passes);
		cs_json_key(b, &first, "description");
		cs_json_str(b, m->description);
		cs_json_raw(b, "}");
		if (b->len > (1u << 16)) {
			fwrite(b->data, 1, b->len, stdout);
			cs_buf_reset(b);
		}
	} else {
		printf("%s\t%s\t%s\t%s\t%d\t%s\n", m->name, m->kind, m->unit ? m->unit : "",
		       m->hw_unit ? m->hw_unit : "", m->passes, m->description ? m->description : "");
	}
	ctx->n++;
	return 0;
}

static void print_check(const char *chip, char **names, size_t n, const cs_cat_check *c,
			int json)
{
	if (json) {
		cs_buf b = {0};
		int first = 1;
		cs_json_raw(&b, "{");
		cs_json_key(&b, &first, "chip");
		cs_json_str(&b, chip);
		cs_json_key(&b, &first, "metrics");
		cs_json_raw(&b, "[");
		for (size_t i = 0; i < n; i++) {
			if (i)
				cs_json_raw(&b, ",");
			cs_json_str(&b, names[i]);
		}
		cs_json_raw(&b, "]");
		cs_json_key(&b, &first, "single_pass");
		cs_json_raw(&b, c->passes == 1 ? "true" : "false");
		cs_json_key(&b, &first, "passes");
		cs_json_i64(&b, c->passes);
		cs_json_key(&b, &first, "bad");
		if (c->bad >= 0)
			cs_json_str(&b, names[c->bad]);
		else
			cs_json_raw(&b, "null");
		cs_json_key(&b, &first, "reason");
		cs_json_str(&b, c->passes == 1 ? NULL : c->reason);
		cs_json_key(&b, &first, "bytes_per_sample");
		cs_json_i64(&b, (int64_t)c->bytes_per_sample);
		cs_json_raw(&b, "}\n");
		fwrite(b.data, 1, b.len, stdout);
		cs_buf_free(&b);
		return;
	}
	if (c->passes != 1)
		return;
	printf("ok: %zu metric%s fit one PM-sampling pass on %s\n", n, n == 1 ? "" : "s", chip);
	if (c->bytes_per_sample) {
		double bps = (double)c->bytes_per_sample;
		printf("hardware buffer: about %llu bytes per sample; at 10 kHz (--interval-ns "
		       "100000) %.1f MB/s, so a 256 MiB buffer holds %.1f s between decodes\n",
		       (unsigned long long)c->bytes_per_sample, bps * 1e4 / 1e6,
		       268435456.0 / (bps * 1e4));
	}
}

static int run_metrics(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_metrics;
	const char *chip = "GH100", *check = NULL;
	int json = 0, all = 0;
	const cs_opt opts[] = {{"chip", &chip, NULL}, {"check", &check, NULL},
			       {"json", NULL, &json}, {"all", NULL, &all}, {NULL, NULL, NULL}};
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 0, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	char err[2048];
	cs_colllib lib;
	if (cs_colllib_open(&lib, err, sizeof err) < 0)
		return cs_cli_fail(cmd, "%s", err);
	if (check) {
		char **names;
		size_t n;
		if (cs_colllib_read_metrics(check, &names, &n, err, sizeof err) < 0) {
			cs_colllib_close(&lib);
			return cs_cli_usage_error(cmd, "--check %s", err);
		}
		cs_cat_check c;
		rc = lib.check(chip, (const char *const *)names, n, &c, err, sizeof err);
		if (rc < 0) {
			rc = cs_cli_fail(cmd, "%s", err);
		} else {
			print_check(chip, names, n, &c, json);
			rc = c.passes == 1 ? CS_EXIT_OK
					   : json ? CS_EXIT_FAIL : cs_cli_fail(cmd, "%s", c.reason);
		}
		cs_colllib_free_list(names, n);
		cs_colllib_close(&lib);
		return rc;
	}
	list_ctx ctx = {.json = json};
	if (json)
		cs_json_raw(&ctx.out, "[\n");
	rc = lib.list(chip, all, print_metric, &ctx, err, sizeof err);
	if (json) {
		cs_json_raw(&ctx.out, "\n]\n");
		if (rc == 0)
			fwrite(ctx.out.data, 1, ctx.out.len, stdout);
	}
	cs_buf_free(&ctx.out);
	cs_colllib_close(&lib);
	if (rc < 0)
		return cs_cli_fail(cmd, "%s", err);
	if (!json)
		fprintf(stderr, "%zu metrics on %s\n", ctx.n, chip);
	return CS_EXIT_OK;
}
