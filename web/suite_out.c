/*
 * suite_out.c - a suite correlation as text, JSON, CSV, SVG or HTML
 * (suite_out.h).
 */
#include "suite_out.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "figure.h"
#include "json.h"
#include "corrs.h"
#include "report.h"

/* One colour per configuration (the figures' and the page's). */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
				      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
#define COLOR(i) palette[(i) % (sizeof palette / sizeof *palette)]

const char *cs_suite_stat_name(const cs_suite_stat *st, char *out, size_t outlen)
{
	if (!strcmp(st->hw_expr, st->sim_expr))
		snprintf(out, outlen, "%s", st->hw_expr);
	else
		snprintf(out, outlen, "%s / %s", st->hw_expr, st->sim_expr);
	return out;
}

static double err_pct(const cs_suite_pair *p)
{
	return p->hw != 0 && isfinite(p->hw) && isfinite(p->sim) ? 100 * (p->sim - p->hw) / fabs(p->hw)
								  : (double)NAN;
}

static const char *unit_or(const char *u)
{
	return u && *u ? u : "no unit";
}

/* ---- text ---- */

/* v in width columns with dec decimals, "-" when not a number; then tail. */
static void text_num(cs_buf *b, double v, int width, int dec, const char *tail)
{
	if (isfinite(v))
		cs_buf_printf(b, "%*.*f%s", width, dec, v, tail);
	else
		cs_buf_printf(b, "%*s%s", width, "-", tail);
}

static void text_out(const cs_suite_spec *sp, const cs_suite_result *r, cs_buf *b)
{
	char name[600];
	size_t npairs = 0;
	for (size_t c = 0; c < r->nconfigs; c++)
		npairs += r->cell[c].n;
	cs_buf_printf(b, "suite: %zu hardware run(s) in %zu repeat(s), %zu simulator run(s) in %zu "
		      "configuration(s); %zu application(s) paired; %zu kernel pair(s) under the "
		      "first statistic\n", r->runs_hw, r->nrepeats, r->runs_sim, r->nconfigs,
		      r->napps, npairs);
	for (size_t st = 0; st < r->nstats; st++) {
		const cs_suite_cell *c0 = &r->cell[st * r->nconfigs];
		cs_buf_printf(b, "\n%s  [hardware: %s, simulator: %s]\n",
			      cs_suite_stat_name(&sp->stats[st], name, sizeof name),
			      unit_or(c0->hw_unit), unit_or(c0->sim_unit));
		cs_buf_printf(b, "  %-24s %6s %8s %8s %8s %9s %8s %7s %7s %9s\n", "configuration", "pairs",
			      "pearson", "spearman", "MAPE%", "mean_err%", "RPD%", "in_1%", "in_10%",
			      "aggr_err%");
		for (size_t c = 0; c < r->nconfigs; c++) {
			const cs_suite_stats *S = &r->cell[st * r->nconfigs + c].st;
			cs_buf_printf(b, "  %-24.24s %6zu ", r->config_label[c], S->pairs);
			text_num(b, S->pearson, 8, 4, " ");
			text_num(b, S->spearman, 8, 4, " ");
			text_num(b, S->mape_pct, 8, 2, " ");
			text_num(b, S->mean_error_pct, 9, 2, " ");
			text_num(b, S->rpd_pct, 8, 2, " ");
			cs_buf_printf(b, "%7zu %7zu ", S->within_1pct, S->within_10pct);
			text_num(b, S->aggregate_error_pct, 9, 2, "");
			cs_buf_printf(b, "\n");
		}
		for (size_t c = 0; c < r->nconfigs; c++) {
			const cs_suite_cell *C = &r->cell[st * r->nconfigs + c];
			if (!C->nworst)
				continue;
			cs_buf_printf(b, "  worst kernels, %s:\n", r->config_label[c]);
			for (size_t q = 0; q < C->nworst; q++) {
				const cs_suite_pair *p = &C->pairs[C->worst[q]];
				cs_buf_printf(b, "    %+9.2f%%  %s  %s #%u  hw %.6g  sim %.6g\n", err_pct(p),
					      r->app_hw[p->app], p->kernel, p->launch, p->hw, p->sim);
			}
		}
	}
	cs_buf_printf(b, "\napplications (first statistic, %s):\n", r->nconfigs ? r->config_label[0] : "");
	const cs_suite_cell *c0 = r->nconfigs ? &r->cell[0] : NULL;
	for (size_t a = 0; c0 && a < c0->napps; a++) {
		const cs_suite_appstat *A = &c0->apps[a];
		cs_buf_printf(b, "  %-40s %4zu kernels  aggr_err ", r->app_hw[A->app], A->st.pairs);
		text_num(b, A->st.aggregate_error_pct, 8, 2, "%");
		cs_buf_printf(b, "  MAPE ");
		text_num(b, A->st.mape_pct, 7, 2, "%");
		if (strcmp(r->app_hw[A->app], r->app_sim[A->app]))
			cs_buf_printf(b, "  (simulator: %s, by %s)", r->app_sim[A->app], r->app_how[A->app]);
		cs_buf_printf(b, "\n");
	}
	if (r->nunpaired)
		cs_buf_printf(b, "\nunpaired (%zu):\n", r->nunpaired);
	for (size_t i = 0; i < r->nunpaired; i++) {
		const cs_suite_unpaired *u = &r->unpaired[i];
		const char *side = u->sim ? r->config_label[u->group] : r->repeat_label[u->group];
		if (!u->kernel)
			cs_buf_printf(b, "  %s application %s: no counterpart\n",
				      u->sim ? "simulator" : "hardware", u->app);
		else
			cs_buf_printf(b, "  %s %s: %s #%u (run %lld)\n", side, u->app, u->kernel, u->launch,
				      (long long)u->run);
	}
	for (size_t i = 0; i < r->nwarn; i++)
		cs_buf_printf(b, "%swarning: %s\n", i ? "" : "\n", r->warn[i]);
}

/* ---- JSON ---- */

static void jnum(cs_buf *b, int *first, const char *k, double v)
{
	cs_json_key(b, first, k);
	cs_json_f64(b, v);
}

static void jcount(cs_buf *b, int *first, const char *k, size_t v)
{
	cs_json_key(b, first, k);
	cs_json_i64(b, (int64_t)v);
}

static void jstr(cs_buf *b, int *first, const char *k, const char *v)
{
	cs_json_key(b, first, k);
	cs_json_str(b, v);
}

static void json_stats(cs_buf *b, int *f, const cs_suite_stats *S)
{
	jcount(b, f, "pairs", S->pairs);
	jnum(b, f, "pearson", S->pearson);
	jnum(b, f, "spearman", S->spearman);
	jnum(b, f, "mape_pct", S->mape_pct);
	jnum(b, f, "mean_error_pct", S->mean_error_pct);
	jnum(b, f, "rpd_pct", S->rpd_pct);
	jcount(b, f, "within_1pct", S->within_1pct);
	jcount(b, f, "within_10pct", S->within_10pct);
	jnum(b, f, "hw_total", S->hw_total);
	jnum(b, f, "sim_total", S->sim_total);
	jnum(b, f, "aggregate_error_pct", S->aggregate_error_pct);
	jnum(b, f, "abs_aggregate_error_pct", S->abs_aggregate_error_pct);
	jnum(b, f, "nrmse", S->nrmse);
}

static void json_pair(cs_buf *b, const cs_suite_result *r, const cs_suite_pair *p)
{
	int f = 1;
	cs_json_raw(b, "{");
	jstr(b, &f, "app", r->app_hw[p->app]);
	jstr(b, &f, "kernel", p->kernel);
	jcount(b, &f, "launch", p->launch);
	jnum(b, &f, "hw", p->hw);
	jnum(b, &f, "sim", p->sim);
	jnum(b, &f, "error_pct", err_pct(p));
	cs_json_raw(b, "}");
}

static void json_out(const cs_suite_spec *sp, const cs_suite_result *r, cs_buf *b)
{
	char name[600];
	int f = 1;
	cs_json_raw(b, "{");
	cs_json_key(b, &f, "hardware");
	cs_json_raw(b, "[");
	for (size_t g = 0; g < r->nrepeats; g++) {
		if (g)
			cs_json_raw(b, ",");
		cs_json_str(b, r->repeat_label[g]);
	}
	cs_json_raw(b, "]");
	cs_json_key(b, &f, "configurations");
	cs_json_raw(b, "[");
	for (size_t c = 0; c < r->nconfigs; c++) {
		if (c)
			cs_json_raw(b, ",");
		cs_json_str(b, r->config_label[c]);
	}
	cs_json_raw(b, "]");
	jcount(b, &f, "hw_runs", r->runs_hw);
	jcount(b, &f, "sim_runs", r->runs_sim);
	jcount(b, &f, "hw_kernels", r->kernels_hw);
	jcount(b, &f, "sim_kernels", r->kernels_sim);
	cs_json_key(b, &f, "applications");
	cs_json_raw(b, "[");
	for (size_t a = 0; a < r->napps; a++) {
		int g = 1;
		cs_json_raw(b, a ? ",{" : "{");
		jstr(b, &g, "hw", r->app_hw[a]);
		jstr(b, &g, "sim", r->app_sim[a]);
		jstr(b, &g, "paired_by", r->app_how[a]);
		cs_json_raw(b, "}");
	}
	cs_json_raw(b, "]");
	cs_json_key(b, &f, "statistics");
	cs_json_raw(b, "[");
	for (size_t st = 0; st < r->nstats; st++) {
		const cs_suite_cell *c0 = &r->cell[st * r->nconfigs];
		int g = 1;
		cs_json_raw(b, st ? ",{" : "{");
		jstr(b, &g, "statistic", cs_suite_stat_name(&sp->stats[st], name, sizeof name));
		jstr(b, &g, "hw_metric", sp->stats[st].hw_expr);
		jstr(b, &g, "sim_metric", sp->stats[st].sim_expr);
		jstr(b, &g, "hw_unit", c0->hw_unit);
		jstr(b, &g, "sim_unit", c0->sim_unit);
		jnum(b, &g, "hw_scale", c0->hw_scale);
		cs_json_key(b, &g, "configurations");
		cs_json_raw(b, "[");
		for (size_t c = 0; c < r->nconfigs; c++) {
			const cs_suite_cell *C = &r->cell[st * r->nconfigs + c];
			int h = 1;
			cs_json_raw(b, c ? ",{" : "{");
			jstr(b, &h, "configuration", r->config_label[c]);
			json_stats(b, &h, &C->st);
			jcount(b, &h, "runs_left_out", C->skipped_runs);
			cs_json_key(b, &h, "by_app");
			cs_json_raw(b, "{");
			int ba = 1;
			json_stats(b, &ba, &C->by_app);
			cs_json_raw(b, "}");
			cs_json_key(b, &h, "worst");
			cs_json_raw(b, "[");
			for (size_t q = 0; q < C->nworst; q++) {
				if (q)
					cs_json_raw(b, ",");
				json_pair(b, r, &C->pairs[C->worst[q]]);
			}
			cs_json_raw(b, "]");
			cs_json_key(b, &h, "apps");
			cs_json_raw(b, "[");
			for (size_t a = 0; a < C->napps; a++) {
				int k = 1;
				cs_json_raw(b, a ? ",{" : "{");
				jstr(b, &k, "app", r->app_hw[C->apps[a].app]);
				json_stats(b, &k, &C->apps[a].st);
				cs_json_raw(b, "}");
			}
			cs_json_raw(b, "]}");
		}
		cs_json_raw(b, "]}");
	}
	cs_json_raw(b, "]");
	cs_json_key(b, &f, "unpaired");
	cs_json_raw(b, "[");
	for (size_t i = 0; i < r->nunpaired; i++) {
		const cs_suite_unpaired *u = &r->unpaired[i];
		int g = 1;
		cs_json_raw(b, i ? ",{" : "{");
		jstr(b, &g, "side", u->sim ? "sim" : "hw");
		if (u->kernel)
			jstr(b, &g, u->sim ? "configuration" : "hardware",
			     u->sim ? r->config_label[u->group] : r->repeat_label[u->group]);
		jstr(b, &g, "app", u->app);
		if (u->kernel) {
			jstr(b, &g, "kernel", u->kernel);
			jcount(b, &g, "launch", u->launch);
			cs_json_key(b, &g, "run");
			cs_json_i64(b, u->run);
		}
		cs_json_raw(b, "}");
	}
	cs_json_raw(b, "]");
	cs_json_key(b, &f, "warnings");
	cs_json_raw(b, "[");
	for (size_t i = 0; i < r->nwarn; i++) {
		if (i)
			cs_json_raw(b, ",");
		cs_json_str(b, r->warn[i]);
	}
	cs_json_raw(b, "]}\n");
}

/* ---- CSV: one row per pair ---- */

static int csv_out(const cs_suite_spec *sp, const cs_suite_result *r, cs_buf *b)
{
	cs_csv w;
	char name[600];
	cs_csv_init(&w, cs_csv_buf_sink, b);
	static const char *const head[] = {"statistic", "configuration", "hw_app", "sim_app",
					   "kernel", "launch", "hw", "sim", "error_pct", "hw_min",
					   "hw_max", "hw_sd", "repeats", "hw_run", "sim_run"};
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		cs_csv_str(&w, head[i]);
	cs_csv_end_row(&w);
	for (size_t st = 0; st < r->nstats; st++) {
		cs_suite_stat_name(&sp->stats[st], name, sizeof name);
		for (size_t c = 0; c < r->nconfigs; c++) {
			const cs_suite_cell *C = &r->cell[st * r->nconfigs + c];
			for (size_t i = 0; i < C->n; i++) {
				const cs_suite_pair *p = &C->pairs[i];
				cs_csv_str(&w, name);
				cs_csv_str(&w, r->config_label[c]);
				cs_csv_str(&w, r->app_hw[p->app]);
				cs_csv_str(&w, r->app_sim[p->app]);
				cs_csv_str(&w, p->kernel);
				cs_csv_u64(&w, p->launch);
				cs_csv_f64(&w, p->hw);
				cs_csv_f64(&w, p->sim);
				cs_csv_f64(&w, err_pct(p));
				cs_csv_f64(&w, p->hw_min);
				cs_csv_f64(&w, p->hw_max);
				cs_csv_f64(&w, p->hw_sd);
				cs_csv_u64(&w, p->hw_n);
				cs_csv_i64(&w, p->hw_run);
				cs_csv_i64(&w, p->sim_run);
				cs_csv_end_row(&w);
			}
		}
	}
	return cs_csv_finish(&w);
}

/* ---- the figure: a log-log scatter per statistic ---- */

typedef struct panel_data {
	double *x, *y, *lo, *hi;
	char **hover;
	char legend[200];
} panel_data;

static int svg_out(const cs_suite_spec *sp, const cs_suite_result *r, cs_buf *b)
{
	size_t nt = r->nstats, nc = r->nconfigs;
	cs_fig *figs = calloc(nt + 1, sizeof *figs);
	cs_fig_panel *pans = calloc(nt + 1, sizeof *pans);
	cs_fig_series *ser = calloc(nt * nc + 1, sizeof *ser);
	panel_data *pd = calloc(nt * nc + 1, sizeof *pd);
	char (*titles)[640] = calloc(nt + 1, sizeof *titles), (*xt)[400] = calloc(nt + 1, sizeof *xt),
	     (*yt)[400] = calloc(nt + 1, sizeof *yt), (*cap)[400] = calloc(nt + 1, sizeof *cap);
	int rc = figs && pans && ser && pd && titles && xt && yt && cap ? 0 : -ENOMEM;
	int repeats = r->nrepeats > 1;
	for (size_t st = 0; rc == 0 && st < nt; st++) {
		const cs_suite_cell *c0 = &r->cell[st * nc];
		/* the title names the hardware's metric, the axes both */
		snprintf(titles[st], sizeof titles[st], "%s", sp->stats[st].hw_expr);
		snprintf(xt[st], sizeof xt[st], "hardware: %s%s%s%s%s", sp->stats[st].hw_expr,
			 *c0->hw_unit ? " [" : "", c0->hw_unit, *c0->hw_unit ? "]" : "",
			 c0->hw_scale != 1 ? " as cycles" : "");
		snprintf(yt[st], sizeof yt[st], "simulator: %s%s%s%s", sp->stats[st].sim_expr,
			 *c0->sim_unit ? " [" : "", c0->sim_unit, *c0->sim_unit ? "]" : "");
		for (size_t c = 0; rc == 0 && c < nc; c++) {
			const cs_suite_cell *C = &r->cell[st * nc + c];
			panel_data *d = &pd[st * nc + c];
			size_t n = C->n;
			d->x = calloc(n + 1, sizeof *d->x);
			d->y = calloc(n + 1, sizeof *d->y);
			d->lo = calloc(n + 1, sizeof *d->lo);
			d->hi = calloc(n + 1, sizeof *d->hi);
			d->hover = calloc(n + 1, sizeof *d->hover);
			if (!d->x || !d->y || !d->lo || !d->hi || !d->hover) {
				rc = -ENOMEM;
				break;
			}
			for (size_t i = 0; rc == 0 && i < n; i++) {
				const cs_suite_pair *p = &C->pairs[i];
				char line[900];
				d->x[i] = p->hw, d->y[i] = p->sim, d->lo[i] = p->hw_min, d->hi[i] = p->hw_max;
				snprintf(line, sizeof line, "%s  %s #%u (%s): hw %.6g, sim %.6g (%+.1f%%)",
					 r->app_hw[p->app], p->kernel, p->launch, r->config_label[c], p->hw,
					 p->sim, err_pct(p));
				if (!(d->hover[i] = strdup(line)))
					rc = -ENOMEM;
			}
			snprintf(d->legend, sizeof d->legend, "%s: r = %.3f, MAPE %.1f%%, %zu in 10%% of %zu",
				 r->config_label[c], C->st.pearson, C->st.mape_pct, C->st.within_10pct,
				 C->st.pairs);
			ser[st * nc + c] = (cs_fig_series){
				.label = d->legend, .color = COLOR(c), .style = CS_FIG_POINTS, .n = n,
				.x0 = d->x, .y = d->y, .hover = (const char *const *)d->hover,
				.xlo = repeats ? d->lo : NULL, .xhi = repeats ? d->hi : NULL};
		}
		snprintf(cap[st], sizeof cap[st], "%zu apps; dashed: y = x, dotted: \u00b110%%%s",
			 r->napps, repeats ? "; bars: repeats' range" : "");
		pans[st] = (cs_fig_panel){.ytitle = yt[st], .ylog = 1, .height = 360, .nseries = nc,
					  .series = &ser[st * nc]};
		figs[st] = (cs_fig){.title = titles[st], .caption = cap[st], .xkind = CS_FIG_X_PLAIN,
				    .xtitle = xt[st], .xlog = 1, .width = 480, .diagonal = 1,
				    .band_pct = 10, .square = 1, .npanels = 1, .panels = &pans[st]};
	}
	if (rc == 0)
		rc = cs_fig_grid(figs, nt, nt < 3 ? nt : 3, "Simulated against measured, per kernel", b);
	for (size_t i = 0; pd && i < nt * nc; i++) {
		for (size_t k = 0; pd[i].hover && k < r->cell[i].n; k++)
			free(pd[i].hover[k]);
		free(pd[i].x), free(pd[i].y), free(pd[i].lo), free(pd[i].hi), free(pd[i].hover);
	}
	free(figs), free(pans), free(ser), free(pd), free(titles), free(xt), free(yt), free(cap);
	return rc;
}

/* ---- the page ---- */

/* <tag attrs>text</tag>, text escaped; tag may carry attributes after a
 * space ("td class=\"l\""), the end tag is the name alone. */
static void html_cell(cs_buf *b, const char *tag, const char *text)
{
	cs_buf_printf(b, "<%s>", tag);
	cs_report_html_text(b, text);
	cs_buf_printf(b, "</%.*s>", (int)strcspn(tag, " "), tag);
}

/* kind: 'f' dec decimals, '+' the same signed, 'g' 6 significant digits */
static void html_num(cs_buf *b, int kind, int dec, double v)
{
	char t[64];
	if (isfinite(v) && kind == 'g')
		snprintf(t, sizeof t, "%.6g", v);
	else if (isfinite(v))
		snprintf(t, sizeof t, kind == '+' ? "%+.*f" : "%.*f", dec, v);
	else
		snprintf(t, sizeof t, "-");
	html_cell(b, "td", t);
}

static int html_out(const cs_suite_spec *sp, const cs_suite_result *r, cs_buf *b)
{
	char name[600], t[64];
	cs_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		      "<title>cyclescope suite correlation</title>\n<style>"
		      "body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:24px;color:#222}"
		      "table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;"
		      "padding:3px 8px;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}"
		      ".warn{background:#fff4d6;border:1px solid #e0b84c;padding:8px 12px;margin:12px 0}"
		      "</style></head><body>\n<h1>Suite correlation</h1>\n");
	cs_buf_printf(b, "<p>%zu hardware run(s) in %zu repeat(s), %zu simulator run(s) in %zu "
		      "configuration(s); %zu application(s) paired.</p>\n", r->runs_hw, r->nrepeats,
		      r->runs_sim, r->nconfigs, r->napps);
	if (r->nwarn) {
		cs_buf_printf(b, "<div class=\"warn\" id=\"warnings\"><b>Warnings</b><ul>");
		for (size_t i = 0; i < r->nwarn; i++)
			html_cell(b, "li", r->warn[i]);
		cs_buf_printf(b, "</ul></div>\n");
	}
	/* the figure inline: without its XML declaration */
	cs_buf fig = {0};
	int rc = svg_out(sp, r, &fig);
	if (rc == 0 && (rc = cs_buf_append(&fig, "", 1)) == 0) {
		const char *root = strstr((const char *)fig.data, "<svg");
		cs_buf_printf(b, "<div class=\"figure\">\n%s</div>\n", root ? root : "");
	}
	cs_buf_free(&fig);
	for (size_t st = 0; rc == 0 && st < r->nstats; st++) {
		cs_buf_printf(b, "<h2>");
		cs_report_html_text(b, cs_suite_stat_name(&sp->stats[st], name, sizeof name));
		cs_buf_printf(b, "</h2>\n<table class=\"stats\"><tr><th class=\"l\">configuration</th>"
			      "<th>pairs</th><th>Pearson r</th><th>Spearman &rho;</th><th>MAPE %%</th>"
			      "<th>mean error %%</th><th>RPD %%</th><th>within 1%%</th>"
			      "<th>within 10%%</th><th>aggregate error %%</th></tr>\n");
		for (size_t c = 0; c < r->nconfigs; c++) {
			const cs_suite_stats *S = &r->cell[st * r->nconfigs + c].st;
			cs_buf_printf(b, "<tr><td class=\"l\" style=\"color:%s\">", COLOR(c));
			cs_report_html_text(b, r->config_label[c]);
			snprintf(t, sizeof t, "%zu", S->pairs);
			cs_buf_printf(b, "</td>");
			html_cell(b, "td", t);
			html_num(b, 'f', 4, S->pearson);
			html_num(b, 'f', 4, S->spearman);
			html_num(b, 'f', 2, S->mape_pct);
			html_num(b, '+', 2, S->mean_error_pct);
			html_num(b, 'f', 2, S->rpd_pct);
			snprintf(t, sizeof t, "%zu", S->within_1pct);
			html_cell(b, "td", t);
			snprintf(t, sizeof t, "%zu", S->within_10pct);
			html_cell(b, "td", t);
			html_num(b, '+', 2, S->aggregate_error_pct);
			cs_buf_printf(b, "</tr>\n");
		}
		cs_buf_printf(b, "</table>\n<table class=\"worst\"><tr><th class=\"l\">configuration</th>"
			      "<th class=\"l\">application</th><th class=\"l\">kernel</th><th>launch</th>"
			      "<th>hardware</th><th>simulator</th><th>error %%</th></tr>\n");
		for (size_t c = 0; c < r->nconfigs; c++) {
			const cs_suite_cell *C = &r->cell[st * r->nconfigs + c];
			for (size_t q = 0; q < C->nworst; q++) {
				const cs_suite_pair *p = &C->pairs[C->worst[q]];
				cs_buf_printf(b, "<tr>");
				html_cell(b, "td class=\"l\"", r->config_label[c]);
				html_cell(b, "td class=\"l\"", r->app_hw[p->app]);
				html_cell(b, "td class=\"l\"", p->kernel);
				snprintf(t, sizeof t, "%u", p->launch);
				html_cell(b, "td", t);
				html_num(b, 'g', 0, p->hw);
				html_num(b, 'g', 0, p->sim);
				html_num(b, '+', 2, err_pct(p));
				cs_buf_printf(b, "</tr>\n");
			}
		}
		cs_buf_printf(b, "</table>\n");
	}
	if (r->nunpaired) {
		cs_buf_printf(b, "<h2>Unpaired</h2>\n<table class=\"unpaired\"><tr><th class=\"l\">side"
			      "</th><th class=\"l\">application</th><th class=\"l\">kernel</th>"
			      "<th>launch</th></tr>\n");
		for (size_t i = 0; i < r->nunpaired; i++) {
			const cs_suite_unpaired *u = &r->unpaired[i];
			cs_buf_printf(b, "<tr>");
			html_cell(b, "td class=\"l\"", !u->kernel ? (u->sim ? "simulator" : "hardware")
					: u->sim ? r->config_label[u->group] : r->repeat_label[u->group]);
			html_cell(b, "td class=\"l\"", u->app);
			html_cell(b, "td class=\"l\"", u->kernel ? u->kernel : "(the whole application)");
			snprintf(t, sizeof t, "%u", u->launch);
			html_cell(b, "td", u->kernel ? t : "");
			cs_buf_printf(b, "</tr>\n");
		}
		cs_buf_printf(b, "</table>\n");
	}
	cs_buf_printf(b, "</body></html>\n");
	return rc;
}

int cs_suite_out(cs_store *s, const cs_suite_spec *spec, int format, cs_buf *out, cs_buf *notes,
		 cs_buf *json, char *err, size_t errlen)
{
	cs_suite_result r;
	int rc = cs_suite_run(s, spec, &r, err, errlen);
	if (rc < 0)
		return rc;
	size_t start = out->len;
	switch (format) {
	case CS_SUITE_JSON: json_out(spec, &r, out); break;
	case CS_SUITE_CSV: rc = csv_out(spec, &r, out); break;
	case CS_SUITE_SVG: rc = svg_out(spec, &r, out); break;
	case CS_SUITE_HTML: rc = html_out(spec, &r, out); break;
	default: text_out(spec, &r, out); break;
	}
	/* an append that ran out of memory leaves a short buffer: reserve
	 * says whether one more byte still fits */
	if (rc == 0 && cs_buf_reserve(out, 1) < 0)
		rc = -ENOMEM;
	if (rc < 0) {
		out->len = start;
		snprintf(err, errlen, "out of memory writing the suite correlation");
	}
	if (rc == 0 && json) {
		json_out(spec, &r, json);
		if (cs_buf_reserve(json, 1) < 0) {
			rc = -ENOMEM;
			snprintf(err, errlen, "out of memory writing the suite correlation");
		}
	}
	for (size_t i = 0; rc == 0 && notes && (format == CS_SUITE_CSV || format == CS_SUITE_SVG) &&
			   i < r.nwarn; i++)
		cs_buf_printf(notes, "warning: %s\n", r.warn[i]);
	cs_suite_free(&r);
	return rc;
}

/* ---- the trend across saved correlations ---- */

int cs_suite_trend_svg(cs_store *s, cs_buf *out, char *err, size_t errlen)
{
	cs_corr_point *p = NULL;
	size_t n = 0;
	int rc = cs_corrs_points(s, &p, &n);
	if (rc < 0) {
		snprintf(err, errlen, "%s", cs_store_errmsg(s));
		return rc;
	}
	/* the saved correlations (x = 1, 2, ...), statistics and configurations in order of
	 * first sight */
	size_t nsave = 0, nstat = 0, ncfg = 0;
	int64_t *ids = calloc(n + 1, sizeof *ids);
	const char **stat = calloc(n + 1, sizeof *stat), **cfg = calloc(n + 1, sizeof *cfg);
	size_t *xi = calloc(n + 1, sizeof *xi), *si = calloc(n + 1, sizeof *si), *ci = calloc(n + 1, sizeof *ci);
	rc = ids && stat && cfg && xi && si && ci ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (!nsave || ids[nsave - 1] != p[i].id)
			ids[nsave++] = p[i].id;
		xi[i] = nsave;
		size_t k = 0;
		while (k < nstat && strcmp(stat[k], p[i].statistic))
			k++;
		if (k == nstat)
			stat[nstat++] = p[i].statistic;
		si[i] = k;
		for (k = 0; k < ncfg && strcmp(cfg[k], p[i].configuration);)
			k++;
		if (k == ncfg)
			cfg[ncfg++] = p[i].configuration;
		ci[i] = k;
	}
	cs_fig_panel *pans = calloc(nstat + 1, sizeof *pans);
	cs_fig_series *ser = calloc(2 * nstat * ncfg + 1, sizeof *ser);
	double *xs = calloc(2 * n + 1, sizeof *xs), *ys = calloc(2 * n + 1, sizeof *ys);
	char **hover = calloc(n + 1, sizeof *hover);
	char (*yt)[360] = calloc(nstat + 1, sizeof *yt);
	cs_fig_span *spans = calloc(nsave + 1, sizeof *spans);
	char (*slab)[160] = calloc(nsave + 1, sizeof *slab);
	if (rc == 0 && (!pans || !ser || !xs || !ys || !hover || !yt || !spans || !slab))
		rc = -ENOMEM;
	/* per statistic and configuration, its points in order of x */
	size_t at = 0;
	for (size_t k = 0; rc == 0 && k < nstat; k++) {
		size_t first = 2 * k * ncfg;
		for (size_t c = 0; rc == 0 && c < ncfg; c++) {
			size_t start = at;
			const char **hv = (const char **)hover + start;
			for (size_t i = 0; rc == 0 && i < n; i++) {
				if (si[i] != k || ci[i] != c)
					continue;
				char line[900];
				snprintf(line, sizeof line, "#%lld %s: %s, %s: MAPE %.2f%%, r %.4f, %lld pairs",
					 (long long)p[i].id, p[i].label, p[i].configuration, p[i].statistic,
					 p[i].mape_pct, p[i].pearson, (long long)p[i].pairs);
				xs[at] = (double)xi[i];
				ys[at] = p[i].mape_pct;
				if (!(hover[at] = strdup(line)))
					rc = -ENOMEM;
				at++;
			}
			size_t m = at - start;
			ser[first + 2 * c] = (cs_fig_series){.label = cfg[c], .color = COLOR(c),
							      .style = CS_FIG_LINE, .n = m,
							      .x0 = xs + start, .y = ys + start};
			ser[first + 2 * c + 1] = (cs_fig_series){.label = cfg[c], .color = COLOR(c),
								  .style = CS_FIG_POINTS, .n = m,
								  .x0 = xs + start, .y = ys + start,
								  .hover = hv};
		}
		const char *cut = strstr(stat[k], " / "); /* the hardware's metric names it */
		snprintf(yt[k], sizeof yt[k], "MAPE %% - %.*s", cut ? (int)(cut - stat[k]) : 300, stat[k]);
		pans[k] = (cs_fig_panel){.ytitle = yt[k], .height = 200, .nseries = 2 * ncfg,
					 .series = ser + first};
	}
	for (size_t i = 0, j = 0; rc == 0 && i < n; i++) {
		if (j && p[i].id == ids[j - 1])
			continue;
		snprintf(slab[j], sizeof slab[j], "#%lld %s", (long long)p[i].id, p[i].label);
		spans[j] = (cs_fig_span){(double)(j + 1) - 0.45, (double)(j + 1) + 0.45, slab[j], NULL};
		j++;
	}
	cs_fig_lane lane = {.label = "saved", .color = "#9ecae1", .n = nsave, .spans = spans};
	char cap[200];
	snprintf(cap, sizeof cap, "%zu saved correlation(s) in the order saved; lower is better", nsave);
	cs_fig f = {.title = "Error across saved correlations", .caption = cap,
		    .xkind = CS_FIG_X_PLAIN, .xtitle = "saved correlation", .xmin = 0.5,
		    .xmax = (double)nsave + 0.5, .npanels = nstat, .panels = pans,
		    .nlanes = nsave ? 1 : 0, .lanes = &lane};
	if (rc == 0)
		rc = cs_fig_svg(&f, out);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory drawing the trend");
	for (size_t i = 0; hover && i < n; i++)
		free(hover[i]);
	free(p), free(ids), free(stat), free(cfg), free(xi), free(si), free(ci), free(pans), free(ser);
	free(xs), free(ys), free(hover), free(yt), free(spans), free(slab);
	return rc;
}
