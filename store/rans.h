/*
 * rans.h - the entropy coder of integer value blocks (cs_rans_*): a
 * range asymmetric numeral system (rANS, J. Duda, "Asymmetric numeral
 * systems", arXiv:1311.2540), byte-wise renormalised with a 32-bit state
 * as in F. Giesen's public-domain ryg_rans, over a static table of
 * 12-bit frequencies a chunk keeps in its directory.
 *
 * What is coded are zigzagged differences between neighbouring values.
 * A value below 16 is a symbol of its own; a larger one of bit length k
 * is symbol 16 + 8 (k - 5) + its three bits below the leading one, and
 * its k - 4 lower bits follow it as uniform steps of at most 12 bits: 432
 * symbols cover every difference of values within +-2^53 (what value
 * blocks hold), 496 every 64-bit one (timelines' time steps). The layout is
 * in docs/schema.md.
 */
#ifndef CS_RANS_H
#define CS_RANS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define CS_RANS_SYMS 496u
#define CS_RANS_VALUE_SYMS 432u /* the symbols of values within +-2^53 */
#define CS_RANS_SCALE 12u /* frequencies sum to 1 << CS_RANS_SCALE */

/* A table is stored as each used symbol's weight code q (weight 2^(q/16)),
 * from which coder and decoder work out the same frequencies. What a
 * decoder keeps: */
typedef struct cs_rans_table {
	uint16_t freq[CS_RANS_SYMS], start[CS_RANS_SYMS];
	uint16_t slot[1u << CS_RANS_SCALE]; /* the symbol of each slot */
	unsigned end;                       /* one past the last symbol used */
} cs_rans_table;

/* What the coder keeps besides: the codes, and each used symbol with its
 * division by its frequency made a multiplication. */
typedef struct cs_rans_enc {
	uint32_t xmax, rcp, bias;
	uint16_t cmpl, shift;
} cs_rans_enc;
typedef struct cs_rans_coder {
	cs_rans_table t;
	uint8_t present[CS_RANS_SYMS], q[CS_RANS_SYMS];
	cs_rans_enc enc[CS_RANS_SYMS];
} cs_rans_coder;

/* The symbol of zigzag value z, and how many raw bits follow it. */
static inline unsigned cs_rans_sym(uint64_t z, unsigned *extra_bits)
{
	if (z < 16) {
		*extra_bits = 0;
		return (unsigned)z;
	}
	unsigned k = 64u - (unsigned)__builtin_clzll(z);
	*extra_bits = k - 4;
	return 16u + 8u * (k - 5) + (unsigned)((z >> (k - 4)) & 7);
}

/* How many raw bits follow symbol s. */
static inline unsigned cs_rans_extra(unsigned s)
{
	return s < 16 ? 0 : (s - 16) / 8 + 1;
}

/* Value chunks of format 6 also code runs of zero differences: a run of
 * r zeros (2 <= r < 2^CS_RANS_RUN_KMAX), r of bit length k, is symbol
 * CS_RANS_VALUE_SYMS + k - 2, followed by the k - 1 bits of r below its
 * leading one. What the coder takes for such a run is the token
 * CS_RANS_RUN | r; every other token is a zigzagged difference (below
 * 2^55, so never tagged). */
#define CS_RANS_RUN_KMAX 9u /* a block of 512 values has 511 differences */
#define CS_RANS_RUN_SYMS (CS_RANS_VALUE_SYMS + CS_RANS_RUN_KMAX - 1u)
#define CS_RANS_RUN (1ull << 63)

/* The symbol of token t of a value block, and how many raw bits follow. */
static inline unsigned cs_rans_token_sym(uint64_t t, unsigned *extra_bits)
{
	if (t & CS_RANS_RUN) {
		unsigned k = 64u - (unsigned)__builtin_clzll(t & ~CS_RANS_RUN);
		*extra_bits = k - 1;
		return CS_RANS_VALUE_SYMS + k - 2;
	}
	return cs_rans_sym(t, extra_bits);
}

/* How many raw bits follow symbol s of a value block. */
static inline unsigned cs_rans_token_extra(unsigned s)
{
	return s >= CS_RANS_VALUE_SYMS ? s - CS_RANS_VALUE_SYMS + 1 : cs_rans_extra(s);
}

/* The table for the symbol counts given: each counted symbol's weight
 * code (16 log2 of its count), the frequencies they give (each at least
 * one slot) and the coder's view of them; the slot map, which only
 * decoding needs, is left as it was. 0, or -EINVAL when nothing was
 * counted. */
int cs_rans_build(cs_rans_coder *c, const uint32_t counts[CS_RANS_SYMS]);

/* The table's bytes (docs/schema.md), appended to out. 0 or -ENOMEM. */
int cs_rans_put(const cs_rans_coder *c, cs_buf *out);

/* Reads a table at *p (before end), advancing *p; fills the slot map. 0,
 * or -EBADMSG for a table that is cut short, does not add up or uses a
 * symbol from syms on (CS_RANS_VALUE_SYMS, CS_RANS_RUN_SYMS or
 * CS_RANS_SYMS). */
int cs_rans_parse(cs_rans_table *t, const uint8_t **p, const uint8_t *end, unsigned syms);

/* The cost of coding a value block's symbol s (a run from
 * CS_RANS_VALUE_SYMS on) with t, its raw bits included, in 1/256 bits (s
 * must be used by t). */
uint32_t cs_rans_cost(const cs_rans_table *t, unsigned s);

/* Codes z[0..n) (every symbol in t) and appends the stream (a 4-byte
 * state, then bytes) to out. 0 or -ENOMEM. */
int cs_rans_encode(const cs_rans_coder *c, const uint64_t *z, uint32_t n, cs_buf *out);

/* Codes z[0..n) as cs_rans_encode does, but value i with table c[i % k],
 * k 1 or 2. With k = 2 the stream has two states (8 bytes: state 0,
 * state 1), value i goes through state i % 2, and both share the bytes
 * that follow (two kinds of value in one stream, decoded two at a time). */
int cs_rans_encode_n(const cs_rans_coder *const *c, unsigned k, const uint64_t *z, uint32_t n,
		     cs_buf *out);

/* The most values (tokens) one stream of the coders with raw bits apart
 * holds: a value block's differences, a timeline block's steps and
 * durations. */
#define CS_RANS_SPLIT_MAX 512u

/* Codes tokens z[0..n) (cs_rans_token_sym: values, and runs of zeros
 * where t has their symbols) with table c through two interleaved states
 * (token i by state i % 2), symbols only, and their raw bits apart:
 * appends the two states (8 bytes), the symbols' bytes, then the raw bits
 * of every token, in token order and least significant first, packed
 * into bytes that are stored last to first, so that the block's last
 * byte holds the first raw bits (a decoder reads the symbols forward from
 * the start and the raw bits backward from the end). 0, -EINVAL for n
 * over CS_RANS_SPLIT_MAX, or -ENOMEM. */
int cs_rans_encode_split(const cs_rans_coder *c, const uint64_t *z, uint32_t n, cs_buf *out);

/* Codes z[0..n) (values, no runs) as cs_rans_encode_split does, but the
 * last 46 raw bits of the last 32 values (all of theirs, when fewer) start
 * the states instead of being stored, as cs_rans_encode_back lays them
 * out. The first n - 32 values decode alone (cs_rans_decode_split), all
 * of them only whole (cs_rans_decode_split_back). 0, -EINVAL for n over
 * CS_RANS_SPLIT_MAX, or -ENOMEM. */
int cs_rans_encode_split_back(const cs_rans_coder *c, const uint64_t *z, uint32_t n, cs_buf *out);

/* How many values of a stream cs_rans_encode_split_back coded, n of them,
 * decode without its last raw bits: all but the last 32. */
#define CS_RANS_BACK_VALUES 32u

/* Codes z[0..n) (any 64-bit values) as cs_rans_encode_split does, but
 * value i with table c[i % 2] (two kinds of value in one stream), and the
 * last 46 raw bits of the last 32 values (all of theirs, when fewer) not
 * stored: they make the states' start, bits 0-22 of state 0's and then
 * of state 1's (each state starts at 2^23 plus its bits), the first of
 * them lowest. A decoder finds them in the states it ends with, so the
 * stream decodes only whole. 0, -EINVAL for n over CS_RANS_SPLIT_MAX,
 * or -ENOMEM. */
int cs_rans_encode_back(const cs_rans_coder *const *c, const uint64_t *z, uint32_t n, cs_buf *out);

/* Decodes what cs_rans_encode_split coded, p[0..len) the whole of it. */
void cs_rans_decode_split(const cs_rans_table *t, const uint8_t *p, size_t len, uint32_t n,
			  uint64_t *z);

/* Decodes n values from what cs_rans_encode_split coded with runs of
 * zeros (a table of up to CS_RANS_RUN_SYMS symbols), p[0..len) the whole
 * of it; a run longer than what is left of n ends at n. */
void cs_rans_decode_runs(const cs_rans_table *t, const uint8_t *p, size_t len, uint32_t n,
			 uint64_t *z);

/* Decodes n values from p[0..len) into z. Never reads outside p[0..len):
 * a stream cut short decodes to something, never past its end. */
void cs_rans_decode(const cs_rans_table *t, const uint8_t *p, size_t len, uint32_t n,
		    uint64_t *z);

/* Decodes what cs_rans_encode_n coded: value i with table t[i % k], k 1
 * or 2. */
void cs_rans_decode_n(const cs_rans_table *const *t, unsigned k, const uint8_t *p, size_t len,
		      uint32_t n, uint64_t *z);

/* Decodes what cs_rans_encode_split_back coded, the whole of it. */
void cs_rans_decode_split_back(const cs_rans_table *t, const uint8_t *p, size_t len, uint32_t n,
			       uint64_t *z);

/* Decodes what cs_rans_encode_back coded, the whole of it. */
void cs_rans_decode_back(const cs_rans_table *const *t, const uint8_t *p, size_t len, uint32_t n,
			 uint64_t *z);

#endif
