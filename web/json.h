/*
 * json.h - the few JSON helpers the CLI and HTTP API need (cs_json_*):
 * appending escaped strings and numbers to a cs_buf. Output is UTF-8 JSON;
 * bytes below 0x20 are escaped, invalid UTF-8 is passed through.
 */
#ifndef CS_JSON_H
#define CS_JSON_H

#include <stdint.h>

#include "buf.h"

/* Appends s as a JSON string literal (RFC 8259; a byte of s that starts
 * no well-formed UTF-8 sequence becomes \ufffd); NULL as null. */
void cs_json_str(cs_buf *b, const char *s);

/* Appends "key": (with the quotes and colon), preceded by a comma when
 * *first is 0; sets *first to 0. */
void cs_json_key(cs_buf *b, int *first, const char *key);

void cs_json_i64(cs_buf *b, int64_t v);

/* Finite doubles as numbers, NaN and infinities as null. */
void cs_json_f64(cs_buf *b, double v);

/* Appends raw text (already valid JSON). */
void cs_json_raw(cs_buf *b, const char *s);

#endif
