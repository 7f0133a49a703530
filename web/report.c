/*
 * report.c - the side-by-side correlation report (report.h): one
 * self-contained HTML page (uPlot and its CSS inlined, the data as JSON)
 * that opens from disk with no network.
 */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corr_out.h"
#include "json.h"

static const char page_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	"<link rel=\"icon\" type=\"image/svg+xml\" href=\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'"
	" viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='6' fill='%231d2b3a'/%3E%3Cpath"
	" d='M4 22h5v-8h5v12h5V8h5v10h4' fill='none' stroke='%238fd3ff' stroke-width='2.6'/%3E%3C/svg%3E\">\n"
	"<style>\n"
	"body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}\n"
	"h1{font-size:20px}h2{font-size:16px;margin-top:32px}\n"
	"table.stats{border-collapse:collapse;margin:8px 0}\n"
	"table.stats td,table.stats th{border:1px solid #ccc;padding:3px 8px;text-align:right}\n"
	"table.stats th{background:#f4f4f4}.note{color:#666;font-size:12px}\n"
	".warn{background:#fff4d6;border:1px solid #e0b84c;padding:6px 12px;margin:8px 0}\n"
	".warn ul{margin:4px 0;padding-left:20px}\n"
	"table.kt{border-collapse:collapse;margin:8px 0;font-size:12px}\n"
	"table.kt td,table.kt th{border:1px solid #ddd;padding:2px 6px;text-align:right}\n"
	"table.kt td.l,table.kt th.l{text-align:left}table.kt tr.shared td{color:#999}\n"
	".figure svg{max-width:100%;height:auto;display:block}\n"
	"button{padding:2px 10px;margin:4px 6px 4px 0}\n"
	"@media print{button{display:none}}\n"
	"</style>\n";

/* Every pair: its statistics table, then its figure (moved in from the
 * figures the server drew, in the same order), with a button that saves
 * the figure as an SVG file. */
static const char page_script[] =
	"(function(){\n"
	"const D=JSON.parse(document.getElementById('cs-data').textContent);\n"
	"const root=document.getElementById('cs-report');\n"
	"function el(t,p,txt){const e=document.createElement(t);if(txt!==undefined)e.textContent=txt;p.appendChild(e);return e;}\n"
	"function fmt(v,d){return (v===null||v===undefined)?'n/a':(+v).toFixed(d);}\n"
	"function stats(p,rows){const t=el('table',p);t.className='stats';\n"
	"  rows.forEach(function(r){const tr=el('tr',t);el('th',tr,r[0]);el('td',tr,r[1]);});}\n"
	"function warns(p,w){if(!w||!w.length)return;const d=el('div',p);d.className='warn';\n"
	"  el('b',d,'Warnings');const u=el('ul',d);w.forEach(function(x){el('li',u,x);});}\n"
	"function ktable(p,k){if(!k||!k.length)return;const t=el('table',p);t.className='kt';\n"
	"  const h=el('tr',t);['kernel','hardware kernel','matched by','hardware','simulator','error %'].forEach(function(x,i){el('th',h,x).className=i<3?'l':'';});\n"
	"  k.forEach(function(r){const tr=el('tr',t);if(r.shared)tr.className='shared';\n"
	"    el('td',tr,r.demangled).className='l';el('td',tr,r.hw_demangled).className='l';el('td',tr,r.matched_by).className='l';\n"
	"    el('td',tr,r.shared?'shared':fmt(r.hw,0));el('td',tr,r.shared?'shared':fmt(r.sim,0));\n"
	"    el('td',tr,(r.shared||!r.hw)?'':fmt(100*(r.sim-r.hw)/Math.abs(r.hw),2));if(r.note)tr.title=r.note;});}\n"
	"function place(sec,id,name){const f=document.getElementById(id);if(!f)return 0;\n"
	"  const b=el('button',sec,'Save SVG');b.onclick=function(){const s=f.querySelector('svg');\n"
	"    const a=document.createElement('a');a.download=name+'.svg';\n"
	"    a.href=URL.createObjectURL(new Blob(['<?xml version=\"1.0\" encoding=\"UTF-8\"?>\\n'+s.outerHTML],{type:'image/svg+xml'}));\n"
	"    a.click();};\n"
	"  f.hidden=false;sec.appendChild(f);return 1;}\n"
	"let plots=0;\n"
	"(D.binned||[]).forEach(function(p,i){\n"
	"  const sec=el('section',root);sec.className='pair';\n"
	"  el('h2',sec,p.hw_metric+'  vs  '+p.sim_metric);\n"
	"  el('div',sec,'hardware '+D.hw+' over '+p.hw_window+'; simulator '+D.sim+' over '+p.sim_window).className='note';\n"
	"  warns(sec,p.warnings);\n"
	"  stats(sec,[['bins',p.bins+' x '+p.bin_cycles+' '+(p.axis_unit||'cycles')],['lag (bins)',p.lag_bins],\n"
	"    ['Pearson r',fmt(p.pearson,4)],['Spearman rho',fmt(p.spearman,4)],\n"
	"    ['MAPE',fmt(p.mape_pct,2)+'% ('+p.mape_bins+' bins)'],['NRMSE',fmt(p.nrmse,4)],\n"
	"    ['total error',fmt(100*p.total_error,2)+'%'],['duration error',fmt(100*p.duration_error,2)+'%'],\n"
	"    ['time-normalised r / MAPE',fmt(p.normalized_pearson,4)+' / '+fmt(p.normalized_mape_pct,2)+'%']]);\n"
	"  plots+=place(sec,'fig-b'+i,'correlation-'+i);\n"
	"});\n"
	"(D.kernels||[]).forEach(function(p,i){\n"
	"  const sec=el('section',root);sec.className='kernels';\n"
	"  el('h2',sec,'kernel level: '+p.hw_metric+'  vs  '+p.sim_metric);\n"
	"  warns(sec,p.warnings);\n"
	"  stats(sec,[['kernels',p.kernels],['Pearson r',fmt(p.pearson,4)],['MAPE',fmt(p.mape_pct,2)+'%'],\n"
	"    ['aggregate error',fmt(p.aggregate_error_pct,2)+'%']]);\n"
	"  plots+=place(sec,'fig-k'+i,'kernels-'+i);\n"
	"  ktable(sec,p.per_kernel);\n"
	"});\n"
	"document.body.setAttribute('data-plots',plots);\n"
	"})();\n";

void cs_report_html_text(cs_buf *out, const char *s)
{
	for (const char *c = s; *c; c++)
		cs_json_raw(out, *c == '<' ? "&lt;" : *c == '&' ? "&amp;" : *c == '>' ? "&gt;"
				 : (char[]){*c, 0});
}

/* The figures of every pair of rq, drawn in one pass (SVG documents one
 * after another), each into a hidden div with id PREFIX + its index for
 * the script to place. */
static void figures(cs_store *s, const cs_corr_request *rq, int kernels, const char *prefix,
		    cs_buf *out)
{
	cs_corr_request f = *rq;
	f.format = CS_CORR_SVG;
	f.kernels = kernels;
	f.svg_pair = -1;
	cs_buf svg = CS_BUF_INIT;
	char err[512];
	if (cs_corr_out(s, &f, &svg, err, sizeof err) < 0) {
		/* the statistics stand; say why the figures do not */
		cs_json_raw(out, "<p class=\"note\">The figures could not be drawn: ");
		cs_report_html_text(out, err);
		cs_json_raw(out, "</p>\n");
	} else {
		cs_buf_put_u8(&svg, 0);
		const char *p = (const char *)svg.data;
		for (int i = 0; p && (p = strstr(p, "<?xml")); i++) {
			/* inline SVG: the XML declaration is for files only */
			const char *body = strchr(p, '\n');
			if (!body)
				break;
			body++;
			const char *next = strstr(body, "<?xml");
			size_t n = next ? (size_t)(next - body) : strlen(body);
			cs_buf_printf(out, "<div class=\"figure\" id=\"%s%d\" hidden>", prefix, i);
			cs_buf_append(out, body, n);
			cs_json_raw(out, "</div>\n");
			p = next;
		}
	}
	cs_buf_free(&svg);
}

int cs_report_html(cs_store *s, const cs_corr_request *rq, cs_buf *out, char *err,
		   size_t errlen)
{
	cs_buf binned = CS_BUF_INIT, kernels = CS_BUF_INIT;
	cs_corr_request b = *rq;
	b.format = CS_CORR_JSON;
	b.kernels = 0;
	b.with_bins = 0;
	int rc = cs_corr_out(s, &b, &binned, err, errlen);
	int have_kernels = 0;
	if (rc == 0) {
		/* The kernel level is added when both runs have kernels. */
		cs_corr_request k = *rq;
		k.format = CS_CORR_JSON;
		k.kernels = 1;
		char kerr[512];
		have_kernels = cs_corr_out(s, &k, &kernels, kerr, sizeof kerr) == 0;
		if (!have_kernels) {
			cs_buf_reset(&kernels);
			cs_json_raw(&kernels, "[]");
		}
	}
	if (rc == 0) {
		cs_json_raw(out, page_head);
		cs_json_raw(out, "<title>cyclescope report: ");
		cs_report_html_text(out, rq->hw);
		cs_json_raw(out, " vs ");
		cs_report_html_text(out, rq->sim);
		cs_json_raw(out, "</title>\n</head><body>\n<h1>cyclescope: ");
		cs_report_html_text(out, rq->hw);
		cs_json_raw(out, " (hardware) vs ");
		cs_report_html_text(out, rq->sim);
		cs_json_raw(out, " (simulator)</h1>\n<div class=\"note\">Generated by cyclescope correlate; "
				 "method in docs/correlation.md. Shaded: the simulator's kernels.</div>\n"
				 "<div id=\"cs-report\"></div>\n");
		figures(s, rq, 0, "fig-b", out);
		if (have_kernels)
			figures(s, rq, 1, "fig-k", out);
		cs_json_raw(out, "<script id=\"cs-data\" type=\"application/json\">");
		/* JSON inside <script>: "</" must not appear. */
		cs_buf data = CS_BUF_INIT;
		cs_json_raw(&data, "{\"hw\":");
		cs_json_str(&data, rq->hw);
		cs_json_raw(&data, ",\"sim\":");
		cs_json_str(&data, rq->sim);
		cs_json_raw(&data, ",\"binned\":");
		cs_buf_append(&data, binned.data, binned.len);
		cs_json_raw(&data, ",\"kernels\":");
		cs_buf_append(&data, kernels.data, kernels.len);
		cs_json_raw(&data, "}");
		for (size_t i = 0; i < data.len; i++) {
			if (data.data[i] == '<')
				cs_json_raw(out, "\\u003c");
			else
				cs_buf_put_u8(out, data.data[i]);
		}
		cs_buf_free(&data);
		cs_json_raw(out, "</script>\n<script>\n");
		cs_json_raw(out, page_script);
		cs_json_raw(out, "</script>\n</body></html>\n");
	}
	cs_buf_free(&binned);
	cs_buf_free(&kernels);
	return rc;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	char tmp[65536];
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *g = realloc(buf, cap);
			if (!g) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = g;
		}
		memcpy(buf + len, tmp, n);
		len += n;
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

int cs_report_assets(char **js, char **css, char *err, size_t errlen)
{
	char dir[4096];
	const char *env = getenv("CYCLESCOPE_WEB_ASSETS");
	if (env && *env) {
		snprintf(dir, sizeof dir, "%s", env);
	} else {
		char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0) {
			snprintf(err, errlen, "cannot find the executable's directory");
			return -ENOENT;
		}
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		/* the build tree (beside the binary), else an installed copy's
		 * PREFIX/share/cyclescope */
		snprintf(dir, sizeof dir, "%.4000s/web-assets", exe);
		char probe[4200];
		snprintf(probe, sizeof probe, "%s/node_modules/uplot/dist/uPlot.iife.min.js", dir);
		if (access(probe, R_OK) != 0)
			snprintf(dir, sizeof dir, "%.4000s/../share/cyclescope/web-assets", exe);
	}
	char path[4200];
	snprintf(path, sizeof path, "%s/node_modules/uplot/dist/uPlot.iife.min.js", dir);
	*js = slurp(path);
	snprintf(path, sizeof path, "%s/node_modules/uplot/dist/uPlot.min.css", dir);
	*css = slurp(path);
	if (!*js || !*css) {
		free(*js);
		free(*css);
		*js = *css = NULL;
		snprintf(err, errlen, "uPlot is not installed in %s (run 'make web-assets': it installs "
			 "web/assets/package.json with npm), or set CYCLESCOPE_WEB_ASSETS", dir);
		return -ENOENT;
	}
	snprintf(err, errlen, "%s", dir); /* where they were found */
	return 0;
}
