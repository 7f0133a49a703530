/*
 * textin.h - text input for the simulator importers (cs_textin_*): a
 * buffer that is plain text or gzip (any number of concatenated members,
 * as GPGPU-Sim writes one member per sample), handed out line by line
 * without building the decompressed text in memory.
 *
 * No I/O: the caller passes the file's bytes. A truncated or corrupt gzip
 * stream is an error naming the compressed byte offset and the lines
 * read so far.
 */
#ifndef CS_TEXTIN_H
#define CS_TEXTIN_H

#include <stddef.h>
#include <stdint.h>

/* One line without its '\n' (and without a trailing '\r'), NUL-terminated
 * in a buffer owned by the reader, valid for the call. lineno counts from
 * 1. A nonzero return stops the walk and is returned. */
typedef int (*cs_line_fn)(void *ctx, char *line, size_t len, uint64_t lineno);

/* Progress: compressed bytes consumed so far out of total. May be NULL. */
typedef void (*cs_progress_fn)(void *ctx, size_t done, size_t total);

typedef struct cs_textin_stats {
	uint64_t lines;
	uint64_t text_bytes; /* after decompression */
	unsigned members;    /* gzip members, 0 for plain text */
} cs_textin_stats;

/* Calls fn for every line of buf[0..len). 0, a callback's nonzero
 * value, or a negative errno with "LABEL: ..." in err. */
int cs_textin_lines(const char *buf, size_t len, const char *label, cs_line_fn fn,
		    void *ctx, cs_progress_fn progress, void *pctx, cs_textin_stats *st,
		    char *err, size_t errlen);

/* The text of buf[0..len) (inflated when gzip) in pieces, in order, for
 * parsers that take a stream (JSON): data is valid for the call. 0, a
 * callback's nonzero value, or a negative errno with "LABEL: ..." in err. */
typedef int (*cs_chunk_fn)(void *ctx, const char *data, size_t len);
int cs_textin_chunks(const char *buf, size_t len, const char *label, cs_chunk_fn fn,
		     void *ctx, cs_progress_fn progress, void *pctx, char *err, size_t errlen);

/* Writes the gzip data buf[0..len) (any number of members) decompressed
 * to the file descriptor fd, at most max bytes (more is an error). 0, or
 * a negative errno with "LABEL: ..." in err. */
int cs_textin_gunzip(const char *buf, size_t len, int fd, size_t max, const char *label,
		     char *err, size_t errlen);

/* 1 when buf starts with the gzip magic. */
int cs_textin_is_gzip(const char *buf, size_t len);

/* The first up to outlen-1 decompressed bytes (for format detection);
 * returns how many were written (NUL-terminated). */
size_t cs_textin_peek(const char *buf, size_t len, char *out, size_t outlen);

#endif
