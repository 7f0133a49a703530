/* fuzz_chunk.c - libFuzzer target: value and timeline chunk decoders on any
 * bytes (a corrupt database must never crash a reader), and the entropy
 * coder: a table and a stream from any bytes decode without reading past
 * them, and what it codes from any table decodes back the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "rans.h"

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
	static cs_rans_table t;
	static cs_rans_coder coder;
	static uint64_t z[CS_VALUE_BLOCK], back[CS_VALUE_BLOCK];
	if (size >= 2) {
		/* a table, then a stream, as a chunk's directory and block hold them */
		const uint8_t *p = data + 1, *end = data + size;
		if (cs_rans_parse(&t, &p, end) == 0)
			cs_rans_decode(&t, p, (size_t)(end - p), data[0], z);
		/* a table counted from the bytes, values drawn from them: back the same */
		static uint32_t counts[CS_RANS_SYMS];
		memset(counts, 0, sizeof counts);
		uint32_t n = 0;
		for (size_t i = 0; i + 8 <= size && n < CS_VALUE_BLOCK; i += 8) {
			uint64_t w;
			memcpy(&w, data + i, 8);
			z[n] = w >> (w & 63); /* every bit length, small ones often */
			if (z[n] >> 55)
				z[n] >>= 9;
			unsigned extra;
			counts[cs_rans_sym(z[n], &extra)]++;
			n++;
		}
		/* through the table's bytes, as a reader gets it */
		cs_buf b = CS_BUF_INIT, tb = CS_BUF_INIT;
		if (n && cs_rans_build(&coder, counts) == 0 && cs_rans_put(&coder, &tb) == 0 &&
		    cs_rans_encode(&coder, z, n, &b) == 0) {
			const uint8_t *q = tb.data;
			if (cs_rans_parse(&t, &q, tb.data + tb.len) || q != tb.data + tb.len)
				abort();
			cs_rans_decode(&t, b.data, b.len, n, back);
			if (memcmp(z, back, n * sizeof *z))
				abort();
		}
		cs_buf_free(&b);
		cs_buf_free(&tb);
	}
	return 0;
}
