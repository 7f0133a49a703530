/*
 * accelsim_tables.c - Accel-Sim's own tabular outputs (accelsim_tables.h):
 * get_stats.py's CSV and AccelWattch's hardware-profiler CSVs, each one
 * kernel per row.
 *
 * get_stats.py writes, per statistic: a line of dashes (then commas), the
 * statistic (its regex, e.g. "gpu_tot_sim_cycle\s*=\s*(.*)", then
 * commas), a header "APPS,<config>,..." and one row per "app--kernel",
 * "NA" where there is no value; a blank line ends the block. The rows of
 * all blocks are joined by their label: one kernel each, with one metric
 * per statistic (and per config, "CONFIG:stat", when there are several).
 * The build blocks (values are build names) go to the run's meta.
 */
#include "accelsim_tables.h"
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_reader.h"
#include "log.h"
#include "simrun.h"

typedef struct krow {
	char *label;   /* "app--kernel" */
	double *v;     /* per metric */
} krow;

typedef struct tab {
	cs_imp im;
	char **mnames;
	size_t nm;
	krow *rows;
	size_t nr;
	size_t *hash; /* row index + 1 by label, open addressing */
	size_t hcap;
	char builds[600];
} tab;

static size_t label_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

#define fail(t, ...) cs_imp_fail(&(t)->im, __VA_ARGS__)

static int metric_of(tab *t, const char *name)
{
	for (size_t i = 0; i < t->nm; i++)
		if (!strcmp(t->mnames[i], name))
			return (int)i;
	char **g = realloc(t->mnames, (t->nm + 1) * sizeof *g);
	if (!g)
		return -ENOMEM;
	t->mnames = g;
	if (!(t->mnames[t->nm] = strdup(name)))
		return -ENOMEM;
	for (size_t r = 0; r < t->nr; r++) {
		double *v = realloc(t->rows[r].v, (t->nm + 1) * sizeof *v);
		if (!v)
			return -ENOMEM;
		v[t->nm] = NAN;
		t->rows[r].v = v;
	}
	return (int)t->nm++;
}

static krow *row_of(tab *t, const char *label)
{
	if (t->hcap)
		for (size_t i = label_hash(label) & (t->hcap - 1); t->hash[i]; i = (i + 1) & (t->hcap - 1))
			if (!strcmp(t->rows[t->hash[i] - 1].label, label))
				return &t->rows[t->hash[i] - 1];
	if ((t->nr + 1) * 2 > t->hcap) {
		size_t cap = t->hcap ? t->hcap * 2 : 256;
		size_t *h = calloc(cap, sizeof *h);
		if (!h)
			return NULL;
		for (size_t r = 0; r < t->nr; r++) {
			size_t i = label_hash(t->rows[r].label) & (cap - 1);
			while (h[i])
				i = (i + 1) & (cap - 1);
			h[i] = r + 1;
		}
		free(t->hash);
		t->hash = h;
		t->hcap = cap;
	}
	krow *g = realloc(t->rows, (t->nr + 1) * sizeof *g);
	if (!g)
		return NULL;
	t->rows = g;
	krow *k = &t->rows[t->nr];
	k->label = strdup(label);
	k->v = malloc((t->nm + 1) * sizeof *k->v);
	if (!k->label || !k->v) {
		free(k->label);
		free(k->v);
		return NULL;
	}
	for (size_t i = 0; i < t->nm; i++)
		k->v[i] = NAN;
	size_t i = label_hash(label) & (t->hcap - 1);
	while (t->hash[i])
		i = (i + 1) & (t->hcap - 1);
	t->hash[i] = ++t->nr;
	return k;
}

/* A statistic's readable name from the regex get_stats.py prints for it
 * (its stats YAML's entry), or from a plain name:
 *   "\s+L2_cache_stats_breakdown\[GLOBAL_ACC_R\]\[HIT\]\s*=\s*(.*)"
 *       -> "L2_cache_stats_breakdown[GLOBAL_ACC_R][HIT]"
 *   "gpgpu_simulation_time\s*=.*\(([0-9]+) sec\).*" -> "gpgpu_simulation_time"
 *   "total dram reads\s*=\s*(.*)" -> "total dram reads"
 * The name is what comes before the '=' (or the first group), escapes
 * dropped; a literal in parentheses after the capture group is kept
 * ("gpgpu_simulation_rate\s+=\s+(.*)\s+\(inst\/sec\)" ->
 * "gpgpu_simulation_rate (inst/sec)", beside "... (cycle/sec)"). tail gets
 * the other literal text after the group, to tell apart two statistics of
 * one name. */
static void stat_name(const char *re, char *out, size_t len, char *tail, size_t tlen)
{
	size_t o = 0, t = 0;
	const char *c = re;
	while (*c == ' ' || *c == '^' || (c[0] == '\\' && c[1] == 's' && (c += 1)) ||
	       ((*c == '+' || *c == '*') && c > re))
		c++;
	for (; *c && *c != '=' && *c != '(' && o + 1 < len; c++) {
		if (c[0] == '\\' && c[1] == 's')
			break;
		if (*c == '\\' && c[1])
			c++;
		out[o++] = *c;
	}
	while (o && (out[o - 1] == ' ' || out[o - 1] == ','))
		o--;
	out[o] = '\0';
	/* the literal text after the first capture group */
	const char *g = strstr(c, "(.*)");
	if (!g)
		g = strstr(c, "([0-9]+)");
	if (g)
		g = strchr(g, ')') + 1;
	const char *after = g;
	for (; g && *g && t + 1 < tlen; g++) {
		if (g[0] == '\\' && g[1] == 's') {
			g++;
			continue;
		}
		if (*g == '\\' && g[1]) {
			if (!strchr("()", *++g))
				tail[t++] = *g;
			continue;
		}
		if (strchr("()+*.?^$,", *g) || (*g == ' ' && (!t || tail[t - 1] == ' ')))
			continue;
		tail[t++] = *g;
	}
	while (t && tail[t - 1] == ' ')
		t--;
	if (tlen)
		tail[t] = '\0';
	const char *lp = after ? strstr(after, "\\(") : NULL; /* "\(inst\/sec\)" */
	if (lp && strstr(lp, "\\)") && o + t + 4 < len) {
		snprintf(out + o, len - o, " (%s)", tail);
		tail[0] = '\0';
	}
}

/* The fields of one CSV record, copied (at most max). Returns the count,
 * -1 at the end, -2 on a malformed record. */
static int record(cs_csvr *rd, char **f, int max, char *err, size_t errlen)
{
	const char *p;
	size_t n;
	int k = 0, res;
	do {
		res = cs_csvr_field(rd, &p, &n, err, errlen);
		if (res == CS_CSVR_EOF && !k)
			return -1;
		if (res == CS_CSVR_ERROR || res == CS_CSVR_EOF) {
			for (int i = 0; i < k; i++)
				free(f[i]);
			return -2;
		}
		if (k == max || !(f[k] = strndup(p, n))) {
			for (int i = 0; i < k; i++)
				free(f[i]);
			snprintf(err, errlen, "more than %d fields, or out of memory", max);
			return -2;
		}
		k++;
	} while (res == CS_CSVR_FIELD);
	return k;
}

static void free_fields(char **f, int n)
{
	for (int i = 0; i < n; i++)
		free(f[i]);
}

#define MAXF 512

/* One statistic's block of get_stats.py's CSV, read whole. */
typedef struct gblock {
	char stat[256];
	uint64_t line;
	char **cells; /* nrows x ncols, NULL where a row is short */
	int nrows, ncols;
	char *hdr[MAXF];
	int nhdr;
} gblock;

static void gblock_clear(gblock *b)
{
	for (int i = 0; i < b->nrows * b->ncols; i++)
		free(b->cells[i]);
	free(b->cells);
	free_fields(b->hdr, b->nhdr);
	b->cells = NULL;
	b->nrows = b->nhdr = 0;
}

/* The script's own lines, printed into the same stream by old versions. */
static int chatter(const char *f0)
{
	static const char *const said[] = {"Using logfiles", "WARNING", "NOTE", "Script exec time",
					   "Parsing", NULL};
	for (const char *const *w = said; *w; w++)
		if (!strncmp(f0, *w, strlen(*w)))
			return 1;
	return 0;
}

/* A block's values into t: "APPS,<config>..." has a row per kernel, a
 * column per config; "CFG,<app--kernel>..." (get_stats.py -R) the other
 * way round. Several configs make "CONFIG:stat" metrics. */
static int apply_block(tab *t, gblock *b)
{
	if (!b->nhdr)
		return 0;
	t->im.line = b->line;
	int by_cfg = !strcmp(b->hdr[0], "CFG");
	if (strstr(b->stat, "-build")) { /* build names go to the meta */
		for (int r = 0; r < b->nrows; r++) {
			const char *v = b->ncols > 1 ? b->cells[r * b->ncols + 1] : NULL;
			size_t l = strlen(t->builds);
			if (v && l < sizeof t->builds - 100)
				snprintf(t->builds + l, sizeof t->builds - l, "%s%s=%.60s", l ? "; " : "",
					 b->stat, v);
		}
		return 0;
	}
	int ncfg = by_cfg ? b->nrows : 0;
	if (!by_cfg)
		for (int i = 1; i < b->nhdr; i++)
			ncfg += strcmp(b->hdr[i], "AVG") != 0;
	for (int r = 0; r < b->nrows; r++)
		for (int c = 1; c < b->ncols && c < b->nhdr; c++) {
			const char *cell = b->cells[r * b->ncols + c];
			const char *first = b->cells[r * b->ncols];
			if (!cell || !first || !strcmp(b->hdr[c], "AVG") || !strcmp(first, "AVG"))
				continue;
			const char *kernel = by_cfg ? b->hdr[c] : first;
			const char *cfg = by_cfg ? first : b->hdr[c];
			char name[400];
			if (ncfg > 1)
				snprintf(name, sizeof name, "%s:%s", cfg, b->stat);
			else
				snprintf(name, sizeof name, "%s", b->stat);
			krow *k = row_of(t, kernel);
			int m = k ? metric_of(t, name) : -ENOMEM;
			if (m < 0)
				return m;
			char *end;
			double v = strtod(cell, &end);
			k->v[m] = end != cell && !*end ? v : (double)NAN; /* NA: absent */
		}
	return 0;
}

/* get_stats.py's CSV into t. */
static int read_get_stats(tab *t, const char *buf, size_t len, char *err, size_t errlen)
{
	/* The blocks are separated by blank lines, which the CSV reader
	 * skips: a block starts at a line of dashes. */
	cs_csvr rd;
	cs_csvr_init(&rd, buf, len);
	char *f[MAXF];
	int n, rc = 0, state = 0; /* 0: dashes next, 1: stat, 2: header, 3: rows */
	char seen[64][256];
	int nseen = 0;
	gblock b;
	memset(&b, 0, sizeof b);
	while (rc == 0 && (n = record(&rd, f, MAXF, err, errlen)) != -1) {
		t->im.line = rd.line;
		if (n == -2) {
			rc = fail(t, "%s", err);
			break;
		}
		if (n >= 1 && !strncmp(f[0], "-----", 5)) {
			rc = apply_block(t, &b);
			gblock_clear(&b);
			state = 1;
		} else if (n >= 1 && (state == 0 || state == 3) && chatter(f[0])) {
			; /* the script's own messages */
		} else if (state == 1) {
			char tail[64];
			stat_name(f[0], b.stat, sizeof b.stat, tail, sizeof tail);
			if (!b.stat[0]) {
				rc = fail(t, "expected a statistic (a name, or the regex of the stats YAML) "
					  "after the dashes, found '%.60s'", f[0]);
			} else {
				for (int i = 0; i < nseen; i++)
					if (!strcmp(seen[i], b.stat)) {
						size_t l = strlen(b.stat);
						snprintf(b.stat + l, sizeof b.stat - l, " (%s)",
							 tail[0] ? tail : "again");
						break;
					}
				if (nseen < 64)
					snprintf(seen[nseen++], sizeof seen[0], "%s", b.stat);
			}
			b.line = rd.line;
			state = 2;
		} else if (state == 2) {
			if (n < 2 || (strcmp(f[0], "APPS") && strcmp(f[0], "CFG") && f[0][0]))
				rc = fail(t, "expected the header APPS,<config>,... (or CFG,<app--kernel>,... "
					  "from get_stats.py -R) after the statistic");
			for (int i = 0; rc == 0 && i < n; i++, b.nhdr++)
				if (!(b.hdr[i] = strdup(f[i])))
					rc = -ENOMEM;
			b.ncols = b.nhdr;
			state = 3;
		} else if (state == 3) {
			if (n == 1 && !f[0][0]) {
				free_fields(f, n);
				continue;
			}
			char **g = realloc(b.cells, (size_t)(b.nrows + 1) * (size_t)b.ncols * sizeof *g);
			if (!g) {
				rc = -ENOMEM;
			} else {
				b.cells = g;
				for (int i = 0; i < b.ncols; i++) {
					g[b.nrows * b.ncols + i] = i < n ? f[i] : NULL;
					if (i < n)
						f[i] = NULL;
				}
				b.nrows++;
			}
		} else if (n >= 1 && !chatter(f[0])) {
			rc = fail(t, "expected a line of dashes starting a statistic");
		}
		free_fields(f, n > 0 ? n : 0);
	}
	if (rc == 0)
		rc = apply_block(t, &b);
	gblock_clear(&b);
	cs_csvr_free(&rd);
	if (rc == 0 && !t->nr)
		rc = fail(t, "no kernel rows in any statistic");
	return rc;
}

/* An AccelWattch hardware CSV (hw_perf.csv: Benchmark,Kernel,...; the power
 * validation CSV: ,mean HW_power,...) into t. */
static int read_hw(tab *t, const char *buf, size_t len, char *err, size_t errlen)
{
	cs_csvr rd;
	cs_csvr_init(&rd, buf, len);
	char *h[MAXF], *f[MAXF];
	int nh = record(&rd, h, MAXF, err, errlen), rc = 0;
	if (nh < 2) {
		free_fields(h, nh > 0 ? nh : 0);
		cs_csvr_free(&rd);
		return fail(t, "%s", nh == -2 ? err : "expected a header of two or more columns");
	}
	int perf = !strcmp(h[0], "Benchmark") && !strcmp(h[1], "Kernel");
	int first = perf ? 2 : 1;
	int *col = calloc((size_t)nh + 1, sizeof *col);
	if (!col)
		rc = -ENOMEM;
	for (int i = first; rc == 0 && i < nh; i++)
		if ((col[i] = metric_of(t, h[i])) < 0)
			rc = col[i];
	int n;
	while (rc == 0 && (n = record(&rd, f, MAXF, err, errlen)) != -1) {
		t->im.line = rd.line;
		if (n == -2) {
			rc = fail(t, "%s", err);
			break;
		}
		if (n != nh) {
			rc = fail(t, "expected %d fields as in the header, found %d", nh, n);
			free_fields(f, n);
			break;
		}
		char label[600];
		if (rc == 0) {
			if (perf)
				snprintf(label, sizeof label, "%.200s--%.380s", f[0], f[1]);
			else
				snprintf(label, sizeof label, "%.590s", f[0]);
		}
		krow *k = rc == 0 ? row_of(t, label) : NULL;
		if (rc == 0 && !k)
			rc = -ENOMEM;
		for (int i = first; rc == 0 && i < nh; i++) {
			char *end;
			double v = strtod(f[i], &end);
			k->v[col[i]] = end != f[i] && !*end ? v : (double)NAN;
		}
		free_fields(f, n);
	}
	free(col);
	free_fields(h, nh);
	cs_csvr_free(&rd);
	if (rc == 0 && !t->nr)
		rc = fail(t, "no kernel rows");
	return rc;
}

/* The kernel rows as a run: one sample and one range per kernel, end to
 * end on a cycle axis (the kernel's cycles when a statistic gives them). */
static int write_run(tab *t, cs_producer *p, const char *source, const char *kind, char *err,
		     size_t errlen)
{
	const cs_import_opts *o = t->im.o;
	cs_buf extra = CS_BUF_INIT;
	cs_json_raw(&extra, "\"builds\":");
	cs_json_str(&extra, t->builds);
	cs_buf_put_u8(&extra, 0);
	cs_simrun *r = cs_simrun_open(p, o, source, kind, "cycle", 0,
				      t->builds[0] && extra.len ? (const char *)extra.data : NULL, err,
				      errlen);
	cs_buf_free(&extra);
	if (!r)
		return -EIO;
	int rc = 0, cyc = -1;
	static const char *const cycles[] = {"gpu_sim_cycle", "gpu_tot_sim_cycle", "Elapsed_Cycles", NULL};
	for (const char *const *c = cycles; *c && cyc < 0; c++)
		for (size_t i = 0; i < t->nm; i++)
			if (!strcmp(t->mnames[i], *c) || (strchr(t->mnames[i], ':') &&
							  !strcmp(strchr(t->mnames[i], ':') + 1, *c)))
				cyc = (int)i;
	int *ids = calloc(t->nm + 1, sizeof *ids);
	if (!ids)
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < t->nm; i++)
		if ((ids[i] = cs_simrun_metric(r, t->mnames[i], NULL, NULL)) < 0)
			rc = cs_imp_fail(&t->im, "%s", cs_simrun_errmsg(r));
	uint64_t at = 0;
	for (size_t k = 0; rc == 0 && k < t->nr; k++) {
		double c = cyc >= 0 ? t->rows[k].v[cyc] : (double)NAN;
		uint64_t d = c >= 1 && c < 9e15 ? (uint64_t)c : 1000;
		if ((rc = cs_simrun_row(r, at, at + d)) < 0) {
			rc = cs_imp_fail(&t->im, "%s", cs_simrun_errmsg(r));
			break;
		}
		for (size_t i = 0; i < t->nm; i++)
			cs_simrun_set(r, ids[i], t->rows[k].v[i]);
		/* the kernel's name: after "app--" (the app when it is final_kernel) */
		const char *label = t->rows[k].label, *dd = strstr(label, "--");
		const char *name = dd && strcmp(dd + 2, "final_kernel") && strcmp(dd + 2, "all_kernels")
					   ? dd + 2 : label;
		cs_range rg;
		cs_range_init(&rg, !strcmp(kind, "sim") ? "sim-kernel" : "kernel", name, at, at + d);
		rg.device = 0;
		rg.correlation_id = (int64_t)k;
		/* the application ("app/args" before the first "--"), which a
		 * suite correlation pairs by */
		cs_buf app = {0};
		if (dd) {
			cs_buf_append(&app, "{\"app\":", 7);
			cs_json_strn(&app, label, (size_t)(dd - label));
			if (cs_buf_append(&app, "}", 2) < 0) {
				cs_buf_free(&app);
				rc = cs_imp_fail(&t->im, "out of memory");
				break;
			}
			rg.args = (const char *)app.data;
		}
		if (cs_simrun_range(r, &rg) < 0)
			rc = cs_imp_fail(&t->im, "%s", cs_simrun_errmsg(r));
		cs_buf_free(&app);
		at += d;
	}
	free(ids);
	cs_log(CS_LOG_INFO, "%s: %zu kernels x %zu statistics", t->im.label, t->nr, t->nm);
	return cs_simrun_finish(r, p, rc, t->im.label, err, errlen);
}

static void tab_free(tab *t)
{
	for (size_t i = 0; i < t->nm; i++)
		free(t->mnames[i]);
	for (size_t r = 0; r < t->nr; r++) {
		free(t->rows[r].label);
		free(t->rows[r].v);
	}
	free(t->mnames);
	free(t->rows);
	free(t->hash);
}

/* Reads one table format into a run of source/kind. */
static int import_table(int (*read)(tab *, const char *, size_t, char *, size_t), cs_producer *p,
			const char *buf, size_t len, const cs_import_opts *o, const char *source,
			const char *kind, char *err, size_t errlen)
{
	tab t = {0};
	cs_imp_init(&t.im, o, err, errlen);
	int rc = read(&t, buf, len, err, errlen);
	if (rc == 0)
		rc = write_run(&t, p, source, kind, err, errlen);
	tab_free(&t);
	return rc;
}

int cs_import_accelsim_stats(cs_producer *p, const char *buf, size_t len,
			     const cs_import_opts *o, char *err, size_t errlen)
{
	return import_table(read_get_stats, p, buf, len, o, "accelsim-stats", "sim", err, errlen);
}

int cs_import_accelwattch_hw(cs_producer *p, const char *buf, size_t len,
			     const cs_import_opts *o, char *err, size_t errlen)
{
	return import_table(read_hw, p, buf, len, o, "accelwattch-hw", "hw", err, errlen);
}

/* get_stats.py's CSV: a line of dashes (after the script's own lines, in
 * old versions), the statistic, then APPS, CFG or an empty first cell. */
static int get_stats_head(const char *text)
{
	const char *l = text;
	for (int k = 0; l && *l && k < 8 && strncmp(l, "----------", 10); k++)
		l = chatter(l) ? strchr(l, '\n') : NULL, l = l ? l + 1 : NULL;
	if (!l || strncmp(l, "----------", 10))
		return 0;
	const char *stat = strchr(l, '\n');
	const char *hdr = stat ? strchr(stat + 1, '\n') : NULL;
	return hdr && (!strncmp(hdr + 1, "APPS,", 5) || !strncmp(hdr + 1, "CFG,", 4) ||
		       hdr[1] == ',');
}

const char *cs_accelsim_tables_sniff(const char *text)
{
	if (get_stats_head(text))
		return "accelsim-stats";
	if (!strncmp(text, "Benchmark,Kernel,", 17) || !strncmp(text, ",mean HW_power", 14))
		return "accelwattch-hw";
	return NULL;
}

int cs_gpgpusim_config_sniff(const char *text)
{
	/* option lines "-gpgpu_... value" at line starts */
	int opts = 0;
	for (const char *l = text; l && *l && opts < 3; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		opts += !strncmp(l, "-gpgpu_", 7) || !strncmp(l, "-accel", 6) || !strncmp(l, "-visualizer_", 12);
	return opts >= 3;
}
