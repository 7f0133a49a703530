/*
 * buf.h - a growable byte buffer (cs_buf_*).
 *
 * Used by the codecs to build blobs and frames. A cs_buf is a plain value:
 * zero-initialise it (CS_BUF_INIT) and release it with cs_buf_free(). The
 * buffer owns its memory; pointers into it are borrowed until the next
 * append or free.
 */
#ifndef CS_BUF_H
#define CS_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct cs_buf {
	uint8_t *data; /* owned; NULL while cap == 0 */
	size_t len;
	size_t cap;
} cs_buf;

#define CS_BUF_INIT {NULL, 0, 0}

/* Makes room for at least `extra` more bytes. Returns 0 or -ENOMEM. */
int cs_buf_reserve(cs_buf *b, size_t extra);
/* The capacity cs_buf_reserve(b, extra) leaves b with, without growing
 * it: a caller that budgets memory checks before it allocates. */
size_t cs_buf_cap_for(const cs_buf *b, size_t extra);

/* Appends n bytes. Returns 0 or -ENOMEM. */
int cs_buf_append(cs_buf *b, const void *p, size_t n);
/* Appends formatted text (no terminating NUL). 0 or -ENOMEM. */
int cs_buf_printf(cs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Little-endian fixed-width appends and unsigned LEB128 varints. */
int cs_buf_put_u8(cs_buf *b, uint8_t v);
int cs_buf_put_u16(cs_buf *b, uint16_t v);
int cs_buf_put_u32(cs_buf *b, uint32_t v);
int cs_buf_put_u64(cs_buf *b, uint64_t v);
int cs_buf_put_f64(cs_buf *b, double v);
int cs_buf_put_varint(cs_buf *b, uint64_t v);

/* Releases the memory; safe on a zeroed or already freed buffer. */
void cs_buf_free(cs_buf *b);

static inline void cs_buf_reset(cs_buf *b) { b->len = 0; }

/* Unaligned little-endian loads and stores (the host is little-endian;
 * build.h refuses anything else). */
static inline uint16_t cs_get_u16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof v);
	return v;
}
static inline uint32_t cs_get_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}
static inline uint64_t cs_get_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v); /* NOLINT(clang-analyzer-core.NonNullParamChecker) */
	return v;
}
static inline double cs_get_f64(const uint8_t *p)
{
	double v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* Reads one varint from [*p, end). Returns 0 and advances *p, or -EBADMSG
 * when the varint is truncated or longer than 10 bytes. */
int cs_get_varint_slow_(const uint8_t **p, const uint8_t *end, uint64_t *out);
static inline int cs_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	/* One-byte varints (small deltas) are the common case in timelines. */
	if (*p < end && !(**p & 0x80)) {
		*out = **p;
		(*p)++;
		return 0;
	}
	return cs_get_varint_slow_(p, end, out);
}

static inline uint64_t cs_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (0 - ((uint64_t)v >> 63));
}
static inline int64_t cs_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cyclescope's codecs assume a little-endian host"
#endif

#endif
