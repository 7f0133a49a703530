/*
 * jobphases.c - the overlap analysis of a job (jobphases.h).
 *
 * Each rank's A ranges are read one by one (by start), keyed by the
 * collective they are, and the k-th of a key on one rank is matched with
 * the k-th of that key on every other: NCCL runs a communicator's
 * collectives in the same order on all its ranks. A key whose count
 * differs between ranks is matched up to the smallest count and reported.
 */
#include "jobphases.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <string.h>

#include "buf.h"
#include "ranges.h"
#include "runs.h"
#include "strmap.h"

#define MAX_KEYS 64

typedef struct arange {
	int64_t t0, t1;
	int64_t device; /* -1 none */
	int key;
} arange;

/* One rank's A ranges by start, with the keys' names. */
typedef struct rank_a {
	arange *v;
	size_t n;
} rank_a;

void cs_jobphases_key(const char *name, char *out, size_t outlen)
{
	const char *p = NULL;
	if (!strncmp(name, "ncclDevKernel_", 14))
		p = name + 14;
	else if (!strncmp(name, "ncclKernel_", 11))
		p = name + 11;
	if (!p) {
		snprintf(out, outlen, "%s", name);
		return;
	}
	size_t n = strcspn(p, "_(");
	snprintf(out, outlen, "%.*s", (int)n, p);
}

static void warn(cs_jobphases *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(cs_jobphases *j, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	size_t have = j->warnings ? strlen(j->warnings) : 0;
	char *g = realloc(j->warnings, have + strlen(line) + 2);
	if (!g)
		return;
	j->warnings = g;
	snprintf(g + have, strlen(line) + 2, "%s%s", have ? "\n" : "", line);
	j->nwarn++;
}

static int cmp_arange(const void *x, const void *y)
{
	const arange *a = x, *b = y;
	return a->t0 < b->t0 ? -1 : a->t0 > b->t0 ? 1 : (a->t1 > b->t1) - (a->t1 < b->t1);
}

static int cmp_rank(const void *x, const void *y)
{
	const cs_job_rankres *a = x, *b = y;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* What A and B are, and what each distinct range name is to them: the
 * globs are matched once per name (by SQLite's GLOB, as a query would),
 * not once per range. */
typedef struct nameclass {
	unsigned char a, b; /* the name matches A's glob, B's */
	int key;            /* the collective it is (A), else -1 */
} nameclass;

typedef struct classes {
	char akind[64], bkind[64];
	const char *aglob, *bglob, *aspec;
	char (*keys)[64];
	int nkeys;
	cs_strmap names; /* name -> index in v */
	nameclass *v;
	size_t n, cap;
} classes;

/* kind is in the comma-separated list (any kind when it is empty). */
static int kind_in(const char *list, const char *kind)
{
	if (!*list)
		return 1;
	size_t k = strlen(kind);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == k && !strncmp(p, kind, n))
			return 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

/* Whether name matches glob ("!GLOB": does not match GLOB). */
static int glob_is(const char *glob, const char *name)
{
	return glob[0] == '!' ? sqlite3_strglob(glob + 1, name) != 0 : !sqlite3_strglob(glob, name);
}

/* The class of name, found once; NULL with err set on failure. */
static const nameclass *classify(classes *c, const char *name, int64_t rank, char *err,
				 size_t errlen)
{
	size_t at = cs_strmap_get(&c->names, name);
	if (at != SIZE_MAX)
		return &c->v[at];
	nameclass x = {glob_is(c->aglob, name), glob_is(c->bglob, name), -1};
	if (x.a) {
		char key[64];
		cs_jobphases_key(name, key, sizeof key);
		int k = 0;
		while (k < c->nkeys && strcmp(c->keys[k], key))
			k++;
		if (k == c->nkeys) {
			if (c->nkeys == MAX_KEYS) {
				snprintf(err, errlen, "--a '%s' matches more than %d different "
					 "collectives (rank %lld): name one kind of collective, e.g. "
					 "'kernel:nccl*AllReduce*'", c->aspec, MAX_KEYS, (long long)rank);
				return NULL;
			}
			snprintf(c->keys[c->nkeys++], 64, "%s", key);
		}
		x.key = k;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		nameclass *g = realloc(c->v, cap * sizeof *g);
		if (!g)
			goto oom;
		c->v = g;
		c->cap = cap;
	}
	if (cs_strmap_put(&c->names, name, c->n))
		goto oom;
	c->v[c->n] = x;
	return &c->v[c->n++];
oom:
	snprintf(err, errlen, "out of memory");
	return NULL;
}

static int push_a(rank_a *out, size_t *cap, arange x)
{
	if (out->n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		arange *g = realloc(out->v, *cap * sizeof *g);
		if (!g)
			return -ENOMEM;
		out->v = g;
	}
	out->v[out->n++] = x;
	return 0;
}

/* One rank's ranges, read once in start order: its A ranges (any
 * device), keyed, into *a; its B ranges into *b (key unused). Its device
 * is that of the first A range that names one. */
static int read_rank(cs_store *s, cs_job_rankres *r, classes *c, rank_a *a, rank_a *b,
		     char *err, size_t errlen)
{
	cs_ranges_query q = {.run = r->run, .to = UINT64_MAX, .window = CS_RANGES_TOUCHING,
			     .lean = 1};
	cs_ranges_cursor *cur = cs_ranges_open(s, &q);
	if (!cur) {
		snprintf(err, errlen, "rank %lld: %s", (long long)r->rank, cs_store_errmsg(s));
		return -EIO;
	}
	int rc = 0, more, have_dev = 0;
	size_t acap = 0, bcap = 0;
	cs_range_row row;
	while ((more = cs_ranges_next(cur, &row)) != 0) {
		if (more < 0) {
			rc = more;
			snprintf(err, errlen, "rank %lld: %s", (long long)r->rank, cs_store_errmsg(s));
			break;
		}
		const char *kind = row.kind ? row.kind : "";
		int ka = kind_in(c->akind, kind), kb = kind_in(c->bkind, kind);
		if (!ka && !kb)
			continue;
		const nameclass *x = classify(c, row.name ? row.name : "", r->rank, err, errlen);
		if (!x) {
			rc = -EINVAL;
			break;
		}
		int64_t dev = (row.has & CS_RANGE_HAS_DEVICE) ? row.device : -1;
		if (ka && x->a) {
			if (!have_dev && dev >= 0) {
				r->device = (uint32_t)dev;
				have_dev = 1;
			}
			if ((rc = push_a(a, &acap, (arange){row.t0, row.t1, dev, x->key})) < 0)
				break;
		}
		if (kb && x->b && (rc = push_a(b, &bcap, (arange){row.t0, row.t1, dev, -1})) < 0)
			break;
	}
	cs_ranges_close(cur);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc;
}

/* The [t0, t1] of the ranges of v on device (or on none), into *iv. */
static int on_device(const rank_a *v, uint32_t device, int64_t (**iv)[2], size_t *n)
{
	*iv = malloc((v->n ? v->n : 1) * sizeof **iv);
	*n = 0;
	if (!*iv)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].device < 0 || v->v[i].device == (int64_t)device) {
			(*iv)[*n][0] = v->v[i].t0;
			(*iv)[(*n)++][1] = v->v[i].t1;
		}
	return 0;
}

/* The ranks: every run of the job, by rank; missing ranks warned. */
static int find_ranks(cs_store *s, const char *job, cs_jobphases *j, char *err, size_t errlen)
{
	cs_job_rank *runs;
	size_t n;
	if (cs_runs_job(s, job, &runs, &n) < 0) {
		snprintf(err, errlen, "%s", cs_store_errmsg(s));
		return -EIO;
	}
	if (!n) {
		snprintf(err, errlen, "no run is labelled with job '%s' (import the ranks' traces "
			 "with --job, or record with CYCLESCOPE_JOB; `cyclescope runs --json` shows "
			 "the labels)", job);
		return -ENOENT;
	}
	j->ranks = calloc(n, sizeof *j->ranks);
	if (!j->ranks) {
		free(runs);
		return -ENOMEM;
	}
	int64_t world = 0;
	for (size_t i = 0; i < n; i++) {
		if (runs[i].rank < 0) {
			snprintf(err, errlen, "run %lld '%s' of job '%s' has no rank label (import it "
				 "with --rank N)", (long long)runs[i].run, runs[i].name, job);
			free(runs);
			return -EINVAL;
		}
		cs_job_rankres *r = &j->ranks[i];
		r->rank = runs[i].rank;
		r->run = runs[i].run;
		snprintf(r->name, sizeof r->name, "%s", runs[i].name);
		snprintf(r->host, sizeof r->host, "%s", runs[i].host);
		if (runs[i].world_size > world)
			world = runs[i].world_size;
		j->ns = !strcmp(runs[i].time_unit, "ns");
	}
	free(runs);
	j->nranks = n;
	qsort(j->ranks, n, sizeof *j->ranks, cmp_rank);
	for (size_t i = 1; i < n; i++)
		if (j->ranks[i].rank == j->ranks[i - 1].rank) {
			snprintf(err, errlen, "job '%s' has two runs of rank %lld (runs %lld and %lld): "
				 "relabel or delete one", job, (long long)j->ranks[i].rank,
				 (long long)j->ranks[i - 1].run, (long long)j->ranks[i].run);
			return -EINVAL;
		}
	/* ranks the world size says exist but no run has */
	int64_t hi = world > j->ranks[n - 1].rank + 1 ? world : j->ranks[n - 1].rank + 1;
	size_t at = 0;
	for (int64_t rk = 0; rk < hi; rk++) {
		while (at < n && j->ranks[at].rank < rk)
			at++;
		if (at >= n || j->ranks[at].rank != rk)
			warn(j, "rank %lld is missing: job '%s' has no run of it%s", (long long)rk, job,
			     world ? " (its world size is that of the ranks' labels)" : "");
	}
	return 0;
}

/* Moves the k-th smallest of v[0..n) to v[k], the smaller before it and
 * the larger after it (quickselect, Hoare's partition). */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		double x = v[lo], y = v[mid], z = v[hi];
		double p = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
		size_t i = lo, j = hi;
		for (;;) {
			while (v[i] < p)
				i++;
			while (v[j] > p)
				j--;
			if (i >= j)
				break;
			double t = v[i];
			v[i++] = v[j];
			v[j--] = t;
		}
		/* v[lo..j] <= p <= v[j+1..hi] */
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
}

/* The median of v[0..n) (n > 0), whose order it changes. */
static double median(double *v, size_t n)
{
	size_t k = n / 2;
	select_kth(v, n, k);
	if (n % 2)
		return v[k];
	double below = v[0];
	for (size_t i = 1; i < k; i++)
		if (v[i] > below)
			below = v[i];
	return (below + v[k]) / 2;
}

/* Each rank's offset: the median, over the instances, of its end minus
 * the median end of that instance over all ranks (robust to a straggler
 * and to a rank whose clock jumps once). */
static void align(cs_jobphases *j)
{
	size_t nr = j->nranks, nc = j->ncoll;
	double *col = malloc(nr * sizeof *col), *dev = malloc(nc * sizeof *dev);
	double *mid = malloc(nc * sizeof *mid);
	if (!col || !dev || !mid)
		goto out;
	for (size_t c = 0; c < nc; c++) {
		memcpy(col, j->coll[c].end, nr * sizeof *col);
		mid[c] = median(col, nr);
	}
	for (size_t r = 0; r < nr; r++) {
		for (size_t c = 0; c < nc; c++)
			dev[c] = j->coll[c].end[r] - mid[c];
		j->ranks[r].offset_ns = (int64_t)llround(median(dev, nc));
	}
	j->aligned = 1;
out:
	free(col);
	free(dev);
	free(mid);
}

/* Matches the instances: per key, up to the smallest count. */
static int match(cs_jobphases *j, rank_a *ra, char keys[][64], int nkeys, int align_mode)
{
	size_t nr = j->nranks;
	size_t *cnt = calloc(nr * (size_t)(nkeys ? nkeys : 1), sizeof *cnt);
	if (!cnt)
		return -ENOMEM;
	for (size_t r = 0; r < nr; r++)
		for (size_t i = 0; i < ra[r].n; i++)
			cnt[r * (size_t)nkeys + (size_t)ra[r].v[i].key]++;
	size_t total = 0;
	size_t *use = calloc((size_t)(nkeys ? nkeys : 1), sizeof *use);
	if (!use) {
		free(cnt);
		return -ENOMEM;
	}
	for (int k = 0; k < nkeys; k++) {
		size_t lo = SIZE_MAX, hi = 0, rlo = 0;
		for (size_t r = 0; r < nr; r++) {
			size_t c = cnt[r * (size_t)nkeys + (size_t)k];
			if (c < lo)
				lo = c, rlo = r;
			if (c > hi)
				hi = c;
		}
		use[k] = lo;
		total += lo;
		if (lo != hi)
			for (size_t r = 0; r < nr; r++) {
				size_t c = cnt[r * (size_t)nkeys + (size_t)k];
				if (c != hi)
					warn(j, "%s: rank %lld has %zu, others up to %zu: instances %zu "
					     "and later are not matched%s", keys[k],
					     (long long)j->ranks[r].rank, c, hi, c + 1,
					     r == rlo ? " (the fewest)" : "");
			}
	}
	j->coll = calloc(total ? total : 1, sizeof *j->coll);
	double *cells = j->cells = malloc((total ? total : 1) * nr * 4 * sizeof *cells);
	size_t *seen = calloc((size_t)(nkeys ? nkeys : 1) * nr, sizeof *seen);
	int rc = 0;
	if (!j->coll || !cells || !seen) {
		rc = -ENOMEM;
		goto out;
	}
	/* instances by key (in the order the keys were met), then index */
	size_t *first = calloc((size_t)(nkeys ? nkeys : 1), sizeof *first);
	if (!first) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < (size_t)nkeys; k++)
		first[k] = j->ncoll, j->ncoll += use[k];
	for (size_t c = 0; c < total; c++) {
		cs_job_coll *x = &j->coll[c];
		x->start = cells + c * nr * 4;
		x->end = x->start + nr;
		x->wait = x->end + nr;
		x->exposed = x->wait + nr;
	}
	/* instance times count from the job's first A range (doubles keep
	 * every digit) */
	int64_t origin = INT64_MAX;
	for (size_t r = 0; r < nr; r++)
		if (ra[r].n && ra[r].v[0].t0 < origin)
			origin = ra[r].v[0].t0;
	j->origin = origin == INT64_MAX ? 0 : origin;
	for (size_t r = 0; r < nr; r++) {
		const cs_overlap *ov = &j->ranks[r].ov;
		for (size_t i = 0; i < ra[r].n; i++) {
			int k = ra[r].v[i].key;
			size_t idx = seen[(size_t)k * nr + r]++;
			if (idx >= use[k])
				continue;
			cs_job_coll *x = &j->coll[first[k] + idx];
			snprintf(x->name, sizeof x->name, "%s", keys[k]);
			x->index = idx;
			x->start[r] = (double)(ra[r].v[i].t0 - j->origin);
			x->end[r] = (double)(ra[r].v[i].t1 - j->origin);
			x->exposed[r] = cs_overlap_time_in(ov, (double)(ra[r].v[i].t0 - ov->origin),
							   (double)(ra[r].v[i].t1 - ov->origin), CS_OV_A);
		}
	}
	free(first);
	if (align_mode == CS_JOB_ALIGN_COLLECTIVES && total)
		align(j);
	for (size_t r = 0; r < nr; r++)
		for (size_t c = 0; c < total; c++) {
			j->coll[c].start[r] -= (double)j->ranks[r].offset_ns;
			j->coll[c].end[r] -= (double)j->ranks[r].offset_ns;
		}
	for (size_t c = 0; c < total; c++) {
		cs_job_coll *x = &j->coll[c];
		size_t last = 0;
		double s0 = x->start[0], e0 = x->end[0], e1 = x->end[0];
		for (size_t r = 1; r < nr; r++) {
			if (x->start[r] > x->start[last])
				last = r;
			if (x->start[r] < s0)
				s0 = x->start[r];
			if (x->end[r] < e0)
				e0 = x->end[r];
			if (x->end[r] > e1)
				e1 = x->end[r];
		}
		x->straggler = last;
		x->start_skew = x->start[last] - s0;
		x->end_skew = e1 - e0;
		j->ranks[last].last++;
		for (size_t r = 0; r < nr; r++) {
			x->wait[r] = x->start[last] - x->start[r];
			j->ranks[r].wait += x->wait[r];
			j->ranks[r].exposed += x->exposed[r];
		}
	}
out:
	free(seen);
	free(use);
	free(cnt);
	return rc;
}

int cs_jobphases_compute(cs_store *s, const char *job, const char *a, const char *b,
			 const char *metrics, int align_mode, cs_jobphases *j, char *err,
			 size_t errlen)
{
	memset(j, 0, sizeof *j);
	err[0] = '\0';
	snprintf(j->job, sizeof j->job, "%s", job);
	if (!a || !*a || !b || !*b) {
		snprintf(err, errlen, "give both A and B: [KIND:]GLOB over range names (e.g. "
			 "'kernel:nccl*' and '*gemm*')");
		return -EINVAL;
	}
	int rc = find_ranks(s, job, j, err, errlen);
	rank_a *ra = rc ? NULL : calloc(j->nranks, sizeof *ra);
	classes c = {.aspec = a};
	c.aglob = cs_overlap_spec(a, c.akind, sizeof c.akind);
	c.bglob = cs_overlap_spec(b, c.bkind, sizeof c.bkind);
	c.keys = rc ? NULL : calloc(MAX_KEYS, sizeof *c.keys);
	if (rc == 0 && (!ra || !c.keys))
		rc = -ENOMEM;
	for (size_t r = 0; rc == 0 && r < j->nranks; r++) {
		cs_job_rankres *x = &j->ranks[r];
		rank_a rb = {NULL, 0};
		if ((rc = read_rank(s, x, &c, &ra[r], &rb, err, errlen)) < 0) {
			free(rb.v);
			break;
		}
		x->ncoll = ra[r].n;
		/* A's ranges on its device (and those of none) and B's, as
		 * overlap.c would read them */
		int64_t (*ia)[2] = NULL, (*ib)[2] = NULL;
		cs_overlap_given g = {NULL, 0, NULL, 0};
		if (on_device(&ra[r], x->device, &ia, &g.na) || on_device(&rb, x->device, &ib, &g.nb))
			rc = -ENOMEM;
		free(rb.v);
		if (rc == 0) {
			char spec[32], why[1200];
			snprintf(spec, sizeof spec, "%lld", (long long)x->run);
			g.a = (const int64_t(*)[2])ia;
			g.b = (const int64_t(*)[2])ib;
			rc = cs_overlap_compute_given(s, spec, a, b, metrics, x->device, &g, &x->ov, why,
						      sizeof why);
			if (rc < 0)
				snprintf(err, errlen, "rank %lld (run %lld '%s'): %s", (long long)x->rank,
					 (long long)x->run, x->name, why);
		}
		free(ia);
		free(ib);
		if (rc == 0 && ra[r].n)
			qsort(ra[r].v, ra[r].n, sizeof *ra[r].v, cmp_arange);
	}
	char (*keys)[64] = c.keys;
	int nkeys = c.nkeys;
	if (rc == 0)
		rc = match(j, ra, keys, nkeys, align_mode);
	for (size_t r = 0; ra && r < j->nranks; r++)
		free(ra[r].v);
	free(ra);
	free(keys);
	cs_strmap_free(&c.names);
	free(c.v);
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	if (rc)
		cs_jobphases_free(j);
	return rc;
}

void cs_jobphases_free(cs_jobphases *j)
{
	for (size_t r = 0; j->ranks && r < j->nranks; r++)
		cs_overlap_free(&j->ranks[r].ov);
	free(j->ranks);
	free(j->cells);
	free(j->coll);
	free(j->warnings);
	memset(j, 0, sizeof *j);
}
