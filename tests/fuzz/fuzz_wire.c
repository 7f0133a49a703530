/* fuzz_wire.c - libFuzzer target: decode a byte stream as frames, and
 * re-encode whatever decodes. The encoding is canonical: it decodes whole
 * and encodes to itself again. It is the input itself except where the
 * protocol allows two forms (a RUN_END's trailer of zero counters, which
 * a producer leaves out: docs/protocol.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

static int zero_trailer(const cs_wire_msg *m, size_t used)
{
	return m->type == CS_WIRE_RUN_END && used == CS_WIRE_HEADER_LEN + 56 && !m->u.run_end.bad_records &&
	       !m->u.run_end.empty_samples;
}

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
		cs_buf b = CS_BUF_INIT, b2 = CS_BUF_INIT;
		if (cs_wire_encode(&b, &m) == 0) {
			if (!zero_trailer(&m, used) && (b.len != used || memcmp(b.data, data + off, used)))
				abort(); /* decoding then encoding must be lossless */
			cs_wire_msg m2;
			size_t used2;
			if (cs_wire_decode(b.data, b.len, &m2, &used2, err, sizeof err) || used2 != b.len)
				abort(); /* what is encoded decodes whole */
			if (cs_wire_encode(&b2, &m2) || b2.len != b.len || memcmp(b2.data, b.data, b.len))
				abort(); /* and encodes to itself */
			cs_wire_msg_free(&m2);
		}
		cs_buf_free(&b);
		cs_buf_free(&b2);
		cs_wire_msg_free(&m);
		off += used;
	}
	return 0;
}
