/* buf.c - growable byte buffer; see buf.h. */
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

size_t cs_buf_cap_for(const cs_buf *b, size_t extra)
{
	if (extra <= b->cap - b->len)
		return b->cap;
	if (extra > SIZE_MAX / 2 - b->len)
		return SIZE_MAX;
	size_t want = b->len + extra;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap *= 2;
	return cap;
}

int cs_buf_reserve(cs_buf *b, size_t extra)
{
	if (extra <= b->cap - b->len)
		return 0;
	size_t cap = cs_buf_cap_for(b, extra);
	if (cap == SIZE_MAX)
		return -ENOMEM;
	uint8_t *p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int cs_buf_append(cs_buf *b, const void *p, size_t n)
{
	int rc = cs_buf_reserve(b, n);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int cs_buf_printf(cs_buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	if ((size_t)n < sizeof tmp)
		return cs_buf_append(b, tmp, (size_t)n);
	/* longer: format straight into the buffer */
	if (cs_buf_reserve(b, (size_t)n + 1) < 0)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int cs_buf_put_u8(cs_buf *b, uint8_t v) { return cs_buf_append(b, &v, 1); }
int cs_buf_put_u16(cs_buf *b, uint16_t v) { return cs_buf_append(b, &v, 2); }
int cs_buf_put_u32(cs_buf *b, uint32_t v) { return cs_buf_append(b, &v, 4); }
int cs_buf_put_u64(cs_buf *b, uint64_t v) { return cs_buf_append(b, &v, 8); }
int cs_buf_put_f64(cs_buf *b, double v) { return cs_buf_append(b, &v, 8); }

int cs_buf_put_varint(cs_buf *b, uint64_t v)
{
	int rc = cs_buf_reserve(b, 10);
	if (rc)
		return rc;
	uint8_t *p = b->data + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->data);
	return 0;
}

int cs_get_varint_slow_(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (q >= end)
			return -EBADMSG;
		uint8_t byte = *q++;
		if (shift == 63 && byte > 1)
			return -EBADMSG;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*p = q;
			*out = v;
			return 0;
		}
	}
	return -EBADMSG;
}

void cs_buf_free(cs_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
