/*
 * suite.c - correlation over a suite of applications (suite.h).
 *
 * Each run of each group is loaded once per statistic (corr_job.h: the
 * expression per sample, credited to the kernels), its kernels keyed by
 * (application, kernel name, launch among that name's in the
 * application). Applications pair first, across both sides; then each
 * configuration's kernels look their key up in every hardware repeat.
 */
#include "suite.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corr_job.h"
#include "correlate.h"
#include "runs.h"
#include "reader.h"
#include "strmap.h"

/* ---- names ---- */

void cs_suite_app_key(const char *name, char *out, size_t outlen)
{
	size_t o = 0;
	int gap = 0;
	if (!outlen)
		return;
	for (const char *p = name; *p && o + 2 < outlen; p++) {
		unsigned char c = (unsigned char)tolower((unsigned char)*p);
		if (c == '/') {
			while (o && out[o - 1] == '_')
				o--;
			out[o++] = '/';
			gap = 0;
		} else if (isalnum(c) || c == '.') {
			if (gap && o && out[o - 1] != '/')
				out[o++] = '_';
			out[o++] = (char)c;
			gap = 0;
		} else {
			gap = 1;
		}
	}
	while (o && out[o - 1] == '_')
		o--;
	out[o] = '\0';
}

void cs_suite_kernel_key(const char *name, char *out, size_t outlen)
{
	char cut[512], base[512];
	snprintf(cut, sizeof cut, "%s", name);
	/* get_stats.py -K: "NAME--N" */
	char *dd = strstr(cut, "--");
	if (dd && dd[2] && strspn(dd + 2, "0123456789") == strlen(dd + 2))
		*dd = '\0';
	cs_cjob_base_name(cut, base, sizeof base);
	const char *b = base;
	if (!strncmp(b, "void ", 5))
		b += 5;
	size_t o = 0;
	for (; *b && o + 1 < outlen; b++)
		if (!isspace((unsigned char)*b))
			out[o++] = *b;
	if (outlen)
		out[o] = '\0';
}

void cs_suite_group_parse(const char *text, const char *cfg, cs_suite_group *g, char *label,
			  size_t lablen)
{
	memset(g, 0, sizeof *g);
	const char *eq = strchr(text, '=');
	if (eq && eq > text && !memchr(text, '*', (size_t)(eq - text)) &&
	    !memchr(text, ',', (size_t)(eq - text))) {
		snprintf(label, lablen, "%.*s%s%s", (int)(eq - text), text, cfg ? " " : "",
			 cfg ? cfg : "");
		g->label = label;
		text = eq + 1;
	}
	if (!strncmp(text, "job:", 4))
		g->job = text + 4;
	else
		g->runs = text;
	g->config = cfg;
}

/* ---- statistics ---- */

int cs_suite_stats_of(const double *hw, const double *sim, size_t n, cs_suite_stats *st)
{
	memset(st, 0, sizeof *st);
	double *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
	if (!x || !y) {
		free(x);
		free(y);
		return -ENOMEM;
	}
	double ape = 0, se = 0, rpd = 0, abs_sum = 0, sq = 0;
	size_t m = 0, nrpd = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(hw[i]) || !isfinite(sim[i]))
			continue;
		x[m] = hw[i], y[m] = sim[i];
		m++;
		st->hw_total += hw[i];
		st->sim_total += sim[i];
		double d = sim[i] - hw[i], mag = (fabs(sim[i]) + fabs(hw[i])) / 2;
		abs_sum += fabs(d);
		sq += d * d;
		if (mag > 0) {
			rpd += fabs(d) / mag;
			nrpd++;
		} else {
			nrpd++; /* both zero: no difference */
		}
		if (hw[i] != 0) {
			double rel = d / fabs(hw[i]);
			ape += fabs(rel);
			se += rel;
			st->error_n++;
			st->within_1pct += fabs(rel) <= 0.01 + 1e-12;
			st->within_10pct += fabs(rel) <= 0.10 + 1e-12;
		} else if (sim[i] == 0) {
			st->within_1pct++;
			st->within_10pct++;
		}
	}
	st->pairs = m;
	st->pearson = m >= 2 ? cs_corr_pearson(x, y, m) : (double)NAN;
	st->spearman = m >= 2 ? cs_corr_spearman(x, y, m) : (double)NAN;
	st->mape_pct = st->error_n ? 100 * ape / (double)st->error_n : (double)NAN;
	st->mean_error_pct = st->error_n ? 100 * se / (double)st->error_n : (double)NAN;
	st->rpd_pct = nrpd ? 100 * rpd / (double)nrpd : (double)NAN;
	double hw_abs = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(hw[i]) && isfinite(sim[i]))
			hw_abs += fabs(hw[i]);
	st->abs_aggregate_error_pct = hw_abs > 0 ? 100 * abs_sum / hw_abs : (double)NAN;
	st->nrmse = m && st->hw_total != 0 ? sqrt(sq / (double)m) / fabs(st->hw_total / (double)m)
					   : (double)NAN;
	st->aggregate_error_pct = st->hw_total != 0
		? 100 * (st->sim_total - st->hw_total) / fabs(st->hw_total) : (double)NAN;
	free(x);
	free(y);
	return 0;
}

/* ---- the work ---- */

/* One kernel of one side under one statistic. */
typedef struct ent {
	size_t app;      /* the side's application index */
	char *kernel;    /* pairing name */
	uint32_t launch;
	double v;
	int64_t run;
	int used;        /* hardware: some configuration paired it */
} ent;

typedef struct set {
	ent *e;
	size_t n, cap;
	cs_strmap by_key; /* "APP\x1fKERNEL\x1fLAUNCH" -> entry (hardware) */
} set;

/* A side's applications: the names the runs give, their keys. */
typedef struct appset {
	cs_strmap idx;   /* name -> index */
	char **name, **key;
	size_t n, cap;
} appset;

/* A run of a group and the application it holds (when its kernels do
 * not name one). */
typedef struct runref {
	int64_t id;      /* 0 ends a group's list */
	char *app;
} runref;

typedef struct work {
	cs_store *s;
	const cs_suite_spec *sp;
	cs_suite_result *r;
	appset ah, as;
	set *hw, *sim;   /* [stat * groups + group] */
	runref **runs_hw, **runs_sim; /* per group, ended by id 0 */
	size_t *pair_of; /* hardware app -> simulator app, SIZE_MAX */
	size_t *hw_of;   /* simulator app -> hardware app, SIZE_MAX */
	char *err;
	size_t errlen;
} work;

static int warn(cs_suite_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int warn(cs_suite_result *r, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < r->nwarn; i++)
		if (!strcmp(r->warn[i], line))
			return 0;
	char **g = realloc(r->warn, (r->nwarn + 1) * sizeof *g);
	if (!g)
		return -ENOMEM;
	r->warn = g;
	return (r->warn[r->nwarn] = strdup(line)) ? (int)++r->nwarn * 0 : -ENOMEM;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	void *g = realloc(*p, c * size);
	if (!g)
		return -ENOMEM;
	*p = g;
	*cap = c;
	return 0;
}

static int app_index(appset *a, const char *name, size_t *out)
{
	size_t i = cs_strmap_get(&a->idx, name);
	if (i != SIZE_MAX) {
		*out = i;
		return 0;
	}
	size_t c1 = a->cap, c2 = a->cap;
	if (grow((void **)&a->name, &c1, a->n + 1, sizeof *a->name) < 0 ||
	    grow((void **)&a->key, &c2, a->n + 1, sizeof *a->key) < 0)
		return -ENOMEM;
	a->cap = c1 < c2 ? c1 : c2;
	char key[512];
	cs_suite_app_key(name, key, sizeof key);
	a->name[a->n] = strdup(name);
	a->key[a->n] = strdup(key);
	if (!a->name[a->n] || !a->key[a->n] || cs_strmap_put(&a->idx, name, a->n) < 0) {
		free(a->name[a->n]);
		free(a->key[a->n]);
		return -ENOMEM;
	}
	*out = a->n++;
	return 0;
}

static void appset_free(appset *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->name[i]);
		free(a->key[i]);
	}
	free(a->name);
	free(a->key);
	cs_strmap_free(&a->idx);
}

static void set_free(set *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].kernel);
	free(t->e);
	cs_strmap_free(&t->by_key);
}

static const char *group_text(const cs_suite_group *g)
{
	return g->label ? g->label : g->config ? g->config : g->runs ? g->runs : g->job;
}

/* The application a run of name holds when a GLOB chose it: the name
 * without the GLOB's literal head (before its first '*') and tail (after
 * its last '*'), "hw0:*" choosing "hw0:backprop/4096" -> "backprop/4096";
 * else the name. */
static char *app_of(const char *name, const char *glob)
{
	const char *star = glob ? strchr(glob, '*') : NULL, *last = glob ? strrchr(glob, '*') : NULL;
	size_t n = strlen(name);
	if (star && !strpbrk(glob, "?[")) {
		size_t head = (size_t)(star - glob), tail = strlen(last + 1);
		if (head + tail < n && !strncmp(name, glob, head) && !strcmp(name + n - tail, last + 1))
			return strndup(name + head, n - head - tail);
	}
	return strdup(name);
}

/* Adds run id (named name, chosen by glob or NULL) to the list, once. */
static int add_run(runref **list, size_t *n, size_t *cap, int64_t id, const char *name,
		   const char *glob)
{
	for (size_t j = 0; j < *n; j++)
		if ((*list)[j].id == id)
			return 0;
	if (grow((void **)list, cap, *n + 2, sizeof **list) < 0)
		return -ENOMEM;
	(*list)[*n] = (runref){0, NULL}; /* ended, whatever happens next */
	char *app = app_of(name, glob);
	if (!app)
		return -ENOMEM;
	(*list)[(*n)++] = (runref){id, app};
	(*list)[*n] = (runref){0, NULL};
	return 0;
}

static void runs_free(runref *list)
{
	for (size_t i = 0; list && list[i].id; i++)
		free(list[i].app);
	free(list);
}

/* The runs a group names into *out (ended by id 0). */
static int resolve(work *w, const cs_suite_group *g, const char *side, runref **out)
{
	runref *ids = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	if (g->job) {
		cs_runs_filter f = {.job = g->job};
		cs_run_row *rows = NULL;
		size_t nr = 0;
		if ((rc = cs_runs_list(w->s, &f, &rows, &nr)) < 0) {
			snprintf(w->err, w->errlen, "%s job %s: %s", side, g->job, cs_store_errmsg(w->s));
			return rc;
		}
		for (size_t i = 0; !rc && i < nr; i++)
			rc = add_run(&ids, &n, &cap, rows[i].id, rows[i].name, NULL);
		free(rows);
	} else {
		char *list = strdup(g->runs ? g->runs : ""), *save = NULL;
		if (!list)
			return -ENOMEM;
		for (char *it = strtok_r(list, ",", &save); !rc && it; it = strtok_r(NULL, ",", &save)) {
			while (*it == ' ')
				it++;
			for (size_t e = strlen(it); e && it[e - 1] == ' ';)
				it[--e] = '\0';
			cs_run_row *rows = NULL;
			size_t nr = 0;
			int64_t one;
			cs_run_summary sum;
			if (strpbrk(it, "*?[")) {
				cs_runs_filter f = {.name = it};
				if ((rc = cs_runs_list(w->s, &f, &rows, &nr)) < 0)
					break;
				for (size_t i = 0; !rc && i < nr; i++)
					rc = add_run(&ids, &n, &cap, rows[i].id, rows[i].name, it);
				free(rows);
			} else if (cs_read_find_run(w->s, it, &one) == 0 &&
				   cs_runs_summary(w->s, one, &sum) == 0) {
				rc = add_run(&ids, &n, &cap, one, sum.name, NULL);
			} else {
				snprintf(w->err, w->errlen, "%s '%s': no run '%s' in the database", side,
					 g->runs, it);
				rc = -ENOENT;
			}
		}
		free(list);
	}
	if (rc == 0 && n == 0) {
		snprintf(w->err, w->errlen, "%s %s%s: no run matches", side, g->job ? "job " : "",
			 g->job ? g->job : g->runs);
		rc = -ENOENT;
	}
	if (rc < 0) {
		if (!w->err[0])
			snprintf(w->err, w->errlen, "%s %s: %s", side, group_text(g),
				 rc == -ENOMEM ? "out of memory" : cs_store_errmsg(w->s));
		runs_free(ids);
		return rc;
	}
	*out = ids;
	return 0;
}

static int key_of(char *out, size_t outlen, size_t app, const char *kernel, uint32_t launch)
{
	int n = snprintf(out, outlen, "%zu\x1f%s\x1f%u", app, kernel, launch);
	return n > 0 && (size_t)n < outlen ? 0 : -ENAMETOOLONG;
}

/* One run under one statistic into t: its kernels' totals, keyed. Runs
 * without the statistic's metrics or without kernels are counted and
 * named in a warning, not fatal. */
static int load_run(work *w, set *t, const runref *ref, const char *expr, const char *config,
		    int sim, size_t *skipped, char *first_why, size_t whylen, cs_strmap *launches,
		    size_t *kernels)
{
	int64_t run = ref->id;
	char id[32], why[1024] = "";
	snprintf(id, sizeof id, "%lld", (long long)run);
	cs_run_summary sum;
	if (cs_runs_summary(w->s, run, &sum) < 0)
		return -EIO;
	cs_cjob_spec sp = {.run = id, .expr = expr, .metric_prefix = config,
			   /* kernel totals credit by time alone: an ns run needs no clock */
			   .clock_hz = !strcmp(sum.time_unit, "ns") ? 1e9 : 0};
	cs_cjob_side side;
	int rc = cs_cjob_load(w->s, &sp, &side, why, sizeof why);
	cs_cjob_kernels k = {0};
	if (rc == 0) {
		rc = cs_cjob_kernel_totals(w->s, &side, &k, why, sizeof why);
		cs_cjob_side_free(&side);
	}
	if (rc == -ENOENT || rc == -ENODATA || rc == -EINVAL) {
		if (rc == -EINVAL && strstr(why, "expected")) /* a malformed expression */
			goto fatal;
		if (!(*skipped)++) /* the first one's reason stands for all */
			snprintf(first_why, whylen, "%s", why);
		return 0;
	}
	if (rc < 0)
		goto fatal;
	appset *a = sim ? &w->as : &w->ah;
	char key[1200];
	for (size_t i = 0; rc == 0 && i < k.n; i++) {
		size_t app;
		char kk[512];
		if ((rc = app_index(a, k.apps[i] ? k.apps[i] : ref->app, &app)) < 0)
			break;
		cs_suite_kernel_key(k.names[i], kk, sizeof kk);
		if (key_of(key, sizeof key, app, kk, 0) < 0)
			continue;
		size_t seen = cs_strmap_get(launches, key);
		uint32_t launch = seen == SIZE_MAX ? 0 : (uint32_t)seen;
		if ((rc = cs_strmap_put(launches, key, launch + 1)) < 0)
			break;
		if ((rc = grow((void **)&t->e, &t->cap, t->n + 1, sizeof *t->e)) < 0)
			break;
		ent *e = &t->e[t->n];
		*e = (ent){.app = app, .launch = launch, .v = k.totals[i], .run = run};
		if (!(e->kernel = strdup(kk))) {
			rc = -ENOMEM;
			break;
		}
		t->n++;
		(*kernels)++;
		if (!sim && key_of(key, sizeof key, app, kk, launch) == 0 &&
		    cs_strmap_get(&t->by_key, key) == SIZE_MAX)
			rc = cs_strmap_put(&t->by_key, key, t->n - 1);
	}
	cs_cjob_kernels_free(&k);
	if (rc == -ENOMEM)
		snprintf(w->err, w->errlen, "out of memory");
	return rc;
fatal:
	cs_cjob_kernels_free(&k);
	snprintf(w->err, w->errlen, "%s run %s: %s", sim ? "simulator" : "hardware", sum.name, why);
	return rc;
}

/* Pairs the applications: the map, the whole normalised name, then the
 * application alone (the part before the first '/') where that names
 * one application on each side. */
static int pair_apps(work *w)
{
	size_t nh = w->ah.n, ns = w->as.n;
	w->pair_of = malloc((nh + 1) * sizeof *w->pair_of);
	w->hw_of = malloc((ns + 1) * sizeof *w->hw_of);
	char **how = calloc(nh + 1, sizeof *how);
	if (!w->pair_of || !w->hw_of || !how) {
		free(how);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nh; i++)
		w->pair_of[i] = SIZE_MAX;
	for (size_t j = 0; j < ns; j++)
		w->hw_of[j] = SIZE_MAX;
	/* 1. the map */
	const char *m = w->sp->app_map, *end = m ? m + w->sp->app_map_len : NULL;
	unsigned line = 0;
	while (m && m < end) {
		const char *nl = memchr(m, '\n', (size_t)(end - m));
		size_t len = (size_t)((nl ? nl : end) - m);
		char buf[1024], hk[512], sk[512];
		line++;
		snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), m);
		m = nl ? nl + 1 : end;
		buf[strcspn(buf, "\r")] = '\0';
		char *p = buf + strspn(buf, " \t");
		if (!*p || *p == '#')
			continue;
		char *comma = strchr(p, ',');
		if (!comma) {
			snprintf(w->err, w->errlen, "%s:%u: expected HW_APP,SIM_APP", w->sp->app_map_label
				 ? w->sp->app_map_label : "the application map", line);
			free(how);
			return -EINVAL;
		}
		*comma = '\0';
		cs_suite_app_key(p, hk, sizeof hk);
		cs_suite_app_key(comma + 1, sk, sizeof sk);
		for (size_t i = 0; i < nh; i++)
			if (w->pair_of[i] == SIZE_MAX && !strcmp(w->ah.key[i], hk))
				for (size_t j = 0; j < ns; j++)
					if (w->hw_of[j] == SIZE_MAX && !strcmp(w->as.key[j], sk)) {
						w->pair_of[i] = j, w->hw_of[j] = i, how[i] = "map";
						break;
					}
	}
	/* 2. the whole name */
	cs_strmap keys = {0};
	int rc = 0;
	for (size_t j = 0; rc == 0 && j < ns; j++)
		if (w->hw_of[j] == SIZE_MAX && cs_strmap_get(&keys, w->as.key[j]) == SIZE_MAX)
			rc = cs_strmap_put(&keys, w->as.key[j], j);
	for (size_t i = 0; rc == 0 && i < nh; i++) {
		if (w->pair_of[i] != SIZE_MAX)
			continue;
		size_t j = cs_strmap_get(&keys, w->ah.key[i]);
		if (j != SIZE_MAX && w->hw_of[j] == SIZE_MAX)
			w->pair_of[i] = j, w->hw_of[j] = i, how[i] = "name";
	}
	cs_strmap_free(&keys);
	/* 3. the application without its arguments, one on each side */
	for (size_t i = 0; rc == 0 && i < nh; i++) {
		if (w->pair_of[i] != SIZE_MAX)
			continue;
		size_t hl = strcspn(w->ah.key[i], "/"), cand = SIZE_MAX, nc = 0, nhs = 0;
		for (size_t j = 0; j < ns; j++)
			if (w->hw_of[j] == SIZE_MAX && strcspn(w->as.key[j], "/") == hl &&
			    !strncmp(w->as.key[j], w->ah.key[i], hl))
				cand = j, nc++;
		for (size_t h = 0; h < nh; h++)
			nhs += w->pair_of[h] == SIZE_MAX && strcspn(w->ah.key[h], "/") == hl &&
			       !strncmp(w->ah.key[h], w->ah.key[i], hl);
		if (nc == 1 && nhs == 1)
			w->pair_of[i] = cand, w->hw_of[cand] = i, how[i] = "application";
	}
	/* the result's application table, in hardware order */
	cs_suite_result *r = w->r;
	size_t np = 0;
	for (size_t i = 0; i < nh; i++)
		np += w->pair_of[i] != SIZE_MAX;
	r->app_hw = calloc(np + 1, sizeof *r->app_hw);
	r->app_sim = calloc(np + 1, sizeof *r->app_sim);
	r->app_how = calloc(np + 1, sizeof *r->app_how);
	if (rc == 0 && (!r->app_hw || !r->app_sim || !r->app_how))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < nh; i++) {
		if (w->pair_of[i] == SIZE_MAX)
			continue;
		size_t a = r->napps;
		r->app_hw[a] = strdup(w->ah.name[i]);
		r->app_sim[a] = strdup(w->as.name[w->pair_of[i]]);
		r->app_how[a] = strdup(how[i]);
		r->napps++;
		if (!r->app_hw[a] || !r->app_sim[a] || !r->app_how[a])
			rc = -ENOMEM;
	}
	free(how);
	return rc;
}

/* The result's index of hardware application i (apps are numbered in
 * hardware order among the paired). */
static size_t result_app(const work *w, size_t hw_app)
{
	size_t a = 0;
	for (size_t i = 0; i < hw_app; i++)
		a += w->pair_of[i] != SIZE_MAX;
	return a;
}

static int unpaired(work *w, int sim, size_t group, const char *app, const char *kernel,
		    uint32_t launch, int64_t run)
{
	cs_suite_result *r = w->r;
	cs_suite_unpaired *g = realloc(r->unpaired, (r->nunpaired + 1) * sizeof *g);
	if (!g)
		return -ENOMEM;
	r->unpaired = g;
	cs_suite_unpaired *u = &g[r->nunpaired];
	*u = (cs_suite_unpaired){.sim = sim, .group = group, .launch = launch, .run = run};
	u->app = strdup(app);
	u->kernel = kernel ? strdup(kernel) : NULL;
	r->nunpaired++;
	return u->app && (!kernel || u->kernel) ? 0 : -ENOMEM;
}

static double rel_err(const cs_suite_pair *p)
{
	return p->hw != 0 && isfinite(p->hw) && isfinite(p->sim) ? fabs(p->sim - p->hw) / fabs(p->hw)
								  : -1;
}

/* Statistics of one cell: the whole, the worst, per application. */
static int cell_stats(cs_suite_cell *c, size_t napps)
{
	size_t n = c->n;
	double *h = malloc((n + 1) * sizeof *h), *m = malloc((n + 1) * sizeof *m);
	size_t *cnt = calloc(napps + 1, sizeof *cnt), *at = calloc(napps + 2, sizeof *at);
	size_t *ord = malloc((n + 1) * sizeof *ord);
	int rc = h && m && cnt && at && ord ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++)
		h[i] = c->pairs[i].hw, m[i] = c->pairs[i].sim;
	if (rc == 0)
		rc = cs_suite_stats_of(h, m, n, &c->st);
	/* the worst: a partial selection, CS_SUITE_WORST passes */
	for (size_t t = 0; rc == 0 && t < CS_SUITE_WORST; t++) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < n; i++) {
			double e = rel_err(&c->pairs[i]);
			int taken = 0;
			for (size_t q = 0; q < c->nworst; q++)
				taken |= c->worst[q] == i;
			if (e >= 0 && !taken && (best == SIZE_MAX || e > rel_err(&c->pairs[best])))
				best = i;
		}
		if (best == SIZE_MAX)
			break;
		c->worst[c->nworst++] = best;
	}
	/* per application: pairs grouped by app (counting sort) */
	for (size_t i = 0; rc == 0 && i < n; i++)
		cnt[c->pairs[i].app]++;
	for (size_t a = 0; rc == 0 && a < napps; a++)
		at[a + 1] = at[a] + cnt[a];
	size_t used = 0;
	for (size_t a = 0; rc == 0 && a < napps; a++)
		used += cnt[a] > 0;
	if (rc == 0 && !(c->apps = calloc(used + 1, sizeof *c->apps)))
		rc = -ENOMEM;
	if (rc == 0) {
		size_t *pos = cnt; /* reused as fill positions */
		for (size_t a = 0; a < napps; a++)
			pos[a] = at[a];
		for (size_t i = 0; i < n; i++)
			ord[pos[c->pairs[i].app]++] = i;
		for (size_t a = 0; a < napps; a++) {
			size_t k = at[a + 1] - at[a];
			if (!k)
				continue;
			for (size_t q = 0; q < k; q++)
				h[q] = c->pairs[ord[at[a] + q]].hw, m[q] = c->pairs[ord[at[a] + q]].sim;
			c->apps[c->napps].app = a;
			if ((rc = cs_suite_stats_of(h, m, k, &c->apps[c->napps].st)) < 0)
				break;
			c->napps++;
		}
		/* one point per application: its totals */
		for (size_t a = 0; rc == 0 && a < c->napps; a++)
			h[a] = c->apps[a].st.hw_total, m[a] = c->apps[a].st.sim_total;
		if (rc == 0)
			rc = cs_suite_stats_of(h, m, c->napps, &c->by_app);
	}
	free(h);
	free(m);
	free(cnt);
	free(at);
	free(ord);
	return rc;
}

/* What kind of quantity a unit (or, without one, a metric's name) is:
 * 'c' cycles, 't' time (*ns: nanoseconds per unit), 'b' bytes, 's'
 * sectors, 0 unknown. */
static int unit_class(const char *unit, const char *expr, double *ns)
{
	static const struct { const char *u; int c; double ns; } units[] = {
		{"cycle", 'c', 0},   {"cycles", 'c', 0},  {"ns", 't', 1},	  {"nsecond", 't', 1},
		{"us", 't', 1e3},    {"usecond", 't', 1e3}, {"ms", 't', 1e6},	  {"msecond", 't', 1e6},
		{"s", 't', 1e9},     {"second", 't', 1e9}, {"byte", 'b', 0},	  {"bytes", 'b', 0},
		{"B", 'b', 0},	     {"sector", 's', 0},  {"sectors", 's', 0},
	};
	*ns = 1;
	for (size_t i = 0; unit && *unit && i < sizeof units / sizeof *units; i++)
		if (!strcmp(unit, units[i].u)) {
			*ns = units[i].ns;
			return units[i].c;
		}
	if (unit && *unit)
		return 0;
	char low[256];
	size_t i = 0;
	for (; expr[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)expr[i]);
	low[i] = '\0';
	return strstr(low, "cycle") ? 'c' : 0;
}

static const char *class_name(int c)
{
	return c == 'c' ? "cycles" : c == 't' ? "time" : c == 'b' ? "bytes" : c == 's' ? "sectors" : "?";
}

/* The one metric an expression names: itself, or NAME of sum("NAME")
 * (a name with spaces); else it is copied as it is (and names none). */
static void metric_of(const char *expr, char *out, size_t outlen)
{
	size_t n = strlen(expr);
	if (n > 7 && !strncmp(expr, "sum(\"", 5) && !strcmp(expr + n - 2, "\")") &&
	    !memchr(expr + 5, '"', n - 7) && !strpbrk(expr + 5, "*?["))
		snprintf(out, outlen, "%.*s", (int)(n - 7), expr + 5);
	else
		snprintf(out, outlen, "%s", expr);
}

/* The units of one statistic under one configuration, from the first
 * run of each side that has the metric (plain names only); ns against
 * cycles converts the hardware's values at a clock given or found. */
static int units(work *w, size_t st, size_t cfg, cs_suite_cell *c)
{
	const cs_suite_stat *S = &w->sp->stats[st];
	const cs_suite_group *G = &w->sp->sim[cfg];
	char kind[16], name[600], hname[300], sname[300];
	metric_of(S->hw_expr, hname, sizeof hname);
	metric_of(S->sim_expr, sname, sizeof sname);
	int64_t hw_run = w->runs_hw[0][0].id;
	c->hw_scale = 1;
	for (size_t g = 0; g < w->sp->nhw; g++)
		for (size_t i = 0; w->runs_hw[g][i].id; i++)
			if (cs_runs_metric_unit(w->s, w->runs_hw[g][i].id, hname, c->hw_unit,
						sizeof c->hw_unit, kind, sizeof kind) == 0) {
				hw_run = w->runs_hw[g][i].id;
				goto sim;
			}
sim:
	snprintf(name, sizeof name, "%s%s%s", G->config ? G->config : "", G->config ? ":" : "", sname);
	for (size_t i = 0; w->runs_sim[cfg][i].id; i++)
		if (cs_runs_metric_unit(w->s, w->runs_sim[cfg][i].id, name, c->sim_unit,
					sizeof c->sim_unit, kind, sizeof kind) == 0)
			break;
	double hns, sns;
	int hc = unit_class(c->hw_unit, S->hw_expr, &hns), sc = unit_class(c->sim_unit, S->sim_expr, &sns);
	if (!hc || !sc || hc == sc)
		return 0;
	const char *cl = w->r->config_label[cfg];
	if (hc == 't' && sc == 'c') {
		double hz = w->sp->hw_clock_hz > 0 ? w->sp->hw_clock_hz : cs_runs_clock(w->s, hw_run, NULL);
		if (!(hz > 0))
			return warn(w->r, "%s is time (%s) and %s (%s) is cycles: give the hardware's clock "
				    "(--hw-clock-mhz) to compare them; compared as they are",
				    S->hw_expr, c->hw_unit, S->sim_expr, cl);
		c->hw_scale = hns * hz / 1e9;
		return warn(w->r, "%s is time (%s) and %s (%s) is cycles: hardware values converted at "
			    "%.1f MHz (%s)", S->hw_expr, c->hw_unit, S->sim_expr, cl, hz / 1e6,
			    w->sp->hw_clock_hz > 0 ? "given" : "the hardware run's clock");
	}
	if ((hc == 'b' && sc == 's') || (hc == 's' && sc == 'b'))
		return warn(w->r, "%s counts %s and %s (%s) %s: a sector is 32 bytes (divide or multiply "
			    "by 32 in one expression)", S->hw_expr, class_name(hc), S->sim_expr, cl,
			    class_name(sc));
	return warn(w->r, "%s is %s (%s) and %s (%s) is %s (%s): the units differ", S->hw_expr,
		    class_name(hc), c->hw_unit, S->sim_expr, cl, class_name(sc), c->sim_unit);
}

/* One statistic under one configuration: pairs looked up in each repeat. */
static int pair_cell(work *w, size_t st, size_t cfg, cs_suite_cell *c)
{
	const set *sim = &w->sim[st * w->sp->nsim + cfg];
	int rc = units(w, st, cfg, c);
	double *vals = malloc((w->sp->nhw + 1) * sizeof *vals);
	if (rc == 0 && (!vals || !(c->pairs = calloc(sim->n + 1, sizeof *c->pairs))))
		rc = -ENOMEM;
	char key[1200];
	for (size_t i = 0; rc == 0 && i < sim->n; i++) {
		const ent *e = &sim->e[i];
		size_t ha = w->hw_of[e->app];
		if (ha == SIZE_MAX)
			continue;
		if (key_of(key, sizeof key, ha, e->kernel, e->launch) < 0)
			continue;
		size_t k = 0;
		int64_t first_run = 0;
		for (size_t g = 0; g < w->sp->nhw; g++) {
			set *h = &w->hw[st * w->sp->nhw + g];
			size_t at = cs_strmap_get(&h->by_key, key);
			if (at == SIZE_MAX)
				continue;
			h->e[at].used = 1;
			if (!k)
				first_run = h->e[at].run;
			vals[k++] = h->e[at].v * c->hw_scale;
		}
		if (!k) {
			if (st == 0)
				rc = unpaired(w, 1, cfg, w->as.name[e->app], e->kernel, e->launch, e->run);
			continue;
		}
		cs_suite_pair *p = &c->pairs[c->n++];
		double sum = 0, lo = INFINITY, hi = -INFINITY;
		for (size_t q = 0; q < k; q++) {
			sum += vals[q];
			lo = fmin(lo, vals[q]);
			hi = fmax(hi, vals[q]);
		}
		double mean = sum / (double)k, ss = 0;
		for (size_t q = 0; q < k; q++)
			ss += (vals[q] - mean) * (vals[q] - mean);
		*p = (cs_suite_pair){.app = result_app(w, ha), .kernel = strdup(e->kernel), .launch = e->launch,
				     .hw = mean, .sim = e->v, .hw_min = lo, .hw_max = hi,
				     .hw_sd = k > 1 ? sqrt(ss / (double)(k - 1)) : 0, .hw_n = k,
				     .hw_run = first_run, .sim_run = e->run};
		if (!p->kernel)
			rc = -ENOMEM;
	}
	free(vals);
	if (rc == 0)
		rc = cell_stats(c, w->r->napps);
	return rc;
}

static char *label_of(const cs_suite_group *g)
{
	char buf[512];
	if (g->label)
		snprintf(buf, sizeof buf, "%s", g->label);
	else if (g->config && g->runs)
		snprintf(buf, sizeof buf, "%s", g->config);
	else if (g->job)
		snprintf(buf, sizeof buf, "job %s%s%s", g->job, g->config ? " " : "",
			 g->config ? g->config : "");
	else
		snprintf(buf, sizeof buf, "%s", g->runs ? g->runs : "?");
	return strdup(buf);
}

/* Names that tell the groups apart: one shared by several gets its runs
 * after it ("CFG-A (sim-*)"), and if that is shared too, its place ("#2"). */
static int unique_labels(char **label, const cs_suite_group *g, size_t n)
{
	unsigned char *dup = calloc(n + 1, 1);
	if (!dup)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		/* which share a name, all found before any is renamed */
		for (size_t i = 0; i < n; i++) {
			dup[i] = 0;
			for (size_t j = 0; j < n; j++)
				dup[i] |= j != i && !strcmp(label[i], label[j]);
		}
		for (size_t i = 0; i < n; i++) {
			if (!dup[i])
				continue;
			char buf[700];
			if (pass == 0)
				snprintf(buf, sizeof buf, "%.300s (%s%.300s)", label[i], g[i].job ? "job:" : "",
					 g[i].job ? g[i].job : g[i].runs ? g[i].runs : "");
			else
				snprintf(buf, sizeof buf, "%.600s #%zu", label[i], i + 1);
			char *t = strdup(buf);
			if (!t) {
				free(dup);
				return -ENOMEM;
			}
			free(label[i]);
			label[i] = t;
		}
	}
	free(dup);
	return 0;
}

int cs_suite_run(cs_store *s, const cs_suite_spec *sp, cs_suite_result *r, char *err,
		 size_t errlen)
{
	memset(r, 0, sizeof *r);
	err[0] = '\0';
	if (!sp->nhw || !sp->nsim || !sp->nstats) {
		snprintf(err, errlen, "a suite needs hardware runs, simulator runs and a statistic");
		return -EINVAL;
	}
	work w = {.s = s, .sp = sp, .r = r, .err = err, .errlen = errlen};
	size_t nh = sp->nhw, ns = sp->nsim, nt = sp->nstats;
	r->nstats = nt, r->nconfigs = ns, r->nrepeats = nh;
	r->config_label = calloc(ns, sizeof *r->config_label);
	r->repeat_label = calloc(nh, sizeof *r->repeat_label);
	r->cell = calloc(nt * ns, sizeof *r->cell);
	w.hw = calloc(nt * nh, sizeof *w.hw);
	w.sim = calloc(nt * ns, sizeof *w.sim);
	w.runs_hw = calloc(nh, sizeof *w.runs_hw);
	w.runs_sim = calloc(ns, sizeof *w.runs_sim);
	cs_strmap *launches = calloc(nt * (nh + ns), sizeof *launches);
	int rc = r->config_label && r->repeat_label && r->cell && w.hw && w.sim && w.runs_hw &&
		 w.runs_sim && launches ? 0 : -ENOMEM;
	for (size_t g = 0; rc == 0 && g < nh; g++)
		if (!(r->repeat_label[g] = label_of(&sp->hw[g])))
			rc = -ENOMEM;
		else
			rc = resolve(&w, &sp->hw[g], "--hw", &w.runs_hw[g]);
	for (size_t g = 0; rc == 0 && g < ns; g++)
		if (!(r->config_label[g] = label_of(&sp->sim[g])))
			rc = -ENOMEM;
		else
			rc = resolve(&w, &sp->sim[g], "--sim", &w.runs_sim[g]);
	if (rc == 0)
		rc = unique_labels(r->config_label, sp->sim, ns);
	if (rc == 0)
		rc = unique_labels(r->repeat_label, sp->hw, nh);
	for (size_t a = 0; rc == 0 && a < nt; a++)
		for (size_t b = a + 1; b < nt; b++)
			if (!strcmp(sp->stats[a].hw_expr, sp->stats[b].hw_expr) &&
			    !strcmp(sp->stats[a].sim_expr, sp->stats[b].sim_expr)) {
				snprintf(err, errlen, "the statistic %s is given twice", sp->stats[a].hw_expr);
				rc = -EINVAL;
				break;
			}
	/* every run under every statistic */
	for (size_t st = 0; rc == 0 && st < nt; st++) {
		for (size_t g = 0; rc == 0 && g < nh; g++) {
			size_t skipped = 0, kern = 0, total = 0;
			char why[1024] = "";
			for (size_t i = 0; rc == 0 && w.runs_hw[g][i].id; i++, total++) {
				rc = load_run(&w, &w.hw[st * nh + g], &w.runs_hw[g][i], sp->stats[st].hw_expr,
					      NULL, 0, &skipped, why, sizeof why,
					      &launches[st * (nh + ns) + g], &kern);
				if (st == 0)
					r->runs_hw++;
			}
			if (rc == 0 && skipped)
				rc = warn(r, "%zu of %zu hardware runs of %s left out of %s (%s)", skipped, total,
					  r->repeat_label[g], sp->stats[st].hw_expr, why);
			for (size_t c = 0; c < ns; c++)
				r->cell[st * ns + c].skipped_runs += skipped;
			if (st == 0)
				r->kernels_hw += kern;
		}
		for (size_t g = 0; rc == 0 && g < ns; g++) {
			size_t skipped = 0, kern = 0, total = 0;
			char why[1024] = "";
			for (size_t i = 0; rc == 0 && w.runs_sim[g][i].id; i++, total++) {
				rc = load_run(&w, &w.sim[st * ns + g], &w.runs_sim[g][i], sp->stats[st].sim_expr,
					      sp->sim[g].config, 1, &skipped, why, sizeof why,
					      &launches[st * (nh + ns) + nh + g], &kern);
				int seen = 0; /* configurations of one run count it once */
				for (size_t q = 0; q < g; q++)
					for (size_t j = 0; w.runs_sim[q][j].id; j++)
						seen |= w.runs_sim[q][j].id == w.runs_sim[g][i].id;
				if (st == 0 && !seen)
					r->runs_sim++;
			}
			r->cell[st * ns + g].skipped_runs += skipped;
			if (st == 0)
				r->kernels_sim += kern;
			if (rc == 0 && skipped)
				rc = warn(r, "%zu of %zu simulator runs of %s left out of %s (%s)", skipped, total,
					  r->config_label[g], sp->stats[st].sim_expr, why);
		}
	}
	if (rc == 0)
		rc = pair_apps(&w);
	for (size_t st = 0; rc == 0 && st < nt; st++)
		for (size_t c = 0; rc == 0 && c < ns; c++)
			rc = pair_cell(&w, st, c, &r->cell[st * ns + c]);
	/* what nothing paired: applications, then hardware kernels */
	for (size_t i = 0; rc == 0 && i < w.ah.n; i++)
		if (w.pair_of[i] == SIZE_MAX)
			rc = unpaired(&w, 0, 0, w.ah.name[i], NULL, 0, 0);
	for (size_t j = 0; rc == 0 && j < w.as.n; j++)
		if (w.hw_of[j] == SIZE_MAX)
			rc = unpaired(&w, 1, 0, w.as.name[j], NULL, 0, 0);
	for (size_t g = 0; rc == 0 && g < nh; g++) {
		const set *h = &w.hw[g]; /* the first statistic's */
		for (size_t i = 0; rc == 0 && i < h->n; i++)
			if (!h->e[i].used && w.pair_of[h->e[i].app] != SIZE_MAX)
				rc = unpaired(&w, 0, g, w.ah.name[h->e[i].app], h->e[i].kernel,
					      h->e[i].launch, h->e[i].run);
	}
	if (rc == 0 && !r->napps && r->kernels_hw && r->kernels_sim)
		rc = warn(r, "no application pairs: compare the names in 'unpaired' (or give --app-map)");
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	else if (rc < 0 && !err[0])
		snprintf(err, errlen, "%s", cs_store_errmsg(s));
	for (size_t i = 0; w.hw && i < nt * nh; i++)
		set_free(&w.hw[i]);
	for (size_t i = 0; w.sim && i < nt * ns; i++)
		set_free(&w.sim[i]);
	for (size_t i = 0; launches && i < nt * (nh + ns); i++)
		cs_strmap_free(&launches[i]);
	for (size_t g = 0; w.runs_hw && g < nh; g++)
		runs_free(w.runs_hw[g]);
	for (size_t g = 0; w.runs_sim && g < ns; g++)
		runs_free(w.runs_sim[g]);
	free(w.hw), free(w.sim), free(launches), free(w.runs_hw), free(w.runs_sim);
	free(w.pair_of), free(w.hw_of);
	appset_free(&w.ah);
	appset_free(&w.as);
	if (rc < 0)
		cs_suite_free(r);
	return rc;
}

void cs_suite_free(cs_suite_result *r)
{
	for (size_t i = 0; r->cell && i < r->nstats * r->nconfigs; i++) {
		for (size_t p = 0; p < r->cell[i].n; p++)
			free(r->cell[i].pairs[p].kernel);
		free(r->cell[i].pairs);
		free(r->cell[i].apps);
	}
	for (size_t i = 0; i < r->napps; i++) {
		free(r->app_hw[i]);
		free(r->app_sim[i]);
		free(r->app_how[i]);
	}
	for (size_t i = 0; i < r->nunpaired; i++) {
		free(r->unpaired[i].app);
		free(r->unpaired[i].kernel);
	}
	for (size_t i = 0; i < r->nwarn; i++)
		free(r->warn[i]);
	for (size_t i = 0; r->config_label && i < r->nconfigs; i++)
		free(r->config_label[i]);
	for (size_t i = 0; r->repeat_label && i < r->nrepeats; i++)
		free(r->repeat_label[i]);
	free(r->cell), free(r->app_hw), free(r->app_sim), free(r->app_how), free(r->unpaired);
	free(r->warn), free(r->config_label), free(r->repeat_label);
	memset(r, 0, sizeof *r);
}
