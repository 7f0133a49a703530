/*
 * chunk.c - value and timeline chunk codec; layout in docs/schema.md.
 */
#include "chunk.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
/* xxHash as Debian ships it (libxxhash-dev), inlined: the collector library
 * loaded into applications needs no libxxhash.so where it runs. */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>

/* Format 1 blobs (written before checksums) are still read, unchecked;
 * format 2 adds a checksum per block payload and one over header and
 * directory (values), or one over the whole blob (timelines). */
#define FORMAT_UNCHECKED 1
#define FORMAT_CHECKED 2
#define FLAG_ZSTD 0x01
#define HEADER_LEN 16
#define DIR_ENTRY_LEN_V1 28
#define DIR_ENTRY_LEN 32
#define CHECK_LEN 4
#define ZSTD_LEVEL 1

enum block_type { BLOCK_EMPTY = 0, BLOCK_INT = 1, BLOCK_F64 = 2 };

struct cs_codec {
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	cs_buf raw;     /* payload before compression */
	cs_buf scratch; /* decompressed payload of the open chunk */
	cs_buf packed;  /* compressed payload being written */
};

cs_codec *cs_codec_new(void)
{
	cs_codec *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->cctx = ZSTD_createCCtx();
	c->dctx = ZSTD_createDCtx();
	if (!c->cctx || !c->dctx) {
		cs_codec_free(c);
		return NULL;
	}
	return c;
}

void cs_codec_free(cs_codec *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->cctx);
	ZSTD_freeDCtx(c->dctx);
	cs_buf_free(&c->raw);
	cs_buf_free(&c->scratch);
	cs_buf_free(&c->packed);
	free(c);
}

void cs_agg_merge(cs_agg *a, const cs_agg *b)
{
	if (!b->count)
		return;
	if (!a->count) {
		*a = *b;
		return;
	}
	a->count += b->count;
	if (b->min < a->min)
		a->min = b->min;
	if (b->max > a->max)
		a->max = b->max;
	a->sum += b->sum;
}

static int seterr(char *err, size_t errlen, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", what);
	return -EBADMSG;
}

/* The 32-bit checksum stored in format 2 blobs: the low half of XXH3. */
static uint32_t check32(const void *p, size_t len)
{
	return (uint32_t)XXH3_64bits(p, len);
}

static void put_check(uint8_t *dst, const void *p, size_t len)
{
	uint32_t h = check32(p, len);
	memcpy(dst, &h, 4);
}

/* An exact integer that fits the packed form (|v| <= 2^53, not -0.0). */
static int is_packable_int(double v)
{
	if (!(fabs(v) <= 9007199254740992.0))
		return 0;
	if (v != (double)(int64_t)v)
		return 0;
	return !(v == 0.0 && signbit(v));
}

static unsigned bit_width(uint64_t range)
{
	return range ? 64u - (unsigned)__builtin_clzll(range) : 0u;
}

static size_t packed_bytes(uint32_t count, unsigned bw)
{
	return ((size_t)count * bw + 7) / 8;
}

/* Packs count values of bw bits each, least significant bit first. */
static void pack_bits(uint8_t *dst, const uint64_t *v, uint32_t count,
		      unsigned bw)
{
	uint64_t acc = 0;
	unsigned fill = 0;
	size_t o = 0;
	for (uint32_t i = 0; i < count; i++) {
		acc |= v[i] << fill;
		fill += bw;
		if (fill >= 64) {
			memcpy(dst + o, &acc, 8);
			o += 8;
			fill -= 64;
			acc = fill ? v[i] >> (bw - fill) : 0;
		}
	}
	memcpy(dst + o, &acc, (fill + 7) / 8);
}

static uint64_t load_tail(const uint8_t *p, size_t avail)
{
	uint64_t w = 0;
	memcpy(&w, p, avail < 8 ? avail : 8); /* NOLINT(clang-analyzer-core.NonNullParamChecker): p is in the payload */
	return w;
}

static void unpack_bits(const uint8_t *src, size_t srclen, uint32_t count,
			unsigned bw, int64_t base, double *out)
{
	if (bw == 0) {
		for (uint32_t i = 0; i < count; i++)
			out[i] = (double)base;
		return;
	}
	uint64_t mask = bw == 64 ? ~0ull : (1ull << bw) - 1;
	size_t fast_end = srclen >= 8 ? srclen - 8 : 0;
	for (uint32_t i = 0; i < count; i++) {
		size_t bit = (size_t)i * bw;
		size_t byte = bit >> 3;
		uint64_t w = byte <= fast_end && srclen >= 8
				     ? cs_get_u64(src + byte)
				     : load_tail(src + byte, srclen - byte);
		uint64_t d = (w >> (bit & 7)) & mask;
		out[i] = (double)(int64_t)((uint64_t)base + d);
	}
}

static size_t block_payload_len(uint8_t type, unsigned bw, uint32_t count,
				uint32_t blen)
{
	size_t len = (count && count < blen) ? (blen + 7) / 8 : 0;
	if (type == BLOCK_INT)
		len += packed_bytes(count, bw);
	else if (type == BLOCK_F64)
		len += (size_t)count * 8;
	return len;
}

static void put_dir(uint8_t *d, uint8_t type, uint8_t bw, uint16_t count,
		    const cs_agg *agg)
{
	d[0] = type;
	d[1] = bw;
	memcpy(d + 2, &count, 2);
	memcpy(d + 4, &agg->min, 8);
	memcpy(d + 12, &agg->max, 8);
	memcpy(d + 20, &agg->sum, 8);
}

/* Encodes one block into c->raw and its directory entry into dir. */
static int encode_block(cs_codec *c, const double *v, uint32_t blen,
			uint8_t *dir, cs_agg *agg)
{
	double buf[CS_BLOCK_SAMPLES];
	uint64_t ints[CS_BLOCK_SAMPLES];
	uint8_t bitmap[CS_BLOCK_SAMPLES / 8] = {0};
	const double *present = v;
	uint32_t count = 0;
	int all_int = 1;
	cs_agg a = {0, 0, 0, 0};

	/* Most blocks have no absent value: then v is used in place. */
	uint32_t nan_at = blen;
	for (uint32_t i = 0; i < blen; i++) {
		if (isnan(v[i])) {
			nan_at = i;
			break;
		}
	}
	if (nan_at == blen) {
		count = blen;
	} else {
		for (uint32_t i = 0; i < blen; i++) {
			if (isnan(v[i]))
				continue;
			bitmap[i >> 3] |= (uint8_t)(1u << (i & 7));
			buf[count++] = v[i];
		}
		present = buf;
	}
	if (count) {
		double mn = present[0], mx = present[0], sum = 0;
		for (uint32_t i = 0; i < count; i++) {
			double x = present[i];
			mn = x < mn ? x : mn;
			mx = x > mx ? x : mx;
			sum += x;
		}
		a = (cs_agg){count, mn, mx, sum};
		/* Within +-2^53 the int64 round trip is exact and defined. */
		all_int = mn >= -9007199254740992.0 && mx <= 9007199254740992.0;
		for (uint32_t i = 0; all_int && i < count; i++) {
			double x = present[i];
			all_int = x == (double)(int64_t)x && !(x == 0.0 && signbit(x));
		}
	}
	*agg = a;
	if (!count) {
		put_dir(dir, BLOCK_EMPTY, 0, 0, &a);
		put_check(dir + DIR_ENTRY_LEN_V1, "", 0);
		return 0;
	}
	uint8_t type = all_int ? BLOCK_INT : BLOCK_F64;
	unsigned bw = 0;
	int64_t base = 0;
	if (all_int) {
		base = (int64_t)a.min;
		bw = bit_width((uint64_t)((int64_t)a.max - base));
	}
	size_t need = block_payload_len(type, bw, count, blen);
	int rc = cs_buf_reserve(&c->raw, need + 8);
	if (rc)
		return rc;
	uint8_t *p = c->raw.data + c->raw.len;
	if (count < blen) {
		memcpy(p, bitmap, (blen + 7) / 8);
		p += (blen + 7) / 8;
	}
	if (all_int) {
		for (uint32_t i = 0; i < count; i++)
			ints[i] = (uint64_t)((int64_t)present[i] - base);
		if (bw)
			pack_bits(p, ints, count, bw);
	} else {
		/* Byte planes: all first bytes, then all second bytes, ... so
		 * that exponents and high mantissa bytes sit together for
		 * zstd. */
		for (uint32_t i = 0; i < count; i++) {
			uint8_t bytes[8];
			memcpy(bytes, &present[i], 8);
			for (unsigned j = 0; j < 8; j++)
				p[(size_t)j * count + i] = bytes[j];
		}
	}
	put_dir(dir, type, (uint8_t)bw, (uint16_t)count, &a);
	put_check(dir + DIR_ENTRY_LEN_V1, c->raw.data + c->raw.len, need);
	c->raw.len += need;
	return 0;
}

/* Appends a format 2 blob: header, directory and its checksum (values), or
 * header, payload and a checksum of both (timelines, dir == NULL); the
 * payload compressed when that pays. */
static int finish_blob(cs_codec *c, uint32_t n, const uint8_t *dir, size_t dirlen,
		       cs_buf *out)
{
	const uint8_t *payload = c->raw.data;
	size_t raw_len = c->raw.len;
	size_t stored_len = raw_len;
	uint8_t flags = 0;

	if (raw_len >= 64) {
		size_t bound = ZSTD_compressBound(raw_len);
		int rc = cs_buf_reserve(&c->packed, bound);
		if (rc)
			return rc;
		size_t z = ZSTD_compressCCtx(c->cctx, c->packed.data, bound,
					     c->raw.data, raw_len, ZSTD_LEVEL);
		if (!ZSTD_isError(z) && z < raw_len - raw_len / 8) {
			payload = c->packed.data;
			stored_len = z;
			flags |= FLAG_ZSTD;
		}
	}
	int rc = cs_buf_reserve(out, HEADER_LEN + dirlen + CHECK_LEN + stored_len);
	if (rc)
		return rc;
	size_t start = out->len;
	uint8_t h[HEADER_LEN] = {FORMAT_CHECKED, flags, 0, 0};
	uint16_t bs = dir ? CS_BLOCK_SAMPLES : 0;
	uint32_t rl = (uint32_t)raw_len, sl = (uint32_t)stored_len;
	memcpy(h + 2, &bs, 2);
	memcpy(h + 4, &n, 4);
	memcpy(h + 8, &rl, 4);
	memcpy(h + 12, &sl, 4);
	cs_buf_append(out, h, HEADER_LEN);
	if (dir)
		cs_buf_append(out, dir, dirlen);
	else
		cs_buf_append(out, payload, stored_len);
	uint8_t check[CHECK_LEN];
	put_check(check, out->data + start, out->len - start);
	cs_buf_append(out, check, CHECK_LEN);
	if (dir)
		cs_buf_append(out, payload, stored_len);
	return 0;
}

int cs_values_encode(cs_codec *c, const double *v, uint32_t n, cs_buf *out,
		     cs_agg *agg)
{
	uint8_t dir[CS_CHUNK_MAX_BLOCKS * DIR_ENTRY_LEN];
	if (n == 0 || n > CS_CHUNK_MAX)
		return -EINVAL;
	uint32_t nblocks = (n + CS_BLOCK_SAMPLES - 1) / CS_BLOCK_SAMPLES;
	cs_agg total = {0, 0, 0, 0};
	cs_buf_reset(&c->raw);
	for (uint32_t b = 0; b < nblocks; b++) {
		uint32_t start = b * CS_BLOCK_SAMPLES;
		uint32_t blen = n - start < CS_BLOCK_SAMPLES ? n - start
							     : CS_BLOCK_SAMPLES;
		cs_agg a;
		int rc = encode_block(c, v + start, blen,
				      dir + (size_t)b * DIR_ENTRY_LEN, &a);
		if (rc)
			return rc;
		cs_agg_merge(&total, &a);
	}
	*agg = total;
	return finish_blob(c, n, dir, (size_t)nblocks * DIR_ENTRY_LEN, out);
}

/* Directory and checksum bytes before the payload of a value chunk of n
 * samples in the given format; 0 for an unknown format or n. */
static size_t values_dir_len(uint8_t format, uint32_t n)
{
	size_t nblocks = (n + CS_BLOCK_SAMPLES - 1) / CS_BLOCK_SAMPLES;
	if (n == 0 || n > CS_CHUNK_MAX)
		return 0;
	if (format == FORMAT_CHECKED)
		return DIR_ENTRY_LEN * nblocks + CHECK_LEN;
	return format == FORMAT_UNCHECKED ? DIR_ENTRY_LEN_V1 * nblocks : 0;
}

/* Validates the common header (and, for a checked blob, the checksum of
 * header + before: the value directory, or the whole timeline) and yields
 * the (decompressed) payload. before is the length of what follows the
 * header ahead of the payload, checksum included. */
static int open_blob(cs_codec *c, const uint8_t *blob, size_t len, int values,
		     uint32_t *n_out, size_t *before_out, const uint8_t **payload,
		     size_t *payload_len, char *err, size_t errlen)
{
	if (len < HEADER_LEN)
		return seterr(err, errlen, "chunk shorter than its header");
	uint8_t format = blob[0];
	if (format != FORMAT_CHECKED && format != FORMAT_UNCHECKED)
		return seterr(err, errlen, "unknown chunk format");
	if (blob[1] & ~FLAG_ZSTD)
		return seterr(err, errlen, "unknown chunk flags");
	uint32_t n = cs_get_u32(blob + 4);
	uint32_t raw_len = cs_get_u32(blob + 8);
	uint32_t stored_len = cs_get_u32(blob + 12);
	if (n == 0 || n > CS_CHUNK_MAX)
		return seterr(err, errlen, "chunk sample count out of range");
	if (values && cs_get_u16(blob + 2) != CS_BLOCK_SAMPLES)
		return seterr(err, errlen, "unsupported chunk block size");
	size_t before = values ? values_dir_len(format, n) : 0;
	size_t after = !values && format == FORMAT_CHECKED ? CHECK_LEN : 0;
	if (len != HEADER_LEN + before + stored_len + after)
		return seterr(err, errlen, "chunk length does not match header");
	if (format == FORMAT_CHECKED) {
		size_t covered = values ? HEADER_LEN + before - CHECK_LEN : len - CHECK_LEN;
		if (check32(blob, covered) != cs_get_u32(blob + covered))
			return seterr(err, errlen, values ? "checksum mismatch in chunk header"
							  : "timeline checksum mismatch");
	}
	/* No chunk of n samples needs more than 8 bytes a value plus 16 of
	 * bitmap a block, or 20 bytes of varints a sample. */
	if (raw_len > (size_t)n * 24 + 64)
		return seterr(err, errlen, "chunk payload size out of range");
	const uint8_t *p = blob + HEADER_LEN + before;
	if (blob[1] & FLAG_ZSTD) {
		int rc = cs_buf_reserve(&c->scratch, (size_t)raw_len + 1); /* never NULL, even for 0 */
		if (rc)
			return rc;
		size_t got = ZSTD_decompressDCtx(c->dctx, c->scratch.data,
						 raw_len, p, stored_len);
		if (ZSTD_isError(got) || got != raw_len)
			return seterr(err, errlen, "corrupt zstd payload");
		p = c->scratch.data;
	} else if (stored_len != raw_len) {
		return seterr(err, errlen, "uncompressed payload length mismatch");
	}
	*n_out = n;
	*before_out = before;
	*payload = p;
	*payload_len = raw_len;
	return 0;
}

static const uint8_t *dir_entry(const cs_values_view *view, uint32_t b)
{
	return view->dir + (size_t)b * (view->checked ? DIR_ENTRY_LEN : DIR_ENTRY_LEN_V1);
}

/* Validates the block directory and computes every block's offset. */
static int parse_dir(cs_values_view *view, char *err, size_t errlen)
{
	view->nblocks = (view->n + CS_BLOCK_SAMPLES - 1) / CS_BLOCK_SAMPLES;
	size_t off = 0;
	for (uint32_t b = 0; b < view->nblocks; b++) {
		const uint8_t *d = dir_entry(view, b);
		uint8_t type = d[0];
		unsigned bw = d[1];
		uint32_t count = cs_get_u16(d + 2);
		uint32_t blen = cs_values_block_len(view, b);
		if (type > BLOCK_F64 || count > blen ||
		    (type == BLOCK_EMPTY) != (count == 0))
			return seterr(err, errlen, "corrupt block directory");
		if (type == BLOCK_INT) {
			double mn = cs_get_f64(d + 4), mx = cs_get_f64(d + 12);
			if (bw > 55 || !is_packable_int(mn) ||
			    !is_packable_int(mx) || mx < mn)
				return seterr(err, errlen,
					      "corrupt integer block header");
		}
		view->offset[b] = (uint32_t)off;
		off += block_payload_len(type, bw, count, blen);
		if (off > view->payload_len)
			return seterr(err, errlen, "block runs past payload");
	}
	if (off != view->payload_len)
		return seterr(err, errlen, "payload has trailing bytes");
	view->offset[view->nblocks] = (uint32_t)off;
	return 0;
}

int cs_values_check_block(const cs_values_view *view, uint32_t b, char *err, size_t errlen)
{
	const uint8_t *d = dir_entry(view, b);
	uint32_t count = cs_get_u16(d + 2);
	uint32_t blen = cs_values_block_len(view, b);
	const uint8_t *p = view->payload + view->offset[b];
	if (view->checked &&
	    check32(p, view->offset[b + 1] - view->offset[b]) != cs_get_u32(d + DIR_ENTRY_LEN_V1))
		return seterr(err, errlen, "block checksum mismatch");
	if (!count || count == blen)
		return 0;
	uint32_t bits = 0;
	for (uint32_t i = 0; i < (blen + 7) / 8; i++)
		bits += (uint32_t)__builtin_popcount(p[i]);
	if (bits != count || (blen % 8 && p[blen / 8] >> (blen % 8)))
		return seterr(err, errlen, "presence bitmap mismatch");
	return 0;
}

int cs_values_open(cs_codec *c, cs_values_view *view, const uint8_t *blob,
		   size_t len, char *err, size_t errlen)
{
	size_t before;
	int rc = open_blob(c, blob, len, 1, &view->n, &before, &view->payload,
			   &view->payload_len, err, errlen);
	if (rc)
		return rc;
	view->dir = blob + HEADER_LEN;
	view->checked = blob[0] == FORMAT_CHECKED;
	rc = parse_dir(view, err, errlen);
	for (uint32_t b = 0; !rc && b < view->nblocks; b++)
		rc = cs_values_check_block(view, b, err, errlen);
	return rc;
}

size_t cs_values_head_len(const uint8_t head[CS_VALUES_HEADER_LEN])
{
	size_t dirlen = values_dir_len(head[0], cs_get_u32(head + 4));
	return dirlen ? HEADER_LEN + dirlen : 0;
}

int cs_values_open_dir(cs_values_view *view, const uint8_t *head, size_t head_len,
		       size_t blob_len, char *err, size_t errlen)
{
	if (head_len < HEADER_LEN ||
	    (head[0] != FORMAT_CHECKED && head[0] != FORMAT_UNCHECKED))
		return seterr(err, errlen, "unknown chunk format");
	if (head[1] & FLAG_ZSTD)
		return -ENOTSUP;
	if (head[1])
		return seterr(err, errlen, "unknown chunk flags");
	if (cs_get_u16(head + 2) != CS_BLOCK_SAMPLES)
		return seterr(err, errlen, "unsupported chunk block size");
	if (cs_values_head_len(head) != head_len)
		return seterr(err, errlen, "chunk sample count out of range");
	uint32_t raw_len = cs_get_u32(head + 8), stored_len = cs_get_u32(head + 12);
	view->n = cs_get_u32(head + 4);
	view->checked = head[0] == FORMAT_CHECKED;
	if (raw_len != stored_len || blob_len != head_len + stored_len ||
	    raw_len > (size_t)view->n * 24 + 64)
		return seterr(err, errlen, "chunk length does not match header");
	if (view->checked &&
	    check32(head, head_len - CHECK_LEN) != cs_get_u32(head + head_len - CHECK_LEN))
		return seterr(err, errlen, "checksum mismatch in chunk header");
	view->dir = head + HEADER_LEN;
	view->payload = NULL;
	view->payload_len = raw_len;
	return parse_dir(view, err, errlen);
}

uint32_t cs_values_block_len(const cs_values_view *view, uint32_t b)
{
	uint32_t start = b * CS_BLOCK_SAMPLES;
	return view->n - start < CS_BLOCK_SAMPLES ? view->n - start
						  : CS_BLOCK_SAMPLES;
}

void cs_values_block_agg(const cs_values_view *view, uint32_t b, cs_agg *agg)
{
	const uint8_t *d = dir_entry(view, b);
	agg->count = cs_get_u16(d + 2);
	agg->min = cs_get_f64(d + 4);
	agg->max = cs_get_f64(d + 12);
	agg->sum = cs_get_f64(d + 20);
}

void cs_values_block_decode(const cs_values_view *view, uint32_t b,
			    double *out)
{
	const uint8_t *d = dir_entry(view, b);
	uint8_t type = d[0];
	unsigned bw = d[1];
	uint32_t count = cs_get_u16(d + 2);
	uint32_t blen = cs_values_block_len(view, b);
	const uint8_t *p = view->payload + view->offset[b];
	size_t plen = view->offset[b + 1] - view->offset[b];
	double vals[CS_BLOCK_SAMPLES];
	double *dst = count == blen ? out : vals;

	if (type == BLOCK_EMPTY) {
		for (uint32_t i = 0; i < blen; i++)
			out[i] = NAN;
		return;
	}
	const uint8_t *bitmap = NULL;
	if (count < blen) {
		bitmap = p;
		p += (blen + 7) / 8;
		plen -= (blen + 7) / 8;
	}
	if (type == BLOCK_INT) {
		unpack_bits(p, plen, count, bw, (int64_t)cs_get_f64(d + 4),
			    dst);
	} else {
		for (uint32_t i = 0; i < count; i++) {
			uint8_t bytes[8];
			for (unsigned j = 0; j < 8; j++)
				bytes[j] = p[(size_t)j * count + i]; /* NOLINT(clang-analyzer-core.NullDereference) */
			memcpy(&dst[i], bytes, 8);
		}
	}
	if (bitmap) {
		uint32_t k = 0;
		/* vals[0..count) was filled above: dst == vals when a bitmap exists */
		for (uint32_t i = 0; i < blen; i++)
			// cppcheck-suppress uninitvar
			out[i] = (bitmap[i >> 3] >> (i & 7)) & 1 ? vals[k++] /* NOLINT(clang-analyzer-core.uninitialized.Assign) */
								 : (double)NAN;
	}
}

void cs_values_decode(const cs_values_view *view, double *out)
{
	for (uint32_t b = 0; b < view->nblocks; b++)
		cs_values_block_decode(view, b, out + (size_t)b * CS_BLOCK_SAMPLES);
}

int cs_timeline_encode(cs_codec *c, const uint64_t *t0, const uint64_t *t1,
		       uint32_t n, cs_buf *out)
{
	if (n == 0 || n > CS_CHUNK_MAX)
		return -EINVAL;
	cs_buf_reset(&c->raw);
	int rc = cs_buf_reserve(&c->raw, (size_t)n * 20);
	if (rc)
		return rc;
	int64_t prev_delta = 0, prev_dur = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (t1[i] < t0[i] || (i && t0[i] < t0[i - 1]) ||
		    t1[i] - t0[i] > INT64_MAX)
			return -EINVAL;
		int64_t dur = (int64_t)(t1[i] - t0[i]);
		if (i == 0) {
			cs_buf_put_varint(&c->raw, t0[0]);
		} else {
			uint64_t delta = t0[i] - t0[i - 1];
			if (delta > INT64_MAX)
				return -EINVAL;
			cs_buf_put_varint(&c->raw,
					  cs_zigzag((int64_t)delta - prev_delta));
			prev_delta = (int64_t)delta;
		}
		cs_buf_put_varint(&c->raw, cs_zigzag(dur - prev_dur));
		prev_dur = dur;
	}
	return finish_blob(c, n, NULL, 0, out);
}

int cs_timeline_decode(cs_codec *c, const uint8_t *blob, size_t len,
		       uint32_t n, uint64_t *t0, uint64_t *t1, char *err,
		       size_t errlen)
{
	uint32_t bn;
	const uint8_t *p;
	size_t before, plen;
	int rc = open_blob(c, blob, len, 0, &bn, &before, &p, &plen, err, errlen);
	if (rc)
		return rc;
	if (bn != n)
		return seterr(err, errlen, "timeline sample count mismatch");
	const uint8_t *end = p + plen;
	int64_t delta = 0, dur = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;
		if (cs_get_varint(&p, end, &v))
			return seterr(err, errlen, "truncated timeline");
		if (i == 0) {
			t0[0] = v;
		} else {
			int64_t dd = cs_unzigzag(v);
			if (__builtin_add_overflow(delta, dd, &delta) ||
			    delta < 0 ||
			    __builtin_add_overflow(t0[i - 1], (uint64_t)delta,
						   &t0[i]))
				return seterr(err, errlen, "corrupt timeline delta");
		}
		if (cs_get_varint(&p, end, &v))
			return seterr(err, errlen, "truncated timeline");
		int64_t dd = cs_unzigzag(v);
		if (__builtin_add_overflow(dur, dd, &dur) || dur < 0 ||
		    __builtin_add_overflow(t0[i], (uint64_t)dur, &t1[i]))
			return seterr(err, errlen, "corrupt timeline duration");
	}
	if (p != end)
		return seterr(err, errlen, "timeline has trailing bytes");
	return 0;
}
