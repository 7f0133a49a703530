/*
 * simrun.c - one imported run from sample rows (simrun.h).
 *
 * Rows are kept sample-major, `stride` doubles each; when a new metric
 * appears the buffered rows are re-laid out with the wider stride (it
 * happens during the first rows of a file, rarely later). Batches are
 * sized to about 8 MB of values.
 */
#include "simrun.h"
#include "json.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "wire.h"

#define BATCH_VALUES (1u << 20)

typedef struct mdef {
	char *name;
	uint32_t id; /* producer's id */
} mdef;

struct cs_simrun {
	cs_producer *p;
	const cs_mmap *map;
	mdef *m;
	size_t nm, capm;
	uint32_t *ids;
	/* name hash: open addressing over indices + 1 */
	int *hash;
	size_t hcap;
	/* buffered rows */
	uint64_t *t0, *t1;
	double *v;
	size_t rows, caprows, stride;
	int open; /* a row is being filled */
	uint64_t seq;
	uint64_t total_rows;
	uint64_t last_t0;
	/* map binding */
	int bound;
	int *map_idx;       /* per entry: metric index of the target, -1 = skipped */
	int **name_idx;     /* per map name: metric indices it sums */
	size_t *name_n;
	double *name_val;
	double *map_state;  /* delta() state, cs_mmap_state_len long */
	cs_totals totals;   /* running totals (metrics in the same order) */
	char err[512];
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int find(const cs_simrun *r, const char *name)
{
	if (!r->hcap)
		return -1;
	for (size_t i = hash_str(name) & (r->hcap - 1);; i = (i + 1) & (r->hcap - 1)) {
		int k = r->hash[i];
		if (!k)
			return -1;
		if (!strcmp(r->m[k - 1].name, name))
			return k - 1;
	}
}

static int rehash(cs_simrun *r, size_t cap)
{
	int *h = calloc(cap, sizeof *h);
	if (!h)
		return -ENOMEM;
	for (size_t k = 0; k < r->nm; k++) {
		size_t i = hash_str(r->m[k].name) & (cap - 1);
		while (h[i])
			i = (i + 1) & (cap - 1);
		h[i] = (int)k + 1;
	}
	free(r->hash);
	r->hash = h;
	r->hcap = cap;
	return 0;
}

cs_simrun *cs_simrun_begin(cs_producer *p, const cs_run_info *info, const cs_mmap *map,
			   char *err, size_t errlen)
{
	cs_simrun *r = calloc(1, sizeof *r);
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->p = p;
	r->map = map;
	int rc = cs_producer_begin(p, info);
	if (rc < 0) {
		snprintf(err, errlen, "%s", cs_producer_errmsg(p));
		free(r);
		return NULL;
	}
	return r;
}

/* Re-lays the buffered rows out with stride s, holding about
 * BATCH_VALUES values (never fewer rows than are live, plus one). */
static int widen(cs_simrun *r, size_t s)
{
	size_t live = r->rows + (r->open ? 1 : 0);
	size_t cap = BATCH_VALUES / s;
	if (cap < 16)
		cap = 16;
	if (cap < live + 2)
		cap = live + 2;
	double *v = malloc(cap * s * sizeof *v);
	uint64_t *t0 = realloc(r->t0, cap * sizeof *t0);
	if (t0)
		r->t0 = t0;
	uint64_t *t1 = realloc(r->t1, cap * sizeof *t1);
	if (t1)
		r->t1 = t1;
	if (!v || !t0 || !t1) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap * s; i++)
		v[i] = NAN;
	for (size_t i = 0; i < live && r->v; i++)
		memcpy(v + i * s, r->v + i * r->stride, r->stride * sizeof *v);
	free(r->v);
	r->v = v;
	r->stride = s;
	r->caprows = cap;
	return 0;
}

int cs_simrun_metric(cs_simrun *r, const char *name, const char *unit, const char *kind)
{
	int k = find(r, name);
	if (k >= 0)
		return k;
	if (r->nm >= CS_WIRE_MAX_METRICS) {
		snprintf(r->err, sizeof r->err, "more than %u metrics in one run (at '%s')",
			 CS_WIRE_MAX_METRICS, name);
		return -E2BIG;
	}
	if (r->nm == r->capm) {
		size_t cap = r->capm ? r->capm * 2 : 64;
		mdef *g = realloc(r->m, cap * sizeof *g);
		uint32_t *ids = g ? realloc(r->ids, cap * sizeof *ids) : NULL;
		if (!g || !ids) {
			if (g)
				r->m = g;
			return -ENOMEM;
		}
		r->m = g;
		r->ids = ids;
		r->capm = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	cs_metric_info mi = {.name = name, .unit = unit, .kind = kind};
	uint32_t id;
	int rc = cs_producer_add_metric(r->p, &mi, &id);
	if (rc < 0) {
		free(copy);
		snprintf(r->err, sizeof r->err, "metric '%s': %s", name, cs_producer_errmsg(r->p));
		return rc;
	}
	if (cs_totals_add(&r->totals, name) < 0) {
		free(copy);
		return -ENOMEM;
	}
	r->m[r->nm].name = copy;
	r->m[r->nm].id = id;
	r->ids[r->nm] = id;
	r->nm++;
	if (r->nm * 2 > r->hcap) {
		if ((rc = rehash(r, r->hcap ? r->hcap * 2 : 128)) < 0)
			return rc;
	} else {
		size_t i = hash_str(r->m[r->nm - 1].name) & (r->hcap - 1);
		while (r->hash[i])
			i = (i + 1) & (r->hcap - 1);
		r->hash[i] = (int)r->nm;
	}
	if (r->nm > r->stride && (rc = widen(r, r->stride ? r->stride * 2 : 64)) < 0)
		return rc;
	return (int)r->nm - 1;
}

static int name_matches(const cs_simrun *r, size_t k, const char *pattern, int glob)
{
	return glob ? fnmatch(pattern, r->m[k].name, 0) == 0 : !strcmp(pattern, r->m[k].name);
}

/* Resolves the map's names against the metrics seen so far and declares
 * its targets. A target whose stats are missing is skipped, said once. */
static int bind_map(cs_simrun *r)
{
	r->bound = 1;
	const cs_mmap *mp = r->map;
	size_t nn = cs_mmap_names(mp), ne = cs_mmap_count(mp);
	if (!ne)
		return 0;
	r->name_idx = calloc(nn, sizeof *r->name_idx);
	r->name_n = calloc(nn, sizeof *r->name_n);
	r->name_val = calloc(nn, sizeof *r->name_val);
	r->map_idx = calloc(ne, sizeof *r->map_idx);
	r->map_state = calloc(cs_mmap_state_len(mp) + 1, sizeof *r->map_state);
	if (!r->name_idx || !r->name_n || !r->name_val || !r->map_idx || !r->map_state)
		return -ENOMEM;
	cs_mmap_state_init(mp, r->map_state);
	size_t base = r->nm;
	for (size_t k = 0; k < nn; k++) {
		int glob;
		const char *pat = cs_mmap_name(mp, k, &glob);
		r->name_idx[k] = malloc((base ? base : 1) * sizeof **r->name_idx);
		if (!r->name_idx[k])
			return -ENOMEM;
		for (size_t j = 0; j < base; j++)
			if (name_matches(r, j, pat, glob))
				r->name_idx[k][r->name_n[k]++] = (int)j;
	}
	unsigned skipped = 0;
	for (size_t i = 0; i < ne; i++) {
		r->map_idx[i] = -1;
		const char *missing = NULL;
		for (size_t k = 0; k < nn && !missing; k++)
			if (cs_mmap_uses(mp, i, k) && !r->name_n[k])
				missing = cs_mmap_name(mp, k, NULL);
		if (missing) {
			cs_log(CS_LOG_INFO, "map line %u: %s not mapped: '%s' is not in this run",
			       cs_mmap_line(mp, i), cs_mmap_target(mp, i), missing);
			skipped++;
			continue;
		}
		int idx = cs_simrun_metric(r, cs_mmap_target(mp, i), NULL, NULL);
		if (idx < 0)
			return idx;
		r->map_idx[i] = idx;
	}
	if (skipped)
		cs_log(CS_LOG_WARN, "%u of %zu mapped metrics skipped: their stats are not in this "
		       "file (CYCLESCOPE_LOG=info lists them)", skipped, ne);
	return 0;
}

/* Rows come in time order, so delta() differences each against the one
 * before; rate() is per unit of the run's time axis. */
static void apply_map(cs_simrun *r, double *row, double length)
{
	const cs_mmap *mp = r->map;
	size_t nn = cs_mmap_names(mp);
	for (size_t k = 0; k < nn; k++) {
		double s = NAN;
		for (size_t j = 0; j < r->name_n[k]; j++) {
			double v = row[r->name_idx[k][j]];
			if (!isnan(v))
				s = isnan(s) ? v : s + v;
		}
		r->name_val[k] = s;
	}
	for (size_t i = 0; i < cs_mmap_count(mp); i++)
		if (r->map_idx[i] >= 0)
			row[r->map_idx[i]] = cs_mmap_eval_sample(mp, i, r->name_val, length, r->map_state);
}

void cs_simrun_cumulative(cs_simrun *r, int idx)
{
	if (idx >= 0)
		cs_totals_mark(&r->totals, (size_t)idx);
}

void cs_simrun_restarts(cs_simrun *r, uint64_t n)
{
	r->totals.restarts = n;
}

static int flush(cs_simrun *r)
{
	int rc;
	if (r->map && !r->bound && (rc = bind_map(r)) < 0)
		return rc;
	if (!r->rows)
		return 0;
	cs_totals_rows(&r->totals, r->v, r->rows, r->stride);
	if (r->map && cs_mmap_count(r->map))
		for (size_t i = 0; i < r->rows; i++)
			apply_map(r, r->v + i * r->stride, (double)r->t1[i] - (double)r->t0[i]);
	/* Rows are stride wide; a batch wants exactly nm values per row. */
	if (r->stride != r->nm)
		for (size_t i = 1; i < r->rows; i++)
			memmove(r->v + i * r->nm, r->v + i * r->stride, r->nm * sizeof *r->v);
	cs_batch b = {.device = 0, .seq0 = r->seq, .n = (uint32_t)r->rows, .m = (uint32_t)r->nm,
		      .metrics = r->ids, .t0 = r->t0, .t1 = r->t1, .values = r->v};
	rc = r->nm ? cs_producer_append(r->p, &b) : 0;
	if (rc < 0) {
		snprintf(r->err, sizeof r->err, "%s", cs_producer_errmsg(r->p));
		return rc;
	}
	r->seq += r->rows;
	/* Keep the open row (it sits after the flushed ones). */
	if (r->open) {
		memmove(r->v, r->v + r->rows * r->stride, r->stride * sizeof *r->v);
		r->t0[0] = r->t0[r->rows];
		r->t1[0] = r->t1[r->rows];
	}
	for (size_t i = r->open ? r->stride : 0; i < r->caprows * r->stride; i++)
		r->v[i] = NAN;
	r->rows = 0;
	return 0;
}

int cs_simrun_metric_name(const cs_simrun *r, int idx, char *out, size_t outlen)
{
	if (idx < 0 || (size_t)idx >= r->nm)
		return -ENOENT;
	snprintf(out, outlen, "%s", r->m[idx].name);
	return 0;
}

int cs_simrun_row(cs_simrun *r, uint64_t t0, uint64_t t1)
{
	if (r->total_rows && t0 < r->last_t0) {
		snprintf(r->err, sizeof r->err, "time goes back: a sample at %llu after one at %llu",
			 (unsigned long long)t0, (unsigned long long)r->last_t0);
		return -EINVAL;
	}
	int rc;
	if (!r->caprows && (rc = widen(r, r->stride ? r->stride : 64)) < 0)
		return rc;
	if (r->open)
		r->rows++;
	r->open = 0;
	if (r->rows + 1 >= r->caprows && (rc = flush(r)) < 0)
		return rc;
	r->t0[r->rows] = t0;
	r->t1[r->rows] = t1 >= t0 ? t1 : t0;
	r->open = 1;
	r->total_rows++;
	r->last_t0 = t0;
	return 0;
}

void cs_simrun_set(cs_simrun *r, int idx, double v)
{
	if (r->open && idx >= 0 && (size_t)idx < r->nm)
		r->v[r->rows * r->stride + (size_t)idx] = v;
}

void cs_simrun_add(cs_simrun *r, int idx, double v)
{
	if (!r->open || idx < 0 || (size_t)idx >= r->nm || isnan(v))
		return;
	double *c = &r->v[r->rows * r->stride + (size_t)idx];
	*c = isnan(*c) ? v : *c + v;
}

int cs_simrun_range(cs_simrun *r, const cs_range *range)
{
	int rc = cs_producer_add_range(r->p, range);
	if (rc < 0)
		snprintf(r->err, sizeof r->err, "%s", cs_producer_errmsg(r->p));
	return rc;
}

uint64_t cs_simrun_rows(const cs_simrun *r)
{
	return r->total_rows;
}

void cs_simrun_free(cs_simrun *r)
{
	if (!r)
		return;
	for (size_t k = 0; k < r->nm; k++)
		free(r->m[k].name);
	size_t nn = r->map ? cs_mmap_names(r->map) : 0;
	for (size_t k = 0; r->name_idx && k < nn; k++)
		free(r->name_idx[k]);
	free(r->name_idx);
	free(r->name_n);
	free(r->name_val);
	free(r->map_state);
	free(r->map_idx);
	free(r->m);
	free(r->ids);
	free(r->hash);
	free(r->t0);
	free(r->t1);
	free(r->v);
	cs_totals_free(&r->totals);
	free(r);
}

int cs_simrun_end(cs_simrun *r, char *err, size_t errlen)
{
	if (r->open) {
		r->rows++;
		r->open = 0;
	}
	int rc = flush(r);
	if (rc == 0)
		cs_totals_report(&r->totals, NULL);
	if (rc == 0 && (rc = cs_producer_end(r->p, "complete", NULL)) < 0)
		snprintf(r->err, sizeof r->err, "%s", cs_producer_errmsg(r->p));
	if (rc < 0)
		snprintf(err, errlen, "%s", r->err[0] ? r->err : strerror(-rc));
	cs_simrun_free(r);
	return rc;
}

const char *cs_simrun_errmsg(const cs_simrun *r)
{
	return r->err;
}

const char *cs_simrun_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int cs_simrun_meta(cs_buf *meta, const char *label, const char *format, const char *extra)
{
	cs_json_raw(meta, "{\"file\":");
	cs_json_str(meta, label);
	cs_json_raw(meta, ",\"format\":");
	cs_json_str(meta, format);
	if (extra) {
		cs_json_raw(meta, ",");
		cs_json_raw(meta, extra);
	}
	cs_json_raw(meta, "}");
	if (cs_buf_put_u8(meta, 0)) {
		cs_buf_free(meta);
		return -ENOMEM;
	}
	return 0;
}

int cs_simrun_verrf(char *err, size_t errlen, const char *label, uint64_t line,
		    const char *fmt, va_list ap)
{
	/* Formatted apart first: an argument may be err itself (a reader's
	 * message being given its file and line). */
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (line)
		snprintf(err, errlen, "%s:%llu: %s", label, (unsigned long long)line, msg);
	else
		snprintf(err, errlen, "%s: %s", label, msg);
	return -EINVAL;
}

int cs_simrun_finish(cs_simrun *r, cs_producer *p, int rc, const char *label, char *err,
		     size_t errlen)
{
	if (rc == 0 && r) {
		rc = cs_simrun_end(r, err, errlen);
		r = NULL;
	}
	if (rc < 0 && !err[0])
		snprintf(err, errlen, "%s: %s", label, strerror(-rc));
	if (rc < 0) {
		cs_simrun_free(r);
		cs_producer_discard(p);
	}
	return rc;
}

cs_simrun *cs_simrun_open(cs_producer *p, const cs_import_opts *o, const char *source,
			  const char *kind, const char *unit, double clock_hz,
			  const char *extra_members, char *err, size_t errlen)
{
	const char *label = o->label ? o->label : "input";
	cs_buf meta = CS_BUF_INIT;
	if (cs_simrun_meta(&meta, label, source, extra_members)) {
		snprintf(err, errlen, "%s: out of memory", label);
		return NULL;
	}
	const char *u = o->time_unit ? o->time_unit : unit;
	cs_run_info info = {
		.kind = o->kind ? o->kind : kind ? kind : !strcmp(u, "cycle") ? "sim" : "hw",
		.source = source,
		.name = o->name ? o->name : cs_simrun_base_name(label),
		.time_unit = u,
		.meta = (const char *)meta.data,
		.clock_hz = o->clock_hz ? o->clock_hz : clock_hz,
	};
	cs_simrun *r = cs_simrun_begin(p, &info, o->map, err, errlen);
	cs_buf_free(&meta);
	if (r)
		cs_totals_init(&r->totals, o->cumulative, o->per_window, label);
	return r;
}

void cs_imp_init(cs_imp *im, const cs_import_opts *o, char *err, size_t errlen)
{
	im->o = o;
	im->label = o->label ? o->label : "input";
	im->err = err;
	im->errlen = errlen;
	im->line = 0;
	err[0] = '\0';
}

int cs_imp_fail(cs_imp *im, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = cs_simrun_verrf(im->err, im->errlen, im->label, im->line, fmt, ap);
	va_end(ap);
	return rc;
}

int64_t cs_simrun_device_of(const char *device)
{
	const char *p = strrchr(device, '(');
	char *end;
	long v = p ? strtol(p + 1, &end, 10) : -1;
	return p && end != p + 1 && *end == ')' && v >= 0 && v <= CS_MAX_DEVICE_INDEX ? v : -1;
}
