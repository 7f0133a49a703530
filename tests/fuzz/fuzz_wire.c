/* fuzz_wire.c - libFuzzer target: decode a byte stream as frames, and
 * re-encode whatever decodes; the re-encoding must decode identically. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;
	while (off < size) {
		cs_wire_msg m;
		size_t used;
		char err[256];
		if (cs_wire_decode(data + off, size - off, &m, &used, err, sizeof err))
			break;
		cs_buf b = CS_BUF_INIT;
		if (cs_wire_encode(&b, &m) == 0) {
			if (b.len != used || memcmp(b.data, data + off, used))
				abort(); /* decoding then encoding must be lossless */
		}
		cs_buf_free(&b);
		cs_wire_msg_free(&m);
		off += used;
	}
	return 0;
}
