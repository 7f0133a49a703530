/*
 * pack.h - the order the writer inserts a batch of chunk rows in, so that
 * SQLite's pages fill (store-internal).
 *
 * Chunk rows only ever go at the end of the chunks table (their rowids
 * grow), and SQLite appends a row to the last leaf page when it fits and
 * otherwise starts a new page with it, leaving the rest of the old one
 * empty for good. Rows of a few kilobytes in 16 KiB pages, written in
 * metric order, left about 18% of every page empty. cs_pack keeps a model
 * of the last page's free bytes (exact for one writer: the sizes follow
 * SQLite's file format) and orders each batch best fit: the largest row
 * that still fits, else a new page. The model can only be wrong about
 * where rows land, never about what is stored.
 */
#ifndef CS_PACK_H
#define CS_PACK_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_pack {
	int64_t free; /* modelled free bytes on the last leaf page */
} cs_pack;

/* The record (payload) length of a row of the given integer and real
 * columns (reals in columns of REAL affinity) and one blob of blob_len
 * bytes, with one leading NULL column (the INTEGER PRIMARY KEY). */
size_t cs_pack_record_len(const int64_t *ints, int nints, const double *reals, int nreals,
			  size_t blob_len);

/* Bytes a row with that payload and rowid takes on a table leaf page of
 * page_size bytes: its cell (local part) and its cell pointer. */
uint32_t cs_pack_cost(size_t payload, int64_t rowid, uint32_t page_size);

/* Fills order[0..n) with the insertion order of n rows of the given
 * costs, updating the model. */
void cs_pack_order(cs_pack *p, uint32_t page_size, const uint32_t *cost, uint32_t n,
		   uint32_t *order);

#endif
