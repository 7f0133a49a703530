/*
 * store_int.h - helpers shared by the store's own files (store.c,
 * reader.c); not part of the public API.
 */
#ifndef CS_STORE_INT_H
#define CS_STORE_INT_H

#include <errno.h>

#include <sqlite3.h>

#include "chunk.h"
#include "store.h"

/* Records a message on s and returns rc. */
int cs_store_fail_(cs_store *s, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records SQLite's current message with a prefix and maps the code. */
int cs_store_fail_sql_(cs_store *s, int sqlite_rc, const char *what);

/* rc, or -EIO if rc is 0 (which the callers never pass). */
static inline int cs_nonzero_(int rc) { return rc ? rc : -EIO; }

/* The connection, borrowed until cs_store_close(): for the store's own
 * files (and tests that look at what was written). Every reader above the
 * store goes through the store's functions (reader.h, runs.h, ranges.h,
 * outbox.h, query.h). */
sqlite3 *cs_store_db(cs_store *s);

/* The store's codec, for readers on the store's thread. */
cs_codec *cs_store_codec_(cs_store *s);

#endif
