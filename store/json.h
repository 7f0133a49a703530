/*
 * json.h - the project's one JSON writer (cs_json_*): escaped strings and
 * numbers appended to a cs_buf, which streams (a caller flushes the buffer
 * whenever it likes). The HTTP API, the CLI, the collector's run metadata
 * and every importer's use it. Output is UTF-8 JSON per RFC 8259: '"',
 * '\\' and bytes below 0x20 are escaped, a byte that starts no well-formed
 * UTF-8 sequence becomes \ufffd, and nothing is ever cut.
 */
#ifndef CS_JSON_H
#define CS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Appends s as a JSON string literal (RFC 8259; a byte of s that starts
 * no well-formed UTF-8 sequence becomes \ufffd); NULL as null. */
void cs_json_str(cs_buf *b, const char *s);

/* The same for the n bytes at s (no NUL needed; a NUL byte is \u0000). */
void cs_json_strn(cs_buf *b, const char *s, size_t n);

/* Appends "key": (with the quotes and colon), preceded by a comma when
 * *first is 0; sets *first to 0. */
void cs_json_key(cs_buf *b, int *first, const char *key);

/* The offset of the first byte of s[0..n) that starts no well-formed UTF-8
 * sequence, or -1 when s is all UTF-8: for inputs (CSV headers, config
 * values) to be refused with the place named. */
long cs_utf8_bad(const char *s, size_t n);

/* NULL when s is NULL or all UTF-8; else a malloc'd copy with each byte
 * that starts no well-formed sequence replaced by U+FFFD (for text that
 * comes from elsewhere, e.g. an NVTX range name, before it is sent). */
char *cs_utf8_fix(const char *s);

void cs_json_i64(cs_buf *b, int64_t v);

/* Finite doubles as numbers, NaN and infinities as null. */
void cs_json_f64(cs_buf *b, double v);

/* Appends JSON text made elsewhere (SQLite's json_object() and
 * friends), each byte that starts no well-formed UTF-8 sequence written as
 * \ufffd: such bytes can only be inside its strings. */
void cs_json_sql(cs_buf *b, const char *text);

/* Appends raw text (already valid JSON). */
void cs_json_raw(cs_buf *b, const char *s);

#endif
