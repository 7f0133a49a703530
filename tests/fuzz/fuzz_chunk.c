/* fuzz_chunk.c - libFuzzer target: value and timeline chunk decoders on any
 * bytes (a corrupt database must never crash a reader), format 4 and 5
 * timelines on any payload under a valid checksum, and the entropy coder:
 * a table and a stream from any bytes decode without reading past them,
 * what it codes from any table decodes back the same, and so do values
 * and a timeline made of the bytes. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "rans.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* A format 4 or 5 timeline (by the size's parity) of n samples (bytes 0-1
 * of data, plus 1) whose
 * payload is the rest of data, sealed with the checksum docs/schema.md
 * gives (the low half of XXH3 over header and payload). */
static void sealed_timeline(cs_codec *c, const uint8_t *data, size_t size, uint64_t *t0,
			    uint64_t *t1)
{
	static uint8_t blob[16 + 65536 + 4];
	if (size < 2 || size - 2 > 65536)
		return;
	uint32_t n = (uint32_t)(data[0] | data[1] << 8) + 1, plen = (uint32_t)(size - 2);
	uint8_t h[16] = {(uint8_t)(4 + (size & 1)), 0, 0, 0}; /* format 4 or 5 */
	memcpy(h + 4, &n, 4);
	memcpy(h + 8, &plen, 4);
	memcpy(h + 12, &plen, 4);
	memcpy(blob, h, 16);
	memcpy(blob + 16, data + 2, plen);
	uint32_t check = (uint32_t)XXH3_64bits(blob, 16 + (size_t)plen);
	memcpy(blob + 16 + plen, &check, 4);
	char err[128];
	cs_timeline_decode(c, blob, 16 + (size_t)plen + 4, n, t0, t1, err, sizeof err);
}

/* Values made of the bytes (2 a value: a trend, noise, now and then an
 * absent value, a burst, a zero, a value near -2^53 or 2^53, a decimal
 * fraction or a third), coded (format 8, or formats 7, 6, 5, 3 and 4 as
 * earlier versions wrote them, by the first byte) and decoded back bit
 * for bit, whole and each block's first samples; then every block decoded
 * again from its payload with the bytes XORed onto it (the checksums,
 * which reads verify first, left out: a decoder must take any bytes). */
static void values_round_trip(cs_codec *c, const uint8_t *data, size_t size)
{
	static double v[4096], o[4096];
	static uint8_t damaged[4096 * 8 + 1024];
	uint32_t n = 0;
	int64_t slope = size ? (int8_t)(data[0] ^ data[size - 1]) : 0;
	for (size_t i = 1; i + 2 <= size && n < 4096; i += 2, n++) {
		int64_t x = 1000000 + slope * (int64_t)n + (int8_t)data[i];
		if (data[i + 1] == 0xff)
			v[n] = NAN;
		else if (data[i + 1] == 0xfe)
			v[n] = (double)((1ll << 53) - (data[i] & 127) - n % 64);
		else if (data[i + 1] == 0xfd)
			v[n] = (double)(-(1ll << 53) + (data[i] & 127) + n % 64);
		else if (data[i + 1] >= 0xf0)
			v[n] = (double)(x + ((int64_t)data[i + 1] << 40));
		else if (data[i + 1] >= 0xe0)
			v[n] = 0;
		else if (data[i + 1] >= 0xd0) /* x over 10 to 10^8 */
			v[n] = (double)x / pow(10, 1 + (data[i + 1] & 7));
		else if (data[i + 1] >= 0xc8)
			v[n] = (double)x / 3;
		else
			v[n] = (double)(x + (data[i + 1] & 7));
	}
	cs_buf b = CS_BUF_INIT;
	cs_agg agg;
	char err[128];
	cs_values_view view;
	static const unsigned formats[5] = {8, 4, 6, 5, 7};
	cs_codec_set_value_format(c, formats[size ? data[0] % 5 : 0]);
	if (n && cs_values_encode(c, v, n, &b, &agg) == 0) {
		if (cs_values_open(c, &view, b.data, b.len, err, sizeof err))
			abort();
		cs_values_decode(&view, o);
		for (uint32_t i = 0; i < n; i++)
			if (isnan(v[i]) ? !isnan(o[i]) : memcmp(&v[i], &o[i], sizeof v[i]))
				abort();
		for (uint32_t blk = 0; blk < view.nblocks; blk++) {
			uint32_t len = cs_values_block_len(&view, blk);
			uint32_t head = 1 + data[(blk * 7 + 1) % size] * len / 256;
			const double *want = v + (size_t)blk * view.bs;
			if (cs_values_block_decode_head(&view, blk, head, o) &&
			    memcmp(want, o, head * sizeof *o))
				abort();
		}
		if (view.payload_len <= sizeof damaged) {
			memcpy(damaged, view.payload, view.payload_len);
			for (size_t i = 0; i < view.payload_len; i++)
				damaged[i] ^= data[(i * 13 + 5) % size] & data[(i + 3) % size];
			view.payload = damaged;
			for (uint32_t blk = 0; blk < view.nblocks; blk++) {
				uint32_t len = cs_values_block_len(&view, blk);
				cs_values_block_decode(&view, blk, o);
				cs_values_block_decode_head(&view, blk, 1 + data[blk % size] * len / 256, o);
			}
		}
	}
	cs_buf_free(&b);
}

/* Samples made of the bytes (8 a sample: a step and a duration of any bit
 * length below 2^62, steps often equal), coded and decoded back. */
static void timeline_round_trip(cs_codec *c, const uint8_t *data, size_t size, uint64_t *t0,
				uint64_t *t1)
{
	static uint64_t o0[CS_CHUNK_MAX], o1[CS_CHUNK_MAX];
	uint32_t n = 0;
	uint64_t t = 1;
	for (size_t i = 0; i + 8 <= size && n < CS_CHUNK_MAX; i += 8) {
		uint32_t a, b;
		memcpy(&a, data + i, 4);
		memcpy(&b, data + i + 4, 4);
		uint64_t step = a & 1 ? 1000 : (uint64_t)a << (b & 31) >> 4;
		uint64_t dur = (uint64_t)b << (a >> 27) >> 6;
		if (t + step > (1ull << 62) || t + step + dur > (1ull << 63) - 1)
			break;
		t += step;
		t0[n] = t;
		t1[n++] = t + dur;
	}
	cs_buf b = CS_BUF_INIT;
	char err[128];
	cs_codec_set_timeline_format(c, size % 2 ? 4 : 5);
	if (n && cs_timeline_encode(c, t0, t1, n, &b) == 0) {
		if (cs_timeline_decode(c, b.data, b.len, n, o0, o1, err, sizeof err) ||
		    memcmp(t0, o0, n * sizeof *t0) || memcmp(t1, o1, n * sizeof *t1))
			abort();
	}
	cs_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static double vals[CS_CHUNK_MAX];
	static uint64_t t0[CS_CHUNK_MAX], t1[CS_CHUNK_MAX];
	static cs_codec *c;
	if (!c)
		c = cs_codec_new();
	char err[128];
	cs_values_view view;
	if (cs_values_open(c, &view, data, size, err, sizeof err) == 0)
		cs_values_decode(&view, vals);
	/* The partial path readers use: directory first, then single blocks. */
	if (size >= CS_VALUES_HEADER_LEN) {
		size_t head = cs_values_head_len(data);
		if (head && head <= size &&
		    cs_values_open_dir(&view, data, head, size, err, sizeof err) == 0) {
			view.payload = data + head;
			for (uint32_t b = 0; b < view.nblocks; b++)
				if (cs_values_check_block(&view, b, err, sizeof err) == 0)
					cs_values_block_decode(&view, b, vals);
		}
	}
	if (size >= 8) {
		uint32_t n;
		memcpy(&n, data + 4, 4);
		if (n >= 1 && n <= CS_CHUNK_MAX)
			cs_timeline_decode(c, data, size, n, t0, t1, err, sizeof err);
	}
	sealed_timeline(c, data, size, t0, t1);
	values_round_trip(c, data, size);
	timeline_round_trip(c, data, size, t0, t1);
	static cs_rans_table t;
	static cs_rans_coder coder;
	static uint64_t z[CS_VALUE_BLOCK], back[CS_VALUE_BLOCK];
	if (size >= 2) {
		/* a table, then a stream, as a chunk's directory and block hold them */
		const uint8_t *p = data + 1, *end = data + size;
		if (cs_rans_parse(&t, &p, end, CS_RANS_SYMS) == 0)
			cs_rans_decode(&t, p, (size_t)(end - p), data[0], z);
		/* the same as format 6 holds it: runs of zeros among the values */
		p = data + 1;
		if (cs_rans_parse(&t, &p, end, CS_RANS_RUN_SYMS) == 0) {
			cs_rans_decode_runs(&t, p, (size_t)(end - p), data[0] * 2u, z);
			/* and with bits back, as format 6's other blocks */
			cs_rans_decode_split_back(&t, p, (size_t)(end - p), data[0] * 2u, z);
		}
		/* a timeline block's stream with bits back, two tables alike */
		p = data + 1;
		if (cs_rans_parse(&t, &p, end, CS_RANS_SYMS) == 0) {
			const cs_rans_table *tabs[2] = {&t, &t};
			cs_rans_decode_back(tabs, p, (size_t)(end - p), data[0], z);
		}
		/* a table counted from the bytes, values drawn from them: back the same */
		static uint32_t counts[CS_RANS_SYMS];
		memset(counts, 0, sizeof counts);
		uint32_t n = 0;
		for (size_t i = 0; i + 8 <= size && n < CS_VALUE_BLOCK; i += 8) {
			uint64_t w;
			memcpy(&w, data + i, 8);
			z[n] = w >> (w & 63); /* every bit length, small ones often */
			unsigned extra;
			counts[cs_rans_sym(z[n], &extra)]++;
			n++;
		}
		/* through the table's bytes, as a reader gets it */
		cs_buf b = CS_BUF_INIT, tb = CS_BUF_INIT;
		if (n && cs_rans_build(&coder, counts) == 0 && cs_rans_put(&coder, &tb) == 0 &&
		    cs_rans_encode(&coder, z, n, &b) == 0) {
			const uint8_t *q = tb.data;
			if (cs_rans_parse(&t, &q, tb.data + tb.len, CS_RANS_SYMS) || q != tb.data + tb.len)
				abort();
			cs_rans_decode(&t, b.data, b.len, n, back);
			if (memcmp(z, back, n * sizeof *z))
				abort();
			/* value chunks' layout (format 5): two states, raw bits
			 * apart, for symbols a value chunk may use */
			unsigned top = 0;
			for (unsigned s = 0; s < CS_RANS_SYMS; s++)
				top = counts[s] ? s + 1 : top;
			cs_buf_reset(&b);
			if (top <= CS_RANS_VALUE_SYMS && cs_rans_encode_split(&coder, z, n, &b) == 0) {
				cs_rans_decode_split(&t, b.data, b.len, n, back);
				if (memcmp(z, back, n * sizeof *z))
					abort();
			}
		}
		/* format 6: the values below 2^53 with every eighth made a run of
		 * zeros, back as the values and the runs' zeros */
		static uint64_t tok[CS_VALUE_BLOCK], want[CS_VALUE_BLOCK];
		uint32_t nt = 0, nv = 0;
		memset(counts, 0, sizeof counts);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t x = z[i] >> 11, len = 2 + z[i] % 20;
			if (i % 8 == 7 && nv + len <= CS_VALUE_BLOCK) {
				tok[nt] = CS_RANS_RUN | len;
				memset(want + nv, 0, len * sizeof *want);
				nv += (uint32_t)len;
			} else if (nv < CS_VALUE_BLOCK) {
				tok[nt] = want[nv++] = x;
			} else {
				break;
			}
			unsigned extra;
			counts[cs_rans_token_sym(tok[nt++], &extra)]++;
		}
		cs_buf_reset(&b);
		cs_buf_reset(&tb);
		if (nt && cs_rans_build(&coder, counts) == 0 && cs_rans_put(&coder, &tb) == 0 &&
		    cs_rans_encode_split(&coder, tok, nt, &b) == 0) {
			const uint8_t *q = tb.data;
			if (cs_rans_parse(&t, &q, tb.data + tb.len, CS_RANS_RUN_SYMS))
				abort();
			cs_rans_decode_runs(&t, b.data, b.len, nv, back);
			if (memcmp(want, back, nv * sizeof *want))
				abort();
		}
		cs_buf_free(&b);
		cs_buf_free(&tb);
	}
	return 0;
}
