/*
 * corr_job.c - loading correlation inputs from the store (corr_job.h).
 */
#include "corr_job.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric_map.h"
#include "reader.h"

typedef struct acc {
	cs_cjob_side *side;
	const cs_mmap *m;
	size_t nnames;
	size_t **cols;   /* per name: value columns summed */
	size_t *ncols;
	double *nv;      /* per name value */
	double *state;   /* delta() state */
	size_t cap;
	int err;
} acc;

/* Every scanned row is evaluated, also those before the window, so that
 * delta() has the sample before the window's first. */
static int on_row(void *ctx, uint64_t seq, uint64_t t0, uint64_t t1, const double *values)
{
	acc *a = ctx;
	cs_cjob_side *s = a->side;
	(void)seq;
	for (size_t k = 0; k < a->nnames; k++) {
		double v = NAN;
		for (size_t j = 0; j < a->ncols[k]; j++) {
			double x = values[a->cols[k][j]];
			if (!isnan(x))
				v = isnan(v) ? x : v + x;
		}
		a->nv[k] = v;
	}
	double f = s->cycles_per_unit;
	double len = ((double)t1 - (double)t0) * f;
	double v = cs_mmap_eval_sample(a->m, 0, a->nv, len, a->state);
	if (t1 <= s->w0 || t0 >= s->w1)
		return 0;
	if (s->n == a->cap) {
		size_t c = a->cap ? a->cap * 2 : 4096;
		double *g0 = realloc(s->t0, c * sizeof *g0);
		if (g0)
			s->t0 = g0;
		double *g1 = realloc(s->t1, c * sizeof *g1);
		if (g1)
			s->t1 = g1;
		double *gv = realloc(s->v, c * sizeof *gv);
		if (gv)
			s->v = gv;
		if (!g0 || !g1 || !gv)
			return -ENOMEM;
		a->cap = c;
	}
	s->t0[s->n] = ((double)t0 - (double)s->w0) * f;
	s->t1[s->n] = ((double)t1 - (double)s->w0) * f;
	/* A rate is binned as what it adds up to over the sample. */
	s->v[s->n] = s->is_rate ? v * len : v;
	s->n++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Resolves the window spec into [w0, w1). */
static int window(cs_store *s, cs_cjob_side *side, const char *spec, char *err, size_t errlen)
{
	uint64_t lo, hi;
	int rc = cs_read_run_span(s, side->run, &lo, &hi);
	if (rc < 0) {
		snprintf(err, errlen, "run %s has no samples", side->run_name);
		return rc;
	}
	if (!spec || !*spec) {
		/* From the first sample's start to the last one's end (the
		 * run's t_max), so the last sample counts whole. */
		sqlite3_stmt *st = NULL;
		sqlite3_prepare_v2(cs_store_db(s), "SELECT t_max FROM runs WHERE id = ?1", -1, &st, NULL);
		sqlite3_bind_int64(st, 1, side->run);
		uint64_t end = hi + 1;
		if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
		    (uint64_t)sqlite3_column_int64(st, 0) > end)
			end = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		side->w0 = lo;
		side->w1 = end;
		snprintf(side->window, sizeof side->window, "the whole run");
		return 0;
	}
	unsigned long long a, b;
	char tail;
	if (sscanf(spec, "%llu:%llu%c", &a, &b, &tail) == 2) {
		if (b <= a) {
			snprintf(err, errlen, "window '%s': the end must come after the start", spec);
			return -EINVAL;
		}
		side->w0 = a;
		side->w1 = b;
		snprintf(side->window, sizeof side->window, "[%llu, %llu)", a, b);
		return 0;
	}
	char kind[32] = "", glob[256] = "*";
	long occ = 0;
	const char *hash = strrchr(spec, '#');
	const char *colon = strchr(spec, ':');
	if (hash) {
		char *end;
		occ = strtol(hash + 1, &end, 10);
		if (end == hash + 1 || *end || occ < 0) {
			snprintf(err, errlen, "window '%s': expected '#N' with N a kernel index from 0", spec);
			return -EINVAL;
		}
	}
	size_t body = hash ? (size_t)(hash - spec) : strlen(spec);
	if (colon && (size_t)(colon - spec) < body) {
		snprintf(kind, sizeof kind, "%.*s", (int)(colon - spec), spec);
		snprintf(glob, sizeof glob, "%.*s", (int)(body - (size_t)(colon - spec) - 1), colon + 1);
		if (!glob[0])
			snprintf(glob, sizeof glob, "*");
	} else if (body == 0) {
		snprintf(kind, sizeof kind, "%s", !strcmp(side->unit, "cycle") ? "sim-kernel" : "kernel");
	} else {
		snprintf(err, errlen, "window '%s': expected T0:T1, KIND:GLOB#N (kernel:*gemm*#2) or #N",
			 spec);
		return -EINVAL;
	}
	sqlite3_stmt *st = NULL;
	sqlite3_prepare_v2(cs_store_db(s),
			   "SELECT name, t0, t1 FROM ranges WHERE run = ?1 AND kind = ?2 AND name GLOB ?3 "
			   "ORDER BY t0, id LIMIT 1 OFFSET ?4",
			   -1, &st, NULL);
	sqlite3_bind_int64(st, 1, side->run);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, glob, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 4, occ);
	rc = -ENOENT;
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		side->w0 = (uint64_t)sqlite3_column_int64(st, 1);
		side->w1 = (uint64_t)sqlite3_column_int64(st, 2);
		if (side->w1 <= side->w0)
			side->w1 = side->w0 + 1;
		snprintf(side->window, sizeof side->window, "%s '%.200s' #%ld [%llu, %llu)", kind,
			 (const char *)sqlite3_column_text(st, 0), occ, (unsigned long long)side->w0,
			 (unsigned long long)side->w1);
		rc = 0;
	} else {
		snprintf(err, errlen, "window '%s': run %s has no %s range #%ld matching '%s'", spec,
			 side->run_name, kind, occ, glob);
	}
	sqlite3_finalize(st);
	return rc;
}

/* The run's clock: runs.clock_hz, else device 0's; with a domain
 * ("core", "l2", "icnt", "dram"), that entry of the run's
 * meta.clock_domains_hz (core falls back to the run's clock). */
static double run_clock(cs_store *s, int64_t run, const char *domain)
{
	sqlite3_stmt *st = NULL;
	double hz = 0;
	sqlite3_prepare_v2(cs_store_db(s),
			   "SELECT coalesce(NULLIF(json_extract(r.meta, '$.clock_domains_hz.' || ?2), 0),"
			   " CASE WHEN ?2 IS NULL OR ?2 = 'core' THEN coalesce(NULLIF(r.clock_hz, 0),"
			   " (SELECT clock_hz FROM devices d WHERE d.run = r.id AND d.idx = 0)) END)"
			   " FROM runs r WHERE r.id = ?1",
			   -1, &st, NULL);
	sqlite3_bind_int64(st, 1, run);
	if (domain)
		sqlite3_bind_text(st, 2, domain, -1, SQLITE_TRANSIENT);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		hz = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return hz;
}

int cs_cjob_clock(cs_store *s, const char *run, const char *what, double *hz, char *err,
		  size_t errlen)
{
	char *end;
	double mhz = strtod(what, &end);
	if (end != what && !*end) {
		if (!(mhz > 0) || !isfinite(mhz)) {
			snprintf(err, errlen, "clock '%s': expected a positive number of MHz", what);
			return -EINVAL;
		}
		*hz = mhz * 1e6;
		return 0;
	}
	static const char *const domains[] = {"core", "l2", "icnt", "dram"};
	int known = 0;
	for (size_t i = 0; i < sizeof domains / sizeof *domains; i++)
		known |= !strcmp(what, domains[i]);
	if (!known) {
		snprintf(err, errlen, "clock '%s': expected MHz or a clock domain (core, l2, icnt, dram)",
			 what);
		return -EINVAL;
	}
	int64_t id;
	if (cs_read_find_run(s, run, &id) < 0) {
		snprintf(err, errlen, "no run '%s' in the database", run);
		return -ENOENT;
	}
	if (!((*hz = run_clock(s, id, what)) > 0)) {
		snprintf(err, errlen, "run %s records no %s clock (an Accel-Sim stdout import records "
			 "all four domains): give MHz instead", run, what);
		return -ENOENT;
	}
	return 0;
}

int cs_cjob_load(cs_store *s, const cs_cjob_spec *spec, cs_cjob_side *out, char *err,
		 size_t errlen)
{
	memset(out, 0, sizeof *out);
	int rc = cs_read_find_run(s, spec->run, &out->run);
	if (rc < 0) {
		snprintf(err, errlen, "no run '%s' in the database", spec->run);
		return rc;
	}
	snprintf(out->run_name, sizeof out->run_name, "%s", spec->run);
	sqlite3_stmt *st = NULL;
	sqlite3_prepare_v2(cs_store_db(s), "SELECT time_unit, name FROM runs WHERE id = ?1", -1, &st,
			   NULL);
	sqlite3_bind_int64(st, 1, out->run);
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		snprintf(out->unit, sizeof out->unit, "%s", (const char *)sqlite3_column_text(st, 0));
		snprintf(out->run_name, sizeof out->run_name, "%s", (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	if (!strcmp(out->unit, "ns")) {
		out->clock_hz = spec->clock_hz > 0 ? spec->clock_hz : run_clock(s, out->run, NULL);
		if (!(out->clock_hz > 0)) {
			snprintf(err, errlen, "run %s is in ns and has no clock: give it (--hw-clock-mhz)",
				 out->run_name);
			return -EINVAL;
		}
	}
	out->cycle_scale = spec->cycle_scale > 0 ? spec->cycle_scale : 1;
	out->cycles_per_unit = (!strcmp(out->unit, "ns") ? out->clock_hz / 1e9 : 1) * out->cycle_scale;
	char text[1100];
	snprintf(text, sizeof text, "x = %s", spec->expr ? spec->expr : "");
	char perr[512];
	cs_mmap *m = cs_mmap_parse(text, strlen(text), "expr", perr, sizeof perr);
	if (!m) {
		/* "expr:1:COL: msg": the column counts from "x = " */
		int col = 0;
		const char *msg = perr;
		if (sscanf(perr, "expr:1:%d:", &col) == 1 && (msg = strchr(perr + 7, ':')))
			msg += 2;
		snprintf(err, errlen, "expression '%s', column %d: %s", spec->expr ? spec->expr : "",
			 col > 4 ? col - 4 : 1, msg ? msg : perr);
		return -EINVAL;
	}
	if ((rc = window(s, out, spec->window, err, errlen)) < 0) {
		cs_mmap_free(m);
		return rc;
	}
	out->is_rate = cs_mmap_is_rate(m, 0);
	/* The expression's names -> metric columns of the run. */
	uint32_t *ids = NULL, nids = 0;
	acc a = {.side = out, .m = m, .nnames = cs_mmap_names(m)};
	a.cols = calloc(a.nnames + 1, sizeof *a.cols);
	a.ncols = calloc(a.nnames + 1, sizeof *a.ncols);
	a.nv = calloc(a.nnames + 1, sizeof *a.nv);
	a.state = calloc(cs_mmap_state_len(m) + 1, sizeof *a.state);
	cs_mmap_state_init(m, a.state);
	uint32_t *used = NULL;
	size_t nused = 0;
	rc = cs_read_metric_ids(s, out->run, &ids, &nids);
	if (rc == 0 && (!a.cols || !a.ncols || !a.nv || !a.state || !(used = calloc(nids + 1, sizeof *used))))
		rc = -ENOMEM;
	/* The run's metric names, read once (each expression name is matched
	 * against all of them). */
	char (*names)[256] = rc == 0 ? calloc(nids + 1, sizeof *names) : NULL;
	if (rc == 0 && !names)
		rc = -ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < nids; i++)
		if (cs_read_metric_name(s, out->run, ids[i], names[i], sizeof names[i]) < 0)
			names[i][0] = '\0';
	for (size_t k = 0; rc == 0 && k < a.nnames; k++) {
		int glob;
		const char *want = cs_mmap_name(m, k, &glob);
		a.cols[k] = calloc(nids + 1, sizeof **a.cols);
		if (!a.cols[k]) {
			rc = -ENOMEM;
			break;
		}
		for (uint32_t i = 0; i < nids; i++) {
			if (!names[i][0] ||
			    (glob ? fnmatch(want, names[i], 0) != 0 : strcmp(want, names[i]) != 0))
				continue;
			size_t col = nused;
			for (size_t u = 0; u < nused; u++)
				if (used[u] == ids[i])
					col = u;
			if (col == nused)
				used[nused++] = ids[i];
			a.cols[k][a.ncols[k]++] = col;
		}
		if (!a.ncols[k]) {
			snprintf(err, errlen, "run %s has no metric %s'%s' (its metrics: cyclescope "
				 "query \"SELECT name FROM metrics WHERE run = %lld\")", out->run_name,
				 glob ? "matching " : "", want, (long long)out->run);
			rc = -ENOENT;
		}
	}
	if (rc == 0) {
		uint64_t span = out->w1 - out->w0;
		cs_scan q = {.run = out->run, .device = spec->device, .m = (uint32_t)nused,
			     .metrics = used, .from = out->w0 > span ? out->w0 - span : 0, .to = out->w1};
		rc = cs_read_raw(s, &q, on_row, &a);
		if (rc < 0)
			snprintf(err, errlen, "reading run %s: %s", out->run_name, cs_store_errmsg(s));
	}
	if (rc == 0 && !out->n) {
		snprintf(err, errlen, "run %s has no samples in %s", out->run_name, out->window);
		rc = -ENODATA;
	}
	if (rc == 0) {
		out->cycles = (double)(out->w1 - out->w0) * out->cycles_per_unit;
		double *len = malloc(out->n * sizeof *len);
		if (len) {
			for (size_t i = 0; i < out->n; i++)
				len[i] = out->t1[i] - out->t0[i];
			qsort(len, out->n, sizeof *len, cmp_double);
			out->median_sample = len[out->n / 2];
			free(len);
		}
	}
	for (size_t k = 0; a.cols && k < a.nnames; k++)
		free(a.cols[k]);
	free(a.cols);
	free(a.ncols);
	free(a.nv);
	free(a.state);
	free(names);
	free(used);
	free(ids);
	cs_mmap_free(m);
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	return rc;
}

void cs_cjob_side_free(cs_cjob_side *side)
{
	if (!side)
		return;
	free(side->t0);
	free(side->t1);
	free(side->v);
	side->t0 = side->t1 = side->v = NULL;
}

cs_corr_series cs_cjob_series(const cs_cjob_side *side)
{
	cs_corr_series s = {side->n, side->t0, side->t1, side->v};
	return s;
}

int cs_cjob_kernel_spans(cs_store *s, const cs_cjob_side *side, double shift,
			 cs_cjob_kernels *k, char *err, size_t errlen)
{
	memset(k, 0, sizeof *k);
	const char *kind = !strcmp(side->unit, "cycle") ? "sim-kernel" : "kernel";
	sqlite3_stmt *st = NULL;
	sqlite3_prepare_v2(cs_store_db(s),
			   "SELECT name, t0, t1 FROM ranges WHERE run = ?1 AND kind = ?2 AND t1 > ?3 "
			   "AND t0 < ?4 ORDER BY t0, id",
			   -1, &st, NULL);
	sqlite3_bind_int64(st, 1, side->run);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)side->w0);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)side->w1);
	double f = side->cycles_per_unit;
	size_t cap = 0;
	int rc = 0;
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		if (k->n == cap) {
			cap = cap ? cap * 2 : 64;
			char **gn = realloc(k->names, cap * sizeof *gn);
			if (gn)
				k->names = gn;
			double *g0 = realloc(k->t0, cap * sizeof *g0);
			if (g0)
				k->t0 = g0;
			double *g1 = realloc(k->t1, cap * sizeof *g1);
			if (g1)
				k->t1 = g1;
			if (!gn || !g0 || !g1) {
				rc = -ENOMEM;
				break;
			}
		}
		if (!(k->names[k->n] = strdup((const char *)sqlite3_column_text(st, 0)))) {
			rc = -ENOMEM;
			break;
		}
		k->t0[k->n] = ((double)sqlite3_column_int64(st, 1) - (double)side->w0) * f + shift;
		k->t1[k->n] = ((double)sqlite3_column_int64(st, 2) - (double)side->w0) * f + shift;
		k->n++;
	}
	sqlite3_finalize(st);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc;
}

int cs_cjob_kernel_totals(cs_store *s, const cs_cjob_side *side, cs_cjob_kernels *k, char *err,
			  size_t errlen)
{
	int rc = cs_cjob_kernel_spans(s, side, 0, k, err, errlen);
	if (rc < 0)
		return rc;
	if (!k->n) {
		snprintf(err, errlen, "run %s has no %s ranges", side->run_name,
			 !strcmp(side->unit, "cycle") ? "sim-kernel" : "kernel");
		cs_cjob_kernels_free(k);
		return -ENOENT;
	}
	if (!(k->totals = calloc(k->n, sizeof *k->totals))) {
		snprintf(err, errlen, "out of memory");
		cs_cjob_kernels_free(k);
		return -ENOMEM;
	}
	/* Each sample counts in a kernel in proportion to its overlap. */
	for (size_t j = 0; j < k->n; j++)
		for (size_t i = 0; i < side->n; i++) {
			double lo = side->t0[i] > k->t0[j] ? side->t0[i] : k->t0[j];
			double hi = side->t1[i] < k->t1[j] ? side->t1[i] : k->t1[j];
			double len = side->t1[i] - side->t0[i];
			if (hi > lo && len > 0 && !isnan(side->v[i]))
				k->totals[j] += side->v[i] * (hi - lo) / len;
		}
	/* A rate's kernel value is its mean over the kernel. */
	for (size_t j = 0; side->is_rate && j < k->n; j++)
		k->totals[j] = k->t1[j] > k->t0[j] ? k->totals[j] / (k->t1[j] - k->t0[j]) : (double)NAN;
	return 0;
}

void cs_cjob_kernels_free(cs_cjob_kernels *k)
{
	for (size_t i = 0; k && i < k->n; i++)
		free(k->names[i]);
	if (k) {
		free(k->names);
		free(k->totals);
		free(k->t0);
		free(k->t1);
		memset(k, 0, sizeof *k);
	}
}

size_t cs_cjob_match(const cs_cjob_kernels *hw, const cs_cjob_kernels *sim, double *hw_out,
		     double *sim_out, size_t *idx_out)
{
	size_t n = 0, next = 0;
	int any = 0;
	char *taken = calloc(hw->n + 1, 1);
	if (!taken)
		return 0;
	for (size_t i = 0; i < sim->n; i++)
		for (size_t j = 0; j < hw->n; j++)
			if (!strcmp(sim->names[i], hw->names[j]))
				any = 1;
	for (size_t i = 0; i < sim->n; i++) {
		size_t j = hw->n;
		if (any) {
			for (size_t c = 0; c < hw->n; c++)
				if (!taken[c] && !strcmp(sim->names[i], hw->names[c])) {
					j = c;
					break;
				}
		} else if (next < hw->n) {
			j = next++;
		}
		if (j >= hw->n)
			continue;
		taken[j] = 1;
		hw_out[n] = hw->totals[j];
		sim_out[n] = sim->totals[i];
		idx_out[n] = i;
		n++;
	}
	free(taken);
	return n;
}
