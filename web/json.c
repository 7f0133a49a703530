/* json.c - JSON helpers; see json.h. */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "csv.h"

void cs_json_raw(cs_buf *b, const char *s) { cs_buf_append(b, s, strlen(s)); }

void cs_json_str(cs_buf *b, const char *s)
{
	if (!s) {
		cs_json_raw(b, "null");
		return;
	}
	cs_buf_put_u8(b, '"');
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		char esc[8];
		switch (*c) {
		case '"': cs_json_raw(b, "\\\""); break;
		case '\\': cs_json_raw(b, "\\\\"); break;
		case '\n': cs_json_raw(b, "\\n"); break;
		case '\r': cs_json_raw(b, "\\r"); break;
		case '\t': cs_json_raw(b, "\\t"); break;
		default:
			if (*c < 0x20) {
				snprintf(esc, sizeof esc, "\\u%04x", *c);
				cs_json_raw(b, esc);
			} else {
				cs_buf_put_u8(b, *c);
			}
		}
	}
	cs_buf_put_u8(b, '"');
}

void cs_json_key(cs_buf *b, int *first, const char *key)
{
	if (!*first)
		cs_buf_put_u8(b, ',');
	*first = 0;
	cs_json_str(b, key);
	cs_buf_put_u8(b, ':');
}

void cs_json_i64(cs_buf *b, int64_t v)
{
	char tmp[24];
	cs_buf_append(b, tmp, (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)v));
}

void cs_json_f64(cs_buf *b, double v)
{
	char tmp[32];
	if (!isfinite(v)) {
		cs_json_raw(b, "null");
		return;
	}
	cs_buf_append(b, tmp, cs_format_f64(tmp, v));
}
