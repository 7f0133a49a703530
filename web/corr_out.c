/*
 * corr_out.c - correlation answers as text, JSON or CSV (corr_out.h).
 */
#include "corr_out.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corr_job.h"
#include "correlate.h"
#include "figure.h"
#include "json.h"
#include "log.h"

/* One quoted CSV field and its comma (RFC 4180: quotes doubled). */
static void csv_field(cs_buf *b, const char *s)
{
	cs_buf_put_u8(b, '"');
	for (const char *c = s; *c; c++) {
		if (*c == '"')
			cs_buf_put_u8(b, '"');
		cs_buf_put_u8(b, (uint8_t)*c);
	}
	cs_json_raw(b, "\",");
}

static void json_array(cs_buf *b, const double *v, size_t n)
{
	cs_json_raw(b, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			cs_json_raw(b, ",");
		cs_json_f64(b, v[i]);
	}
	cs_json_raw(b, "]");
}

typedef struct pair {
	const char *hw, *sim;
} pair;

/* Opens a pair's JSON object (after a comma unless it is the first). */
static void json_pair_head(cs_buf *b, const pair *pr, int first_pair, int *first)
{
	cs_json_raw(b, first_pair ? "" : ",\n");
	cs_json_raw(b, "{");
	cs_json_key(b, first, "hw_metric");
	cs_json_str(b, pr->hw);
	cs_json_key(b, first, "sim_metric");
	cs_json_str(b, pr->sim);
}

static void json_num(cs_buf *b, int *first, const char *k, double v)
{
	cs_json_key(b, first, k);
	cs_json_f64(b, v);
}

/* "name (uid N)" of kernel j, into out. */
static const char *kernel_label(const cs_cjob_kernels *k, size_t j, char *out, size_t len)
{
	char d[256];
	cs_cjob_demangle(k->names[j], d, sizeof d);
	if (k->uid[j] >= 0)
		snprintf(out, len, "%.80s (uid %lld)", d, (long long)k->uid[j]);
	else
		snprintf(out, len, "%.80s", d);
	return out;
}

/* Why a kernel's value is left out: "shared on the simulator side with
 * A (uid 3), B (uid 2)". */
static void shared_note(const cs_cjob_kernels *k, size_t j, const char *side, char *out,
			size_t len)
{
	size_t n = (size_t)snprintf(out, len, "ran beside other kernels on the %s side for %.0f of "
				    "its %.0f cycles, with ", side, k->overlap[j], k->t1[j] - k->t0[j]);
	const size_t *w = k->shared_with[j];
	size_t c = 0;
	for (; w && w[c] != SIZE_MAX && c < 4 && n < len; c++) {
		char l[128];
		n += (size_t)snprintf(out + n, len - n, "%s%s", c ? ", " : "",
				      kernel_label(k, w[c], l, sizeof l));
	}
	if (k->shared_n[j] > c && n < len)
		n += (size_t)snprintf(out + n, len - n, " and %zu more", k->shared_n[j] - c);
	if (n < len)
		snprintf(out + n, len - n, ": its own value is not known, so it is left out");
}

static void json_accounting(cs_buf *b, int *first, const char *key, const cs_cjob_kernels *k)
{
	int f = 1;
	cs_json_key(b, first, key);
	cs_json_raw(b, "{");
	json_num(b, &f, "kernels", k->kernels_total);
	json_num(b, &f, "shared", k->shared_total);
	json_num(b, &f, "outside", k->outside_total);
	json_num(b, &f, "total", k->kernels_total + k->shared_total + k->outside_total);
	cs_json_raw(b, "}");
}

/* Kernel level of one pair: matched kernels, the values each side
 * really knows (shared kernels are listed but left out of r, MAPE and
 * the aggregate error), how each pair was matched, and where each side's
 * total went. */
/* The kernel-level scatter: a point per kernel compared, on log axes
 * fitted to the data with y = x across, named on hover, and the three
 * furthest from y = x labelled. */
static int kernel_svg(cs_buf *b, const pair *pr, const cs_cjob_kernels *kh,
		      const cs_cjob_kernels *ks, const cs_cjob_pair *pairs, size_t n,
		      const cs_corr_kernels *k, const char *hw_run, const char *sim_run)
{
	double *x = calloc(n + 1, sizeof *x), *y = calloc(n + 1, sizeof *y), *off = calloc(n + 1, sizeof *off);
	char (*name)[128] = calloc(n + 1, sizeof *name), (*line)[256] = calloc(n + 1, sizeof *line);
	const char **hover = calloc(n + 1, sizeof *hover), **labels = calloc(n + 1, sizeof *labels);
	int rc = -ENOMEM;
	if (!x || !y || !off || !name || !line || !hover || !labels)
		goto out;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		size_t jh = pairs[i].hw, js = pairs[i].sim;
		if (kh->shared[jh] || ks->shared[js] || !(kh->totals[jh] > 0) || !(ks->totals[js] > 0))
			continue;
		x[m] = kh->totals[jh];
		y[m] = ks->totals[js];
		cs_cjob_demangle(ks->names[js], name[m], sizeof name[m]);
		snprintf(line[m], sizeof line[m], "%s: hw %.6g, sim %.6g (%+.1f%%)", name[m], x[m],
			 y[m], 100 * (y[m] - x[m]) / x[m]);
		hover[m] = line[m];
		off[m] = fabs(log(y[m] / x[m]));
		m++;
	}
	/* the three furthest from y = x (by ratio, 5% at least) get their name drawn */
	for (int t = 0; t < 3; t++) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < m; i++)
			if (!labels[i] && off[i] > 0.05 && (best == SIZE_MAX || off[i] > off[best]))
				best = i;
		if (best == SIZE_MAX)
			break;
		labels[best] = name[best];
	}
	char legend[160], xt[300], yt[300], cap[700];
	snprintf(legend, sizeof legend, "kernels (r = %.4f, MAPE = %.2f%%)", k->pearson, k->mape);
	snprintf(xt, sizeof xt, "hardware: %s", pr->hw);
	snprintf(yt, sizeof yt, "simulator: %s", pr->sim);
	snprintf(cap, sizeof cap, "hardware run %s, simulator run %s; %zu kernels compared of %zu matched; "
		 "aggregate error %.2f%%; dashed: y = x", hw_run, sim_run, m, n, k->agg_err);
	cs_fig_series ser = {.label = legend, .color = "#d62728", .style = CS_FIG_POINTS, .n = m,
			     .x0 = x, .y = y, .labels = labels, .hover = hover};
	cs_fig_panel pan = {.ytitle = yt, .ylog = 1, .height = 420, .nseries = 1, .series = &ser};
	cs_fig f = {.title = "Per kernel: simulator vs hardware", .caption = cap,
		    .xkind = CS_FIG_X_PLAIN, .xtitle = xt, .xlog = 1, .width = 640, .diagonal = 1,
		    .npanels = 1, .panels = &pan};
	rc = cs_fig_svg(&f, b);
out:
	free(x), free(y), free(off), free(name), free(line), free(hover), free(labels);
	return rc;
}

static int kernel_level(cs_buf *b, const pair *pr, const cs_cjob_kernels *kh,
			const cs_cjob_kernels *ks, int format, int first_pair, const char *hw_run,
			const char *sim_run)
{
	size_t cap = kh->n < ks->n ? kh->n : ks->n;
	cs_cjob_pair *pairs = calloc(cap + 1, sizeof *pairs);
	double *xh = calloc(cap + 1, sizeof *xh), *xs = calloc(cap + 1, sizeof *xs);
	if (!pairs || !xh || !xs) {
		free(pairs), free(xh), free(xs);
		return -ENOMEM;
	}
	size_t n = cs_cjob_match(kh, ks, pairs), used = 0;
	for (size_t i = 0; i < n; i++)
		if (!kh->shared[pairs[i].hw] && !ks->shared[pairs[i].sim]) {
			xh[used] = kh->totals[pairs[i].hw];
			xs[used++] = ks->totals[pairs[i].sim];
		}
	cs_corr_kernels k;
	cs_corr_kernel_stats(xh, xs, used, &k);
	int first = 1, rc = 0;
	char note[1024], l1[128], l2[128];
	if (format == CS_CORR_SVG) {
		rc = kernel_svg(b, pr, kh, ks, pairs, n, &k, hw_run, sim_run);
	} else if (format == CS_CORR_JSON) {
		json_pair_head(b, pr, first_pair, &first);
		cs_json_key(b, &first, "kernels");
		cs_json_i64(b, (int64_t)n);
		cs_json_key(b, &first, "compared");
		cs_json_i64(b, (int64_t)used);
		json_num(b, &first, "pearson", k.pearson);
		json_num(b, &first, "mape_pct", k.mape);
		json_num(b, &first, "aggregate_error_pct", k.agg_err);
		json_accounting(b, &first, "hw_accounting", kh);
		json_accounting(b, &first, "sim_accounting", ks);
		cs_json_key(b, &first, "warnings");
		cs_json_raw(b, "[");
		if (!used && n)
			cs_json_str(b, "every matched kernel ran beside another on one side: no "
				       "kernel-level statistics");
		cs_json_raw(b, "]");
		cs_json_key(b, &first, "per_kernel");
		cs_json_raw(b, "[");
		for (size_t i = 0; i < n; i++) {
			size_t jh = pairs[i].hw, js = pairs[i].sim;
			int f2 = 1;
			cs_json_raw(b, i ? ",{" : "{");
			char d[256];
			cs_json_key(b, &f2, "name");
			cs_json_str(b, ks->names[js]);
			cs_json_key(b, &f2, "demangled");
			cs_json_str(b, cs_cjob_demangle(ks->names[js], d, sizeof d));
			cs_json_key(b, &f2, "hw_name");
			cs_json_str(b, kh->names[jh]);
			cs_json_key(b, &f2, "hw_demangled");
			cs_json_str(b, cs_cjob_demangle(kh->names[jh], d, sizeof d));
			cs_json_key(b, &f2, "uid");
			cs_json_i64(b, ks->uid[js]);
			cs_json_key(b, &f2, "hw_uid");
			cs_json_i64(b, kh->uid[jh]);
			cs_json_key(b, &f2, "matched_by");
			cs_json_str(b, cs_cjob_how_name(pairs[i].how));
			json_num(b, &f2, "hw", kh->totals[jh]);
			json_num(b, &f2, "sim", ks->totals[js]);
			cs_json_key(b, &f2, "shared");
			cs_json_raw(b, kh->shared[jh] || ks->shared[js] ? "true" : "false");
			if (kh->shared[jh] || ks->shared[js]) {
				if (ks->shared[js])
					shared_note(ks, js, "simulator", note, sizeof note);
				else
					shared_note(kh, jh, "hardware", note, sizeof note);
				cs_json_key(b, &f2, "note");
				cs_json_str(b, note);
			}
			cs_json_raw(b, "}");
		}
		cs_json_raw(b, "]}");
	} else if (format == CS_CORR_CSV) {
		if (first_pair)
			cs_buf_printf(b, "hw_metric,sim_metric,kernel,uid,hw_kernel,matched_by,hw,sim,shared\r\n");
		for (size_t i = 0; i < n; i++) {
			size_t jh = pairs[i].hw, js = pairs[i].sim;
			csv_field(b, pr->hw);
			csv_field(b, pr->sim);
			char d[256];
			csv_field(b, cs_cjob_demangle(ks->names[js], d, sizeof d));
			cs_buf_printf(b, "%lld,", (long long)ks->uid[js]);
			csv_field(b, cs_cjob_demangle(kh->names[jh], d, sizeof d));
			csv_field(b, cs_cjob_how_name(pairs[i].how));
			if (kh->shared[jh] || ks->shared[js])
				cs_buf_printf(b, ",,1\r\n");
			else
				cs_buf_printf(b, "%.17g,%.17g,0\r\n", kh->totals[jh], ks->totals[js]);
		}
	} else {
		cs_buf_printf(b, "%s  vs  %s: %zu kernels matched (of %zu hw, %zu sim), %zu compared\n",
			pr->hw, pr->sim, n, kh->n, ks->n, used);
		/* the label column as wide as its longest label (a demangled
		 * name with its uid ran into the next column at 40) */
		int w = 16;
		for (size_t i = 0; i < n; i++) {
			int l = (int)strlen(kernel_label(ks, pairs[i].sim, l1, sizeof l1));
			w = l > w ? (l < 96 ? l : 96) : w;
		}
		for (size_t i = 0; i < n; i++) {
			size_t jh = pairs[i].hw, js = pairs[i].sim;
			kernel_label(ks, js, l1, sizeof l1);
			if (kh->shared[jh] || ks->shared[js]) {
				if (ks->shared[js])
					shared_note(ks, js, "simulator", note, sizeof note);
				else
					shared_note(kh, jh, "hardware", note, sizeof note);
				cs_buf_printf(b, "  %-*.*s shared: %s\n", w, w, l1, note);
				continue;
			}
			cs_buf_printf(b, "  %-*.*s  hw %-14.6g sim %-14.6g err %+.1f%%  (matched by %s%s%s)\n",
				w, w, l1, kh->totals[jh], ks->totals[js],
				kh->totals[jh] != 0 ? 100 * (ks->totals[js] - kh->totals[jh]) / kh->totals[jh]
						    : (double)NAN,
				cs_cjob_how_name(pairs[i].how), pairs[i].how == CS_MATCH_NAME ? "" : ": ",
				pairs[i].how == CS_MATCH_NAME ? "" : kernel_label(kh, jh, l2, sizeof l2));
		}
		if (!used && n)
			cs_buf_printf(b, "  warning: every matched kernel ran beside another on one side: no "
				   "kernel-level statistics\n");
		cs_buf_printf(b, "  pearson r %.4f  MAPE %.2f%% (%zu kernels)  aggregate error %.2f%%\n",
			k.pearson, k.mape, k.mape_n, k.agg_err);
		cs_buf_printf(b, "  hw total %.6g = kernels alone %.6g + shared %.6g + outside kernels %.6g\n",
			kh->kernels_total + kh->shared_total + kh->outside_total, kh->kernels_total,
			kh->shared_total, kh->outside_total);
		cs_buf_printf(b, "  sim total %.6g = kernels alone %.6g + shared %.6g + outside kernels %.6g\n\n",
			ks->kernels_total + ks->shared_total + ks->outside_total, ks->kernels_total,
			ks->shared_total, ks->outside_total);
	}
	free(pairs), free(xh), free(xs);
	return rc;
}

/* Both runs' kernels on the bins' axis (each side shifted as the lag
 * shifted its bins), which are matched (cs_cjob_match), and each match's
 * error in percent of the hardware's value: where both windows are whole
 * runs, from the kernels' own totals (the kernel level's figures), else
 * NaN. */
typedef struct aligned {
	cs_cjob_kernels kh, ks;
	int have;
	cs_cjob_pair *pairs;
	double *err;
	size_t n;
} aligned;

static void aligned_free(aligned *a)
{
	if (a->have) {
		cs_cjob_kernels_free(&a->kh);
		cs_cjob_kernels_free(&a->ks);
	}
	free(a->pairs), free(a->err);
	memset(a, 0, sizeof *a);
}

static void shift_spans(cs_cjob_kernels *k, double by)
{
	for (size_t i = 0; i < k->n; i++)
		k->t0[i] += by, k->t1[i] += by;
}

/* 0 with *a filled (a->have 0 when a side has no kernels), or -ENOMEM. */
static int aligned_load(cs_store *s, const cs_cjob_side *h, const cs_cjob_side *m,
			const cs_corr_result *r, double bin, int whole, aligned *a)
{
	char kerr[256];
	double hs = r->lag > 0 ? -(double)r->lag * bin : 0, ms = r->lag < 0 ? (double)r->lag * bin : 0;
	memset(a, 0, sizeof *a);
	if (whole) {
		if (cs_cjob_kernel_totals(s, h, &a->kh, kerr, sizeof kerr))
			return 0;
		if (cs_cjob_kernel_totals(s, m, &a->ks, kerr, sizeof kerr)) {
			cs_cjob_kernels_free(&a->kh);
			return 0;
		}
		shift_spans(&a->kh, hs);
		shift_spans(&a->ks, ms);
	} else {
		if (cs_cjob_kernel_spans(s, h, hs, &a->kh, kerr, sizeof kerr))
			return 0;
		if (cs_cjob_kernel_spans(s, m, ms, &a->ks, kerr, sizeof kerr)) {
			cs_cjob_kernels_free(&a->kh);
			return 0;
		}
	}
	a->have = 1;
	size_t cap = (a->kh.n < a->ks.n ? a->kh.n : a->ks.n) + 1;
	a->pairs = calloc(cap, sizeof *a->pairs);
	a->err = calloc(cap, sizeof *a->err);
	if (!a->pairs || !a->err) {
		aligned_free(a);
		return -ENOMEM;
	}
	a->n = cs_cjob_match(&a->kh, &a->ks, a->pairs);
	for (size_t i = 0; i < a->n; i++) {
		size_t jh = a->pairs[i].hw, js = a->pairs[i].sim;
		int alone = whole && !a->kh.shared[jh] && !a->ks.shared[js];
		double hv = alone ? a->kh.totals[jh] : (double)NAN, sv = alone ? a->ks.totals[js] : (double)NAN;
		a->err[i] = hv != 0 && isfinite(hv) && isfinite(sv) ? 100 * (sv - hv) / fabs(hv) : (double)NAN;
	}
	return 0;
}

/* A match's colour by its error: within 10%, within 30%, beyond, unknown. */
static const char *err_color(double pct)
{
	return !isfinite(pct) ? "#999999" : fabs(pct) <= 10 ? "#2ca02c" : fabs(pct) <= 30 ? "#ff7f0e"
										    : "#d62728";
}

/* The binned figure: hardware as a wide light step under the simulator's
 * dashed one (both visible wherever they overlap), the simulator's
 * kernels shaded behind, and sim - hw in its own panel below. */
static int binned_svg(cs_store *s, cs_buf *b, const pair *pr, const cs_cjob_side *h,
		      const cs_cjob_side *m, const cs_corr_result *r, double bin, int whole)
{
	size_t n = r->bins;
	double *x0 = calloc(n + 1, sizeof *x0), *x1 = calloc(n + 1, sizeof *x1);
	double *d = calloc(n + 1, sizeof *d), *rel = calloc(n + 1, sizeof *rel);
	int rc = -ENOMEM;
	cs_cjob_kernels ks = {0};
	int have_k = 0;
	aligned al = {0};
	cs_fig_span *sp = NULL;
	cs_fig_link *links = NULL;
	char (*tips)[96] = NULL;
	if (!x0 || !x1 || !d || !rel || aligned_load(s, h, m, r, bin, whole, &al))
		goto out;
	double peak = 0;
	for (size_t i = 0; i < n; i++)
		peak = fmax(peak, fabs(r->hw_bins[i]));
	for (size_t i = 0; i < n; i++) {
		x0[i] = (double)i * bin;
		x1[i] = (double)(i + 1) * bin;
		d[i] = r->sim_bins[i] - r->hw_bins[i];
		/* relative where the hardware counts at least 1% of its peak (the
		 * bins MAPE is taken over), else no value */
		rel[i] = fabs(r->hw_bins[i]) >= 0.01 * peak && peak > 0 ? 100 * d[i] / fabs(r->hw_bins[i])
									 : (double)NAN;
	}
	char kerr[256];
	have_k = cs_cjob_kernel_spans(s, m, (double)(r->lag < 0 ? r->lag : 0) * bin, &ks, kerr,
				      sizeof kerr) == 0;
	char hl[600], sl[700], yt[200], title[200], cap[2400];
	snprintf(hl, sizeof hl, "hardware %s: %s", h->run_name, pr->hw);
	snprintf(sl, sizeof sl, "simulator %s: %s (r = %.4f, MAPE = %.2f%%)", m->run_name, pr->sim,
		 r->pearson, r->mape);
	const char *u = h->axis_unit, *u1 = !strcmp(u, "ns") ? "ns" : "cycle";
	/* the quantity named where it is short enough to run up the axis */
	const char *q = strlen(pr->hw) <= 32 ? pr->hw : "";
	if (h->is_rate)
		snprintf(yt, sizeof yt, "%s%sper %s, mean of %g-%s bins", q, *q ? " " : "", u1, bin, u1);
	else
		snprintf(yt, sizeof yt, "%s%sper %g-%s bin", q, *q ? " " : "", bin, u1);
	snprintf(title, sizeof title, "Hardware vs simulator, per %g-%s bin", bin, u1);
	snprintf(cap, sizeof cap, "hardware %s over %s (axis: %s); simulator %s over %s; %zu bins of "
		 "%g %s, lag %d bins; shaded: the simulator's kernels; sim vs hw in %% of hardware where it "
		 "counts 1%% of its peak or more", h->run_name, h->window,
		 h->axis, m->run_name, m->window, n, bin, u, r->lag);
	cs_fig_series two[2] = {
		{.label = hl, .color = "#6baed6", .style = CS_FIG_STEP, .width = 3.2, .n = n, .x0 = x0,
		 .x1 = x1, .y = r->hw_bins},
		{.label = sl, .color = "#d62728", .style = CS_FIG_STEP, .width = 1.4, .dash = "5 3",
		 .n = n, .x0 = x0, .x1 = x1, .y = r->sim_bins},
	};
	cs_fig_series diff = {.label = "simulator - hardware", .color = "#555555", .style = CS_FIG_STEP,
			      .width = 1.2, .n = n, .x0 = x0, .x1 = x1, .y = d};
	cs_fig_series reld = {.label = "(simulator - hardware) / hardware", .color = "#9467bd",
			      .style = CS_FIG_STEP, .width = 1.2, .n = n, .x0 = x0, .x1 = x1, .y = rel};
	cs_fig_panel pans[3] = {
		{.ytitle = yt, .height = 260, .nseries = 2, .series = two},
		{.ytitle = "sim - hw", .height = 100, .zero_line = 1, .nseries = 1, .series = &diff},
		{.ytitle = "sim vs hw [%]", .height = 100, .zero_line = 1, .nseries = 1, .series = &reld},
	};
	int in_ns = !strcmp(u, "ns");
	cs_fig f = {.title = title, .caption = cap, .xkind = in_ns ? CS_FIG_X_NS : CS_FIG_X_CYCLES,
		    .xtitle = in_ns ? "time from the window start" : "cycles from the window start",
		    .xmin = 0, .xmax = (double)n * bin, .npanels = 3, .panels = pans};
	if (have_k)
		f.shade = (cs_fig_shade){ks.n, ks.t0, ks.t1, NULL};
	/* both runs' kernels in lanes on the one axis, each match linked
	 * across the lane between them, coloured by its error */
	cs_fig_lane lanes[3] = {{.label = "hw kernels", .color = "#6baed6"},
				{.label = "matched"},
				{.label = "sim kernels", .color = "#d62728"}};
	if (al.have && al.kh.n + al.ks.n) {
		sp = calloc(al.kh.n + al.ks.n + 1, sizeof *sp);
		links = calloc(al.n + 1, sizeof *links);
		tips = calloc(al.n + 1, sizeof *tips);
		if (!sp || !links || !tips) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < al.kh.n; i++)
			sp[i] = (cs_fig_span){al.kh.t0[i], al.kh.t1[i], al.kh.names[i], NULL};
		for (size_t i = 0; i < al.ks.n; i++)
			sp[al.kh.n + i] = (cs_fig_span){al.ks.t0[i], al.ks.t1[i], al.ks.names[i], NULL};
		lanes[0].n = al.kh.n, lanes[0].spans = sp;
		lanes[2].n = al.ks.n, lanes[2].spans = sp + al.kh.n;
		for (size_t i = 0; i < al.n; i++) {
			if (isfinite(al.err[i]))
				snprintf(tips[i], sizeof tips[i], "sim %+.1f%% of hw", al.err[i]);
			else
				snprintf(tips[i], sizeof tips[i], "matched (%s)", cs_cjob_how_name(al.pairs[i].how));
			links[i] = (cs_fig_link){0, al.pairs[i].hw, 2, al.pairs[i].sim, err_color(al.err[i]),
						 tips[i]};
		}
		f.nlanes = 3, f.lanes = lanes;
		f.nlinks = al.n, f.links = links;
		size_t cl = strlen(cap);
		snprintf(cap + cl, sizeof cap - cl, "; lines: matched kernels, green within 10%%, orange "
						    "within 30%%, red beyond");
	}
	rc = cs_fig_svg(&f, b);
out:
	if (have_k)
		cs_cjob_kernels_free(&ks);
	aligned_free(&al);
	free(sp), free(links), free(tips);
	free(x0), free(x1), free(d), free(rel);
	return rc;
}

/* One binned pair as a JSON object. */
static void json_spans(cs_buf *b, const cs_cjob_kernels *k)
{
	cs_json_raw(b, "[");
	for (size_t i = 0; i < k->n; i++) {
		cs_json_raw(b, i ? ",[" : "[");
		cs_json_f64(b, k->t0[i]);
		cs_json_raw(b, ",");
		cs_json_f64(b, k->t1[i]);
		cs_json_raw(b, ",");
		cs_json_str(b, k->names[i]);
		cs_json_raw(b, "]");
	}
	cs_json_raw(b, "]");
}

static void binned_json(cs_store *s, cs_buf *b, const pair *pr, const cs_cjob_both *p,
			const cs_corr_result *rr, double use_bin, char warn[4][256], size_t nwarn,
			int first_pair, int with_bins, int whole)
{
	const cs_cjob_side *h = &p->h, *m = &p->m;
	double sim_hz = p->sim_hz;
	int first = 1;
	json_pair_head(b, pr, first_pair, &first);
	cs_json_key(b, &first, "hw_window");
	cs_json_str(b, h->window);
	cs_json_key(b, &first, "sim_window");
	cs_json_str(b, m->window);
	cs_json_key(b, &first, "hw_axis");
	cs_json_str(b, h->axis);
	cs_json_key(b, &first, "axis_unit");
	cs_json_str(b, h->axis_unit);
	if (h->clock_hz > 0 && strcmp(h->axis_unit, "ns"))
		json_num(b, &first, "hw_clock_hz", h->clock_hz);
	if (sim_hz > 0) {
		json_num(b, &first, "sim_clock_hz", sim_hz);
		json_num(b, &first, "sim_cycle_scale", m->cycle_scale);
	}
	cs_json_key(b, &first, "rate");
	cs_json_raw(b, h->is_rate ? "true" : "false");
	json_num(b, &first, "bin_cycles", use_bin);
	cs_json_key(b, &first, "bins");
	cs_json_i64(b, (int64_t)rr->bins);
	cs_json_key(b, &first, "lag_bins");
	cs_json_i64(b, rr->lag);
	json_num(b, &first, "pearson", rr->pearson);
	json_num(b, &first, "spearman", rr->spearman);
	json_num(b, &first, "mape_pct", rr->mape);
	cs_json_key(b, &first, "mape_bins");
	cs_json_i64(b, (int64_t)rr->mape_bins);
	json_num(b, &first, "nrmse", rr->nrmse);
	json_num(b, &first, "hw_total", rr->hw_total);
	json_num(b, &first, "sim_total", rr->sim_total);
	json_num(b, &first, "total_error", rr->total_err);
	json_num(b, &first, "hw_cycles", rr->hw_cycles);
	json_num(b, &first, "sim_cycles", rr->sim_cycles);
	json_num(b, &first, "duration_error", rr->duration_err);
	json_num(b, &first, "normalized_pearson", rr->norm_pearson);
	json_num(b, &first, "normalized_mape_pct", rr->norm_mape);
	json_num(b, &first, "normalized_nrmse", rr->norm_nrmse);
	cs_json_key(b, &first, "warnings");
	cs_json_raw(b, "[");
	for (size_t w = 0; w < nwarn; w++) {
		cs_json_raw(b, w ? "," : "");
		cs_json_str(b, warn[w]);
	}
	cs_json_raw(b, "]");
	if (with_bins) {
		cs_json_key(b, &first, "hw_bins");
		json_array(b, rr->hw_bins, rr->bins);
		cs_json_key(b, &first, "sim_bins");
		json_array(b, rr->sim_bins, rr->bins);
		/* Both runs' kernels on the bins' axis and their matches
		 * (aligned_load), for the UI's aligned lanes. */
		aligned al;
		if (aligned_load(s, h, m, rr, use_bin, whole, &al) == 0 && al.have) {
			cs_json_key(b, &first, "hw_kernels");
			json_spans(b, &al.kh);
			cs_json_key(b, &first, "sim_kernel_spans");
			json_spans(b, &al.ks);
			cs_json_key(b, &first, "links");
			cs_json_raw(b, "[");
			for (size_t i = 0; i < al.n; i++) {
				cs_buf_printf(b, "%s[%zu,%zu,", i ? "," : "", al.pairs[i].hw, al.pairs[i].sim);
				cs_json_f64(b, al.err[i]);
				cs_json_raw(b, "]");
			}
			cs_json_raw(b, "]");
		}
		aligned_free(&al);
		/* The simulator's kernels inside its window, in bins'
		 * cycles (the lag shift applied), for shading. */
		cs_cjob_kernels ks;
		char kerr[256];
		cs_json_key(b, &first, "sim_kernels");
		cs_json_raw(b, "[");
		if (cs_cjob_kernel_spans(s, m, (double)(rr->lag < 0 ? rr->lag : 0) * use_bin, &ks, kerr,
					 sizeof kerr) == 0) {
			for (size_t i = 0; i < ks.n; i++) {
				cs_json_raw(b, i ? ",[" : "[");
				cs_json_f64(b, ks.t0[i]);
				cs_json_raw(b, ",");
				cs_json_f64(b, ks.t1[i]);
				cs_json_raw(b, ",");
				cs_json_str(b, ks.names[i]);
				cs_json_raw(b, "]");
			}
			cs_cjob_kernels_free(&ks);
		}
		cs_json_raw(b, "]");
	}
	cs_json_raw(b, "}");
}

/* One binned pair as text. */
static void binned_text(cs_buf *b, const pair *pr, const cs_cjob_both *p,
			const cs_corr_result *rr, double use_bin, char warn[4][256], size_t nwarn)
{
	const cs_cjob_side *h = &p->h, *m = &p->m;
	double sim_hz = p->sim_hz, hw_hz = p->hw_hz;
	const char *u = h->axis_unit;
	cs_buf_printf(b, "hardware  %s: %s over %s (%.0f %s, axis %s, %zu samples)\n", h->run_name,
	       pr->hw, h->window, h->cycles, u, h->axis, h->n);
	cs_buf_printf(b, "simulator %s: %s over %s (%.0f %s, %zu samples)\n", m->run_name, pr->sim,
	       m->window, m->cycles, u, m->n);
	if (sim_hz > 0)
		cs_buf_printf(b, "simulator cycles at %.1f MHz rescaled x%.6g onto the hardware's %.1f MHz\n",
			sim_hz / 1e6, m->cycle_scale, hw_hz / 1e6);
	if (h->is_rate)
		cs_buf_printf(b, "both sides are rates: bins are per-cycle means, totals what they add up to\n");
	cs_buf_printf(b, "bins: %zu of %.0f %s, lag %d bins (negative: the simulator is later)\n",
	       rr->bins, use_bin, u, rr->lag);
	cs_buf_printf(b, "  pearson r      %8.4f     spearman rho %8.4f\n", rr->pearson, rr->spearman);
	cs_buf_printf(b, "  MAPE           %8.2f%%    (%zu bins with hardware >= 1%% of its peak)\n", rr->mape,
	       rr->mape_bins);
	cs_buf_printf(b, "  NRMSE          %8.4f\n", rr->nrmse);
	cs_buf_printf(b, "  total error    %+8.2f%%    (sim %.6g vs hw %.6g)\n", 100 * rr->total_err,
	       rr->sim_total, rr->hw_total);
	cs_buf_printf(b, "  duration error %+8.2f%%\n", 100 * rr->duration_err);
	cs_buf_printf(b, "  time-normalised (%zu bins): pearson r %.4f, MAPE %.2f%%, NRMSE %.4f\n",
	       rr->norm_bins, rr->norm_pearson, rr->norm_mape, rr->norm_nrmse);
	for (size_t w = 0; w < nwarn; w++)
		cs_buf_printf(b, "  warning: %s\n", warn[w]);
	cs_buf_printf(b, "\n");
}

static int one_pair(cs_store *s, const pair *pr, const cs_corr_request *rq, int first_pair,
		    cs_buf *b, char *err, size_t errlen)
{
	int json = rq->format == CS_CORR_JSON, csv = rq->format == CS_CORR_CSV;
	int kernels = rq->kernels;
	cs_cjob_both_spec sp = {rq->hw, rq->sim, pr->hw, pr->sim, kernels ? NULL : rq->hw_window,
				kernels ? NULL : rq->sim_window, rq->hw_clock_hz, rq->sim_clock};
	cs_cjob_both p;
	int rc = cs_cjob_both_load(s, &sp, &p, err, errlen);
	if (rc < 0)
		return rc;
	const cs_cjob_side *h = &p.h, *m = &p.m;
	if (kernels) {
		cs_cjob_kernels kh, ks;
		if ((rc = cs_cjob_kernel_totals(s, h, &kh, err, errlen)) < 0)
			goto out;
		if ((rc = cs_cjob_kernel_totals(s, m, &ks, err, errlen)) < 0) {
			cs_cjob_kernels_free(&kh);
			goto out;
		}
		rc = kernel_level(b, pr, &kh, &ks, rq->format, first_pair, h->run_name, m->run_name);
		cs_cjob_kernels_free(&kh);
		cs_cjob_kernels_free(&ks);
		if (rc < 0)
			snprintf(err, errlen, "out of memory");
		goto out;
	}
	double use_bin = rq->bin_cycles > 0 ? rq->bin_cycles : (h->median_sample > m->median_sample ? h->median_sample
									    : m->median_sample);
	if (!(use_bin > 0))
		use_bin = 1;
	cs_corr_opts o = {.bin = use_bin, .max_lag = rq->max_lag, .max_bins = rq->max_bins,
			  .max_work = rq->max_work, .deadline_ms = rq->deadline_ms,
			  .cancelled = rq->cancelled, .cancel_ctx = rq->cancel_ctx};
	cs_corr_result r;
	char warn[4][256];
	size_t nwarn;
	if ((rc = cs_cjob_compare(&p, use_bin, &o, &r, warn, &nwarn, err, errlen)) < 0)
		goto out;
	if (rq->format == CS_CORR_SVG) {
		rc = binned_svg(s, b, pr, h, m, &r, use_bin, !rq->hw_window && !rq->sim_window);
		if (rc < 0)
			snprintf(err, errlen, "out of memory");
	} else if (csv) {
		if (first_pair)
			cs_buf_printf(b, "hw_metric,sim_metric,bin,cycle,hw,sim\r\n");
		for (size_t i = 0; i < r.bins; i++)
		{
			csv_field(b, pr->hw);
			csv_field(b, pr->sim);
			cs_buf_printf(b, "%zu,%.17g,%.17g,%.17g\r\n", i, (double)i * use_bin, r.hw_bins[i],
				r.sim_bins[i]);
		}
	} else if (json) {
		binned_json(s, b, pr, &p, &r, use_bin, warn, nwarn, first_pair, rq->with_bins,
			    !rq->hw_window && !rq->sim_window);
	} else {
		binned_text(b, pr, &p, &r, use_bin, warn, nwarn);
	}
	cs_corr_result_free(&r);
out:
	cs_cjob_both_free(&p);
	return rc;
}

int cs_corr_out(cs_store *s, const cs_corr_request *rq, cs_buf *out, char *err, size_t errlen)
{
	pair single = {rq->hw_metric, rq->sim_metric};
	const pair *pairs = &single;
	pair *owned = NULL;
	size_t npairs = 1;
	err[0] = '\0';
	if (rq->map) {
		npairs = cs_mmap_count(rq->map);
		owned = calloc(npairs + 1, sizeof *owned);
		if (!owned) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		for (size_t i = 0; i < npairs; i++)
			owned[i] = (pair){cs_mmap_target(rq->map, i), cs_mmap_target(rq->map, i)};
		pairs = owned;
	} else if (!rq->hw_metric || !rq->sim_metric) {
		snprintf(err, errlen, "give a hardware and a simulator metric expression, or a map");
		return -EINVAL;
	}
	if (rq->format == CS_CORR_JSON)
		cs_json_raw(out, "[");
	int rc = 0, done = 0;
	char skipped[700] = "";
	size_t nskipped = 0, sl = 0;
	for (size_t i = 0; i < npairs; i++) {
		char why[1024];
		/* SVG: the figure of the svg_pair-th pair found in both runs
		 * (as JSON lists them), or every figure one after another */
		cs_buf fig = CS_BUF_INIT;
		int svg = rq->format == CS_CORR_SVG;
		int r1 = one_pair(s, &pairs[i], rq, !done, svg ? &fig : out, why, sizeof why);
		if (svg && r1 >= 0 && (rq->svg_pair < 0 || (size_t)rq->svg_pair == (size_t)done))
			cs_buf_append(out, fig.data, fig.len);
		cs_buf_free(&fig);
		if (r1 < 0 && rq->map && (r1 == -ENOENT || r1 == -ENODATA)) {
			/* a map pair missing on either side is skipped, said once */
			if (sl < sizeof skipped - 2)
				sl += (size_t)snprintf(skipped + sl, sizeof skipped - sl, "%s%s",
						       nskipped ? ", " : "", pairs[i].hw);
			if (!nskipped)
				cs_log(CS_LOG_INFO, "correlate: %s skipped: %s", pairs[i].hw, why);
			nskipped++;
			continue;
		}
		if (r1 < 0) {
			snprintf(err, errlen, "%s", why);
			rc = r1;
			break;
		}
		done++;
		if (rq->format == CS_CORR_SVG && rq->svg_pair >= 0 && (size_t)rq->svg_pair < (size_t)done)
			break;
	}
	if (rc == 0 && rq->format == CS_CORR_SVG && rq->svg_pair >= 0 &&
	    (size_t)rq->svg_pair >= (size_t)done) {
		snprintf(err, errlen, "pair: there are %zu pairs in both runs, counted from 0", (size_t)done);
		rc = -ENOENT;
	}
	if (nskipped)
		cs_log(CS_LOG_WARN, "correlate: %zu of the map's %zu pairs are not in both runs, "
		       "skipped: %s", nskipped, npairs, skipped);
	if (rc == 0 && rq->map && !done) {
		snprintf(err, errlen, "no pair of the map is in both runs");
		rc = -ENOENT;
	}
	if (rq->format == CS_CORR_JSON)
		cs_json_raw(out, "]\n");
	free(owned);
	return rc;
}
