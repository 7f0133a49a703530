/*
 * krows.c - kernel-level rows (krows.h).
 */
#include "krows.h"
#include "strmap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct item {
	char *name, *group;
	const char *kind;
	int64_t dev;
	double dur;
} item;

typedef struct val {
	size_t item, order;
	int metric;
	double v, min, max;
} val;

typedef struct mname {
	char *name;
	char unit[16];
	int spread;
} mname;

struct cs_krows {
	item *items;
	size_t nitems, capitems;
	cs_strmap map; /* group and name -> item */
	val *vals;
	size_t nvals, capvals;
	mname *ms;
	size_t nms;
};

cs_krows *cs_krows_new(void)
{
	return calloc(1, sizeof(cs_krows));
}

void cs_krows_free(cs_krows *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nitems; i++) {
		free(k->items[i].name);
		free(k->items[i].group);
	}
	for (size_t i = 0; i < k->nms; i++)
		free(k->ms[i].name);
	cs_strmap_free(&k->map);
	free(k->items);
	free(k->vals);
	free(k->ms);
	free(k);
}

int cs_krows_item(cs_krows *k, const char *name, const char *group, const char *kind,
		  int64_t device, size_t *out)
{
	size_t gl = strlen(group), nl = strlen(name);
	char *key = malloc(gl + nl + 2); /* "GROUP\x1fNAME" */
	if (!key)
		return -ENOMEM;
	memcpy(key, group, gl);
	key[gl] = '\x1f';
	memcpy(key + gl + 1, name, nl + 1);
	size_t found = cs_strmap_get(&k->map, key);
	int rc = found == SIZE_MAX ? cs_strmap_put(&k->map, key, k->nitems) : 0;
	free(key);
	if (found != SIZE_MAX) {
		*out = found;
		return 0;
	}
	if (rc < 0)
		return rc;
	if (k->nitems == k->capitems) {
		size_t cap = k->capitems ? k->capitems * 2 : 64;
		item *g = realloc(k->items, cap * sizeof *g);
		if (!g)
			return -ENOMEM;
		k->items = g;
		k->capitems = cap;
	}
	item *it = &k->items[k->nitems];
	memset(it, 0, sizeof *it);
	if (!(it->name = strdup(name)) || !(it->group = strdup(group))) {
		free(it->name);
		return -ENOMEM;
	}
	it->kind = kind;
	it->dev = device;
	it->dur = 1000;
	*out = k->nitems++;
	return 0;
}

void cs_krows_duration(cs_krows *k, size_t it, double d)
{
	if (it < k->nitems && d >= 1 && d < 9e15)
		k->items[it].dur = d;
}

int cs_krows_metric(cs_krows *k, const char *name, const char *unit)
{
	for (size_t i = 0; i < k->nms; i++)
		if (!strcmp(k->ms[i].name, name)) {
			if (!k->ms[i].unit[0] && unit[0])
				snprintf(k->ms[i].unit, sizeof k->ms[i].unit, "%s", unit);
			return (int)i;
		}
	mname *g = realloc(k->ms, (k->nms + 1) * sizeof *g);
	if (!g)
		return -ENOMEM;
	k->ms = g;
	memset(&g[k->nms], 0, sizeof *g);
	if (!(g[k->nms].name = strdup(name)))
		return -ENOMEM;
	snprintf(g[k->nms].unit, sizeof g[k->nms].unit, "%s", unit);
	return (int)k->nms++;
}

int cs_krows_set(cs_krows *k, size_t it, int m, double v, double min, double max)
{
	if (k->nvals == k->capvals) {
		size_t cap = k->capvals ? k->capvals * 2 : 256;
		val *g = realloc(k->vals, cap * sizeof *g);
		if (!g)
			return -ENOMEM;
		k->vals = g;
		k->capvals = cap;
	}
	k->vals[k->nvals] = (val){it, k->nvals, m, v, min, max};
	k->nvals++;
	if (min != max && !(isnan(min) && isnan(max)))
		k->ms[m].spread = 1;
	return 0;
}

size_t cs_krows_count(const cs_krows *k)
{
	return k->nitems;
}

static int cmp_val(const void *x, const void *y)
{
	const val *a = x, *b = y;
	if (a->item != b->item)
		return a->item < b->item ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

int cs_krows_write(cs_krows *k, cs_simrun *run, int spread, cs_imp *im)
{
	int *id = malloc((k->nms ? k->nms : 1) * 3 * sizeof *id);
	if (!id)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < k->nms; i++) {
		const char *unit = k->ms[i].unit[0] ? k->ms[i].unit : NULL;
		id[3 * i] = cs_simrun_metric(run, k->ms[i].name, unit, NULL);
		id[3 * i + 1] = id[3 * i + 2] = -1;
		int both = spread && k->ms[i].spread;
		for (int s = 1; s < 3 && both; s++) {
			char name[512];
			snprintf(name, sizeof name, "%s.%s", k->ms[i].name, s == 1 ? "min" : "max");
			id[3 * i + s] = cs_simrun_metric(run, name, unit, NULL);
		}
		if (id[3 * i] < 0 || (both && (id[3 * i + 1] < 0 || id[3 * i + 2] < 0)))
			rc = cs_imp_fail(im, "%s", cs_simrun_errmsg(run));
	}
	if (k->nvals)
		qsort(k->vals, k->nvals, sizeof *k->vals, cmp_val);
	uint64_t at = 0;
	for (size_t i = 0, v = 0; rc == 0 && i < k->nitems; i++) {
		item *it = &k->items[i];
		uint64_t t1 = at + (uint64_t)it->dur;
		if (cs_simrun_row(run, at, t1) < 0) {
			rc = cs_imp_fail(im, "%s", cs_simrun_errmsg(run));
			break;
		}
		for (; v < k->nvals && k->vals[v].item == i; v++) {
			const val *x = &k->vals[v];
			cs_simrun_set(run, id[3 * x->metric], x->v);
			if (id[3 * x->metric + 1] >= 0) {
				cs_simrun_set(run, id[3 * x->metric + 1], x->min);
				cs_simrun_set(run, id[3 * x->metric + 2], x->max);
			}
		}
		cs_range r;
		cs_range_init(&r, it->kind, *it->name ? it->name : "(unnamed)", at, t1);
		r.device = it->dev;
		r.correlation_id = (int64_t)i;
		if (cs_simrun_range(run, &r) < 0)
			rc = cs_imp_fail(im, "%s", cs_simrun_errmsg(run));
		at = t1;
	}
	free(id);
	return rc;
}
