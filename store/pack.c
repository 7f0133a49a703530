/*
 * pack.c - best-fit ordering of chunk rows against a model of SQLite's last
 * leaf page; see pack.h. Sizes follow the SQLite file format
 * (https://www.sqlite.org/fileformat2.html: record format, b-tree cells,
 * overflow pages).
 */
#include "pack.h"

#include <math.h>
#include <stdlib.h>

/* Page header of a leaf page, and a margin for what the model cannot see
 * (a freeblock, a rounding): both leave the model a little pessimistic. */
#define LEAF_HEADER 8
#define MARGIN 16

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v > 0x7f && n < 9) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Bytes of an integer's value in a record (serial types 1-6, 8, 9). */
static size_t int_len(int64_t v)
{
	if (v == 0 || v == 1)
		return 0;
	if (v >= -128 && v <= 127)
		return 1;
	if (v >= -32768 && v <= 32767)
		return 2;
	if (v >= -8388608 && v <= 8388607)
		return 3;
	if (v >= -2147483648LL && v <= 2147483647LL)
		return 4;
	if (v >= -140737488355328LL && v <= 140737488355327LL)
		return 6;
	return 8;
}

size_t cs_pack_record_len(const int64_t *ints, int nints, const double *reals, int nreals,
			  size_t blob_len)
{
	size_t types = 1, data = blob_len; /* the NULL key column: type 0 */
	for (int i = 0; i < nints; i++) {
		types++;
		data += int_len(ints[i]);
	}
	for (int i = 0; i < nreals; i++) {
		double r = reals[i];
		types++;
		/* REAL affinity stores an integral value within 2^47 as an
		 * integer; NaN is stored as NULL */
		if (r != r)
			continue;
		if (r == floor(r) && fabs(r) < 140737488355328.0)
			data += int_len((int64_t)r);
		else
			data += 8;
	}
	types += varint_len(12 + 2 * (uint64_t)blob_len);
	size_t header = types + 1;
	if (varint_len(header) > 1)
		header += varint_len(header + 1) - 1;
	return header + data;
}

uint32_t cs_pack_cost(size_t payload, int64_t rowid, uint32_t page_size)
{
	size_t u = page_size;
	size_t max_local = u - 35, min_local = (u - 12) * 32 / 255 - 23, local = payload, extra = 0;
	if (payload > max_local) {
		size_t k = min_local + (payload - min_local) % (u - 4);
		local = k <= max_local ? k : min_local;
		extra = 4; /* the first overflow page's number */
	}
	return (uint32_t)(varint_len(payload) + varint_len((uint64_t)rowid) + local + extra + 2);
}

typedef struct item {
	uint32_t cost, index;
} item;

static int by_cost_desc(const void *a, const void *b)
{
	const item *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost < y->cost ? 1 : -1;
	return (x->index > y->index) - (x->index < y->index);
}

void cs_pack_order(cs_pack *p, uint32_t page_size, const uint32_t *cost, uint32_t n,
		   uint32_t *order)
{
	int64_t cap = (int64_t)page_size - LEAF_HEADER - MARGIN;
	item *sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
	unsigned char *used = calloc(n ? n : 1, 1);
	if (!sorted || !used) {
		/* no memory to plan: the order they came in */
		for (uint32_t i = 0; i < n; i++)
			order[i] = i;
		free(sorted);
		free(used);
		p->free = 0;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		sorted[i] = (item){cost[i], i};
	qsort(sorted, n, sizeof *sorted, by_cost_desc);
	uint32_t first = 0; /* sorted[0..first) are all placed */
	for (uint32_t placed = 0; placed < n; placed++) {
		/* the largest unplaced row that fits: costs descend, so the
		 * first unplaced one at or after the first that fits */
		uint32_t lo = first, hi = n;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if ((int64_t)sorted[mid].cost > p->free)
				lo = mid + 1;
			else
				hi = mid;
		}
		while (lo < n && used[lo])
			lo++;
		if (lo == n) {
			/* nothing fits: SQLite starts a new page with the next
			 * row, the largest left */
			p->free = cap;
			lo = first;
		}
		used[lo] = 1;
		order[placed] = sorted[lo].index;
		p->free -= sorted[lo].cost;
		if (p->free < 0) /* a row larger than a page's local space */
			p->free = 0;
		while (first < n && used[first])
			first++;
	}
	free(sorted);
	free(used);
}
