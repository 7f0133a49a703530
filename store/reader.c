/*
 * reader.c - raw and bucketed scans over chunks; see reader.h.
 */
#include "reader.h"
#include "strdist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* The wrappers make "an error path returns non-zero" visible to static
 * analysis, which cannot see into cs_store_fail_(). */
#define fail(s, rc, ...) (cs_store_fail_(s, rc, __VA_ARGS__), cs_nonzero_(rc))
#define fail_sql(s, src, what) cs_nonzero_(cs_store_fail_sql_(s, src, what))

/* Statements and buffers of one scan. With a few metrics, each has a
 * statement stepping through its chunks in sample order (a step is cheaper
 * than a seek); with more, chunks are looked up one at a time by (run,
 * metric, device, seq0) with a single statement, because every open cursor
 * costs every other one (SQLite walks its list of them): a cursor per
 * metric made reading thousands of metrics quadratic. */
typedef struct scan_ctx {
	cs_store *s;
	const cs_scan *q;
	sqlite3_stmt *tl;
	sqlite3_stmt *ck;   /* the look-up, or NULL when stepping */
	sqlite3_stmt **cks; /* stepping: one per metric */
	int *ck_state;      /* stepping: -1 not started, 0 done, 1 on a row */
	int64_t seq0;   /* the timeline being read */
	uint64_t to;    /* timelines starting at or after it end the scan */
	/* the chunk find_chunk found */
	int64_t ck_id;
	cs_agg ck_agg;
	uint64_t *t0, *t1;
	cs_timeline_view tv; /* the current timeline, opened */
	uint8_t tv_done[CS_CHUNK_MAX_BLOCKS]; /* its blocks decoded into t0/t1 */
	double *vals;   /* raw scans: m x slice values */
	uint32_t slice; /* samples decoded at once (a multiple of a block) */
	double *row;    /* m values of one sample */
	cs_values_view view;
	/* Chunk blobs are read in pieces (directory, then only the blocks
	 * wanted) unless most of a chunk is wanted. */
	sqlite3_blob *blob; /* open on the current chunk */
	int partial;        /* view.payload holds only the blocks fetched */
	size_t head_len;
	cs_buf head, payload;
} scan_ctx;

/* The timelines from the last one starting before the window (found by
 * time through timelines_t0, v4) on, in sample order; the scan stops at
 * the first one starting at or after the window's end. */
static const char tl_start_sql[] =
	"SELECT seq0 FROM timelines WHERE run = ?1 AND device = ?2 AND t0_first < ?3"
	" ORDER BY t0_first DESC, seq0 DESC LIMIT 1";
static const char tl_sql[] =
	"SELECT seq0, n, t0_first, t0_last, data FROM timelines"
	" WHERE run = ?1 AND device = ?2 AND seq0 >= ?3 AND t0_last >= ?4"
	" ORDER BY seq0";
/* The same by sample number (cs_scan.seq_to > 0). A timeline holds at
 * most CS_CHUNK_MAX samples, so the ones that reach seq_from start past
 * seq_from - CS_CHUNK_MAX: that bound lets the primary key seek to them,
 * so reading the newest samples of a long run (series.csv?since=) costs
 * what they are, not every timeline before them. */
_Static_assert(CS_CHUNK_MAX == 65536, "tl_seq_sql spells CS_CHUNK_MAX");
static const char tl_seq_sql[] =
	"SELECT seq0, n, t0_first, t0_last, data FROM timelines"
	" WHERE run = ?1 AND device = ?2 AND seq0 > ?3 - 65536 AND seq0 + n > ?3"
	" AND seq0 < ?4 ORDER BY seq0";
static const char ck_sql[] =
	"SELECT count, vmin, vmax, vsum, id, seq0 FROM chunks"
	" WHERE run = ?1 AND metric = ?2 AND device = ?3 AND seq0 = ?4";
static const char ck_step_sql[] =
	"SELECT count, vmin, vmax, vsum, id, seq0 FROM chunks"
	" WHERE run = ?1 AND metric = ?2 AND device = ?3 AND seq0 >= ?4 ORDER BY seq0";

/* Up to this many metrics a scan steps a statement per metric. */
#define STEP_METRICS 64

/* Raw scans decode at most this many values at once (m x slice). */
#define RAW_VALUES_BUDGET (1u << 21)

static void scan_close(scan_ctx *c)
{
	sqlite3_finalize(c->tl);
	sqlite3_finalize(c->ck);
	for (uint32_t k = 0; c->cks && k < c->q->m; k++)
		sqlite3_finalize(c->cks[k]);
	free(c->cks);
	free(c->ck_state);
	free(c->vals);
	free(c->t0);
	free(c->t1);
	free(c->row);
	sqlite3_blob_close(c->blob);
	cs_buf_free(&c->head);
	cs_buf_free(&c->payload);
}

static int bind_time(sqlite3_stmt *st, int i, uint64_t t)
{
	/* past the int64 range ("no end", or an extent ending at 2^63): a
	 * real, so that a t0 of INT64_MAX still compares below it */
	return t > INT64_MAX ? sqlite3_bind_double(st, i, (double)t)
			     : sqlite3_bind_int64(st, i, (int64_t)t);
}

/* The first timeline a time-bounded scan must read: the last one starting
 * before from (every earlier one ends before it), else the first. */
static int first_timeline(scan_ctx *c, int64_t *seq0)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(cs_store_db(c->s), tl_start_sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail_sql(c->s, rc, "reading timelines");
	sqlite3_bind_int64(st, 1, c->q->run);
	sqlite3_bind_int64(st, 2, c->q->device);
	bind_time(st, 3, c->q->from);
	rc = sqlite3_step(st);
	*seq0 = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail_sql(c->s, rc, "reading timelines");
}

static int scan_open(scan_ctx *c, cs_store *s, const cs_scan *q, int raw)
{
	memset(c, 0, sizeof *c);
	c->s = s;
	c->q = q;
	sqlite3 *db = cs_store_db(s);
	uint32_t m = q->m ? q->m : 1;
	c->t0 = malloc(CS_CHUNK_MAX * sizeof *c->t0);
	c->t1 = malloc(CS_CHUNK_MAX * sizeof *c->t1);
	c->row = malloc(m * sizeof *c->row);
	if (raw) {
		/* a multiple of every block size (CS_VALUE_BLOCK: 512; 256 and 128 before) */
		uint32_t slice = RAW_VALUES_BUDGET / m / CS_VALUE_BLOCK * CS_VALUE_BLOCK;
		c->slice = slice < CS_VALUE_BLOCK ? CS_VALUE_BLOCK
			   : slice > CS_CHUNK_MAX  ? CS_CHUNK_MAX
						   : slice;
		c->vals = malloc((size_t)m * c->slice * sizeof *c->vals);
	}
	if (!c->t0 || !c->t1 || !c->row || (raw && !c->vals))
		return fail(s, -ENOMEM, "out of memory");
	int by_seq = raw && q->seq_to > 0;
	int64_t start = 0;
	int rc = by_seq ? 0 : first_timeline(c, &start);
	if (rc)
		return rc;
	rc = sqlite3_prepare_v2(db, by_seq ? tl_seq_sql : tl_sql, -1, &c->tl, NULL);
	if (rc != SQLITE_OK)
		return fail_sql(s, rc, "reading timelines");
	sqlite3_bind_int64(c->tl, 1, q->run);
	sqlite3_bind_int64(c->tl, 2, q->device);
	if (by_seq) {
		bind_time(c->tl, 3, q->seq_from);
		bind_time(c->tl, 4, q->seq_to);
		c->to = UINT64_MAX;
	} else {
		sqlite3_bind_int64(c->tl, 3, start);
		bind_time(c->tl, 4, q->from);
		c->to = q->to;
	}
	if (q->m > STEP_METRICS) {
		rc = sqlite3_prepare_v2(db, ck_sql, -1, &c->ck, NULL);
		if (rc != SQLITE_OK)
			return fail_sql(s, rc, "reading chunks");
		sqlite3_bind_int64(c->ck, 1, q->run);
		sqlite3_bind_int64(c->ck, 3, q->device);
		return 0;
	}
	c->cks = calloc(m, sizeof *c->cks);
	c->ck_state = malloc(m * sizeof *c->ck_state);
	if (!c->cks || !c->ck_state)
		return fail(s, -ENOMEM, "out of memory");
	for (uint32_t k = 0; k < q->m; k++) {
		rc = sqlite3_prepare_v2(db, ck_step_sql, -1, &c->cks[k], NULL);
		if (rc != SQLITE_OK)
			return fail_sql(s, rc, "reading chunks");
		sqlite3_bind_int64(c->cks[k], 1, q->run);
		sqlite3_bind_int64(c->cks[k], 2, q->metrics[k]);
		sqlite3_bind_int64(c->cks[k], 3, q->device);
		c->ck_state[k] = -1;
	}
	return 0;
}

/* Positions metric k's stepping statement on its first chunk at or after
 * the current timeline: 1 = on a row, 0 = none left, or an error. */
static int step_to(scan_ctx *c, uint32_t k)
{
	sqlite3_stmt *st = c->cks[k];
	int *state = &c->ck_state[k];
	if (*state == -1)
		sqlite3_bind_int64(st, 4, c->seq0);
	while (*state == -1 || (*state == 1 && sqlite3_column_int64(st, 5) < c->seq0)) {
		int rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return fail_sql(c->s, rc, "reading chunks");
		*state = rc == SQLITE_ROW;
	}
	return *state;
}

/* Looks up metric k's chunk of the current timeline: 1 found (c->ck_*),
 * 0 none (all its values absent), or an error. */
static int find_chunk(scan_ctx *c, uint32_t k)
{
	sqlite3_stmt *st = c->ck;
	int rc;
	if (c->cks) {
		st = c->cks[k];
		rc = step_to(c, k);
		if (rc <= 0)
			return rc;
		if (sqlite3_column_int64(st, 5) != c->seq0)
			return 0;
	} else {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 2, c->q->metrics[k]);
		sqlite3_bind_int64(st, 4, c->seq0);
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			return 0;
		if (rc != SQLITE_ROW)
			return fail_sql(c->s, rc, "reading chunks");
	}
	c->ck_agg = (cs_agg){(uint64_t)sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1),
			     sqlite3_column_double(st, 2), sqlite3_column_double(st, 3)};
	c->ck_id = sqlite3_column_int64(st, 4);
	return 1;
}

static int corrupt(scan_ctx *c, uint32_t k, int rc, const char *err)
{
	return fail(c->s, rc, "run %lld metric %u seq %lld: corrupt chunk: %s",
		    (long long)c->q->run, c->q->metrics[k], (long long)c->seq0, err);
}

/* Reads len bytes at off of the open chunk blob into dst. */
static int blob_read(scan_ctx *c, uint32_t k, void *dst, size_t len, size_t off)
{
	int rc = sqlite3_blob_read(c->blob, dst, (int)len, (int)off);
	return rc == SQLITE_OK ? 0 : corrupt(c, k, -EBADMSG, sqlite3_errstr(rc));
}

/* Opens the chunk find_chunk found (n samples, as its timeline): reads its
 * header and directory, and all of it when it is compressed or when whole
 * is set (the caller wants most of its blocks). */
static int open_values(scan_ctx *c, uint32_t k, uint32_t n, int whole)
{
	char err[128] = "";
	int rc = c->blob ? sqlite3_blob_reopen(c->blob, c->ck_id)
			 : sqlite3_blob_open(cs_store_db(c->s), "main", "chunks", "data", c->ck_id,
					     0, &c->blob);
	if (rc != SQLITE_OK)
		return corrupt(c, k, -EIO, sqlite3_errmsg(cs_store_db(c->s)));
	size_t len = (size_t)sqlite3_blob_bytes(c->blob);
	uint8_t hdr[CS_VALUES_HEADER_LEN];
	if (len < sizeof hdr)
		return corrupt(c, k, -EBADMSG, "chunk shorter than its header");
	rc = blob_read(c, k, hdr, sizeof hdr, 0);
	if (rc)
		return rc;
	size_t head_len = cs_values_head_len(hdr);
	if (!head_len || head_len > len)
		return corrupt(c, k, -EBADMSG, "chunk header out of range");
	cs_buf_reset(&c->head);
	if (cs_buf_reserve(&c->head, len))
		return fail(c->s, -ENOMEM, "out of memory");
	whole = whole || hdr[1] != 0; /* compressed (or corrupt): read it all */
	rc = blob_read(c, k, c->head.data, whole ? len : head_len, 0);
	if (rc)
		return rc;
	c->head_len = head_len;
	c->partial = !whole;
	if (whole)
		rc = cs_values_open(cs_store_codec_(c->s), &c->view, c->head.data, len, err,
				    sizeof err);
	else
		rc = cs_values_open_dir(&c->view, c->head.data, head_len, len, err, sizeof err);
	if (!rc && c->view.n != n)
		snprintf(err, sizeof err, "chunk and timeline sample counts differ"),
			rc = -EBADMSG;
	if (rc)
		return corrupt(c, k, rc, err[0] ? err : "unreadable");
	if (whole)
		return 0;
	cs_buf_reset(&c->payload);
	if (cs_buf_reserve(&c->payload, c->view.payload_len + 1))
		return fail(c->s, -ENOMEM, "out of memory");
	c->view.payload = c->payload.data;
	return 0;
}

/* Makes block b of the open chunk decodable (fetching it when partial). */
static int fetch_block(scan_ctx *c, uint32_t k, uint32_t b)
{
	if (!c->partial)
		return 0;
	size_t off = c->view.offset[b], len = c->view.offset[b + 1] - off;
	char err[128];
	int rc = len ? blob_read(c, k, c->payload.data + off, len, c->head_len + off) : 0;
	if (!rc && cs_values_check_block(&c->view, b, err, sizeof err))
		rc = corrupt(c, k, -EBADMSG, err);
	return rc;
}

/* First index with t0 >= t in the decoded timeline. */
static uint32_t lower_bound(const uint64_t *t0, uint32_t n, uint64_t t)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t0[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int timeline_failed(scan_ctx *c, int rc, const char *err)
{
	return fail(c->s, rc, "run %lld device %u seq %lld: corrupt timeline: %s",
		    (long long)c->q->run, c->q->device, (long long)c->seq0, err);
}

/* Opens the current timeline; its blocks are decoded as they are needed
 * (need_block), each knowing its first and last t0 before. */
static int open_timeline(scan_ctx *c, uint32_t n)
{
	char err[128];
	const void *blob = sqlite3_column_blob(c->tl, 4);
	int len = sqlite3_column_bytes(c->tl, 4);
	int rc = cs_timeline_open(cs_store_codec_(c->s), &c->tv, blob, (size_t)len, n, c->t0, c->t1,
				  err, sizeof err);
	if (rc)
		return timeline_failed(c, rc, err);
	memset(c->tv_done, 0, c->tv.nblocks);
	return 0;
}

static int need_block(scan_ctx *c, uint32_t b)
{
	if (c->tv_done[b])
		return 0;
	char err[128];
	int rc = cs_timeline_block(&c->tv, b, err, sizeof err);
	if (rc)
		return timeline_failed(c, rc, err);
	c->tv_done[b] = 1;
	return 0;
}

/* The samples [*i0, *i1) of the open timeline whose t0 is in [from, to),
 * decoding only the blocks that hold them or border them. */
static int time_range(scan_ctx *c, uint64_t from, uint64_t to, uint32_t *i0, uint32_t *i1)
{
	const cs_timeline_view *tv = &c->tv;
	uint32_t b = 0, nb = tv->nblocks;
	while (b < nb && tv->last[b] < from)
		b++;
	*i0 = *i1 = b < nb ? b * CS_BLOCK_SAMPLES : tv->n;
	for (; b < nb && tv->first[b] < to; b++) {
		int rc = need_block(c, b);
		if (rc)
			return rc;
		uint32_t j0 = b * CS_BLOCK_SAMPLES;
		uint32_t j1 = j0 + CS_BLOCK_SAMPLES < tv->n ? j0 + CS_BLOCK_SAMPLES : tv->n;
		if (*i0 == j0)
			*i0 = j0 + lower_bound(c->t0 + j0, j1 - j0, from);
		*i1 = j0 + lower_bound(c->t0 + j0, j1 - j0, to);
	}
	return 0;
}

/* Decodes the blocks of samples [i0, i1) of the open timeline. */
static int need_samples(scan_ctx *c, uint32_t i0, uint32_t i1)
{
	int rc = 0;
	for (uint32_t b = i0 / CS_BLOCK_SAMPLES; !rc && b * CS_BLOCK_SAMPLES < i1; b++)
		rc = need_block(c, b);
	return rc;
}

/* Reads the next timeline row: 1 = row, 0 = done, < 0 = error. */
static int next_timeline(scan_ctx *c, int64_t *seq0, uint32_t *n)
{
	int rc = sqlite3_step(c->tl);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return fail_sql(c->s, rc, "reading timelines");
	if ((uint64_t)sqlite3_column_int64(c->tl, 2) >= c->to)
		return 0; /* starts past the window: so do all after it */
	*seq0 = c->seq0 = sqlite3_column_int64(c->tl, 0);
	int64_t nn = sqlite3_column_int64(c->tl, 1);
	if (nn <= 0 || nn > (int64_t)CS_CHUNK_MAX)
		return fail(c->s, -EBADMSG, "run %lld: timeline with %lld samples",
			    (long long)c->q->run, (long long)nn);
	*n = (uint32_t)nn;
	return 1;
}

struct cs_raw_iter {
	scan_ctx c;
	cs_scan q;
	uint32_t *metrics;
	int done;
};

cs_raw_iter *cs_raw_open(cs_store *s, const cs_scan *q)
{
	cs_raw_iter *it = calloc(1, sizeof *it);
	if (!it) {
		fail(s, -ENOMEM, "out of memory");
		return NULL;
	}
	it->q = *q;
	it->metrics = malloc((q->m ? q->m : 1) * sizeof *it->metrics);
	if (it->metrics && q->m)
		memcpy(it->metrics, q->metrics, q->m * sizeof *it->metrics);
	it->q.metrics = it->metrics;
	if (!it->metrics || scan_open(&it->c, s, &it->q, 1)) {
		if (!it->metrics)
			fail(s, -ENOMEM, "out of memory");
		cs_raw_close(it);
		return NULL;
	}
	return it;
}

/* Decodes samples [s0, s1) of the current timeline (s0 a block boundary)
 * for every metric into c->vals, metric k at k * slice. */
static int decode_slice(scan_ctx *c, uint32_t n, uint32_t s0, uint32_t s1)
{
	for (uint32_t k = 0; k < c->q->m; k++) {
		double *v = c->vals + (size_t)k * c->slice;
		int rc = find_chunk(c, k);
		if (rc < 0)
			return rc;
		if (!rc) {
			for (uint32_t i = s0; i < s1; i++)
				v[i - s0] = NAN;
			continue;
		}
		rc = open_values(c, k, n, 2 * (s1 - s0) >= n);
		if (rc)
			return rc;
		uint32_t bs = c->view.bs; /* s0 is a multiple of it */
		for (uint32_t b = s0 / bs; !rc && b * bs < s1; b++) {
			rc = fetch_block(c, k, b);
			if (!rc)
				cs_values_block_decode(&c->view, b, v + (size_t)b * bs - s0);
		}
		if (rc)
			return rc;
	}
	return 0;
}

int cs_raw_next(cs_raw_iter *it, cs_row_fn fn, void *ctx)
{
	scan_ctx *c = &it->c;
	const cs_scan *q = &it->q;
	int64_t seq0 = 0;
	uint32_t n = 0;
	if (it->done)
		return 0;
	int rc = next_timeline(c, &seq0, &n);
	if (rc != 1) {
		it->done = 1;
		return rc;
	}
	rc = open_timeline(c, n);
	uint32_t i0 = 0, i1 = 0;
	if (!rc && q->seq_to > 0) {
		/* by sample number: [seq_from, seq_to) of this timeline */
		uint64_t s0 = (uint64_t)seq0;
		i0 = q->seq_from > s0 ? (uint32_t)(q->seq_from - s0 < n ? q->seq_from - s0 : n) : 0;
		i1 = q->seq_to - s0 < n ? (uint32_t)(q->seq_to - s0) : n;
		if (i1 < i0)
			i1 = i0;
		rc = need_samples(c, i0, i1);
	} else if (!rc) {
		rc = time_range(c, q->from, q->to, &i0, &i1);
	}
	/* a slice of the samples at a time, so m x slice values stay bounded */
	for (uint32_t s0 = i0 - i0 % CS_VALUE_BLOCK; !rc && s0 < i1; s0 += c->slice) {
		uint32_t s1 = s0 + c->slice < i1 ? s0 + c->slice : i1;
		rc = decode_slice(c, n, s0, s1);
		for (uint32_t i = s0 > i0 ? s0 : i0; !rc && i < s1; i++) {
			for (uint32_t k = 0; k < q->m; k++)
				c->row[k] = c->vals[(size_t)k * c->slice + (i - s0)];
			rc = fn(ctx, (uint64_t)seq0 + i, c->t0[i], c->t1[i], c->row);
		}
	}
	if (rc) {
		it->done = 1;
		return rc > 0 ? -ECANCELED : rc;
	}
	return 1;
}

void cs_raw_close(cs_raw_iter *it)
{
	if (!it)
		return;
	if (it->metrics)
		scan_close(&it->c);
	free(it->metrics);
	free(it);
}

int cs_read_raw(cs_store *s, const cs_scan *q, cs_row_fn fn, void *ctx)
{
	cs_raw_iter *it = cs_raw_open(s, q);
	if (!it)
		return -ENOMEM;
	int rc;
	while ((rc = cs_raw_next(it, fn, ctx)) == 1)
		;
	cs_raw_close(it);
	return rc;
}

/* Bucket arithmetic over [from, from + width) in n buckets, exact in
 * 128 bits. */
/* n buckets over [from, from + width); the part computed is buckets
 * [b0, ...) over times [lo, hi), its aggregates indexed from b0. */
typedef struct bucketing {
	uint64_t from, width;
	uint32_t n;
	uint32_t b0;
	uint64_t lo, hi;
} bucketing;

static uint64_t bucket_start(const bucketing *bk, uint64_t i)
{
	__extension__ unsigned __int128 x =
		(unsigned __int128)i * bk->width + bk->n - 1;
	return bk->from + (uint64_t)(x / bk->n);
}

static uint32_t bucket_of(const bucketing *bk, uint64_t t)
{
	__extension__ unsigned __int128 x =
		(unsigned __int128)(t - bk->from) * bk->n;
	return (uint32_t)(x / bk->width);
}

uint32_t cs_read_bucket_of(uint64_t from, uint64_t to, uint32_t nbuckets, uint64_t t)
{
	bucketing bk = {from, to - from, nbuckets, 0, 0, 0};
	return bucket_of(&bk, t);
}

uint64_t cs_read_bucket_start(uint64_t from, uint64_t to, uint32_t nbuckets, uint32_t i)
{
	bucketing bk = {from, to - from, nbuckets, 0, 0, 0};
	return i >= nbuckets ? to : bucket_start(&bk, i);
}

/* Folds v[0..n) (NaN = absent) into *a with one tight loop. */
static void add_values(cs_agg *a, const double *v, uint32_t n)
{
	cs_agg seg = {0, INFINITY, -INFINITY, 0};
	for (uint32_t i = 0; i < n; i++) {
		double x = v[i];
		if (x != x)
			continue;
		seg.count++;
		seg.sum += x;
		seg.min = x < seg.min ? x : seg.min;
		seg.max = x > seg.max ? x : seg.max;
	}
	cs_agg_merge(a, &seg);
}

/* Folds samples [i0, i1) of value block b, which starts at sample j0 of its
 * chunk, into *a: from its packed integers where it has them, else from
 * vals, the block decoded. */
static void add_range(const cs_values_view *view, uint32_t b, uint32_t j0, const double *vals,
		      uint32_t i0, uint32_t i1, cs_agg *a)
{
	cs_agg seg;
	if (cs_values_block_agg_range(view, b, i0 - j0, i1 - j0, &seg))
		cs_agg_merge(a, &seg);
	else
		add_values(a, vals + (i0 - j0), i1 - i0);
}

/* Adds samples [i0, i1) of value block b (t0 sorted) to their buckets,
 * one bucket-sized segment at a time. */
static void add_samples(const bucketing *bk, cs_agg *aggs, uint32_t m, uint32_t k,
			const uint64_t *t0, const cs_values_view *view, uint32_t b, uint32_t j0,
			const double *vals, uint32_t i0, uint32_t i1)
{
	uint32_t i = i0;
	while (i < i1) {
		uint32_t bu = bucket_of(bk, t0[i]);
		uint64_t next = bucket_start(bk, (uint64_t)bu + 1);
		uint32_t j = i + 1;
		while (j < i1 && t0[j] < next)
			j++;
		add_range(view, b, j0, vals, i, j, &aggs[(size_t)(bu - bk->b0) * m + k]);
		i = j;
	}
}

static int in_one_bucket(const bucketing *bk, uint64_t a, uint64_t b)
{
	uint64_t end = bk->from + bk->width;
	return a >= bk->from && b < end && bucket_of(bk, a) == bucket_of(bk, b);
}

/* The aggregate of integers v[0..n) (n >= 1, each within 2^53), its sum
 * exact before its conversion to double. */
static void int_agg(const double *v, uint32_t n, cs_agg *a)
{
	double mn = v[0], mx = v[0];
	int64_t sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
		sum += (int64_t)v[i];
	}
	*a = (cs_agg){n, mn, mx, (double)sum};
}

/* Value block b of metric k, samples [j0, j1] of its chunk (first and last
 * its first and last t0), when it holds integers with every sample present
 * and one bucket boundary crosses it inside the window: the shorter side
 * of the boundary is added up value by value, and the longer one is the
 * block's aggregate less it when that settles its min and max (the shorter
 * side holds neither extreme; both sums are exact integers within 2^53).
 * A packed block is read where it lies, the longer side too when it must
 * be; a coded one (decoded in order) only when its shorter side comes
 * first, into vals. Returns 1 with the values it read in *scanned, 0 for a
 * block it does not fit (the caller reads it whole), or an error. */
static int split_block(scan_ctx *c, const bucketing *bk, cs_agg *aggs, uint32_t k, uint32_t b,
		       uint32_t j0, uint32_t j1, uint64_t first, uint64_t last, double *vals,
		       uint32_t *scanned)
{
	cs_agg all;
	cs_values_block_agg(&c->view, b, &all);
	if (first < bk->lo || last >= bk->hi || first < bk->from || last - bk->from >= bk->width ||
	    !(fabs(all.sum) <= 9007199254740992.0))
		return 0;
	uint32_t b0 = bucket_of(bk, first);
	if (bucket_of(bk, last) != b0 + 1)
		return 0;
	uint64_t edge = bucket_start(bk, (uint64_t)b0 + 1);
	/* the first sample at or past the edge, from the timeline block that
	 * holds it (decoded only when the edge falls inside it) */
	uint32_t at = j1;
	for (uint32_t tb = j0 / CS_BLOCK_SAMPLES; tb <= j1 / CS_BLOCK_SAMPLES; tb++) {
		if (c->tv.last[tb] < edge)
			continue;
		uint32_t a = tb * CS_BLOCK_SAMPLES > j0 ? tb * CS_BLOCK_SAMPLES : j0;
		uint32_t z = tb * CS_BLOCK_SAMPLES + CS_BLOCK_SAMPLES - 1 < j1
				     ? tb * CS_BLOCK_SAMPLES + CS_BLOCK_SAMPLES - 1
				     : j1;
		if (c->tv.first[tb] >= edge) {
			at = a;
			break;
		}
		int rc = need_block(c, tb);
		if (rc)
			return rc;
		at = lower_bound(c->t0 + a, z - a + 1, edge) + a;
		break;
	}
	uint32_t n = j1 - j0 + 1, left = at - j0; /* 1 <= left < n */
	int short_left = left <= n - left;
	uint32_t s0 = short_left ? 0 : left, s1 = short_left ? left : n;
	cs_agg near, far;
	if (cs_values_block_packed(&c->view, b)) {
		cs_values_block_agg_range(&c->view, b, s0, s1, &near);
	} else {
		if (!short_left || !cs_values_block_decode_head(&c->view, b, left, vals))
			return 0;
		int_agg(vals, left, &near);
	}
	*scanned = s1 - s0;
	if (near.min > all.min && near.max < all.max && fabs(near.sum) <= 9007199254740992.0) {
		far = (cs_agg){all.count - near.count, all.min, all.max, all.sum - near.sum};
	} else if (!cs_values_block_packed(&c->view, b)) {
		return 0;
	} else {
		uint32_t l0 = short_left ? left : 0, l1 = short_left ? n : left;
		cs_values_block_agg_range(&c->view, b, l0, l1, &far);
		*scanned += l1 - l0;
	}
	uint32_t m = c->q->m;
	cs_agg_merge(&aggs[(size_t)(b0 + !short_left - bk->b0) * m + k], &near);
	cs_agg_merge(&aggs[(size_t)(b0 + short_left - bk->b0) * m + k], &far);
	return 1;
}

/* Aggregates one metric's chunk, its timeline open. */
static int bucket_chunk(scan_ctx *c, const bucketing *bk, cs_agg *aggs,
			uint32_t k, cs_read_stats *st)
{
	const uint64_t *t0 = c->t0;
	uint64_t end = bk->hi;
	uint32_t m = c->q->m, bs = c->view.bs;
	double vals[CS_VALUE_BLOCK];
	for (uint32_t b = 0; b < c->view.nblocks; b++) {
		uint32_t j0 = b * bs;
		uint32_t j1 = j0 + cs_values_block_len(&c->view, b) - 1;
		/* the block's first and last t0, from the timeline's blocks
		 * (CS_BLOCK_SAMPLES each; a value block spans one or two) */
		uint64_t first = c->tv.first[j0 / CS_BLOCK_SAMPLES];
		uint64_t last = c->tv.last[j1 / CS_BLOCK_SAMPLES];
		if (last < bk->lo || first >= end)
			continue;
		if (in_one_bucket(bk, first, last)) {
			cs_agg a;
			cs_values_block_agg(&c->view, b, &a);
			cs_agg_merge(&aggs[(size_t)(bucket_of(bk, first) - bk->b0) * m + k], &a);
			st->blocks_whole++;
			continue;
		}
		int rc = fetch_block(c, k, b);
		if (rc)
			return rc;
		uint32_t scanned = 0;
		rc = split_block(c, bk, aggs, k, b, j0, j1, first, last, vals, &scanned);
		if (rc < 0)
			return rc;
		st->blocks_decoded++;
		if (rc) {
			st->values_decoded += scanned;
			continue;
		}
		/* packed integers, every sample present, are added up where
		 * they lie; any other block is decoded first */
		if (!cs_values_block_packed(&c->view, b))
			cs_values_block_decode(&c->view, b, vals);
		st->values_decoded += j1 - j0 + 1;
		/* each timeline block under it: one in a single bucket needs
		 * no times, only one a boundary crosses is decoded */
		for (uint32_t tb = j0 / CS_BLOCK_SAMPLES; tb <= j1 / CS_BLOCK_SAMPLES; tb++) {
			uint32_t a = tb * CS_BLOCK_SAMPLES, z = a + CS_BLOCK_SAMPLES - 1;
			a = a > j0 ? a : j0;
			z = z < j1 ? z : j1;
			uint64_t f = c->tv.first[tb], l = c->tv.last[tb];
			if (l < bk->lo || f >= end)
				continue;
			if (in_one_bucket(bk, f, l)) {
				add_range(&c->view, b, j0, vals, a, z + 1,
					  &aggs[(size_t)(bucket_of(bk, f) - bk->b0) * m + k]);
				continue;
			}
			rc = need_block(c, tb);
			if (rc)
				return rc;
			uint32_t i0 = lower_bound(t0 + a, z - a + 1, bk->lo) + a;
			uint32_t i1 = lower_bound(t0 + a, z - a + 1, end) + a;
			add_samples(bk, aggs, m, k, t0, &c->view, b, j0, vals, i0, i1);
		}
	}
	return 0;
}

int cs_read_buckets(cs_store *s, const cs_scan *q, uint32_t nbuckets,
		    cs_bucket_fn fn, void *ctx, cs_read_stats *stats)
{
	return cs_read_buckets_part(s, q, nbuckets, 0, nbuckets, fn, ctx, stats);
}

int cs_read_buckets_part(cs_store *s, const cs_scan *q, uint32_t nbuckets, uint32_t b0,
			 uint32_t b1, cs_bucket_fn fn, void *ctx, cs_read_stats *stats)
{
	cs_read_stats local = {0};
	cs_read_stats *st = stats ? stats : &local;
	if (!nbuckets || q->to <= q->from || q->to == UINT64_MAX || b0 >= b1 || b1 > nbuckets)
		return fail(s, -EINVAL,
			    "bucketed read needs a finite window with to > from "
			    "and at least one bucket");
	bucketing bk = {q->from, q->to - q->from, nbuckets, b0, 0, 0};
	bk.lo = bucket_start(&bk, b0);
	bk.hi = b1 == nbuckets ? q->to : bucket_start(&bk, b1);
	uint32_t m = q->m, nb = b1 - b0;
	cs_agg *aggs = calloc((size_t)nb * (m ? m : 1), sizeof *aggs);
	if (!aggs)
		return fail(s, -ENOMEM, "out of memory for %u buckets", nb);
	cs_scan part = *q;
	part.from = bk.lo;
	part.to = bk.hi;
	scan_ctx c;
	int rc = scan_open(&c, s, &part, 0);
	int64_t seq0 = 0;
	uint32_t n = 0;
	while (!rc && (rc = next_timeline(&c, &seq0, &n)) == 1) {
		rc = 0;
		uint64_t tf = (uint64_t)sqlite3_column_int64(c.tl, 2);
		uint64_t tl = (uint64_t)sqlite3_column_int64(c.tl, 3);
		int one = in_one_bucket(&bk, tf, tl), decoded = 0;
		for (uint32_t k = 0; !rc && k < m; k++) {
			int found = find_chunk(&c, k);
			if (found <= 0) {
				rc = found;
				continue;
			}
			if (one) {
				/* the timeline overlaps [lo, hi): its one bucket is ours */
				uint32_t b = bucket_of(&bk, tf) - b0;
				cs_agg_merge(&aggs[(size_t)b * m + k], &c.ck_agg);
				st->chunks_whole++;
				continue;
			}
			if (!decoded) {
				rc = open_timeline(&c, n);
				st->timelines_decoded++;
				decoded = 1;
			}
			if (!rc)
				rc = open_values(&c, k, n, 0);
			if (!rc)
				rc = bucket_chunk(&c, &bk, aggs, k, st);
		}
	}
	for (uint32_t b = b0; !rc && b < b1; b++)
		rc = fn(ctx, b, bucket_start(&bk, b), bucket_start(&bk, (uint64_t)b + 1),
			aggs + (size_t)(b - b0) * m);
	scan_close(&c);
	free(aggs);
	return rc;
}

static int prepare1(cs_store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(cs_store_db(s), sql, -1, st, NULL);
	return rc == SQLITE_OK ? 0 : fail_sql(s, rc, "preparing a look-up");
}

int cs_read_metric_id(cs_store *s, int64_t run, const char *name, uint32_t *id)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare1(s, "SELECT id FROM metrics WHERE run = ?1 AND name = ?2", &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	int src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		*id = (uint32_t)sqlite3_column_int64(st, 0);
	} else if (src == SQLITE_DONE) {
		sqlite3_finalize(st);
		st = NULL;
		/* The closest name: one that ends in ".name" (a prefixed form
		 * of it), else the nearest spelling; else the first few. */
		char list[256] = "", near[256] = "";
		size_t best = 3 + strlen(name) / 8, nl = strlen(name), count = 0;
		if (!prepare1(s, "SELECT name FROM metrics WHERE run = ?1 ORDER BY id", &st)) {
			sqlite3_bind_int64(st, 1, run);
			while (sqlite3_step(st) == SQLITE_ROW) {
				const char *m = (const char *)sqlite3_column_text(st, 0);
				if (!m)
					continue;
				size_t ml = strlen(m), d;
				if (count++ < 8)
					snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
						 count > 1 ? ", " : "", m);
				if (ml > nl && m[ml - nl - 1] == '.' && !strcmp(m + ml - nl, name))
					d = 0;
				else
					d = cs_edit_distance(name, m);
				if (d < best && d < nl) {
					best = d;
					snprintf(near, sizeof near, "%s", m);
				}
			}
		}
		if (*near)
			rc = fail(s, -ENOENT, "run %lld has no metric '%s' (did you mean '%s'?)",
				  (long long)run, name, near);
		else
			rc = fail(s, -ENOENT, "run %lld has no metric '%s' (it has %zu: %s%s)",
				  (long long)run, name, count, *list ? list : "none",
				  count > 8 ? ", ..." : "");
	} else {
		rc = fail_sql(s, src, "looking up a metric");
	}
	sqlite3_finalize(st);
	return rc;
}

static int read_u32_list(cs_store *s, const char *sql, int64_t run,
			 uint32_t **out, uint32_t *count)
{
	sqlite3_stmt *st = NULL;
	uint32_t *v = NULL, n = 0, cap = 0;
	int rc = prepare1(s, sql, &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	int src;
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			uint32_t *nv = realloc(v, cap * sizeof *v);
			if (!nv) {
				rc = fail(s, -ENOMEM, "out of memory");
				goto out;
			}
			v = nv;
		}
		v[n++] = (uint32_t)sqlite3_column_int64(st, 0);
	}
	if (src != SQLITE_DONE)
		rc = fail_sql(s, src, "reading a list");
out:
	sqlite3_finalize(st);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*count = n;
	return 0;
}

int cs_read_metric_ids(cs_store *s, int64_t run, uint32_t **ids, uint32_t *count)
{
	return read_u32_list(s, "SELECT id FROM metrics WHERE run = ?1 ORDER BY id",
			     run, ids, count);
}

int cs_read_devices(cs_store *s, int64_t run, uint32_t **devs, uint32_t *count)
{
	return read_u32_list(s,
			     "WITH RECURSIVE d(dev) AS ("
			     " SELECT (SELECT device FROM timelines WHERE run = ?1 ORDER BY device"
			     "  LIMIT 1)"
			     " UNION ALL SELECT (SELECT device FROM timelines WHERE run = ?1"
			     "  AND device > dev ORDER BY device LIMIT 1) FROM d WHERE dev IS NOT NULL)"
			     "SELECT dev FROM d WHERE dev IS NOT NULL",
			     run, devs, count);
}

int cs_read_metric_name(cs_store *s, int64_t run, uint32_t id, char *out,
			size_t outlen)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare1(s, "SELECT name FROM metrics WHERE run = ?1 AND id = ?2", &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
	else
		rc = fail(s, -ENOENT, "run %lld has no metric id %u", (long long)run, id);
	sqlite3_finalize(st);
	return rc;
}

int cs_read_run_span(cs_store *s, int64_t run, uint64_t *t_min, uint64_t *t_max)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare1(s,
			  /* each device's first and last timeline through the
			   * primary key, the devices by skipping from one to the
			   * next: a few seeks however long the run */
			  "WITH RECURSIVE d(dev) AS ("
			  " SELECT (SELECT device FROM timelines WHERE run = ?1 ORDER BY device LIMIT 1)"
			  " UNION ALL SELECT (SELECT device FROM timelines WHERE run = ?1 AND device > dev"
			  "  ORDER BY device LIMIT 1) FROM d WHERE dev IS NOT NULL)"
			  "SELECT min((SELECT t0_first FROM timelines WHERE run = ?1 AND device = dev"
			  "  ORDER BY seq0 LIMIT 1)),"
			  " max((SELECT t0_last FROM timelines WHERE run = ?1 AND device = dev"
			  "  ORDER BY seq0 DESC LIMIT 1)),"
			  " EXISTS(SELECT 1 FROM runs WHERE id = ?1)"
			  " FROM d WHERE dev IS NOT NULL",
			  &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, run);
	int src = sqlite3_step(st);
	if (src != SQLITE_ROW)
		rc = fail_sql(s, src, "reading run span");
	else if (!sqlite3_column_int(st, 2))
		rc = fail(s, -ENOENT, "no run %lld", (long long)run);
	else if (sqlite3_column_type(st, 0) == SQLITE_NULL)
		rc = fail(s, -ENODATA, "run %lld has no samples", (long long)run);
	else {
		*t_min = (uint64_t)sqlite3_column_int64(st, 0);
		*t_max = (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return rc;
}

int cs_read_run_extent(cs_store *s, int64_t run, uint64_t *start, uint64_t *end)
{
	uint64_t hi = 0;
	int rc = cs_read_run_span(s, run, start, &hi);
	if (rc < 0)
		return rc;
	*end = hi + 1;
	sqlite3_stmt *st = NULL;
	if (prepare1(s, "SELECT t_max FROM runs WHERE id = ?1", &st))
		return 0; /* the samples' span is still an answer */
	sqlite3_bind_int64(st, 1, run);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
	    (uint64_t)sqlite3_column_int64(st, 0) > *end)
		*end = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* "no run X", with the closest run name when one is near. */
static int no_run(cs_store *s, const char *spec)
{
	sqlite3_stmt *st = NULL;
	char best[256] = "", prefixed[256] = "";
	size_t bd = (size_t)-1, speclen = strlen(spec), pl = (size_t)-1;
	if (prepare1(s, "SELECT DISTINCT name FROM runs LIMIT 100000", &st) == 0) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(st, 0);
			const char *one[1] = {name};
			if (!name)
				continue;
			if (cs_nearest(spec, one, 1, 3)) {
				size_t d = cs_edit_distance(spec, name);
				if (d < bd) {
					bd = d;
					snprintf(best, sizeof best, "%s", name);
				}
			}
			/* the name with a suffix ("h100-l2-overlap.csv") */
			if (speclen >= 3 && !strncmp(name, spec, speclen) && strlen(name) < pl) {
				pl = strlen(name);
				snprintf(prefixed, sizeof prefixed, "%s", name);
			}
		}
		sqlite3_finalize(st);
	}
	if (!best[0] && prefixed[0])
		snprintf(best, sizeof best, "%s", prefixed);
	if (best[0])
		return fail(s, -ENOENT, "no run '%s' (did you mean '%s'? 'cyclescope runs' lists "
			    "them)", spec, best);
	return fail(s, -ENOENT, "no run '%s' (give a run id, name or uuid; 'cyclescope runs' "
		    "lists them)", spec);
}

int cs_read_find_run(cs_store *s, const char *spec, int64_t *run)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare1(s,
			  "SELECT id FROM runs WHERE id = CAST(?1 AS INTEGER)"
			  " AND CAST(CAST(?1 AS INTEGER) AS TEXT) = ?1"
			  " UNION ALL SELECT * FROM (SELECT id FROM runs"
			  " WHERE name = ?1 OR uuid = ?1 ORDER BY id DESC LIMIT 1)",
			  &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, spec, -1, SQLITE_STATIC);
	int src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		*run = sqlite3_column_int64(st, 0);
	else if (src == SQLITE_DONE)
		rc = no_run(s, spec);
	else
		rc = fail_sql(s, src, "finding run");
	sqlite3_finalize(st);
	return rc;
}
