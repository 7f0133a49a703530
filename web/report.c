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
	"<title>cyclescope report</title>\n<style>\n";

static const char page_style[] =
	"\nbody{font:14px system-ui,sans-serif;margin:24px;color:#222}\n"
	"h1{font-size:20px}h2{font-size:16px;margin-top:32px}\n"
	"table.stats{border-collapse:collapse;margin:8px 0}\n"
	"table.stats td,table.stats th{border:1px solid #ccc;padding:3px 8px;text-align:right}\n"
	"table.stats th{background:#f4f4f4}.note{color:#666;font-size:12px}\n"
	"</style>\n";

/* Draws every pair: the two binned series and their difference on one
 * cycle axis with the simulator's kernels shaded, the statistics table,
 * and the kernel-level scatter on log axes with the y = x line. */
static const char page_script[] =
	"(function(){\n"
	"const D=JSON.parse(document.getElementById('cs-data').textContent);\n"
	"const root=document.getElementById('cs-report');\n"
	"function el(t,p,txt){const e=document.createElement(t);if(txt!==undefined)e.textContent=txt;p.appendChild(e);return e;}\n"
	"function fmt(v,d){return (v===null||v===undefined)?'n/a':(+v).toFixed(d);}\n"
	"function stats(p,rows){const t=el('table',p);t.className='stats';\n"
	"  rows.forEach(function(r){const tr=el('tr',t);el('th',tr,r[0]);el('td',tr,r[1]);});}\n"
	"const W=Math.max(600,Math.min(1200,window.innerWidth-60));\n"
	"let plots=0;\n"
	"(D.binned||[]).forEach(function(p,i){\n"
	"  const sec=el('section',root);sec.className='pair';\n"
	"  el('h2',sec,p.hw_metric+'  vs  '+p.sim_metric);\n"
	"  el('div',sec,'hardware '+D.hw+' over '+p.hw_window+'; simulator '+D.sim+' over '+p.sim_window).className='note';\n"
	"  stats(sec,[['bins',p.bins+' x '+p.bin_cycles+' cycles'],['lag (bins)',p.lag_bins],\n"
	"    ['Pearson r',fmt(p.pearson,4)],['Spearman rho',fmt(p.spearman,4)],\n"
	"    ['MAPE',fmt(p.mape_pct,2)+'% ('+p.mape_bins+' bins)'],['NRMSE',fmt(p.nrmse,4)],\n"
	"    ['total error',fmt(100*p.total_error,2)+'%'],['duration error',fmt(100*p.duration_error,2)+'%'],\n"
	"    ['time-normalised r / MAPE',fmt(p.normalized_pearson,4)+' / '+fmt(p.normalized_mape_pct,2)+'%']]);\n"
	"  const n=p.hw_bins.length,x=new Array(n),d=new Array(n);\n"
	"  for(let k=0;k<n;k++){x[k]=k*p.bin_cycles;d[k]=p.sim_bins[k]-p.hw_bins[k];}\n"
	"  const spans=p.sim_kernels||[];\n"
	"  const div=el('div',sec);div.className='plot';\n"
	"  new uPlot({width:W,height:320,title:'per '+p.bin_cycles+'-cycle bin',\n"
	"    scales:{x:{time:false}},axes:[{label:'cycle'},{label:'count per bin'}],\n"
	"    series:[{label:'cycle'},{label:'hardware',stroke:'#1f77b4',width:1.5},\n"
	"      {label:'simulator',stroke:'#d62728',width:1.5},{label:'sim - hw',stroke:'#888',dash:[4,4]}],\n"
	"    hooks:{drawClear:[function(u){const c=u.ctx;c.save();c.fillStyle='rgba(0,0,0,0.05)';\n"
	"      spans.forEach(function(s,j){if(j%2)return;const a=u.valToPos(s[0],'x',true),b=u.valToPos(s[1],'x',true);\n"
	"        c.fillRect(a,u.bbox.top,Math.max(1,b-a),u.bbox.height);});c.restore();}]}},\n"
	"    [x,p.hw_bins,p.sim_bins,d],div);\n"
	"  plots++;\n"
	"});\n"
	"(D.kernels||[]).forEach(function(p){\n"
	"  const sec=el('section',root);sec.className='kernels';\n"
	"  el('h2',sec,'kernel level: '+p.hw_metric+'  vs  '+p.sim_metric);\n"
	"  stats(sec,[['kernels',p.kernels],['Pearson r',fmt(p.pearson,4)],['MAPE',fmt(p.mape_pct,2)+'%'],\n"
	"    ['aggregate error',fmt(p.aggregate_error_pct,2)+'%']]);\n"
	"  const pts=p.per_kernel.filter(function(k){return k.hw>0&&k.sim>0;}).sort(function(a,b){return a.hw-b.hw;});\n"
	"  const xs=pts.map(function(k){return k.hw;}),ys=pts.map(function(k){return k.sim;});\n"
	"  const div=el('div',sec);div.className='plot';\n"
	"  if(!pts.length){el('p',div,'no kernel with values on both sides');return;}\n"
	"  new uPlot({width:Math.min(W,640),height:420,title:'simulator vs hardware, per kernel',\n"
	"    scales:{x:{time:false,distr:3},y:{distr:3}},axes:[{label:'hardware'},{label:'simulator'}],\n"
	"    series:[{label:'hardware'},{label:'kernel',stroke:'#d62728',paths:function(){return null;},\n"
	"      points:{show:true,size:8,fill:'#d62728'}},{label:'y = x',stroke:'#888',dash:[4,4]}]},\n"
	"    [xs,ys,xs.slice()],div);\n"
	"  plots++;\n"
	"});\n"
	"document.body.setAttribute('data-plots',plots);\n"
	"})();\n";

int cs_report_html(cs_store *s, const cs_corr_request *rq, const char *uplot_js,
		   const char *uplot_css, cs_buf *out, char *err, size_t errlen)
{
	cs_buf binned = CS_BUF_INIT, kernels = CS_BUF_INIT;
	cs_corr_request b = *rq;
	b.format = CS_CORR_JSON;
	b.kernels = 0;
	b.with_bins = 1;
	int rc = cs_corr_out(s, &b, &binned, err, errlen);
	if (rc == 0) {
		/* The kernel level is added when both runs have kernels. */
		cs_corr_request k = *rq;
		k.format = CS_CORR_JSON;
		k.kernels = 1;
		char kerr[512];
		if (cs_corr_out(s, &k, &kernels, kerr, sizeof kerr) < 0) {
			cs_buf_reset(&kernels);
			cs_json_raw(&kernels, "[]");
		}
	}
	if (rc == 0) {
		cs_json_raw(out, page_head);
		cs_json_raw(out, uplot_css);
		cs_json_raw(out, page_style);
		cs_json_raw(out, "</head><body>\n<h1>cyclescope: ");
		cs_buf title = CS_BUF_INIT;
		/* names go into HTML as text: escape what HTML would read */
		for (const char *c = rq->hw; *c; c++)
			cs_json_raw(&title, *c == '<' ? "&lt;" : *c == '&' ? "&amp;" : (char[]){*c, 0});
		cs_json_raw(&title, " (hardware) vs ");
		for (const char *c = rq->sim; *c; c++)
			cs_json_raw(&title, *c == '<' ? "&lt;" : *c == '&' ? "&amp;" : (char[]){*c, 0});
		cs_json_raw(&title, " (simulator)");
		cs_buf_append(out, title.data, title.len);
		cs_buf_free(&title);
		cs_json_raw(out, "</h1>\n<div class=\"note\">Generated by cyclescope correlate; method in "
				 "docs/correlation.md. Shaded: the simulator's kernels.</div>\n"
				 "<div id=\"cs-report\"></div>\n<script id=\"cs-data\" type=\"application/json\">");
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
		cs_json_raw(out, uplot_js);
		cs_json_raw(out, "\n</script>\n<script>\n");
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
