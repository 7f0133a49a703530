/* json.c - JSON helpers; see json.h. */
#include "json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "csv.h"

void cs_json_raw(cs_buf *b, const char *s) { cs_buf_append(b, s, strlen(s)); }

/* Length of the well-formed UTF-8 sequence at c, within avail bytes
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or
 * 0. */
static int utf8_len(const unsigned char *c, size_t avail)
{
	if (c[0] < 0x80)
		return 1;
	int n = c[0] >= 0xc2 && c[0] <= 0xdf ? 2 : c[0] >= 0xe0 && c[0] <= 0xef ? 3
	      : c[0] >= 0xf0 && c[0] <= 0xf4 ? 4 : 0;
	if ((size_t)n > avail)
		return 0;
	for (int i = 1; i < n; i++)
		if ((c[i] & 0xc0) != 0x80)
			return 0;
	if ((n == 3 && c[0] == 0xe0 && c[1] < 0xa0) || (n == 3 && c[0] == 0xed && c[1] > 0x9f) ||
	    (n == 4 && c[0] == 0xf0 && c[1] < 0x90) || (n == 4 && c[0] == 0xf4 && c[1] > 0x8f))
		return 0;
	return n;
}

long cs_utf8_bad(const char *s, size_t n)
{
	const unsigned char *c = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		/* ASCII eight bytes at a time: no byte with its top bit set */
		uint64_t w;
		while (i + 8 <= n && (memcpy(&w, c + i, 8), !(w & 0x8080808080808080ull)))
			i += 8;
		if (i == n)
			break;
		int k = utf8_len(c + i, n - i);
		if (!k)
			return (long)i;
		i += (size_t)k;
	}
	return -1;
}

char *cs_utf8_fix(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (!s || cs_utf8_bad(s, n) < 0)
		return NULL;
	cs_buf b = CS_BUF_INIT;
	for (size_t i = 0; i < n;) {
		long bad = cs_utf8_bad(s + i, n - i);
		size_t good = bad < 0 ? n - i : (size_t)bad;
		cs_buf_append(&b, s + i, good);
		i += good;
		if (i < n) {
			cs_buf_append(&b, "\xef\xbf\xbd", 3);
			i++;
		}
	}
	if (cs_buf_put_u8(&b, 0)) {
		cs_buf_free(&b);
		return NULL;
	}
	return (char *)b.data;
}

void cs_json_sql(cs_buf *b, const char *text)
{
	size_t n = text ? strlen(text) : 0;
	for (size_t i = 0; i < n;) {
		long bad = cs_utf8_bad(text + i, n - i);
		size_t good = bad < 0 ? n - i : (size_t)bad;
		cs_buf_append(b, text + i, good);
		i += good;
		if (i < n) {
			cs_json_raw(b, "\\ufffd");
			i++;
		}
	}
}

void cs_json_str(cs_buf *b, const char *s)
{
	if (!s)
		cs_json_raw(b, "null");
	else
		cs_json_strn(b, s, strlen(s));
}

void cs_json_strn(cs_buf *b, const char *s, size_t n)
{
	cs_buf_put_u8(b, '"');
	const unsigned char *c = (const unsigned char *)s, *end = c + n;
	for (; c < end; c++) {
		char esc[8];
		if (*c >= 0x80) {
			/* JSON is UTF-8 (RFC 8259): a byte that starts no
			 * well-formed sequence becomes U+FFFD, never raw. */
			int k = utf8_len(c, (size_t)(end - c));
			if (k)
				cs_buf_append(b, c, (size_t)k);
			else
				cs_json_raw(b, "\\ufffd");
			c += k ? k - 1 : 0;
			continue;
		}
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
