/*
 * chunk.c - value and timeline chunk codec; layout in docs/schema.md.
 */
#include "chunk.h"

#include <errno.h>
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
/* xxHash as Debian ships it (libxxhash-dev), inlined: the collector library
 * loaded into applications needs no libxxhash.so where it runs. */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>

#include "blobcache.h"

/* Format 1 blobs (written before checksums) are still read, unchecked;
 * format 2 adds a checksum per block payload and one over header and
 * directory (values), or one over the whole blob (timelines). Format 3,
 * what is written now, has a compact value directory (varints, deltas
 * between blocks) and timelines in blocks that decode alone. */
#define FORMAT_UNCHECKED 1
#define FORMAT_CHECKED 2
#define FORMAT_COMPACT 3
/* format 4: format 3 with a frequency table ahead of the directory's
 * entries and entropy-coded integer blocks (written only where they pay) */
#define FORMAT_ENTROPY 4
#define COMPACT(f) ((f) == FORMAT_COMPACT || (f) == FORMAT_ENTROPY)
/* format 5 (values only): format 4 in blocks of CS_VALUE_BLOCK, the table
 * optional, no checksum for an empty payload */
#define FORMAT_WIDE 5
/* format 6 (values only): format 5 whose coded blocks may hold runs of
 * zero differences as symbols of their own (rans.h), or else carry their
 * last raw bits in their coder's starting states (bits back) */
#define FORMAT_RUNS 6
/* format 7 (values only): format 6 whose coded blocks may also hold each
 * value less a line through the block (kind bit 4) instead of differences */
#define FORMAT_LINE 7
/* format 8 (values only): format 7 whose integer blocks, packed or coded,
 * may hold decimal fractions: each value an integer over 10^e, e a block's
 * (kind bit 5); written only for chunks that have such a block */
#define FORMAT_DECIMAL 8
#define RUNS(f) ((f) == FORMAT_RUNS || (f) == FORMAT_LINE || (f) == FORMAT_DECIMAL)
#define LINES(f) ((f) == FORMAT_LINE || (f) == FORMAT_DECIMAL)
#define WIDE(f) ((f) == FORMAT_WIDE || RUNS(f))
/* value formats whose bytes 2-3 hold the directory's length */
#define VARDIR(f) (COMPACT(f) || WIDE(f))
/* timeline format 5: format 4 with its raw bits apart, the last of them
 * in the coder's starting states (bits back), and the block list's times
 * against what the reference step predicts */
#define TL_FORMAT_BACK 5
#define TL_ENTROPY(f) ((f) == FORMAT_ENTROPY || (f) == TL_FORMAT_BACK)
#define TL_BLOCKED(f) (COMPACT(f) || (f) == TL_FORMAT_BACK)
/* timeline modes (formats 4 and 5): each kind of step against a fixed
 * reference rather than the step before */
#define TL_T0_FIXED 0x01
#define TL_DUR_FIXED 0x02
#define FLAG_ZSTD 0x01
#define HEADER_LEN 16
#define DIR_ENTRY_LEN_V1 28
#define DIR_ENTRY_LEN 32
#define CHECK_LEN 4
#define ZSTD_LEVEL 1

enum block_type { BLOCK_EMPTY = 0, BLOCK_INT = 1, BLOCK_F64 = 2, BLOCK_RANS = 3 };

/* What the directory says of one block. */
typedef struct block_info {
	uint8_t type, bw;
	uint32_t count;
	cs_agg agg;
	int64_t imin, imax, isum; /* integer blocks: exact min, max and sum */
	uint32_t check;           /* of the block's payload bytes */
	uint32_t len;             /* entropy-coded blocks: the payload's length */
	uint8_t back;             /* formats 6 to 8 coded blocks: bits back (kind bit 3) */
	uint8_t line;             /* formats 7 and 8 coded blocks: values against a line
				     (kind bit 4) */
	uint8_t dec;              /* format 8 integer blocks: the values are
				     these integers over 10^dec (kind bit 5) */
	uint32_t steady;          /* decimal blocks: values that go on an exact
				     step from the two before (a sawtooth's) */
	double dabs;              /* integer blocks: their differences' mean
				     absolute value, */
	double dvar;              /* and variance */
	double dbits;             /* integer blocks: the entropy of their
				     differences at most, in bits a value (that
				     of a normal or a Laplace law, encode_block) */
} block_info;

struct cs_codec {
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	cs_buf raw;     /* payload before compression */
	cs_buf dir;     /* the directory being written */
	cs_buf scratch; /* decompressed payload of the open chunk */
	cs_buf tscratch; /* decompressed payload of the open timeline */
	cs_buf packed;  /* compressed payload being written */
	cs_buf raw2, dir2; /* payload and directory with entropy-coded blocks */
	cs_buf alt;        /* a chunk of wide or steady decimal blocks, as
			      format 7 writes it (DEC_WIDE_BITS) */
	cs_rans_coder rans; /* the table being written (timelines: their t0 steps') */
	cs_rans_coder rans2; /* timelines: their durations' table */
	uint64_t *tz;        /* timelines: the steps, and then their symbols */
	uint32_t tcounts[4][CS_RANS_SYMS]; /* timelines: symbols counted both ways */
	uint32_t counts[CS_RANS_SYMS]; /* its symbols' counts */
	block_info *bi;                /* the blocks being written, and */
	uint32_t *off;                 /* where their payloads start in raw */
	uint64_t *z;                   /* their coded values (differences, or
					  values less a line), zigzagged */
	uint8_t vformat;               /* the value formats written: 4 (3 or 4), 5,
					  6 (5 or 6), 7 (5 or 7) or 8 (5, 7 or 8) */
	double *dv;                    /* a chunk's values, its decimal blocks'
					  as their integers (format 8) */
	uint8_t tformat;               /* the timeline format written: 4 or 5 */
};

cs_codec *cs_codec_new(void)
{
	cs_codec *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->cctx = ZSTD_createCCtx();
	c->dctx = ZSTD_createDCtx();
	c->bi = calloc(CS_CHUNK_MAX / CS_VALUE_BLOCK_V3, sizeof *c->bi);
	c->off = calloc(CS_CHUNK_MAX / CS_VALUE_BLOCK_V3 + 1, sizeof *c->off);
	c->vformat = FORMAT_DECIMAL;
	c->tformat = TL_FORMAT_BACK;
	if (!c->cctx || !c->dctx || !c->bi || !c->off) {
		cs_codec_free(c);
		return NULL;
	}
	return c;
}

int cs_codec_set_value_format(cs_codec *c, unsigned format)
{
	if (format != FORMAT_ENTROPY && !WIDE(format))
		return -EINVAL;
	c->vformat = (uint8_t)format;
	return 0;
}

int cs_codec_set_timeline_format(cs_codec *c, unsigned format)
{
	if (format != FORMAT_ENTROPY && format != TL_FORMAT_BACK)
		return -EINVAL;
	c->tformat = (uint8_t)format;
	return 0;
}

void cs_codec_free(cs_codec *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->cctx);
	ZSTD_freeDCtx(c->dctx);
	cs_buf_free(&c->raw);
	cs_buf_free(&c->dir);
	cs_buf_free(&c->scratch);
	cs_buf_free(&c->tscratch);
	cs_buf_free(&c->packed);
	cs_buf_free(&c->raw2);
	cs_buf_free(&c->alt);
	cs_buf_free(&c->dir2);
	free(c->bi);
	free(c->off);
	free(c->z);
	free(c->dv);
	free(c->tz);
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

/* Packs count integers v[i] - base (each an exact integer of at most bw
 * bits) in bw bits each, least significant bit first. */
static void pack_bits(uint8_t *dst, const double *v, int64_t base, uint32_t count,
		      unsigned bw)
{
	uint64_t acc = 0;
	unsigned fill = 0;
	size_t o = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t x = (uint64_t)((int64_t)v[i] - base);
		acc |= x << fill;
		fill += bw;
		if (fill >= 64) {
			memcpy(dst + o, &acc, 8);
			o += 8;
			fill -= 64;
			acc = fill ? x >> (bw - fill) : 0;
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

/* What one pass over a block's values finds. */
typedef struct block_stats {
	double min, max, sum;
	double dsq;   /* the squares of the differences between neighbours */
	double dabs;  /* their absolute values */
	int64_t isum; /* the exact sum, when every value is an integer */
	int all_int;  /* every value an exact integer within +-2^53, not -0.0 */
	int nan;      /* some value is NaN (absent) */
} block_stats;

static void scan_block(const double *p, uint32_t n, block_stats *st)
{
	double mn = p[0], mx = p[0], sum = 0, dsq = 0, dabs = 0, last = p[0];
	int64_t isum = 0;
	uint64_t bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		double x = p[i];
		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
		sum += x;
		/* the cast is defined only in range: 0 stands in beyond it
		 * (and for NaN), and then differs from x */
		int64_t k = (int64_t)(fabs(x) <= 9007199254740992.0 ? x : 0.0);
		uint64_t bits;
		memcpy(&bits, &x, 8);
		bad |= (uint64_t)((double)k != x) | (uint64_t)(bits == 0x8000000000000000ull);
		isum += k; /* |isum| <= 512 * 2^53 */
		double d = x - last;
		dsq += d * d;
		dabs += fabs(d);
		last = x;
	}
	/* a NaN is never an integer: only then look for one */
	int nan = 0;
	for (uint32_t i = 0; bad && !nan && i < n; i++)
		nan = isnan(p[i]);
	*st = (block_stats){mn, mx, sum, dsq, dabs, isum, !bad, nan};
}

/* Powers of ten, each exact as a double (10^22 is the last). */
static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
			       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
			       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#define DEC_MAX 22u

/* Decimal blocks are found and decoded rounding to nearest, ties to even
 * (docs/schema.md), whatever mode a program that loads this library has
 * set: that mode is set for the while, then put back. */
static int round_to_nearest(void)
{
	int mode = fegetround();
	if (mode != FE_TONEAREST)
		fesetround(FE_TONEAREST);
	return mode;
}

static void round_back(int mode)
{
	if (mode != FE_TONEAREST)
		fesetround(mode);
}

/* Decimal blocks whose integers take more bits than this a value (eight
 * significant digits or more: 4/1024 is 0.00390625), or of which a
 * quarter or more repeat the step before (a sawtooth, which the coder
 * stores as raw bits a step where zstd finds the repeats), may hold
 * doubles that zstd shrinks further as raw bytes: their chunk is also
 * written without decimal blocks, and the shorter kept. */
#define DEC_WIDE_BITS 24u

/* A decimal block's aggregate from its integers': each over 10^dec
 * (rounding to nearest: the caller's mode). */
static void decimal_agg(cs_agg *a, unsigned dec)
{
	a->min /= POW10[dec];
	a->max /= POW10[dec];
	a->sum /= POW10[dec];
}

/* x as an integer over 10^e: *n, with n / 10^e equal to x bit for bit
 * (so never for -0.0) and |n| <= 2^53. 0 when there is none. */
static int dec_int(double x, unsigned e, double *n)
{
	double m = nearbyint(x * POW10[e]);
	if (!(fabs(m) <= 9007199254740992.0) || m / POW10[e] != x || (m == 0 && signbit(x)))
		return 0;
	*n = m;
	return 1;
}

/* The smallest e in 1..DEC_MAX at which every value of v[0..count) is an
 * integer over 10^e (dec_int), those integers into n; 0 for none. A value
 * that is one at e is one at e + 1 while its integer stays within 2^53:
 * e starts at 1 and rises, at most 4 times, to what the first value that
 * does not fit asks, the block tried again from its start. */
static unsigned decimal_exp(const double *v, uint32_t count, double *n)
{
	unsigned e = 1, raised = 0;
	for (uint32_t i = 0; i < count;) {
		if (dec_int(v[i], e, &n[i])) {
			i++;
			continue;
		}
		while (++e <= DEC_MAX && !dec_int(v[i], e, &n[i]))
			;
		if (e > DEC_MAX || raised++ == 4)
			return 0;
		i = 0;
	}
	return e;
}

/* Encodes one block into c->raw and describes it in *bi. dv (format 8),
 * where the block's values go as integers (NaN where absent) when they
 * are decimal fractions (bi->dec set); NULL for no such blocks. */
static int encode_block(cs_codec *c, const double *v, uint32_t blen, block_info *bi, double *dv)
{
	double buf[CS_VALUE_BLOCK], ints[CS_VALUE_BLOCK];
	uint8_t bitmap[CS_VALUE_BLOCK / 8] = {0};
	const double *present = v;
	uint32_t count = blen;
	block_stats st;

	/* Most blocks have no absent value: then v is used in place. */
	scan_block(v, blen, &st);
	if (st.nan) {
		count = 0;
		for (uint32_t i = 0; i < blen; i++) {
			if (isnan(v[i]))
				continue;
			bitmap[i >> 3] |= (uint8_t)(1u << (i & 7));
			buf[count++] = v[i];
		}
		present = buf;
		if (count)
			scan_block(buf, count, &st);
	}
	memset(bi, 0, sizeof *bi);
	if (!count)
		return 0;
	/* format 8: fractions of a few decimal digits as integers over 10^e */
	unsigned dec = st.all_int || !dv ? 0 : decimal_exp(present, count, ints);
	block_stats ist;
	if (dec) {
		scan_block(ints, count, &ist);
		dec = ist.all_int ? dec : 0; /* (they are: decimal_exp checked) */
	}
	if (dec) {
		present = ints;
		st = ist;
		for (uint32_t i = 0, k = 0; i < blen; i++)
			dv[i] = isnan(v[i]) ? (double)NAN : ints[k++];
		for (uint32_t k = 2; k < count; k++)
			bi->steady += ints[k] - ints[k - 1] == ints[k - 1] - ints[k - 2];
	}
	cs_agg a = {count, st.min, st.max, st.sum};
	int all_int = st.all_int;
	uint8_t type = all_int ? BLOCK_INT : BLOCK_F64;
	unsigned bw = 0;
	int64_t base = 0;
	if (all_int) {
		base = (int64_t)a.min;
		bw = bit_width((uint64_t)((int64_t)a.max - base));
		/* among continuous laws none of that variance has more entropy
		 * than the normal one, log2(2 pi e var) / 2, and none of that mean
		 * absolute value more than the Laplace one, log2(2 e mean): taken
		 * as estimates for the integer differences, the second where it
		 * is a bit or more under the first (differences far from normal:
		 * a few spikes swell the variance), which coding shrinks much;
		 * for noise near normal the first stands, and no block is coded
		 * (and then decoded by every read) for a few percent */
		bi->dbits = 0;
		if (count > 1) {
			double mean = (present[count - 1] - present[0]) / (count - 1);
			bi->dabs = st.dabs / (count - 1);
			bi->dvar = st.dsq / (count - 1) - mean * mean;
		}
		if (count > 1 && st.dsq > 0) {
			double gauss = 0.5 * log2(17.0794684453 * st.dsq / (count - 1));
			double laplace = log2(5.43656365692 * st.dabs / (count - 1));
			bi->dbits = laplace + 1 <= gauss ? laplace : gauss;
		}
		a.sum = (double)st.isum;
		bi->dec = (uint8_t)dec;
		bi->imin = base;
		bi->imax = (int64_t)a.max;
		bi->isum = st.isum;
		if (dec) /* the values', as a reader makes them of the integers' */
			decimal_agg(&a, dec);
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
		if (bw)
			pack_bits(p, present, base, count, bw);
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
	bi->type = type;
	bi->bw = (uint8_t)bw;
	bi->count = count;
	bi->agg = a;
	bi->check = check32(c->raw.data + c->raw.len, need);
	c->raw.len += need;
	return 0;
}

/* Directory entry of a format 3 block, appended to out (prev: the last
 * integer block's min and sum, which integer blocks are stored against;
 * wide: format 5 to 8, where a block of one value repeated has no
 * checksum):
 *   kind     1 byte: type in bits 0-1, bit 2 set when every sample is
 *            present (no count, no bitmap), bit 3 (formats 6 to 8) on a
 *            coded block with bits back, bit 4 (formats 7 and 8) on a coded
 *            block of values less a line, bit 5 (format 8) on an integer
 *            block of decimal fractions
 *   count    varint, unless every sample is present (not for empty blocks)
 *   exponent 1 byte, e: the values are the integers over 10^e (bit 5)
 *   integer blocks (packed or coded): zigzag(min - prev min), max - min,
 *            zigzag(sum - prev sum), varints (the bit width is that of
 *            max - min); prev is the last integer block's of either form
 *   double blocks: min, max, sum as 8-byte doubles
 *   coded blocks (format 4): the payload's length, varint
 *   checksum 4 bytes, of the block's payload (not for empty blocks) */
static int put_entry(cs_buf *out, const block_info *bi, uint32_t blen, int64_t prev[2], int wide)
{
	uint8_t kind = bi->type | (bi->count == blen ? 4 : 0) | (bi->back ? 8 : 0) |
		       (bi->line ? 16 : 0) | (bi->dec ? 32 : 0);
	int rc = cs_buf_append(out, &kind, 1);
	if (rc || bi->type == BLOCK_EMPTY)
		return rc;
	if (bi->count != blen)
		rc = cs_buf_put_varint(out, bi->count);
	if (bi->dec)
		rc = rc ? rc : cs_buf_append(out, &bi->dec, 1);
	if (bi->type == BLOCK_INT || bi->type == BLOCK_RANS) {
		rc = rc ? rc : cs_buf_put_varint(out, cs_zigzag(bi->imin - prev[0]));
		rc = rc ? rc : cs_buf_put_varint(out, (uint64_t)(bi->imax - bi->imin));
		rc = rc ? rc : cs_buf_put_varint(out, cs_zigzag(bi->isum - prev[1]));
		prev[0] = bi->imin;
		prev[1] = bi->isum;
	} else {
		rc = rc ? rc : cs_buf_append(out, &bi->agg.min, 8);
		rc = rc ? rc : cs_buf_append(out, &bi->agg.max, 8);
		rc = rc ? rc : cs_buf_append(out, &bi->agg.sum, 8);
	}
	if (bi->type == BLOCK_RANS)
		rc = rc ? rc : cs_buf_put_varint(out, bi->len);
	if (wide && bi->type == BLOCK_INT && bi->count == blen && bi->imax == bi->imin)
		return rc; /* its payload is empty */
	return rc ? rc : cs_buf_append(out, &bi->check, 4);
}

/* Appends a blob of format `format`: header, directory and its checksum (values), or
 * header, payload and a checksum of both (timelines, dir == NULL); the
 * payload compressed when try_zstd is set and that saves 1/8 of it. */
static int finish_blob(cs_codec *c, uint8_t format, const cs_buf *raw, uint32_t n,
		       const uint8_t *dir, size_t dirlen, int try_zstd, cs_buf *out)
{
	const uint8_t *payload = raw->data;
	size_t raw_len = raw->len;
	size_t stored_len = raw_len;
	uint8_t flags = 0;

	if (try_zstd && raw_len >= 64) {
		size_t bound = ZSTD_compressBound(raw_len);
		int rc = cs_buf_reserve(&c->packed, bound);
		if (rc)
			return rc;
		size_t z = ZSTD_compressCCtx(c->cctx, c->packed.data, bound,
					     raw->data, raw_len, ZSTD_LEVEL);
		if (!ZSTD_isError(z) && z < raw_len - raw_len / 8) {
			payload = c->packed.data;
			stored_len = z;
			flags |= FLAG_ZSTD;
		}
	}
	if (dirlen > UINT16_MAX)
		return -EINVAL;
	int rc = cs_buf_reserve(out, HEADER_LEN + dirlen + CHECK_LEN + stored_len);
	if (rc)
		return rc;
	size_t start = out->len;
	uint8_t h[HEADER_LEN] = {format, flags, 0, 0};
	uint16_t dl = (uint16_t)dirlen;
	uint32_t rl = (uint32_t)raw_len, sl = (uint32_t)stored_len;
	memcpy(h + 2, &dl, 2);
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

/* The present values of integer block v[0..blen) as differences: *first
 * the first less the block's minimum, z[0..count-1) the zigzagged
 * differences between neighbours. Returns count - 1. */
static uint32_t block_diffs(const double *v, uint32_t blen, int64_t imin, uint64_t *first,
			    uint64_t *z)
{
	uint32_t k = 0;
	int64_t last = 0;
	for (uint32_t i = 0; i < blen; i++) {
		if (isnan(v[i]))
			continue;
		int64_t x = (int64_t)v[i];
		if (k++ == 0)
			*first = (uint64_t)(x - imin);
		else
			z[k - 2] = cs_zigzag(x - last);
		last = x;
	}
	return k ? k - 1 : 0;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 128)
		v >>= 7, n++;
	return n;
}

/* The second pass of an encoding whose blocks bi[0..nblocks) are in
 * c->raw and c->dir: where the entropy of an integer block's differences
 * (estimated from their statistics: dbits) is a bit or more under its packed
 * width and, coded with one table for the chunk, they would be shorter
 * than its packing (by the table's estimate, not by trying), writes them
 * coded into c->raw2 and c->dir2 (format 4, 5, 6 or 7, c->vformat's; in
 * format 7 a block's values less a line instead, where those are shorter)
 * and returns 1; else 0 (format 3 or 5 stands), or -ENOMEM.
 * Blocks that cannot gain cost one comparison. */
#define CANDIDATE(x) ((x)->type == BLOCK_INT && (x)->count >= 2 && (x)->dbits + 1 <= (x)->bw)

/* c log2 c, what a symbol counted c times adds to the order-0 estimate
 * below (less the total's share) */
static double clogc(double c)
{
	return c > 0 ? c * log2(c) : 0;
}

/* The shortest run of zero differences worth a symbol, of RUN_TRIES, by
 * the order-0 estimate of the symbols' cost (the entropy of their counts,
 * raw bits included, a byte of table a symbol) with runs from that length
 * on made tokens and without (runs[r]: how many runs of r zeros the
 * candidates hold, r >= RUN_TRIES[0]); counts become that choice's. 0 for
 * none. The estimate is total log2 total - sum c log2 c + raw bits +
 * table: a choice changes the total, symbol 0 and the run symbols only. */
static const uint32_t RUN_TRIES[] = {4, 16, 64};
#define NRUN_TRIES (sizeof RUN_TRIES / sizeof RUN_TRIES[0])

static uint32_t choose_runs(uint32_t counts[CS_RANS_SYMS], const uint32_t runs[CS_VALUE_BLOCK])
{
	uint64_t nruns = 0;
	for (uint32_t r = RUN_TRIES[0]; r < CS_VALUE_BLOCK; r++)
		nruns += runs[r];
	if (!nruns)
		return 0;
	double total = 0;
	for (unsigned s = 0; s < CS_RANS_VALUE_SYMS; s++)
		total += counts[s];
	/* without runs: the part that a choice changes */
	double best = total * log2(total) - clogc(counts[0]) + (counts[0] ? 8 : 0) - 64;
	uint32_t pick = 0;
	for (unsigned t = 0; t < NRUN_TRIES; t++) {
		double sym[CS_RANS_RUN_KMAX] = {0}, zeros = counts[0], extra = 0, tokens = 0;
		for (uint32_t r = RUN_TRIES[t]; r < CS_VALUE_BLOCK; r++) {
			if (!runs[r])
				continue;
			unsigned e;
			unsigned s = cs_rans_token_sym(CS_RANS_RUN | r, &e);
			sym[s - CS_RANS_VALUE_SYMS] += runs[r];
			zeros -= (double)r * runs[r];
			extra += (double)e * runs[r];
			tokens += runs[r];
		}
		double all = total - (counts[0] - zeros) + tokens;
		double bits = all * log2(all) - clogc(zeros) + (zeros > 0 ? 8 : 0) + extra;
		for (unsigned k = 0; k < CS_RANS_RUN_KMAX; k++)
			bits += sym[k] > 0 ? 8 - clogc(sym[k]) : 0;
		if (bits < best)
			best = bits, pick = RUN_TRIES[t];
	}
	for (uint32_t r = pick ? pick : CS_VALUE_BLOCK; r < CS_VALUE_BLOCK; r++) {
		unsigned extra;
		counts[0] -= r * runs[r];
		counts[cs_rans_token_sym(CS_RANS_RUN | r, &extra)] += runs[r];
	}
	return pick;
}

/* Writes differences z[0..m) to dst as tokens, each run of min_run or
 * more zeros one token (rans.h); returns how many tokens. dst may be z,
 * or below it in the same array. */
static uint32_t tokenise(uint64_t *dst, const uint64_t *z, uint32_t m, uint32_t min_run)
{
	uint32_t w = 0;
	for (uint32_t i = 0; i < m;) {
		uint32_t r = 0;
		while (i + r < m && z[i + r] == 0)
			r++;
		if (r >= min_run) {
			dst[w++] = CS_RANS_RUN | r;
			i += r;
			continue;
		}
		for (uint32_t k = 0; k < r; k++)
			dst[w++] = 0;
		i += r;
		if (i < m)
			dst[w++] = z[i++];
	}
	return w;
}

/* Format 7: a coded block may hold each present value less its point on
 * a line through the block, zigzagged, instead of the differences between
 * neighbours. Noise about a level or a trend then costs its own entropy,
 * where its differences (the noise of two samples) cost half a bit more.
 * The line has a level, its value at sample blen / 2 (rounded down), and
 * a slope in 1/256 a sample; sample j of blen is predicted at
 * level + floor(slope * (j - blen / 2) / 256), exact where the slope is
 * a whole number a sample. */
#define LINE_STEP 8        /* the robust line: every eighth sample */
#define LINE_SLOPE_ONE 256 /* the slope's unit: 1/256 a sample */
#define LINE_SLOPE_MAX (1ll << 40)
/* differences that vary less (a steady trend, a counter that barely
 * moves) cost next to nothing already: no line is tried */
#define LINE_MIN_DVAR 2.0

static uint64_t median(uint64_t *v, uint32_t n);

/* A line's point at sample j of a block of blen, in wrapping arithmetic
 * (a reader's level and slope are any varints). */
static int64_t line_at(int64_t level, int64_t slope, uint32_t j, uint32_t blen)
{
	uint64_t t = (uint64_t)slope * (uint64_t)((int64_t)j - (int64_t)(blen / 2));
	return (int64_t)((uint64_t)level + (uint64_t)((int64_t)t >> 8));
}

/* A line of level lv and slope s (in its unit), rounded: the slope within
 * +-LINE_SLOPE_MAX, the level within the block's [imin, imax]. */
static void set_line(double lv, double s, int64_t imin, int64_t imax, int64_t *level,
		     int64_t *slope)
{
	s = s > (double)LINE_SLOPE_MAX ? (double)LINE_SLOPE_MAX
	    : s < -(double)LINE_SLOPE_MAX ? -(double)LINE_SLOPE_MAX
					  : nearbyint(s);
	lv = lv < (double)imin ? (double)imin : lv > (double)imax ? (double)imax : nearbyint(lv);
	*slope = (int64_t)s;
	*level = (int64_t)lv;
}

/* The median of values stored as (uint64_t)x ^ 2^63 (so that unsigned
 * order is signed order) in h[0..n), reordering h; for n even, the mean
 * of the middle two: where the values climb with their places, the value
 * at the places' mean. */
static double median_of(uint64_t *h, uint32_t n)
{
	double m = (double)(int64_t)(median(h, n) ^ (1ull << 63));
	if (n % 2)
		return m;
	uint64_t lo = h[0]; /* median() leaves the lower half below n / 2 */
	for (uint32_t i = 1; i < n / 2; i++)
		lo = h[i] > lo ? h[i] : lo;
	return (m + (double)(int64_t)(lo ^ (1ull << 63))) / 2;
}

/* A line through block v[0..blen) (NaN absent) that a spike or two does
 * not move: through the medians of the present values at every
 * LINE_STEP-th place of each half, at their mean places. 0 when a half
 * has under 4 of them. */
static int fit_line(const double *v, uint32_t blen, int64_t imin, int64_t imax, int64_t *level,
		    int64_t *slope)
{
	uint64_t h[2][CS_VALUE_BLOCK / LINE_STEP];
	uint32_t nh[2] = {0, 0};
	double at[2] = {0, 0};
	for (uint32_t j = 0; j < blen; j += LINE_STEP) {
		if (isnan(v[j]))
			continue;
		unsigned k = j >= blen / 2;
		/* the sign bit flipped: unsigned order is then signed order */
		h[k][nh[k]++] = (uint64_t)(int64_t)v[j] ^ (1ull << 63);
		at[k] += j;
	}
	if (nh[0] < 4 || nh[1] < 4)
		return 0;
	double m0 = median_of(h[0], nh[0]), m1 = median_of(h[1], nh[1]);
	double x0 = at[0] / nh[0], x1 = at[1] / nh[1];
	double s = (m1 - m0) / (x1 - x0);
	set_line(m0 + s * (blen / 2 - x0), s * LINE_SLOPE_ONE, imin, imax, level, slope);
	return 1;
}

/* The line moved to fit, by least squares, every other value that it
 * misses by at most tol (so not the spikes): medians of a few values are
 * robust but noisy, and where a trend is steep each is about one value's.
 * Kept only where those values' absolute distances to it sum to less
 * (spikes that tol lets in must not pull a line off a flat baseline). */
static void refine_line(const double *v, uint32_t blen, double tol, int64_t imin, int64_t imax,
			int64_t *level, int64_t *slope)
{
	double n = 0, sx = 0, sr = 0, sxx = 0, sxr = 0, dist = 0, mid = blen / 2;
	for (uint32_t j = 0; j < blen; j += 2) {
		if (isnan(v[j]))
			continue;
		double r = v[j] - (double)line_at(*level, *slope, j, blen), x = j - mid;
		dist += fabs(r);
		if (fabs(r) > tol)
			continue;
		n++;
		sx += x;
		sr += r;
		sxx += x * x;
		sxr += x * r;
	}
	double den = sxx - sx * sx / (n ? n : 1);
	if (n < 8 || den <= 0)
		return;
	double ds = (sxr - sx * sr / n) / den;
	int64_t lv, sl;
	set_line((double)*level + sr / n - ds * sx / n, (double)*slope + ds * LINE_SLOPE_ONE, imin,
		 imax, &lv, &sl);
	double moved = 0;
	for (uint32_t j = 0; j < blen; j += 2)
		if (!isnan(v[j]))
			moved += fabs(v[j] - (double)line_at(lv, sl, j, blen));
	if (moved < dist)
		*level = lv, *slope = sl;
}

static unsigned bit_len(uint64_t z)
{
	return 64u - (unsigned)__builtin_clzll(z | 1);
}

/* What the choice between differences and a line counts for a zigzagged
 * value z after prev: its bit length, or where it repeats prev, its raw
 * bits and 1 (a symbol that repeats costs next to nothing: a steady
 * trend's differences; its raw bits are stored all the same). */
static unsigned token_len(uint64_t z, uint64_t prev)
{
	return z != prev ? bit_len(z) : z < 16 ? 1 : bit_len(z) - 3;
}

/* Block v[0..blen)'s present values less the line, zigzagged, into z;
 * returns how many, and in *bits the sum of their token_len. */
static uint32_t line_residuals(const double *v, uint32_t blen, int64_t level, int64_t slope,
			       uint64_t *z, uint64_t *bits)
{
	uint32_t k = 0;
	uint64_t sum = 0;
	for (uint32_t j = 0; j < blen; j++) {
		if (isnan(v[j]))
			continue;
		uint64_t r = cs_zigzag((int64_t)v[j] - line_at(level, slope, j, blen));
		sum += token_len(r, k ? z[k - 1] : ~r);
		z[k++] = r;
	}
	*bits = sum;
	return k;
}

static int entropy_pass(cs_codec *c, const double *v, uint32_t n, uint32_t bs, block_info *bi,
			const uint32_t *off, uint32_t nblocks)
{
	int wide = WIDE(c->vformat);
	/* format 5 codes with two interleaved states, format 4 with one */
	unsigned states = wide ? 2 : 1;
	uint32_t cand = 0;
	for (uint32_t b = 0; b < nblocks; b++)
		cand += CANDIDATE(&bi[b]);
	if (!cand)
		return 0;
	if (!c->z && !(c->z = malloc((size_t)CS_CHUNK_MAX * sizeof *c->z)))
		return -ENOMEM;
	uint32_t *counts = c->counts;
	uint64_t first[CS_CHUNK_MAX / CS_VALUE_BLOCK_V3]; /* line blocks: zigzag(level - min) */
	uint64_t slope[CS_CHUNK_MAX / CS_VALUE_BLOCK_V3]; /* line blocks: zigzag(slope) */
	uint32_t zat[CS_CHUNK_MAX / CS_VALUE_BLOCK_V3 + 1];
	uint8_t use[CS_CHUNK_MAX / CS_VALUE_BLOCK_V3] = {0};
	uint8_t line[CS_CHUNK_MAX / CS_VALUE_BLOCK_V3] = {0};
	uint64_t lz[CS_VALUE_BLOCK];
	uint32_t runs[CS_VALUE_BLOCK] = {0}; /* runs of r zeros, r >= RUN_TRIES[0] */
	uint32_t counts2[CS_RANS_SYMS] = {0};
	memset(counts, 0, sizeof c->counts);
	uint32_t nz = 0;
	for (uint32_t b = 0; b < nblocks; b++) {
		zat[b] = nz;
		if (!CANDIDATE(&bi[b]))
			continue;
		uint32_t start = b * bs, blen = n - start < bs ? n - start : bs;
		uint64_t *z = c->z + nz;
		uint32_t m = block_diffs(v + start, blen, bi[b].imin, &first[b], z);
		/* format 7: the values less a line through them where, by the
		 * sum of bit lengths (which a spike swells little; a repeat
		 * counts 1), that is shorter than their differences */
		int64_t level, sl;
		if (LINES(c->vformat) && bi[b].dvar >= LINE_MIN_DVAR &&
		    fit_line(v + start, blen, bi[b].imin, bi[b].imax, &level, &sl)) {
			refine_line(v + start, blen, 3 * bi[b].dabs + 1, bi[b].imin, bi[b].imax, &level,
				    &sl);
			uint64_t dbits = 8 * varint_len(first[b]), lbits;
			/* a zero after a zero costs nothing: a run takes it
			 * (values less a line hold no runs) */
			for (uint32_t i = 0; i < m; i++)
				dbits += i && !z[i] && !z[i - 1] ? 0 : token_len(z[i], i ? z[i - 1] : ~z[i]);
			uint32_t k = line_residuals(v + start, blen, level, sl, lz, &lbits);
			uint64_t lfirst = cs_zigzag(level - bi[b].imin);
			slope[b] = cs_zigzag(sl);
			lbits += 8 * (varint_len(lfirst) + varint_len(slope[b]));
			if (lbits < dbits) {
				memcpy(z, lz, k * sizeof *z);
				m = k;
				first[b] = lfirst;
				line[b] = 1;
			}
		}
		/* two histograms in turn: a symbol that repeats waits on the
		 * count before it half as often */
		uint32_t i = 0;
		for (; i + 2 <= m; i += 2) {
			unsigned extra;
			counts[cs_rans_sym(z[i], &extra)]++;
			counts2[cs_rans_sym(z[i + 1], &extra)]++;
		}
		if (i < m) {
			unsigned extra;
			counts[cs_rans_sym(z[i], &extra)]++;
		}
		nz += m;
		use[b] = 1;
	}
	for (unsigned s = 0; s < CS_RANS_SYMS; s++)
		counts[s] += counts2[s];
	zat[nblocks] = nz;
	if (nz < 64)
		return 0;
	/* the runs of zeros, where the zeros cost enough that coding them
	 * as runs could save the 8 bytes choose_runs asks of it */
	if (RUNS(c->vformat) && counts[0] && counts[0] * log2((double)nz / counts[0]) > 64)
		for (uint32_t b = 0; b < nblocks; b++) {
			uint32_t run = 0;
			if (line[b])
				continue; /* no runs: their zeros are counted as such */
			for (uint32_t i = zat[b]; i < zat[b + 1]; i++) {
				if (c->z[i] == 0) {
					run++;
					continue;
				}
				runs[run >= RUN_TRIES[0] ? run : 0]++;
				run = 0;
			}
			runs[run >= RUN_TRIES[0] ? run : 0]++;
		}
	/* formats 6 to 8: runs of zeros as tokens, where they pay */
	uint32_t min_run = RUNS(c->vformat) ? choose_runs(counts, runs) : 0;
	if (min_run) {
		uint32_t w = 0;
		for (uint32_t b = 0; b < nblocks; b++) {
			uint32_t from = zat[b], m = zat[b + 1] - from;
			zat[b] = w;
			if (line[b])
				memmove(c->z + w, c->z + from, m * sizeof *c->z);
			w += line[b] ? m : tokenise(c->z + w, c->z + from, m, min_run);
		}
		zat[nblocks] = w;
	}
	if (cs_rans_build(&c->rans, counts))
		return 0;
	cs_buf_reset(&c->dir2);
	if (cs_rans_put(&c->rans, &c->dir2))
		return -ENOMEM;
	/* each symbol's cost in 1/256 bits, its raw bits included */
	uint32_t cost[CS_RANS_SYMS];
	const cs_rans_table *rt = &c->rans.t;
	for (unsigned s = 0; s < rt->end; s++)
		cost[s] = rt->freq[s] ? cs_rans_cost(rt, s) : 0;
	size_t table = c->dir2.len, saved = 0;
	for (uint32_t b = 0; b < nblocks; b++) {
		if (!use[b])
			continue;
		uint64_t bits = 0;
		for (uint32_t i = zat[b]; i < zat[b + 1]; i++) {
			unsigned extra;
			bits += cost[cs_rans_token_sym(c->z[i], &extra)];
		}
		size_t coded = (size_t)(bits / 256 + 7) / 8 + 4 * states + varint_len(first[b]) +
			       (line[b] ? varint_len(slope[b]) : 0) + 2;
		size_t packed = packed_bytes(bi[b].count, bi[b].bw);
		use[b] = coded + 2 < packed;
		saved += use[b] ? packed - coded : 0;
	}
	if (saved <= table + 8)
		return 0;
	cs_buf_reset(&c->raw2);
	int64_t prev[2] = {0, 0};
	int rc = 0;
	for (uint32_t b = 0; !rc && b < nblocks; b++) {
		uint32_t start = b * bs, blen = n - start < bs ? n - start : bs;
		if (!use[b]) {
			rc = cs_buf_append(&c->raw2, c->raw.data + off[b], off[b + 1] - off[b]);
			rc = rc ? rc : put_entry(&c->dir2, &bi[b], blen, prev, wide);
			continue;
		}
		/* bitmap (when a value is absent), first - min and the coded
		 * differences, or the line's level - min and slope and the
		 * coded values less the line */
		size_t at = c->raw2.len;
		if (bi[b].count < blen)
			rc = cs_buf_append(&c->raw2, c->raw.data + off[b], (blen + 7) / 8);
		rc = rc ? rc : cs_buf_put_varint(&c->raw2, first[b]);
		if (line[b])
			rc = rc ? rc : cs_buf_put_varint(&c->raw2, slope[b]);
		/* formats 6 to 8: bits back in a block with no run of zeros */
		uint8_t back = RUNS(c->vformat);
		for (uint32_t i = zat[b]; back && i < zat[b + 1]; i++)
			back = !(c->z[i] & CS_RANS_RUN);
		if (!rc && back)
			rc = cs_rans_encode_split_back(&c->rans, c->z + zat[b], zat[b + 1] - zat[b],
						       &c->raw2);
		else if (!rc && wide)
			rc = cs_rans_encode_split(&c->rans, c->z + zat[b], zat[b + 1] - zat[b], &c->raw2);
		else if (!rc)
			rc = cs_rans_encode(&c->rans, c->z + zat[b], zat[b + 1] - zat[b], &c->raw2);
		if (rc)
			break;
		block_info e = bi[b];
		e.type = BLOCK_RANS;
		e.back = back;
		e.line = line[b];
		e.len = (uint32_t)(c->raw2.len - at);
		e.check = check32(c->raw2.data + at, e.len);
		rc = put_entry(&c->dir2, &e, blen, prev, wide);
	}
	return rc ? rc : 1;
}

int cs_values_encode(cs_codec *c, const double *v, uint32_t n, cs_buf *out,
		     cs_agg *agg)
{
	if (n == 0 || n > CS_CHUNK_MAX)
		return -EINVAL;
	int wide = WIDE(c->vformat);
	uint32_t bs = wide ? CS_VALUE_BLOCK : CS_VALUE_BLOCK_V3;
	uint32_t nblocks = (n + bs - 1) / bs;
	cs_agg total = {0, 0, 0, 0};
	cs_buf_reset(&c->raw);
	cs_buf_reset(&c->dir);
	int64_t prev[2] = {0, 0};
	uint8_t no_table = 0; /* format 5 without coded blocks: an empty table */
	if (wide && cs_buf_append(&c->dir, &no_table, 1))
		return -ENOMEM;
	size_t f64_bytes = 0;
	block_info *bi = c->bi;
	uint32_t *off = c->off;
	int decimal = c->vformat == FORMAT_DECIMAL, has_dec = 0;
	uint64_t dec_bits = 0, dec_count = 0, steady = 0;
	if (decimal && !c->dv && !(c->dv = malloc((size_t)CS_CHUNK_MAX * sizeof *c->dv)))
		return -ENOMEM;
	int mode = decimal ? round_to_nearest() : FE_TONEAREST;
	for (uint32_t b = 0; b < nblocks; b++) {
		uint32_t start = b * bs;
		uint32_t blen = n - start < bs ? n - start : bs;
		size_t before = c->raw.len;
		off[b] = (uint32_t)before;
		int rc = encode_block(c, v + start, blen, &bi[b], decimal ? c->dv + start : NULL);
		has_dec |= bi[b].dec;
		dec_bits += bi[b].dec ? (uint64_t)bi[b].bw * bi[b].count : 0;
		dec_count += bi[b].dec ? bi[b].count : 0;
		steady += bi[b].steady;
		if (!rc)
			rc = put_entry(&c->dir, &bi[b], blen, prev, wide);
		if (rc) {
			round_back(mode);
			return rc;
		}
		if (bi[b].type == BLOCK_F64)
			f64_bytes += c->raw.len - before;
		cs_agg_merge(&total, &bi[b].agg);
	}
	off[nblocks] = (uint32_t)c->raw.len;
	round_back(mode);
	*agg = total;
	/* the entropy pass reads decimal blocks as their integers */
	for (uint32_t b = 0; has_dec && b < nblocks; b++)
		if (!bi[b].dec)
			memcpy(c->dv + (size_t)b * bs, v + (size_t)b * bs,
			       (size_t)(b + 1 < nblocks ? bs : n - b * bs) * sizeof *v);
	int coded = entropy_pass(c, has_dec ? c->dv : v, n, bs, bi, off, nblocks);
	if (coded < 0)
		return coded;
	/* Packed or coded integers are about as dense as their noise: zstd
	 * is tried only when byte-plane doubles, which it does shrink, are at
	 * least half of the payload. Format 8 only where a block is decimal,
	 * else 7 (coded) or 5. */
	uint8_t lines = c->vformat == FORMAT_DECIMAL ? FORMAT_LINE : c->vformat;
	size_t at = out->len;
	int rc = coded ? finish_blob(c, !wide ? FORMAT_ENTROPY : has_dec ? FORMAT_DECIMAL : lines,
				     &c->raw2, n, c->dir2.data, c->dir2.len,
				     2 * f64_bytes >= c->raw2.len, out)
		       : finish_blob(c, !wide ? FORMAT_COMPACT : has_dec ? FORMAT_DECIMAL : FORMAT_WIDE,
				     &c->raw, n, c->dir.data, c->dir.len, 2 * f64_bytes >= c->raw.len,
				     out);
	if (rc || !has_dec ||
	    (dec_bits <= (uint64_t)DEC_WIDE_BITS * dec_count && 4 * steady < dec_count))
		return rc;
	/* wide or steady decimals: the chunk as format 7 writes it too, the
	 * shorter kept */
	cs_agg alt_agg;
	cs_buf_reset(&c->alt);
	c->vformat = FORMAT_LINE;
	rc = cs_values_encode(c, v, n, &c->alt, &alt_agg);
	c->vformat = FORMAT_DECIMAL;
	if (rc || c->alt.len >= out->len - at)
		return 0; /* (the decimal chunk stands) */
	out->len = at;
	*agg = alt_agg;
	return cs_buf_append(out, c->alt.data, c->alt.len);
}

/* Directory and checksum bytes between the header and the payload of a
 * value chunk, from its header; 0 for an unknown format or n. */
static size_t values_dir_len(const uint8_t *head)
{
	uint32_t n = cs_get_u32(head + 4);
	size_t nblocks = (n + CS_BLOCK_SAMPLES - 1) / CS_BLOCK_SAMPLES;
	if (n == 0 || n > CS_CHUNK_MAX)
		return 0;
	switch (head[0]) {
	case FORMAT_DECIMAL:
	case FORMAT_LINE:
	case FORMAT_RUNS:
	case FORMAT_WIDE:
	case FORMAT_ENTROPY:
	case FORMAT_COMPACT: {
		size_t dl = cs_get_u16(head + 2);
		return dl ? dl + CHECK_LEN : 0;
	}
	case FORMAT_CHECKED:
		return DIR_ENTRY_LEN * nblocks + CHECK_LEN;
	case FORMAT_UNCHECKED:
		return DIR_ENTRY_LEN_V1 * nblocks;
	default:
		return 0;
	}
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
	if (!(values ? VARDIR(format) : TL_BLOCKED(format)) && format != FORMAT_CHECKED &&
	    format != FORMAT_UNCHECKED)
		return seterr(err, errlen, "unknown chunk format");
	if (blob[1] & ~FLAG_ZSTD)
		return seterr(err, errlen, "unknown chunk flags");
	uint32_t n = cs_get_u32(blob + 4);
	uint32_t raw_len = cs_get_u32(blob + 8);
	uint32_t stored_len = cs_get_u32(blob + 12);
	if (n == 0 || n > CS_CHUNK_MAX)
		return seterr(err, errlen, "chunk sample count out of range");
	if (values && !VARDIR(format) && cs_get_u16(blob + 2) != CS_BLOCK_SAMPLES)
		return seterr(err, errlen, "unsupported chunk block size");
	if (!values && cs_get_u16(blob + 2) != 0 && TL_BLOCKED(format))
		return seterr(err, errlen, "unknown timeline header");
	size_t before = values ? values_dir_len(blob) : 0;
	if (values && !before)
		return seterr(err, errlen, "chunk directory length out of range");
	size_t after = !values && format != FORMAT_UNCHECKED ? CHECK_LEN : 0;
	if (len != HEADER_LEN + before + stored_len + after)
		return seterr(err, errlen, "chunk length does not match header");
	if (format != FORMAT_UNCHECKED) {
		size_t covered = values ? HEADER_LEN + before - CHECK_LEN : len - CHECK_LEN;
		if (check32(blob, covered) != cs_get_u32(blob + covered))
			return seterr(err, errlen, values ? "checksum mismatch in chunk header"
							  : "timeline checksum mismatch");
	}
	/* No chunk of n samples needs more than 8 bytes a value plus 16 of
	 * bitmap a block, or 20 bytes of varints a sample; a format 4
	 * timeline up to 12 bytes a coded value (two a sample), 42 a block of
	 * 128 and its two tables (at most 560 bytes each). */
	size_t most = (size_t)n * 24 + 64;
	if (!values && TL_ENTROPY(format))
		most = (size_t)n * 25 + 64 + 2 * 560;
	if (raw_len > most)
		return seterr(err, errlen, "chunk payload size out of range");
	const uint8_t *p = blob + HEADER_LEN + before;
	if (blob[1] & FLAG_ZSTD) {
		cs_buf *scratch = values ? &c->scratch : &c->tscratch;
		int rc = cs_buf_reserve(scratch, (size_t)raw_len + 1); /* never NULL, even for 0 */
		if (rc)
			return rc;
		cs_blobkey key;
		if (!cs_blobcache_get(p, stored_len, raw_len, scratch->data, &key)) {
			size_t got = ZSTD_decompressDCtx(c->dctx, scratch->data,
							 raw_len, p, stored_len);
			if (ZSTD_isError(got) || got != raw_len)
				return seterr(err, errlen, "corrupt zstd payload");
			cs_blobcache_put(&key, scratch->data);
		}
		p = scratch->data;
	} else if (stored_len != raw_len) {
		return seterr(err, errlen, "uncompressed payload length mismatch");
	}
	*n_out = n;
	*before_out = before;
	*payload = p;
	*payload_len = raw_len;
	return 0;
}

/* The fields of block b's entry that every format has, validated. */
static int set_block(cs_values_view *view, uint32_t b, uint8_t type, unsigned bw, uint32_t count,
		     double mn, double mx, double sum, uint32_t check, size_t len, size_t *off,
		     char *err, size_t errlen)
{
	uint32_t blen = cs_values_block_len(view, b);
	if (type > BLOCK_RANS || count > blen || (type == BLOCK_EMPTY) != (count == 0) ||
	    (type == BLOCK_RANS && count < 2))
		return seterr(err, errlen, "corrupt block directory");
	if ((type == BLOCK_INT || type == BLOCK_RANS) &&
	    (bw > 55 || !is_packable_int(mn) || !is_packable_int(mx) || mx < mn))
		return seterr(err, errlen, "corrupt integer block header");
	view->type[b] = type;
	view->bw[b] = (uint8_t)bw;
	view->count[b] = (uint16_t)count;
	view->min[b] = mn;
	view->max[b] = mx;
	view->sum[b] = sum;
	view->check[b] = check;
	view->offset[b] = (uint32_t)*off;
	/* a coded block holds at least its bitmap, first and states */
	if (type == BLOCK_RANS && len < (count < blen ? (blen + 7) / 8 : 0) + 1 + 4 * view->states)
		return seterr(err, errlen, "coded block shorter than its header");
	*off += type == BLOCK_RANS ? len : block_payload_len(type, bw, count, blen);
	if (*off > view->payload_len)
		return seterr(err, errlen, "block runs past payload");
	return 0;
}

/* Parses a format 3 to 8 directory (see put_entry). */
static int parse_compact_dir(cs_values_view *view, uint8_t format, const uint8_t *p,
			     const uint8_t *end, size_t *off, char *err, size_t errlen)
{
	int64_t prev_min = 0, prev_sum = 0;
	int wide = WIDE(format);
	uint32_t empty_check = check32(p, 0);
	/* format 5: a table of no symbols is the one byte 0 */
	int entropy = format == FORMAT_ENTROPY || (wide && p < end && *p);
	if (wide && !entropy && p++ >= end)
		return seterr(err, errlen, "block directory cut short");
	if (entropy && cs_rans_parse(&view->rans, &p, end,
				     RUNS(format) ? CS_RANS_RUN_SYMS : CS_RANS_VALUE_SYMS))
		return seterr(err, errlen, "corrupt frequency table");
	for (uint32_t b = 0; b < view->nblocks; b++) {
		uint32_t blen = cs_values_block_len(view, b);
		if (p >= end)
			return seterr(err, errlen, "block directory cut short");
		uint8_t kind = *p++;
		uint8_t type = kind & 3;
		uint8_t back = kind >> 3 & 1, line = kind >> 4 & 1, dec = kind >> 5 & 1;
		if (kind & ~63u || (back && (!RUNS(format) || type != BLOCK_RANS)) ||
		    (line && (!LINES(format) || !back)) || (type == BLOCK_RANS && !entropy) ||
		    (dec && (format != FORMAT_DECIMAL || (type != BLOCK_INT && type != BLOCK_RANS))) ||
		    (type == BLOCK_EMPTY && kind != 0))
			return seterr(err, errlen, "corrupt block directory");
		view->back[b] = back;
		view->line[b] = line;
		uint64_t count = type == BLOCK_EMPTY ? 0 : blen;
		double mn = 0, mx = 0, sum = 0;
		unsigned bw = 0;
		uint32_t check = 0;
		if (type != BLOCK_EMPTY && !(kind & 4) &&
		    (cs_get_varint(&p, end, &count) || count == 0 || count >= blen))
			return seterr(err, errlen, "corrupt block count");
		if (dec && (p >= end || *p < 1 || *p > DEC_MAX))
			return seterr(err, errlen, "corrupt decimal exponent");
		view->dec[b] = dec ? *p++ : 0;
		uint64_t len = 0;
		if (type == BLOCK_INT || type == BLOCK_RANS) {
			uint64_t dmin, range, dsum;
			if (cs_get_varint(&p, end, &dmin) || cs_get_varint(&p, end, &range) ||
			    cs_get_varint(&p, end, &dsum))
				return seterr(err, errlen, "block directory cut short");
			int64_t imin, isum;
			if (__builtin_add_overflow(prev_min, cs_unzigzag(dmin), &imin) ||
			    __builtin_add_overflow(prev_sum, cs_unzigzag(dsum), &isum) ||
			    imin < -9007199254740992LL || imin > 9007199254740992LL ||
			    range > 18014398509481984ULL || imin + (int64_t)range > 9007199254740992LL)
				return seterr(err, errlen, "corrupt integer block header");
			prev_min = imin;
			prev_sum = isum;
			bw = bit_width(range);
			mn = (double)imin;
			mx = (double)(imin + (int64_t)range);
			sum = (double)isum;
			if (type == BLOCK_RANS && (cs_get_varint(&p, end, &len) || len > UINT32_MAX))
				return seterr(err, errlen, "block directory cut short");
		} else if (type == BLOCK_F64) {
			if (end - p < 24)
				return seterr(err, errlen, "block directory cut short");
			mn = cs_get_f64(p);
			mx = cs_get_f64(p + 8);
			sum = cs_get_f64(p + 16);
			p += 24;
		}
		if (wide && type == BLOCK_INT && count == blen && bw == 0) {
			check = empty_check; /* no payload, no checksum */
		} else if (type != BLOCK_EMPTY) {
			if (end - p < 4)
				return seterr(err, errlen, "block directory cut short");
			check = cs_get_u32(p);
			p += 4;
		}
		int rc = set_block(view, b, type, bw, (uint32_t)count, mn, mx, sum, check, (size_t)len,
				   off, err, errlen);
		if (rc)
			return rc;
	}
	return p == end ? 0 : seterr(err, errlen, "block directory has trailing bytes");
}

/* Validates the block directory at dir (dirlen bytes, before any
 * checksum) and records every block's entry and offset. */
static int parse_dir(cs_values_view *view, uint8_t format, const uint8_t *dir, size_t dirlen,
		     char *err, size_t errlen)
{
	view->bs = WIDE(format)      ? CS_VALUE_BLOCK
		   : COMPACT(format) ? CS_VALUE_BLOCK_V3
				     : CS_BLOCK_SAMPLES;
	view->nblocks = (view->n + view->bs - 1) / view->bs;
	view->states = WIDE(format) ? 2 : 1;
	view->runs = RUNS(format);
	memset(view->back, 0, view->nblocks);
	memset(view->line, 0, view->nblocks);
	memset(view->dec, 0, view->nblocks);
	size_t off = 0;
	int rc = 0;
	if (VARDIR(format)) {
		rc = parse_compact_dir(view, format, dir, dir + dirlen, &off, err, errlen);
	} else {
		size_t el = format == FORMAT_CHECKED ? DIR_ENTRY_LEN : DIR_ENTRY_LEN_V1;
		for (uint32_t b = 0; !rc && b < view->nblocks; b++) {
			const uint8_t *d = dir + (size_t)b * el;
			rc = set_block(view, b, d[0], d[1], cs_get_u16(d + 2), cs_get_f64(d + 4),
				       cs_get_f64(d + 12), cs_get_f64(d + 20),
				       format == FORMAT_CHECKED ? cs_get_u32(d + DIR_ENTRY_LEN_V1) : 0,
				       0, &off, err, errlen);
		}
	}
	if (rc)
		return rc;
	if (off != view->payload_len)
		return seterr(err, errlen, "payload has trailing bytes");
	view->offset[view->nblocks] = (uint32_t)off;
	return 0;
}

int cs_values_check_block(const cs_values_view *view, uint32_t b, char *err, size_t errlen)
{
	uint32_t count = view->count[b];
	uint32_t blen = cs_values_block_len(view, b);
	const uint8_t *p = view->payload + view->offset[b];
	if (view->checked && view->type[b] != BLOCK_EMPTY &&
	    check32(p, view->offset[b + 1] - view->offset[b]) != view->check[b])
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
	view->checked = blob[0] != FORMAT_UNCHECKED;
	rc = parse_dir(view, blob[0], blob + HEADER_LEN, before - (view->checked ? CHECK_LEN : 0),
		       err, errlen);
	for (uint32_t b = 0; !rc && b < view->nblocks; b++)
		rc = cs_values_check_block(view, b, err, errlen);
	return rc;
}

size_t cs_values_head_len(const uint8_t head[CS_VALUES_HEADER_LEN])
{
	size_t dirlen = values_dir_len(head);
	return dirlen ? HEADER_LEN + dirlen : 0;
}

int cs_values_open_dir(cs_values_view *view, const uint8_t *head, size_t head_len,
		       size_t blob_len, char *err, size_t errlen)
{
	if (head_len < HEADER_LEN ||
	    (!VARDIR(head[0]) && head[0] != FORMAT_CHECKED && head[0] != FORMAT_UNCHECKED))
		return seterr(err, errlen, "unknown chunk format");
	if (head[1] & FLAG_ZSTD)
		return -ENOTSUP;
	if (head[1])
		return seterr(err, errlen, "unknown chunk flags");
	if (!VARDIR(head[0]) && cs_get_u16(head + 2) != CS_BLOCK_SAMPLES)
		return seterr(err, errlen, "unsupported chunk block size");
	if (cs_values_head_len(head) != head_len)
		return seterr(err, errlen, "chunk sample count out of range");
	uint32_t raw_len = cs_get_u32(head + 8), stored_len = cs_get_u32(head + 12);
	view->n = cs_get_u32(head + 4);
	view->checked = head[0] != FORMAT_UNCHECKED;
	if (raw_len != stored_len || blob_len != head_len + stored_len ||
	    raw_len > (size_t)view->n * 24 + 64)
		return seterr(err, errlen, "chunk length does not match header");
	if (view->checked &&
	    check32(head, head_len - CHECK_LEN) != cs_get_u32(head + head_len - CHECK_LEN))
		return seterr(err, errlen, "checksum mismatch in chunk header");
	view->payload = NULL;
	view->payload_len = raw_len;
	return parse_dir(view, head[0], head + HEADER_LEN,
			 head_len - HEADER_LEN - (view->checked ? CHECK_LEN : 0), err, errlen);
}

uint32_t cs_values_block_len(const cs_values_view *view, uint32_t b)
{
	uint32_t start = b * view->bs;
	return view->n - start < view->bs ? view->n - start : view->bs;
}

void cs_values_block_agg(const cs_values_view *view, uint32_t b, cs_agg *agg)
{
	agg->count = view->count[b];
	agg->min = view->min[b];
	agg->max = view->max[b];
	agg->sum = view->sum[b];
	if (view->dec[b]) { /* the integers' */
		int mode = round_to_nearest();
		decimal_agg(agg, view->dec[b]);
		round_back(mode);
	}
}

int cs_values_block_packed(const cs_values_view *view, uint32_t b)
{
	/* (a decimal block's parts are read as a double block's: whole) */
	return view->type[b] == BLOCK_INT && view->count[b] == cs_values_block_len(view, b) &&
	       !view->dec[b];
}

int cs_values_block_agg_range(const cs_values_view *view, uint32_t b, uint32_t i0, uint32_t i1,
			      cs_agg *agg)
{
	uint32_t n = i1 - i0;
	if (!cs_values_block_packed(view, b))
		return 0;
	unsigned bw = view->bw[b];
	int64_t base = (int64_t)view->min[b];
	uint64_t lo = 0, hi = 0, sum = 0;
	if (bw) {
		const uint8_t *src = view->payload + view->offset[b];
		size_t srclen = view->offset[b + 1] - view->offset[b];
		uint64_t mask = (1ull << bw) - 1; /* bw <= 55 */
		lo = mask;
		size_t bit = (size_t)i0 * bw;
		/* 8-byte loads while they stay inside the block (bit < fast),
		 * two values a step, then the tail */
		size_t fast = srclen >= 8 ? (srclen - 7) * 8 : 0;
		uint32_t nfast = bit < fast ? (uint32_t)((fast - bit + bw - 1) / bw) : 0;
		nfast = nfast < n ? nfast : n;
		uint64_t lo2 = mask, hi2 = 0, sum2 = 0;
		uint32_t i = 0;
		for (; i + 2 <= nfast; i += 2, bit += 2 * bw) {
			uint64_t d = (cs_get_u64(src + (bit >> 3)) >> (bit & 7)) & mask;
			size_t bit2 = bit + bw;
			uint64_t e = (cs_get_u64(src + (bit2 >> 3)) >> (bit2 & 7)) & mask;
			lo = d < lo ? d : lo;
			hi = d > hi ? d : hi;
			sum += d; /* below 512 * 2^55 */
			lo2 = e < lo2 ? e : lo2;
			hi2 = e > hi2 ? e : hi2;
			sum2 += e;
		}
		lo = lo2 < lo ? lo2 : lo;
		hi = hi2 > hi ? hi2 : hi;
		sum += sum2;
		for (i += i0; i < i1; i++, bit += bw) {
			uint64_t d = (load_tail(src + (bit >> 3), srclen - (bit >> 3)) >> (bit & 7)) & mask;
			lo = d < lo ? d : lo;
			hi = d > hi ? d : hi;
			sum += d;
		}
	}
	/* the values' sum, |sum| <= 512 * 2^53, in wrapping arithmetic */
	uint64_t total = (uint64_t)base * n + sum;
	agg->count = n;
	agg->min = (double)(base + (int64_t)lo);
	agg->max = (double)(base + (int64_t)hi);
	agg->sum = (double)(int64_t)total;
	return 1;
}

/* The first n of block b's coded values (differences, or values less a
 * line) from its stream p[0..len): format 6's layout (format 5's with runs
 * of zeros, or with bits back; format 7's too), format 5's (two states,
 * raw bits apart) or format 4's (one state). */
static void decode_coded(const cs_values_view *view, uint32_t b, const uint8_t *p, size_t len,
			 uint32_t n, uint64_t *z)
{
	uint32_t all = view->count[b] - 1u + view->line[b];
	if (view->back[b] && n + CS_RANS_BACK_VALUES > all) {
		/* a stream with bits back decodes whole */
		cs_rans_decode_split_back(&view->rans, p, len, all, z);
	} else if (view->back[b]) {
		cs_rans_decode_split(&view->rans, p, len, n, z);
	} else if (view->runs)
		cs_rans_decode_runs(&view->rans, p, len, n, z);
	else if (view->states == 2)
		cs_rans_decode_split(&view->rans, p, len, n, z);
	else
		cs_rans_decode(&view->rans, p, len, n, z);
}

/* A value coded against a line: its point, level + (t >> 8) with t the
 * slope's product (line_at), plus the zigzagged token z. */
static inline double line_value(uint64_t level, uint64_t t, uint64_t z)
{
	return (double)(int64_t)(level + (uint64_t)((int64_t)t >> 8) + (uint64_t)cs_unzigzag(z));
}

/* The first n present values of coded block b from its payload
 * p[0..len) past its bitmap (bitmap: NULL when every sample is present):
 * first - min and differences, or a line's level and slope and values
 * less the line (kind bit 4). */
static void decode_rans_values(const cs_values_view *view, uint32_t b, const uint8_t *p, size_t len,
			       const uint8_t *bitmap, uint32_t n, double *out)
{
	const uint8_t *q = p, *end = p + len;
	uint64_t first = 0, z[CS_VALUE_BLOCK];
	if (cs_get_varint(&q, end, &first))
		first = 0;
	if (!view->line[b]) {
		uint64_t x = (uint64_t)(int64_t)view->min[b] + first;
		decode_coded(view, b, q, (size_t)(end - q), n - 1, z);
		out[0] = (double)(int64_t)x;
		for (uint32_t i = 1; i < n; i++) {
			x += (uint64_t)cs_unzigzag(z[i - 1]);
			out[i] = (double)(int64_t)x;
		}
		return;
	}
	uint64_t slope = 0;
	if (cs_get_varint(&q, end, &slope))
		slope = 0;
	decode_coded(view, b, q, (size_t)(end - q), n, z);
	/* line_at(level, slope, j, blen), its product stepped sample by
	 * sample: level + (t >> 8) */
	uint32_t blen = cs_values_block_len(view, b), k = 0;
	uint64_t level = (uint64_t)(int64_t)view->min[b] + (uint64_t)cs_unzigzag(first);
	uint64_t sl = (uint64_t)cs_unzigzag(slope), t = sl * (uint64_t)(-(int64_t)(blen / 2));
	if (!bitmap) /* sample j is value k */
		for (; k < n; k++, t += sl)
			out[k] = line_value(level, t, z[k]);
	for (uint32_t j = 0; bitmap && j < blen && k < n; j++, t += sl)
		if (bitmap[j >> 3] >> (j & 7) & 1) {
			out[k] = line_value(level, t, z[k]);
			k++;
		}
	for (; k < n; k++) /* a bitmap with fewer samples than its count */
		out[k] = 0;
}

int cs_values_block_decode_head(const cs_values_view *view, uint32_t b, uint32_t n, double *out)
{
	uint8_t type = view->type[b];
	if ((type != BLOCK_INT && type != BLOCK_RANS) || view->count[b] != cs_values_block_len(view, b) ||
	    view->dec[b])
		return 0;
	const uint8_t *p = view->payload + view->offset[b];
	size_t plen = view->offset[b + 1] - view->offset[b];
	if (type == BLOCK_INT)
		unpack_bits(p, plen, n, view->bw[b], (int64_t)view->min[b], out);
	else
		decode_rans_values(view, b, p, plen, NULL, n, out);
	return 1;
}

void cs_values_block_decode(const cs_values_view *view, uint32_t b,
			    double *out)
{
	uint8_t type = view->type[b];
	unsigned bw = view->bw[b];
	uint32_t count = view->count[b];
	uint32_t blen = cs_values_block_len(view, b);
	const uint8_t *p = view->payload + view->offset[b];
	size_t plen = view->offset[b + 1] - view->offset[b];
	double vals[CS_VALUE_BLOCK];
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
		unpack_bits(p, plen, count, bw, (int64_t)view->min[b], dst);
	} else if (type == BLOCK_RANS) {
		decode_rans_values(view, b, p, plen, bitmap, count, dst);
	} else {
		for (uint32_t i = 0; i < count; i++) {
			uint8_t bytes[8];
			for (unsigned j = 0; j < 8; j++)
				bytes[j] = p[(size_t)j * count + i]; /* NOLINT(clang-analyzer-core.NullDereference) */
			memcpy(&dst[i], bytes, 8);
		}
	}
	if (view->dec[b]) { /* the integers over 10^dec, divided as written */
		int mode = round_to_nearest();
		double scale = POW10[view->dec[b]];
		for (uint32_t i = 0; i < count; i++)
			dst[i] /= scale;
		round_back(mode);
	}
	if (bitmap) {
		uint32_t k = 0;
		/* vals[0..count) was filled above: dst == vals when a bitmap exists
		 * (a bitmap of more samples than count, in bytes no checksum
		 * vouched for, gets NaN past them) */
		for (uint32_t i = 0; i < blen; i++)
			// cppcheck-suppress uninitvar
			out[i] = (bitmap[i >> 3] >> (i & 7)) & 1 && k < count ? vals[k++] /* NOLINT(clang-analyzer-core.uninitialized.Assign) */
									    : (double)NAN;
	}
}

void cs_values_decode(const cs_values_view *view, double *out)
{
	for (uint32_t b = 0; b < view->nblocks; b++)
		cs_values_block_decode(view, b, out + (size_t)b * view->bs);
}

/* Timelines (format 4; format 3, varints under zstd, is still read): per
 * sample a t0 step (t0[j] - t0[j-1], from the second sample of a block on)
 * and a duration (t1[j] - t0[j]), each coded as the zigzagged difference
 * from a prediction: the step or duration before it (from a reference
 * value at a block's start), or the reference itself, whichever the
 * chunk's counts say is cheaper. The references are the medians; one rANS
 * table per kind of step; a block's values interleaved in one stream,
 * duration first. */

/* The median of v[0..n) (n >= 1), reordering v: N. Wirth's selection
 * ("Algorithms + Data Structures = Programs", 1976). */
static uint64_t median(uint64_t *v, uint32_t n)
{
	int64_t lo = 0, hi = (int64_t)n - 1, k = n / 2;
	while (lo < hi) {
		uint64_t x = v[k];
		int64_t i = lo, j = hi;
		do {
			while (v[i] < x)
				i++;
			while (x < v[j])
				j--;
			if (i <= j) {
				uint64_t t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		} while (i <= j);
		if (j < k)
			lo = i;
		if (k < i)
			hi = j;
	}
	return v[k];
}

/* Bits of coding what counts counted with a table made from them: order-0
 * entropy, raw bits and a byte of table a symbol. */
static double coded_bits(const uint32_t counts[CS_RANS_SYMS])
{
	double total = 0, bits = 0;
	for (unsigned s = 0; s < CS_RANS_SYMS; s++)
		total += counts[s];
	for (unsigned s = 0; s < CS_RANS_SYMS; s++) {
		if (!counts[s])
			continue;
		bits += counts[s] * (log2(total / counts[s]) + cs_rans_extra(s)) + 8;
	}
	return bits;
}

static uint64_t step_sym(uint64_t v, uint64_t pred)
{
	return cs_zigzag((int64_t)(v - pred));
}

static void count_sym(uint32_t *counts, uint64_t z)
{
	unsigned extra;
	counts[cs_rans_sym(z, &extra)]++;
}

int cs_timeline_encode(cs_codec *c, const uint64_t *t0, const uint64_t *t1,
		       uint32_t n, cs_buf *out)
{
	if (n == 0 || n > CS_CHUNK_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) /* what the decoder accepts: below 2^63 */
		if (t1[i] < t0[i] || (i && t0[i] < t0[i - 1]) || t1[i] > INT64_MAX)
			return -EINVAL;
	if (!c->tz && !(c->tz = malloc(2 * (size_t)CS_CHUNK_MAX * sizeof *c->tz)))
		return -ENOMEM;
	uint32_t nblocks = (n + CS_BLOCK_SAMPLES - 1) / CS_BLOCK_SAMPLES;
	/* the references: medians of the steps and of the durations, among
	 * at most about 1024 of each, evenly spread (a reference need not be
	 * exact) */
	uint64_t *tmp = c->tz;
	uint32_t nsteps = 0, every = n / 1024 + 1, k = 0;
	for (uint32_t i = 1; i < n; i++)
		if (i % CS_BLOCK_SAMPLES && nsteps++ % every == 0)
			tmp[k++] = t0[i] - t0[i - 1];
	uint64_t ref_step = k ? median(tmp, k) : 0;
	k = 0;
	for (uint32_t i = 0; i < n; i += every)
		tmp[k++] = t1[i] - t0[i];
	uint64_t ref_dur = median(tmp, k);
	/* each kind's symbols counted both ways: [0] chained, [1] fixed */
	uint32_t (*counts)[CS_RANS_SYMS] = c->tcounts;
	memset(c->tcounts, 0, sizeof c->tcounts);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t dur = t1[i] - t0[i];
		uint64_t pdur = i % CS_BLOCK_SAMPLES ? t1[i - 1] - t0[i - 1] : ref_dur;
		count_sym(counts[2], step_sym(dur, pdur));
		count_sym(counts[3], step_sym(dur, ref_dur));
		if (!(i % CS_BLOCK_SAMPLES))
			continue;
		uint64_t step = t0[i] - t0[i - 1];
		uint64_t pstep = (i - 1) % CS_BLOCK_SAMPLES ? t0[i - 1] - t0[i - 2] : ref_step;
		count_sym(counts[0], step_sym(step, pstep));
		count_sym(counts[1], step_sym(step, ref_step));
	}
	uint8_t mode = 0;
	if (coded_bits(counts[1]) < coded_bits(counts[0]))
		mode |= TL_T0_FIXED;
	if (coded_bits(counts[3]) < coded_bits(counts[2]))
		mode |= TL_DUR_FIXED;
	uint32_t *step_counts = counts[mode & TL_T0_FIXED ? 1 : 0];
	if (!nsteps)
		step_counts[0] = 1; /* blocks of one sample: a table all the same */
	int rc = cs_rans_build(&c->rans, step_counts);
	rc = rc ? rc : cs_rans_build(&c->rans2, counts[mode & TL_DUR_FIXED ? 3 : 2]);
	cs_buf_reset(&c->raw);
	cs_buf_reset(&c->dir); /* the streams, appended to raw after the block list */
	rc = rc ? rc : cs_buf_append(&c->raw, &mode, 1);
	rc = rc ? rc : cs_buf_put_varint(&c->raw, ref_step);
	rc = rc ? rc : cs_buf_put_varint(&c->raw, ref_dur);
	rc = rc ? rc : cs_rans_put(&c->rans, &c->raw);
	rc = rc ? rc : cs_rans_put(&c->rans2, &c->raw);
	const cs_rans_coder *tabs[2] = {&c->rans2, &c->rans}; /* duration, then step */
	int one = c->tformat == TL_FORMAT_BACK;
	for (uint32_t b = 0; !rc && b < nblocks; b++) {
		uint32_t j0 = b * CS_BLOCK_SAMPLES, j1 = j0 + CS_BLOCK_SAMPLES < n ? j0 + CS_BLOCK_SAMPLES : n;
		uint64_t *z = c->tz;
		uint32_t nz = 0;
		for (uint32_t i = j0; i < j1; i++) {
			uint64_t dur = t1[i] - t0[i];
			uint64_t pdur = i > j0 && !(mode & TL_DUR_FIXED) ? t1[i - 1] - t0[i - 1] : ref_dur;
			z[nz++] = step_sym(dur, pdur);
			if (i + 1 < j1) {
				uint64_t step = t0[i + 1] - t0[i];
				uint64_t pstep = i > j0 && !(mode & TL_T0_FIXED) ? t0[i] - t0[i - 1] : ref_step;
				z[nz++] = step_sym(step, pstep);
			}
		}
		size_t before = c->dir.len;
		rc = one ? cs_rans_encode_back(tabs, z, nz, &c->dir) : cs_rans_encode_n(tabs, 2, z, nz, &c->dir);
		uint64_t first = b ? t0[j0] - t0[j0 - CS_BLOCK_SAMPLES] : t0[0];
		uint64_t span = t0[j1 - 1] - t0[j0];
		if (one && b) {
			/* format 5: against the last t0 before and the reference
			 * step, in wrapping arithmetic (exact both ways) */
			first = cs_zigzag((int64_t)(t0[j0] - t0[j0 - 1] - ref_step));
			span = cs_zigzag((int64_t)(span - (uint64_t)(j1 - j0 - 1) * ref_step));
		} else if (one) {
			span = cs_zigzag((int64_t)(span - (uint64_t)(j1 - j0 - 1) * ref_step));
		}
		rc = rc ? rc : cs_buf_put_varint(&c->raw, first);
		rc = rc ? rc : cs_buf_put_varint(&c->raw, span);
		rc = rc ? rc : cs_buf_put_varint(&c->raw, c->dir.len - before);
	}
	rc = rc ? rc : cs_buf_append(&c->raw, c->dir.data, c->dir.len);
	return rc ? rc : finish_blob(c, c->tformat, &c->raw, n, NULL, 0, 0, out);
}

/* Decodes a whole format 1 or 2 timeline (one delta stream). */
static int decode_stream_v2(const uint8_t *p, const uint8_t *end, uint32_t n, uint64_t *t0,
			    uint64_t *t1, char *err, size_t errlen)
{
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

int cs_timeline_open(cs_codec *c, cs_timeline_view *v, const uint8_t *blob, size_t len,
		     uint32_t n, uint64_t *t0, uint64_t *t1, char *err, size_t errlen)
{
	uint32_t bn;
	const uint8_t *p;
	size_t before, plen;
	int rc = open_blob(c, blob, len, 0, &bn, &before, &p, &plen, err, errlen);
	if (rc)
		return rc;
	if (bn != n)
		return seterr(err, errlen, "timeline sample count mismatch");
	v->n = n;
	v->nblocks = (n + CS_BLOCK_SAMPLES - 1) / CS_BLOCK_SAMPLES;
	v->t0 = t0;
	v->t1 = t1;
	const uint8_t *end = p + plen;
	v->blocked = TL_BLOCKED(blob[0]);
	v->entropy = TL_ENTROPY(blob[0]);
	v->back = blob[0] == TL_FORMAT_BACK;
	if (v->entropy) {
		if (p == end || (*p & ~(TL_T0_FIXED | TL_DUR_FIXED)))
			return seterr(err, errlen, "unknown timeline mode");
		v->mode = *p++;
		if (cs_get_varint(&p, end, &v->ref_step) || cs_get_varint(&p, end, &v->ref_dur) ||
		    v->ref_step > INT64_MAX || v->ref_dur > INT64_MAX)
			return seterr(err, errlen, "corrupt timeline references");
		if (cs_rans_parse(&v->tab[0], &p, end, CS_RANS_SYMS) ||
		    cs_rans_parse(&v->tab[1], &p, end, CS_RANS_SYMS))
			return seterr(err, errlen, "corrupt timeline frequency table");
	}
	if (!v->blocked) {
		/* older formats: one stream, decoded here whole */
		rc = decode_stream_v2(p, end, n, t0, t1, err, errlen);
		for (uint32_t b = 0; !rc && b < v->nblocks; b++) {
			uint32_t j0 = b * CS_BLOCK_SAMPLES;
			uint32_t j1 = j0 + CS_BLOCK_SAMPLES < n ? j0 + CS_BLOCK_SAMPLES : n;
			v->first[b] = t0[j0];
			v->last[b] = t0[j1 - 1];
		}
		return rc;
	}
	size_t off = 0;
	for (uint32_t b = 0; b < v->nblocks; b++) {
		uint64_t start, span, slen;
		if (cs_get_varint(&p, end, &start) || cs_get_varint(&p, end, &span) ||
		    cs_get_varint(&p, end, &slen))
			return seterr(err, errlen, "truncated timeline block list");
		if (v->back) {
			/* format 5: first and span against what the reference
			 * step predicts, wrapping (range-checked below) */
			uint32_t j0 = b * CS_BLOCK_SAMPLES;
			uint32_t blen = n - j0 < CS_BLOCK_SAMPLES ? n - j0 : CS_BLOCK_SAMPLES;
			if (b)
				start = (uint64_t)cs_unzigzag(start) + v->ref_step + v->last[b - 1];
			span = (uint64_t)cs_unzigzag(span) + (uint64_t)(blen - 1) * v->ref_step;
			if (b && start < v->last[b - 1])
				return seterr(err, errlen, "corrupt timeline block list");
		} else if (b && __builtin_add_overflow(v->first[b - 1], start, &start)) {
			return seterr(err, errlen, "corrupt timeline block list");
		}
		if (start > INT64_MAX || span > INT64_MAX - start || (b && start < v->last[b - 1]) ||
		    slen > plen)
			return seterr(err, errlen, "corrupt timeline block list");
		v->first[b] = start;
		v->last[b] = start + span;
		v->offset[b] = (uint32_t)off;
		off += slen;
	}
	if (off != (size_t)(end - p))
		return seterr(err, errlen, "timeline streams do not fill the payload");
	v->offset[v->nblocks] = (uint32_t)off;
	v->payload = p;
	return 0;
}

/* Block b of a format 4 or 5 timeline: samples j0..j1. */
static int timeline_block_entropy(cs_timeline_view *v, uint32_t b, uint32_t j0, uint32_t j1,
				  char *err, size_t errlen)
{
	uint64_t z[2 * CS_BLOCK_SAMPLES];
	const cs_rans_table *tabs[2] = {&v->tab[1], &v->tab[0]}; /* duration, then step */
	const uint8_t *p = v->payload + v->offset[b];
	size_t len = v->offset[b + 1] - v->offset[b];
	if (v->back)
		cs_rans_decode_back(tabs, p, len, 2 * (j1 - j0) - 1, z);
	else
		cs_rans_decode_n(tabs, 2, p, len, 2 * (j1 - j0) - 1, z);
	uint64_t *t0 = v->t0, *t1 = v->t1;
	int64_t step = (int64_t)v->ref_step, dur = (int64_t)v->ref_dur;
	for (uint32_t i = j0; i < j1; i++) {
		const uint64_t *zi = z + 2 * (i - j0);
		if (i == j0) {
			t0[i] = v->first[b];
		} else {
			if (v->mode & TL_T0_FIXED)
				step = (int64_t)v->ref_step;
			if (__builtin_add_overflow(step, cs_unzigzag(zi[-1]), &step) || step < 0 ||
			    __builtin_add_overflow(t0[i - 1], (uint64_t)step, &t0[i]) ||
			    t0[i] > v->last[b])
				return seterr(err, errlen, "corrupt timeline delta");
		}
		if (v->mode & TL_DUR_FIXED)
			dur = (int64_t)v->ref_dur;
		if (__builtin_add_overflow(dur, cs_unzigzag(zi[0]), &dur) || dur < 0 ||
		    __builtin_add_overflow(t0[i], (uint64_t)dur, &t1[i]) || t1[i] > INT64_MAX)
			return seterr(err, errlen, "corrupt timeline duration");
	}
	if (t0[j1 - 1] != v->last[b])
		return seterr(err, errlen, "corrupt timeline block");
	return 0;
}

int cs_timeline_block(cs_timeline_view *v, uint32_t b, char *err, size_t errlen)
{
	if (!v->blocked)
		return 0;
	const uint8_t *p = v->payload + v->offset[b], *end = v->payload + v->offset[b + 1];
	uint32_t j0 = b * CS_BLOCK_SAMPLES, j1 = j0 + CS_BLOCK_SAMPLES < v->n ? j0 + CS_BLOCK_SAMPLES : v->n;
	uint64_t *t0 = v->t0, *t1 = v->t1;
	if (v->entropy)
		return timeline_block_entropy(v, b, j0, j1, err, errlen);
	int64_t delta = 0, dur = 0;
	for (uint32_t i = j0; i < j1; i++) {
		uint64_t x;
		if (i == j0) {
			t0[i] = v->first[b];
		} else {
			if (cs_get_varint(&p, end, &x))
				return seterr(err, errlen, "truncated timeline");
			if (__builtin_add_overflow(delta, cs_unzigzag(x), &delta) || delta < 0 ||
			    __builtin_add_overflow(t0[i - 1], (uint64_t)delta, &t0[i]) ||
			    t0[i] > v->last[b])
				return seterr(err, errlen, "corrupt timeline delta");
		}
		if (cs_get_varint(&p, end, &x))
			return seterr(err, errlen, "truncated timeline");
		if (__builtin_add_overflow(dur, cs_unzigzag(x), &dur) || dur < 0 ||
		    __builtin_add_overflow(t0[i], (uint64_t)dur, &t1[i]) || t1[i] > INT64_MAX)
			return seterr(err, errlen, "corrupt timeline duration");
	}
	if (p != end || t0[j1 - 1] != v->last[b])
		return seterr(err, errlen, "corrupt timeline block");
	return 0;
}

int cs_timeline_decode(cs_codec *c, const uint8_t *blob, size_t len,
		       uint32_t n, uint64_t *t0, uint64_t *t1, char *err,
		       size_t errlen)
{
	cs_timeline_view v;
	int rc = cs_timeline_open(c, &v, blob, len, n, t0, t1, err, errlen);
	for (uint32_t b = 0; !rc && b < v.nblocks; b++)
		rc = cs_timeline_block(&v, b, err, errlen);
	return rc;
}
