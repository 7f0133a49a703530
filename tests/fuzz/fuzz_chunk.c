/* fuzz_chunk.c - libFuzzer target: value and timeline chunk decoders on any
 * bytes (a corrupt database must never crash a reader). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"

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
	return 0;
}
