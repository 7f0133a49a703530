/*
 * chunk.h - the chunk codec (cs_values_*, cs_timeline_*).
 *
 * A value chunk holds up to CS_CHUNK_MAX doubles of one (run, device, metric)
 * in blocks of CS_VALUE_BLOCK (CS_VALUE_BLOCK_V3 in formats 3 and 4,
 * CS_BLOCK_SAMPLES in formats 1 and 2). Each block is stored either as integers in
 * frame-of-reference bit packing (counter-like data: every present value an
 * exact integer) or as byte-shuffled IEEE doubles, and carries its own
 * count/min/max/sum in a block directory, so readers can aggregate whole
 * blocks without unpacking them and unpack single blocks without touching
 * the rest. Format 4 adds a third form for integer blocks: the differences
 * between neighbouring values entropy-coded (rans.h) with one frequency
 * table per chunk, kept in its directory, chosen per block from the
 * blocks' statistics where it is shorter than the packing. Format 5 is
 * format 4 in blocks of CS_VALUE_BLOCK, its table optional, no checksum
 * for a block whose payload is empty (every value the same), and coded
 * blocks read two values at a time (two states, raw bits apart). Format 6
 * is format 5 with runs of zero differences coded as symbols of their own
 * where they pay, and coded blocks without them starting their coder's
 * states with their last raw bits (bits back). Format 7 is format 6
 * whose coded blocks may instead hold each value less its point on a line
 * through the block (noise about a level or a trend then costs its own
 * entropy, where its differences cost half a bit more). When zstd
 * shrinks the packed payload by at least 1/8 it is stored compressed. NaN means "absent": it is never stored as a value, only
 * as a cleared bit in the block's presence bitmap. Every other double,
 * -0.0 and infinities included, round-trips bit-exactly.
 *
 * A timeline chunk holds the t0[]/t1[] arrays of the same samples in
 * blocks of CS_BLOCK_SAMPLES that decode alone: each t0 step and duration
 * entropy-coded against the step or duration before it or a reference
 * (format 4), with the block list's times predicted and the last raw bits
 * of a block carried by its coder's start (format 5, what is written).
 *
 * The exact byte layout is in docs/schema.md. Decoders validate every byte:
 * a corrupt blob gives -EBADMSG and a message, never a crash.
 *
 * Threads: a cs_codec is used by one thread at a time.
 */
#ifndef CS_CHUNK_H
#define CS_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "rans.h"

/* Samples per timeline block, and per value block in formats 1 and 2. */
#define CS_BLOCK_SAMPLES 128u
/* Samples per value block in formats 5 to 8 (what is written): four times format
 * 2's, so a directory entry and a block checksum cost a quarter as much a
 * value. Every block size a reader meets divides it. */
#define CS_VALUE_BLOCK 512u
/* Samples per value block in formats 3 and 4. */
#define CS_VALUE_BLOCK_V3 256u
#define CS_CHUNK_MAX 65536u
#define CS_CHUNK_MAX_BLOCKS (CS_CHUNK_MAX / CS_BLOCK_SAMPLES)

/* Count, min, max and sum of the present values of a block or chunk.
 * min/max are meaningless when count == 0. */
typedef struct cs_agg {
	uint64_t count;
	double min;
	double max;
	double sum;
} cs_agg;

/* Folds b into a. */
void cs_agg_merge(cs_agg *a, const cs_agg *b);

/* Scratch memory and zstd contexts, reused across calls. */
typedef struct cs_codec cs_codec;

/* Returns a new codec, or NULL when out of memory. Free with cs_codec_free. */
cs_codec *cs_codec_new(void);
void cs_codec_free(cs_codec *c);

/* The value chunk format cs_values_encode writes: 8 (the default: format
 * 7 where no block holds decimal fractions, and 5 where none is coded
 * either), 7 (the same without decimal blocks), 6 (without lines), 5, or
 * 4, which writes formats 3 and 4 as earlier versions did (blocks of
 * CS_VALUE_BLOCK_V3), so that their readers stay tested. Returns 0, or
 * -EINVAL for another format. */
int cs_codec_set_value_format(cs_codec *c, unsigned format);

/* The timeline format c writes: 5 (what is written), or 4 (what earlier
 * versions wrote). 0 or -EINVAL. */
int cs_codec_set_timeline_format(cs_codec *c, unsigned format);

/* Encodes v[0..n) (NaN = absent; 1 <= n <= CS_CHUNK_MAX) and appends the
 * blob to out. Fills *agg with the chunk's aggregate. Returns 0, -EINVAL or
 * -ENOMEM. */
int cs_values_encode(cs_codec *c, const double *v, uint32_t n, cs_buf *out,
		     cs_agg *agg);

/* A parsed value chunk. It borrows the blob and, when the payload was
 * compressed, the codec's scratch memory: valid until the blob is released
 * or the codec opens another chunk. */
typedef struct cs_values_view {
	uint32_t n;
	uint32_t nblocks;
	const uint8_t *payload;
	size_t payload_len;
	int checked; /* format 2 on: every block checked against its checksum */
	uint32_t bs; /* samples per block: CS_VALUE_BLOCK, CS_VALUE_BLOCK_V3
		      * (formats 3 and 4) or CS_BLOCK_SAMPLES (1 and 2) */
	/* each block's directory entry, parsed */
	uint8_t type[CS_CHUNK_MAX_BLOCKS];
	uint8_t bw[CS_CHUNK_MAX_BLOCKS];
	uint16_t count[CS_CHUNK_MAX_BLOCKS];
	uint32_t check[CS_CHUNK_MAX_BLOCKS];
	double min[CS_CHUNK_MAX_BLOCKS], max[CS_CHUNK_MAX_BLOCKS], sum[CS_CHUNK_MAX_BLOCKS];
	uint32_t offset[CS_CHUNK_MAX_BLOCKS + 1];
	cs_rans_table rans; /* formats 4 to 8: the chunk's frequency table */
	uint32_t states;    /* rANS states in a coded block's stream: 2 in formats
			     * 5 to 8 (its raw bits apart, at the end), 1 in format 4 */
	int runs;           /* formats 6 to 8: coded blocks may hold runs of zeros */
	uint8_t back[CS_CHUNK_MAX_BLOCKS]; /* formats 6 to 8: a coded block's last
					    * raw bits start its states (kind bit 3) */
	uint8_t line[CS_CHUNK_MAX_BLOCKS]; /* formats 7 and 8: a coded block holds its
					    * values less a line (kind bit 4) */
	uint8_t dec[CS_CHUNK_MAX_BLOCKS];  /* format 8: an integer block's values
					    * are its integers over 10^dec (kind
					    * bit 5); min, max and sum above are
					    * the integers' */
} cs_values_view;

/* Parses and validates a value chunk blob, checksums included (blobs
 * written before checksums are validated without: view->checked is 0).
 * Returns 0, or -EBADMSG with a reason in err. */
int cs_values_open(cs_codec *c, cs_values_view *view, const uint8_t *blob,
		   size_t len, char *err, size_t errlen);

/* Partial reading, for readers that fetch blob ranges (sqlite3_blob_read)
 * instead of whole blobs. A chunk starts with a CS_VALUES_HEADER_LEN
 * header; cs_values_head_len() says how long header plus directory (and
 * its checksum) are (0 for a corrupt header). cs_values_open_dir() parses just those bytes
 * (borrowed, like the blob in cs_values_open) for a blob of blob_len bytes
 * and leaves view->payload NULL: the caller points it at a buffer of
 * payload_len bytes and fills, for each block b it decodes, the bytes
 * [offset[b], offset[b+1]) from the blob at head_len + offset[b], then
 * checks them (checksum and bitmap) with cs_values_check_block(). Returns -ENOTSUP for a
 * compressed chunk (read it whole), -EBADMSG for a corrupt one. */
#define CS_VALUES_HEADER_LEN 16u
size_t cs_values_head_len(const uint8_t head[CS_VALUES_HEADER_LEN]);
int cs_values_open_dir(cs_values_view *view, const uint8_t *head, size_t head_len,
		       size_t blob_len, char *err, size_t errlen);
int cs_values_check_block(const cs_values_view *view, uint32_t b, char *err, size_t errlen);

/* Samples in block b (view->bs except maybe the last). */
uint32_t cs_values_block_len(const cs_values_view *view, uint32_t b);

/* The aggregate of block b, from the directory, without unpacking. */
void cs_values_block_agg(const cs_values_view *view, uint32_t b, cs_agg *agg);

/* Whether block b is of packed integers with every sample present: those
 * are aggregated in place by cs_values_block_agg_range. */
int cs_values_block_packed(const cs_values_view *view, uint32_t b);

/* The aggregate of samples [i0, i1) of block b (i0 < i1 <= its length)
 * straight from its packed integers, when cs_values_block_packed: returns
 * 1, or 0 for any other block (decode it). The payload's bytes of the
 * block must be there. The sum is exact before its conversion to double. */
int cs_values_block_agg_range(const cs_values_view *view, uint32_t b, uint32_t i0, uint32_t i1,
			      cs_agg *agg);

/* Decodes the first n samples of block b (1 <= n <= its length) into
 * out[0..n) when the block holds integers (packed or coded) with every
 * sample present: returns 1, or 0 for any other block. A coded block's
 * stream is read only as far as those samples, but for a format 6 or 7
 * block with bits back whose last CS_RANS_BACK_VALUES coded values they
 * reach, which is decoded whole. */
int cs_values_block_decode_head(const cs_values_view *view, uint32_t b, uint32_t n, double *out);

/* Unpacks block b into out[0..block_len), NaN where absent. */
void cs_values_block_decode(const cs_values_view *view, uint32_t b,
			    double *out);

/* Unpacks the whole chunk into out[0..n). */
void cs_values_decode(const cs_values_view *view, double *out);

/* Encodes the timeline t0[0..n), t1[0..n) (t0 non-decreasing, t1 >= t0,
 * 1 <= n <= CS_CHUNK_MAX) and appends the blob to out. Returns 0, -EINVAL
 * or -ENOMEM. */
int cs_timeline_encode(cs_codec *c, const uint64_t *t0, const uint64_t *t1,
		       uint32_t n, cs_buf *out);

/* Decodes a timeline blob into t0[0..n), t1[0..n); n must match the blob.
 * Returns 0 or -EBADMSG with a reason in err. */
int cs_timeline_decode(cs_codec *c, const uint8_t *blob, size_t len,
		       uint32_t n, uint64_t *t0, uint64_t *t1, char *err,
		       size_t errlen);

/* A timeline opened for decoding a block at a time: first[b] and last[b]
 * are the first and last t0 of block b (samples b * CS_BLOCK_SAMPLES on),
 * known without decoding it. It borrows the blob, the codec's timeline
 * scratch memory and the caller's t0/t1 arrays (n entries). */
typedef struct cs_timeline_view {
	uint32_t n, nblocks;
	int blocked; /* formats 3 to 5; older timelines are decoded whole at open */
	int entropy; /* formats 4 and 5: */
	int back;      /* format 5: bits back, raw bits apart, the list predicted */
	uint8_t mode;
	uint64_t ref_step, ref_dur;
	cs_rans_table tab[2]; /* the t0 steps' table, the durations' */
	const uint8_t *payload;
	uint64_t *t0, *t1;
	uint64_t first[CS_CHUNK_MAX_BLOCKS], last[CS_CHUNK_MAX_BLOCKS];
	uint32_t offset[CS_CHUNK_MAX_BLOCKS + 1];
} cs_timeline_view;

/* Opens a timeline blob of n samples (validating its header, checksum and
 * block list). Returns 0 or -EBADMSG with a reason in err. */
int cs_timeline_open(cs_codec *c, cs_timeline_view *v, const uint8_t *blob, size_t len,
		     uint32_t n, uint64_t *t0, uint64_t *t1, char *err, size_t errlen);

/* Decodes block b into t0/t1 (at b * CS_BLOCK_SAMPLES). Returns 0 or
 * -EBADMSG. */
int cs_timeline_block(cs_timeline_view *v, uint32_t b, char *err, size_t errlen);

#endif
