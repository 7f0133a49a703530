/*
 * rans.c - rANS over zigzagged differences (rans.h).
 */
#include "rans.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define M (1u << CS_RANS_SCALE)
#define RANS_L (1u << 23) /* the state stays in [RANS_L, 256 RANS_L) */
#define CHUNK_BITS 12u    /* raw bits go through the coder at most 12 at a time */

/* The value of symbol s with its raw bits. */
static uint64_t sym_value(unsigned s, uint64_t extra)
{
	if (s < 16)
		return s;
	unsigned k = (s - 16) / 8 + 5;
	return ((uint64_t)(8 | ((s - 16) & 7)) << (k - 4)) | extra;
}

static void enc_init(cs_rans_enc *e, uint32_t start, uint32_t freq);

/* A symbol's weight from its one-byte code q: 2^(q/16), as integers both
 * sides compute alike (base[j] = round(1024 * 2^(j/16))). */
static uint64_t weight(uint8_t q)
{
	static const uint16_t base[16] = {1024, 1069, 1117, 1166, 1218, 1272, 1328, 1387,
					  1448, 1512, 1579, 1649, 1722, 1798, 1878, 1961};
	return (uint64_t)base[q & 15] << (q >> 4);
}

/* Frequencies from the codes of the present symbols, deterministically:
 * each its share of M (at least 1), what rounding leaves given to or
 * taken from the largest (the first of equals). Then starts and slots. */
static int normalise(cs_rans_table *t, const uint8_t *q, const uint8_t *present)
{
	uint64_t sum = 0;
	unsigned end = 0; /* one past the last symbol used */
	for (unsigned s = 0; s < CS_RANS_SYMS; s++)
		if (present[s])
			sum += weight(q[s]), end = s + 1;
	if (!sum)
		return -EINVAL;
	int64_t total = 0;
	for (unsigned s = 0; s < end; s++) {
		uint64_t f = present[s] ? weight(q[s]) * M / sum : 0;
		t->freq[s] = (uint16_t)(present[s] && !f ? 1 : f);
		total += t->freq[s];
	}
	memset(t->freq + end, 0, (CS_RANS_SYMS - end) * sizeof *t->freq);
	while (total != (int64_t)M) {
		unsigned top = 0;
		for (unsigned s = 1; s < end; s++)
			if (t->freq[s] > t->freq[top])
				top = s;
		int64_t d = (int64_t)M - total;
		if (d < 0 && -d > (int64_t)t->freq[top] - 1)
			d = 1 - (int64_t)t->freq[top];
		if (!d)
			return -EINVAL; /* (cannot happen: at most 496 symbols of 4096 slots) */
		t->freq[top] = (uint16_t)((int64_t)t->freq[top] + d);
		total += d;
	}
	uint32_t at = 0;
	for (unsigned s = 0; s < end; s++) {
		t->start[s] = (uint16_t)at;
		at += t->freq[s];
	}
	for (unsigned s = end; s < CS_RANS_SYMS; s++)
		t->start[s] = (uint16_t)at; /* M: past every slot */
	t->end = end;
	return 0;
}

int cs_rans_build(cs_rans_coder *c, const uint32_t counts[CS_RANS_SYMS])
{
	/* (the coder needs no slot map: only what it uses is cleared) */
	memset(c->present, 0, sizeof c->present);
	memset(c->q, 0, sizeof c->q);
	for (unsigned s = 0; s < CS_RANS_SYMS; s++) {
		if (!counts[s])
			continue;
		double l = 16.0 * log2((double)counts[s]);
		c->q[s] = (uint8_t)(l > 255 ? 255 : lrint(l));
		c->present[s] = 1;
	}
	cs_rans_table *t = &c->t;
	int rc = normalise(t, c->q, c->present);
	for (unsigned s = 0; !rc && s < t->end; s++)
		if (t->freq[s])
			enc_init(&c->enc[s], t->start[s], t->freq[s]);
	return rc;
}

/* Table bytes: one past the last symbol used (varint), a bitmap of the
 * symbols used below it, then each used symbol's one-byte weight code. */
int cs_rans_put(const cs_rans_coder *t, cs_buf *out)
{
	unsigned top = 0;
	for (unsigned s = 0; s < CS_RANS_SYMS; s++)
		if (t->present[s])
			top = s + 1;
	int rc = cs_buf_put_varint(out, top);
	uint8_t bits[(CS_RANS_SYMS + 7) / 8] = {0};
	for (unsigned s = 0; s < top; s++)
		if (t->present[s])
			bits[s / 8] |= (uint8_t)(1u << (s % 8));
	rc = rc ? rc : cs_buf_append(out, bits, (top + 7) / 8);
	for (unsigned s = 0; !rc && s < top; s++)
		if (t->present[s])
			rc = cs_buf_append(out, &t->q[s], 1);
	return rc;
}

int cs_rans_parse(cs_rans_table *t, const uint8_t **p, const uint8_t *end, unsigned syms)
{
	uint64_t top;
	uint8_t present[CS_RANS_SYMS] = {0}, q[CS_RANS_SYMS] = {0};
	if (cs_get_varint(p, end, &top) || top == 0 || top > syms || top > CS_RANS_SYMS ||
	    (size_t)(end - *p) < (top + 7) / 8)
		return -EBADMSG;
	const uint8_t *bits = *p;
	*p += (top + 7) / 8;
	if (top % 8 && bits[top / 8] >> (top % 8))
		return -EBADMSG;
	for (unsigned s = 0; s < top; s++) {
		if (!(bits[s / 8] >> (s % 8) & 1))
			continue;
		if (*p >= end)
			return -EBADMSG;
		present[s] = 1;
		q[s] = *(*p)++;
	}
	if (!present[top - 1] || normalise(t, q, present))
		return -EBADMSG;
	/* each symbol's slots, four at a time (a table is parsed at every
	 * open of its chunk: filling 4096 slots one by one was most of it) */
	for (unsigned k = 0; k < t->end; k++) {
		uint16_t *d = t->slot + t->start[k], *e = d + t->freq[k];
		uint64_t four = (uint64_t)k * 0x0001000100010001ull;
		for (; d + 4 <= e; d += 4)
			memcpy(d, &four, 8);
		for (; d < e; d++)
			*d = (uint16_t)k;
	}
	return 0;
}

uint32_t cs_rans_cost(const cs_rans_table *t, unsigned s)
{
	return (uint32_t)(256.0 * (CS_RANS_SCALE - log2((double)t->freq[s]))) +
	       256u * cs_rans_token_extra(s);
}

/* A symbol as the coder takes it: division by its frequency done as a
 * multiplication by a reciprocal (F. Giesen, ryg_rans, after Alverson,
 * "Integer division using reciprocals"). */
typedef cs_rans_enc enc_sym;

static void enc_init(enc_sym *e, uint32_t start, uint32_t freq)
{
	e->xmax = ((RANS_L >> CS_RANS_SCALE) << 8) * freq;
	e->cmpl = (uint16_t)(M - freq);
	if (freq < 2) {
		/* x / 1 by the reciprocal 2^32 - 1, exact for x < 2^31 */
		e->rcp = ~0u;
		e->shift = 0;
		e->bias = start + M - 1;
	} else {
		uint32_t sh = 0;
		while (freq > (1u << sh))
			sh++;
		e->rcp = (uint32_t)(((1ull << (sh + 31)) + freq - 1) / freq);
		e->shift = (uint16_t)(sh - 1);
		e->bias = start;
	}
}

/* v at p, little-endian (a state, or 32 raw bits) */
static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (unsigned b = 0; b < 4; b++)
		p[b] = (uint8_t)(v >> (8 * b));
}

static inline void put_sym(uint32_t *x, uint8_t **ptr, const enc_sym *e)
{
	/* a state is under 2^31 and xmax at least 2^19: two bytes at most
	 * go, both written below *ptr and then as many as go taken (every
	 * coder leaves two bytes of room a step) */
	uint32_t v = *x;
	unsigned n = (v >= e->xmax) + ((v >> 8) >= e->xmax);
	(*ptr)[-1] = (uint8_t)v;
	(*ptr)[-2] = (uint8_t)(v >> 8);
	*ptr -= n;
	v = (uint32_t)((uint64_t)v >> (8 * n));
	uint32_t q = (uint32_t)(((uint64_t)v * e->rcp) >> 32) >> e->shift;
	*x = v + e->bias + q * e->cmpl;
}

/* k raw bits (1..12) as one of 2^k equal symbols: a power-of-two
 * frequency, so shifts for the division */
static inline void put_raw(uint32_t *x, uint8_t **ptr, uint32_t value, unsigned k)
{
	unsigned fs = CS_RANS_SCALE - k;
	uint32_t v = *x, xmax = ((RANS_L >> CS_RANS_SCALE) << 8) << fs;
	while (v >= xmax) {
		*--*ptr = (uint8_t)v;
		v >>= 8;
	}
	*x = ((v >> fs) << CS_RANS_SCALE) + (v & ((1u << fs) - 1)) + (value << fs);
}

/* The coder, value i with table c[i % k] (k 1 or 2) and, for k = 2, state
 * i % 2: two rANS states over one byte stream (F. Giesen's interleaving),
 * so that a decoder works on two values at once. Inlined with k known,
 * as decode_k. */
static inline __attribute__((always_inline)) int
encode_k(const cs_rans_coder *const *c, unsigned k, const uint64_t *z, uint32_t n, cs_buf *out)
{
	/* the tables' symbols in locals: the bytes stored below could alias
	 * anything read through c */
	const enc_sym *es0 = c[0]->enc, *es1 = c[k > 1 ? 1 : 0]->enc;
	/* at most two bytes a step, six steps a value (a symbol, 60 raw bits):
	 * written downwards from the end of that much room in out, then
	 * moved up behind the states */
	size_t bound = (size_t)n * 12 + 8, head = 4 * k;
	int rc = cs_buf_reserve(out, bound + head);
	if (rc)
		return rc;
	uint8_t *end = out->data + out->len + head + bound, *ptr = end;
	uint32_t xs[2] = {RANS_L, RANS_L};
	/* last value first, and in each value its raw bits before its symbol:
	 * the decoder takes them the other way round */
	for (uint32_t i = n; i-- > 0;) {
		uint32_t *x = &xs[k > 1 ? i % 2 : 0];
		unsigned extra, s = cs_rans_sym(z[i], &extra);
		uint64_t raw = extra ? z[i] & ((1ull << extra) - 1) : 0;
		unsigned chunks = (extra + CHUNK_BITS - 1) / CHUNK_BITS;
		for (unsigned j = chunks; j-- > 0;) {
			unsigned lo = j * CHUNK_BITS, nb = extra - lo < CHUNK_BITS ? extra - lo : CHUNK_BITS;
			put_raw(x, &ptr, (uint32_t)((raw >> lo) & ((1u << nb) - 1)), nb);
		}
		put_sym(x, &ptr, k > 1 && i % 2 ? &es1[s] : &es0[s]);
	}
	uint8_t *dst = out->data + out->len;
	size_t len = (size_t)(end - ptr);
	for (unsigned j = 0; j < k; j++)
		put_le32(dst + 4 * j, xs[j]);
	memmove(dst + head, ptr, len);
	out->len += head + len;
	return 0;
}

int cs_rans_encode(const cs_rans_coder *c, const uint64_t *z, uint32_t n, cs_buf *out)
{
	return encode_k(&c, 1, z, n, out);
}

int cs_rans_encode_n(const cs_rans_coder *const *c, unsigned k, const uint64_t *z, uint32_t n,
		     cs_buf *out)
{
	return k == 2 ? encode_k(c, 2, z, n, out) : encode_k(c, 1, z, n, out);
}

/* The coder with raw bits apart: value i with table c[i % 2] and state
 * i % 2; tokens: z holds tokens of a value block (cs_rans_token_sym),
 * else any 64-bit values (cs_rans_sym); steal: the last raw bits of the
 * last STEAL_VALUES values, STEAL_BITS of them at most, start the states
 * instead of being stored, STATE_BITS a state, state 0 the first of them
 * (bits back: a decoder of the whole stream finds them in the states it
 * ends with, and the values before those last ones as it goes). Inlined
 * with tokens and steal known. */
#define STATE_BITS 23u /* RANS_L's: a state starts in [RANS_L, 2 RANS_L) */
#define STEAL_BITS (2 * STATE_BITS)
#define STEAL_VALUES CS_RANS_BACK_VALUES

static inline __attribute__((always_inline)) int
encode_split_k(const cs_rans_coder *const *c, int tokens, int steal, const uint64_t *z, uint32_t n,
	       cs_buf *out)
{
	const enc_sym *es0 = c[0]->enc, *es1 = c[1]->enc;
	if (n > CS_RANS_SPLIT_MAX)
		return -EINVAL;
	/* room: two bytes a symbol, and 8 a value for the raw bits (at most
	 * 60 a value) */
	size_t rawcap = (size_t)n * 8 + 8, bound = (size_t)n * 2 + 8, head = 8;
	int rc = cs_buf_reserve(out, head + bound + rawcap);
	if (rc)
		return rc;
	uint8_t *base = out->data + out->len, *end = base + head + bound, *ptr = end;
	uint8_t *raw = end; /* raw bytes go after the room, then move */
	/* each value's symbol and raw bit count, from the end: the raw bits
	 * (in value order, least significant first) from cut on go to the
	 * states */
	uint16_t sym[CS_RANS_SPLIT_MAX];
	uint8_t ext[CS_RANS_SPLIT_MAX];
	uint64_t total = 0, tail = 0, stolen = 0;
	for (uint32_t i = n; i-- > 0;) {
		unsigned e;
		sym[i] = (uint16_t)(tokens ? cs_rans_token_sym(z[i], &e) : cs_rans_sym(z[i], &e));
		ext[i] = (uint8_t)e;
		total += e;
		if (n - i <= STEAL_VALUES)
			tail = total;
	}
	uint64_t cut = steal ? total - (tail < STEAL_BITS ? tail : STEAL_BITS) : total, at = 0;
	uint64_t acc = 0;
	unsigned have = 0;
	size_t nraw = 0;
	/* before the last STEAL_VALUES values every raw bit is stored */
	uint32_t i = 0, stored = !steal ? n : n > STEAL_VALUES ? n - STEAL_VALUES : 0;
	for (; i < stored; i++) {
		/* at most 32 bits at a time, and 4 bytes out once acc holds 32
		 * (it holds under 32 between values, so never more than 63) */
		unsigned extra = ext[i];
		uint64_t bits = z[i] & ((1ull << extra) - 1); /* extra <= 60 */
		at += extra;
		if (extra > 32) {
			acc |= (bits & 0xffffffffu) << have;
			bits >>= 32;
			extra -= 32;
			put_le32(raw + nraw, (uint32_t)acc);
			nraw += 4;
			acc >>= 32;
		}
		acc |= bits << have;
		have += extra;
		if (have >= 32) {
			put_le32(raw + nraw, (uint32_t)acc);
			nraw += 4;
			acc >>= 32;
			have -= 32;
		}
	}
	for (; have >= 8; have -= 8, acc >>= 8)
		raw[nraw++] = (uint8_t)acc;
	for (; i < n; i++) {
		unsigned extra = ext[i];
		/* at most 32 bits at a time: acc never holds more than 39 */
		for (unsigned lo = 0; lo < extra; lo += 32) {
			unsigned nb = extra - lo < 32 ? extra - lo : 32;
			uint64_t bits = (z[i] >> lo) & ((1ull << nb) - 1);
			unsigned keep = at >= cut ? 0 : cut - at < nb ? (unsigned)(cut - at) : nb;
			if (keep < nb)
				stolen |= bits >> keep << (at + keep - cut);
			at += nb;
			acc |= (bits & ((1ull << keep) - 1)) << have;
			have += keep;
			for (; have >= 8; have -= 8, acc >>= 8)
				raw[nraw++] = (uint8_t)acc;
		}
	}
	if (have)
		raw[nraw++] = (uint8_t)acc;
	/* symbols: downwards from the end of their room, as encode_k */
	const uint64_t mask = (1ull << STATE_BITS) - 1;
	uint32_t xs[2] = {RANS_L | (uint32_t)(stolen & mask), RANS_L | (uint32_t)(stolen >> STATE_BITS)};
	for (i = n; i-- > 0;)
		put_sym(&xs[i % 2], &ptr, i % 2 ? &es1[sym[i]] : &es0[sym[i]]);
	for (unsigned j = 0; j < 2; j++)
		put_le32(base + 4 * j, xs[j]);
	size_t len = (size_t)(end - ptr);
	memmove(base + head, ptr, len);
	/* the raw bytes, last to first, right behind the symbols' */
	for (size_t j = 0; j < nraw / 2; j++) {
		uint8_t t = raw[j];
		raw[j] = raw[nraw - 1 - j];
		raw[nraw - 1 - j] = t;
	}
	memmove(base + head + len, raw, nraw);
	out->len += head + len + nraw;
	return 0;
}

int cs_rans_encode_split(const cs_rans_coder *c, const uint64_t *z, uint32_t n, cs_buf *out)
{
	const cs_rans_coder *tabs[2] = {c, c};
	return encode_split_k(tabs, 1, 0, z, n, out);
}

int cs_rans_encode_split_back(const cs_rans_coder *c, const uint64_t *z, uint32_t n, cs_buf *out)
{
	const cs_rans_coder *tabs[2] = {c, c};
	return encode_split_k(tabs, 1, 1, z, n, out);
}

int cs_rans_encode_back(const cs_rans_coder *const *c, const uint64_t *z, uint32_t n, cs_buf *out)
{
	return encode_split_k(c, 0, 1, z, n, out);
}

/* The raw bits of cs_rans_encode_split, read from the end of its stream
 * down: bits holds have of them, the next at bit 0. */
typedef struct raw_reader {
	uint64_t bits;
	unsigned have;
	const uint8_t *q, *lo; /* bytes below q, down to lo, not yet read */
} raw_reader;

/* Leaves at least 56 bits in r (fewer at the stream's start). Bytes read
 * past the raw bits (the symbols' last ones) sit above what is taken. */
static inline void raw_refill(raw_reader *r)
{
	if (r->q - r->lo >= 8) {
		uint64_t w = __builtin_bswap64(cs_get_u64(r->q - 8));
		unsigned bytes = (63 - r->have) >> 3;
		r->bits |= w << r->have;
		r->q -= bytes;
		r->have += bytes * 8;
	} else {
		while (r->have <= 56 && r->q > r->lo) {
			r->bits |= (uint64_t)*--r->q << r->have;
			r->have += 8;
		}
	}
}

/* The next n raw bits (n <= 52, after a refill), 0s where cut short. */
static inline uint64_t raw_take(raw_reader *r, unsigned n)
{
	uint64_t v = r->bits & ((1ull << n) - 1);
	r->bits = n < r->have ? r->bits >> n : 0;
	r->have = n < r->have ? r->have - n : 0;
	return v;
}

/* One symbol from state *x, renormalised from p (below end). */
static inline __attribute__((always_inline)) unsigned sym_step(const cs_rans_table *t, uint32_t *x, const uint8_t **p,
				const uint8_t *end)
{
	const uint32_t mask = M - 1;
	uint32_t v = *x;
	unsigned s = t->slot[v & mask];
	v = t->freq[s] * (v >> CS_RANS_SCALE) + (v & mask) - t->start[s];
	if (__builtin_expect(end - *p >= 2, 1)) {
		/* without branches: a state from a valid stream is at least
		 * RANS_L >> 12 here, so two bytes at most restore it; bytes
		 * beyond what it takes are shifted out */
		unsigned n = (v < RANS_L) + (v < (RANS_L >> 8));
		uint32_t two = (uint32_t)(*p)[0] << 8 | (*p)[1];
		v = v << (8 * n) | two >> (16 - 8 * n);
		*p += n;
	} else {
		while (v < RANS_L && *p < end)
			v = (v << 8) | *(*p)++;
	}
	*x = v;
	return s;
}

/* The k states (4 bytes each, little-endian) at the start of a stream,
 * *p moved past them (never past end). */
static inline void read_states(uint32_t *xs, unsigned k, const uint8_t **p, const uint8_t *end)
{
	for (unsigned j = 0; j < k; j++) {
		xs[j] = 0;
		for (unsigned b = 0; b < 4 && *p < end; b++)
			xs[j] |= (uint32_t)*(*p)++ << (8 * b);
	}
}

/* The raw bits of two values, e0 and e1 of them (at most 52 each: what
 * value symbols carry, CS_RANS_VALUE_SYMS), into *r0 and *r1. */
static inline void take_two(raw_reader *r, unsigned e0, unsigned e1, uint64_t *r0, uint64_t *r1)
{
	if (e0 + e1 > r->have)
		raw_refill(r);
	*r0 = raw_take(r, e0 < 52 ? e0 : 52);
	if (e1 > r->have)
		raw_refill(r);
	*r1 = raw_take(r, e1 < 52 ? e1 : 52);
}

/* Token s of a format 6 stream with its raw bits, into z[i..n): a value,
 * or a run of zeros cut at n. Returns the next i. */
static inline uint32_t put_token(unsigned s, uint64_t raw, uint64_t *z, uint32_t i, uint32_t n)
{
	if (s < CS_RANS_VALUE_SYMS) {
		z[i] = sym_value(s, raw);
		return i + 1;
	}
	/* a table of more than CS_RANS_RUN_SYMS symbols (not a value
	 * block's) makes wider runs: they end at n */
	unsigned e = cs_rans_token_extra(s);
	uint64_t run = e < 63 ? (1ull << e) | raw : UINT64_MAX;
	uint32_t k = run < n - i ? (uint32_t)run : n - i;
	memset(z + i, 0, (size_t)k * sizeof *z);
	return i + k;
}

/* The decoder of cs_rans_encode_split (runs: of a format 6 block, whose
 * run symbols make runs of zeros). Two tokens a step, as long as two
 * values are still to come (a token makes at least one); a step that
 * holds a run takes the slow way. Inlined with runs known. */
static inline __attribute__((always_inline)) void
decode_split_k(const cs_rans_table *t, int runs, const uint8_t *p, size_t len, uint32_t n,
	       uint64_t *z)
{
	const uint8_t *start = p, *end = p + len;
	uint32_t xs[2];
	read_states(xs, 2, &p, end);
	raw_reader r = {0, 0, end, start};
	uint32_t i = 0;
	while (i + 1 < n) {
		unsigned s0 = sym_step(t, &xs[0], &p, end);
		unsigned s1 = sym_step(t, &xs[1], &p, end);
		uint64_t r0, r1;
		take_two(&r, runs ? cs_rans_token_extra(s0) : cs_rans_extra(s0),
			 runs ? cs_rans_token_extra(s1) : cs_rans_extra(s1), &r0, &r1);
		if (!runs || (s0 < CS_RANS_VALUE_SYMS && s1 < CS_RANS_VALUE_SYMS)) {
			z[i] = sym_value(s0, r0);
			z[i + 1] = sym_value(s1, r1);
			i += 2;
			continue;
		}
		i = put_token(s0, r0, z, i, n);
		if (i < n)
			i = put_token(s1, r1, z, i, n);
	}
	if (i < n) {
		unsigned s0 = sym_step(t, &xs[0], &p, end);
		unsigned e0 = runs ? cs_rans_token_extra(s0) : cs_rans_extra(s0);
		raw_refill(&r);
		uint64_t r0 = raw_take(&r, e0 < 52 ? e0 : 52);
		if (runs)
			put_token(s0, r0, z, i, n);
		else
			z[i] = sym_value(s0, r0);
	}
}

void cs_rans_decode_split(const cs_rans_table *t, const uint8_t *p, size_t len, uint32_t n,
			  uint64_t *z)
{
	decode_split_k(t, 0, p, len, n, z);
}

void cs_rans_decode_runs(const cs_rans_table *t, const uint8_t *p, size_t len, uint32_t n,
			 uint64_t *z)
{
	decode_split_k(t, 1, p, len, n, z);
}

/* One value from state *x with table t, reading renormalisation bytes
 * from *p (never at or past end). */
static inline __attribute__((always_inline)) uint64_t
decode_one(const cs_rans_table *t, uint32_t *x, const uint8_t **p, const uint8_t *end)
{
	const uint32_t mask = M - 1;
	unsigned s = sym_step(t, x, p, end);
	uint32_t v = *x;
	unsigned extra = cs_rans_extra(s);
	uint64_t raw = 0;
	for (unsigned lo = 0; lo < extra; lo += CHUNK_BITS) {
		unsigned nb = extra - lo < CHUNK_BITS ? extra - lo : CHUNK_BITS;
		uint32_t r = (v & mask) >> (CS_RANS_SCALE - nb);
		v = (1u << (CS_RANS_SCALE - nb)) * (v >> CS_RANS_SCALE) + (v & mask) -
		    (r << (CS_RANS_SCALE - nb));
		while (v < RANS_L && *p < end)
			v = (v << 8) | *(*p)++;
		raw |= (uint64_t)r << lo;
	}
	*x = v;
	return sym_value(s, raw);
}

/* The decoder of encode_k: k states from the first 4k bytes, value i from
 * state and table i % k. */
static inline __attribute__((always_inline)) void
decode_k(const cs_rans_table *const *tabs, unsigned k, const uint8_t *p, size_t len, uint32_t n,
	 uint64_t *z)
{
	const cs_rans_table *t0 = tabs[0], *t1 = tabs[k > 1 ? 1 : 0];
	const uint8_t *end = p + len;
	uint32_t xs[2] = {0, 0};
	read_states(xs, k, &p, end);
	uint32_t i = 0;
	if (k > 1)
		for (; i + 1 < n; i += 2) {
			z[i] = decode_one(t0, &xs[0], &p, end);
			z[i + 1] = decode_one(t1, &xs[1], &p, end);
		}
	for (; i < n; i++)
		z[i] = decode_one(k > 1 && i % 2 ? t1 : t0, &xs[k > 1 ? i % 2 : 0], &p, end);
}

void cs_rans_decode(const cs_rans_table *t, const uint8_t *p, size_t len, uint32_t n,
		    uint64_t *z)
{
	decode_k(&t, 1, p, len, n, z);
}

void cs_rans_decode_n(const cs_rans_table *const *t, unsigned k, const uint8_t *p, size_t len,
		      uint32_t n, uint64_t *z)
{
	if (k == 2)
		decode_k(t, 2, p, len, n, z);
	else
		decode_k(t, 1, p, len, n, z);
}

/* The next e raw bits (up to 60) of r. */
static inline uint64_t raw_get(raw_reader *r, unsigned e)
{
	if (e > 52) {
		if (32 > r->have)
			raw_refill(r);
		uint64_t lo = raw_take(r, 32);
		if (e - 32 > r->have)
			raw_refill(r);
		return lo | raw_take(r, e - 32) << 32;
	}
	if (e > r->have)
		raw_refill(r);
	return raw_take(r, e);
}

/* The decoder of encode_split_k with steal set (values: of a value
 * block, whose symbols carry at most 52 raw bits, else up to 60). Inlined
 * with values known. */
static inline __attribute__((always_inline)) void
decode_back_k(const cs_rans_table *const *t, int values, const uint8_t *p, size_t len,
	      uint32_t n, uint64_t *z)
{
	const uint8_t *start = p, *end = p + len;
	uint32_t xs[2];
	read_states(xs, 2, &p, end);
	raw_reader r = {0, 0, end, start};
	/* up to the last STEAL_VALUES values, as decode_split: two at a time */
	uint32_t head = n > STEAL_VALUES ? n - STEAL_VALUES : 0, i = 0;
	for (; i + 1 < head; i += 2) {
		unsigned s0 = sym_step(t[0], &xs[0], &p, end), s1 = sym_step(t[1], &xs[1], &p, end);
		uint64_t r0, r1;
		if (values) {
			take_two(&r, cs_rans_extra(s0), cs_rans_extra(s1), &r0, &r1);
		} else {
			r0 = raw_get(&r, cs_rans_extra(s0));
			r1 = raw_get(&r, cs_rans_extra(s1));
		}
		z[i] = sym_value(s0, r0);
		z[i + 1] = sym_value(s1, r1);
	}
	if (i < head) {
		unsigned s0 = sym_step(t[0], &xs[0], &p, end);
		z[i] = sym_value(s0, raw_get(&r, cs_rans_extra(s0)));
	}
	/* the last ones: their symbols (z holds them for now), then the
	 * states they end in hold the last of their raw bits */
	uint64_t tail = 0;
	for (i = head; i < n; i++) {
		z[i] = sym_step(t[i % 2], &xs[i % 2], &p, end);
		tail += cs_rans_extra((unsigned)z[i]);
	}
	const uint64_t mask = (1ull << STATE_BITS) - 1;
	uint64_t stolen = (xs[0] & mask) | (uint64_t)(xs[1] & mask) << STATE_BITS;
	uint64_t kept = tail > STEAL_BITS ? tail - STEAL_BITS : 0, at = 0;
	for (i = head; i < n; i++) {
		unsigned s = (unsigned)z[i], e = cs_rans_extra(s);
		unsigned keep = at >= kept ? 0 : kept - at < e ? (unsigned)(kept - at) : e;
		uint64_t raw = raw_get(&r, keep);
		if (keep < e)
			raw |= (stolen >> (at + keep - kept) & ((1ull << (e - keep)) - 1)) << keep;
		at += e;
		z[i] = sym_value(s, raw);
	}
}

void cs_rans_decode_back(const cs_rans_table *const *t, const uint8_t *p, size_t len, uint32_t n,
			 uint64_t *z)
{
	decode_back_k(t, 0, p, len, n, z);
}

void cs_rans_decode_split_back(const cs_rans_table *t, const uint8_t *p, size_t len, uint32_t n,
			       uint64_t *z)
{
	const cs_rans_table *tabs[2] = {t, t};
	decode_back_k(tabs, 1, p, len, n, z);
}
