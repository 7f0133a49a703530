/* test_chunk.c - the chunk codec: round trips, block access, corruption. */
#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "blobcache.h"
#include "chunk.h"
#include "testutil.h"

static void roundtrip_as(cs_codec *c, const double *v, uint32_t n, unsigned format)
{
	cs_buf b = CS_BUF_INIT;
	cs_agg agg;
	assert_int_equal(cs_codec_set_value_format(c, format), 0);
	assert_int_equal(cs_values_encode(c, v, n, &b, &agg), 0);
	/* format 4 writes format 3 where no block is entropy-coded, format 6
	 * format 5 */
	if (format == 4)
		assert_true(b.data[0] == 3 || b.data[0] == 4);
	else if (format == 8) /* 7 where no block is decimal */
		assert_true(b.data[0] == 5 || b.data[0] == 7 || b.data[0] == 8);
	else
		assert_true(b.data[0] == 5 || (format >= 6 && b.data[0] == format));
	cs_values_view view;
	char err[128];
	int rc = cs_values_open(c, &view, b.data, b.len, err, sizeof err);
	if (rc)
		fail_msg("open: %s", err);
	assert_int_equal(view.n, n);
	double *out = malloc(n * sizeof *out);
	cs_values_decode(&view, out);
	cs_agg check = {0, 0, 0, 0};
	for (uint32_t i = 0; i < n; i++) {
		if (isnan(v[i])) {
			assert_true(isnan(out[i]));
			continue;
		}
		assert_true(tu_same_bits(v[i], out[i]));
		cs_agg one = {1, v[i], v[i], v[i]};
		cs_agg_merge(&check, &one);
	}
	assert_int_equal(agg.count, check.count);
	if (check.count) {
		assert_true(agg.min == check.min);
		assert_true(agg.max == check.max);
	}
	/* Block aggregates add up to the chunk's. */
	cs_agg sum = {0, 0, 0, 0};
	for (uint32_t bl = 0; bl < view.nblocks; bl++) {
		cs_agg a;
		cs_values_block_agg(&view, bl, &a);
		cs_agg_merge(&sum, &a);
	}
	assert_int_equal(sum.count, agg.count);
	free(out);
	cs_buf_free(&b);
}

/* A round trip in what is written now (format 8, or 7 with no decimal
 * block, or 5 with no coded block) and in what earlier versions wrote
 * (formats 3 to 7), which are still read. */
static void roundtrip(cs_codec *c, const double *v, uint32_t n)
{
	roundtrip_as(c, v, n, 4);
	roundtrip_as(c, v, n, 5);
	roundtrip_as(c, v, n, 6);
	roundtrip_as(c, v, n, 7);
	roundtrip_as(c, v, n, 8);
}

static void test_counters_odd_sizes(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	uint64_t seed = 42;
	static const uint32_t sizes[] = {1, 2, 7, 127, 128, 129, 1000, 4095, 4096, 65536};
	double *v = malloc(CS_CHUNK_MAX * sizeof *v);
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		for (uint32_t i = 0; i < sizes[s]; i++)
			v[i] = (double)(20000 + tu_rand(&seed) % 5000);
		roundtrip(c, v, sizes[s]);
	}
	free(v);
	cs_codec_free(c);
}

static void test_special_values(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	double v[300];
	uint64_t seed = 7;
	for (int i = 0; i < 300; i++) {
		switch (i % 9) {
		case 0: v[i] = -0.0; break;
		case 1: v[i] = INFINITY; break;
		case 2: v[i] = -INFINITY; break;
		case 3: v[i] = NAN; break;
		case 4: v[i] = 9007199254740992.0; break; /* 2^53 */
		case 5: v[i] = -9007199254740992.0; break;
		case 6: v[i] = 1e300; break;
		case 7: v[i] = 4.9e-324; break;
		default: v[i] = (double)(tu_rand(&seed) % 1000) / 7.0; break;
		}
	}
	roundtrip(c, v, 300);
	/* Mixed: some blocks integer, one float, one all-absent, one constant. */
	for (int i = 0; i < 300; i++)
		v[i] = i < 128 ? (double)(i * 3 - 100) : i < 256 ? (double)NAN : 5.0;
	v[200] = 0.5;
	roundtrip(c, v, 300);
	for (int i = 0; i < 300; i++)
		v[i] = NAN;
	roundtrip(c, v, 300);
	/* Large negative and positive integers in one block: width 54. */
	for (int i = 0; i < 128; i++)
		v[i] = i & 1 ? 9007199254740992.0 : -9007199254740992.0;
	roundtrip(c, v, 128);
	cs_codec_free(c);
}

static void test_sparse_presence(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	double v[4096];
	uint64_t seed = 99;
	for (int i = 0; i < 4096; i++)
		v[i] = tu_rand(&seed) % 3 ? (double)(tu_rand(&seed) % 100000) : (double)NAN;
	roundtrip(c, v, 4096);
	cs_codec_free(c);
}

static void test_block_decode(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	static double v[2000], out[CS_VALUE_BLOCK];
	for (int i = 0; i < 2000; i++)
		v[i] = (double)(i * i);
	/* format 5: blocks of 512; formats 3 and 4: of 256 */
	static const unsigned formats[] = {5, 4}, sizes[] = {512, 256};
	for (int f = 0; f < 2; f++) {
		unsigned bs = sizes[f], n = 4 * bs - 48;
		assert_int_equal(cs_codec_set_value_format(c, formats[f]), 0);
		cs_buf b = CS_BUF_INIT;
		cs_agg agg;
		assert_int_equal(cs_values_encode(c, v, n, &b, &agg), 0);
		cs_values_view view;
		assert_int_equal(cs_values_open(c, &view, b.data, b.len, NULL, 0), 0);
		assert_int_equal(view.bs, bs);
		assert_int_equal(view.nblocks, 4);
		assert_int_equal(cs_values_block_len(&view, 3), n - 3 * bs);
		cs_values_block_decode(&view, 2, out);
		for (unsigned i = 0; i < bs; i++)
			assert_true(out[i] == v[2 * bs + i]);
		cs_agg a;
		cs_values_block_agg(&view, 2, &a);
		assert_int_equal(a.count, bs);
		assert_true(a.min == v[2 * bs] && a.max == v[3 * bs - 1]);
		cs_buf_free(&b);
	}
	assert_int_equal(cs_codec_set_value_format(c, 3), -EINVAL);
	cs_codec_free(c);
}

static void test_compression_ratio(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	double v[4096];
	uint64_t seed = 3;
	for (int i = 0; i < 4096; i++)
		v[i] = (double)(1000 + tu_rand(&seed) % 256); /* 8 bits of noise */
	cs_buf b = CS_BUF_INIT;
	cs_agg agg;
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	/* 1 byte a value plus the block directory. */
	assert_true(b.len < 4096 * 1.3);
	cs_buf_reset(&b);
	for (int i = 0; i < 4096; i++)
		v[i] = 0;
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	assert_true(b.len < 1200);
	cs_buf_free(&b);
	cs_codec_free(c);
}

static void test_timeline(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	uint64_t t0[4096], t1[4096], o0[4096], o1[4096];
	uint64_t seed = 5, t = 1700000000000000000ull;
	for (int i = 0; i < 4096; i++) {
		t0[i] = t;
		t1[i] = t + 10000 + (i % 17 == 0 ? tu_rand(&seed) % 50 : 0);
		t = t1[i] + (i % 100 == 0 ? 1000 : 0);
	}
	cs_buf b = CS_BUF_INIT;
	assert_int_equal(cs_timeline_encode(c, t0, t1, 4096, &b), 0);
	assert_true(b.len < 4096); /* well under a byte per sample pair */
	char err[128];
	assert_int_equal(cs_timeline_decode(c, b.data, b.len, 4096, o0, o1, err, sizeof err), 0);
	assert_memory_equal(t0, o0, sizeof t0);
	assert_memory_equal(t1, o1, sizeof t1);
	assert_int_equal(cs_timeline_decode(c, b.data, b.len, 4095, o0, o1, err, sizeof err),
			 -EBADMSG);
	/* A compressed timeline claiming an empty payload (found by fuzzing:
	 * it once did arithmetic on a NULL scratch buffer). */
	static const uint8_t empty_zstd[16] = {1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(cs_timeline_decode(c, empty_zstd, sizeof empty_zstd, 1, o0, o1, err,
					    sizeof err),
			 -EBADMSG);
	/* Invalid input is refused. */
	t0[10] = t0[9] - 1;
	cs_buf_reset(&b);
	assert_int_equal(cs_timeline_encode(c, t0, t1, 4096, &b), -EINVAL);
	t0[10] = t0[9];
	t1[5] = t0[5] - 1;
	assert_int_equal(cs_timeline_encode(c, t0, t1, 4096, &b), -EINVAL);
	/* times the decoder would refuse (2^63 and past) are refused here */
	t1[5] = 9223372036854775808ull;
	assert_int_equal(cs_timeline_encode(c, t0, t1, 4096, &b), -EINVAL);
	cs_buf_free(&b);
	cs_codec_free(c);
}

/* Every single-byte corruption and truncation of a blob either decodes or
 * fails cleanly; never reads out of bounds (ASan checks that). */
/* Rewrites a format 2 value chunk as format 1 (docs/schema.md: 28-byte
 * directory entries, no checksums), as files written before checksums hold. */
static size_t to_format1(const uint8_t *v2, size_t len, uint8_t *v1)
{
	uint32_t n;
	memcpy(&n, v2 + 4, 4);
	size_t nb = (n + 127) / 128, o = 16;
	memcpy(v1, v2, 16);
	v1[0] = 1;
	for (size_t b = 0; b < nb; b++, o += 28)
		memcpy(v1 + o, v2 + 16 + 32 * b, 28);
	size_t payload = 16 + 32 * nb + 4;
	memcpy(v1 + o, v2 + payload, len - payload);
	return o + len - payload;
}

/* A format 2 value chunk as the code before format 3 wrote it: from the
 * v3 fixture file (tests/fixtures/store/v3.db, run 1, metric l2.sum). */
static uint8_t *format2_blob(size_t *len)
{
	const char *src = getenv("CS_SRC") ? getenv("CS_SRC") : ".";
	char path[600];
	snprintf(path, sizeof path, "%s/tests/fixtures/store/v3.db", src);
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT data FROM chunks WHERE run = 1 AND"
					    " metric = 0 AND device = 0 ORDER BY seq0 DESC LIMIT 1",
					    -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	*len = (size_t)sqlite3_column_bytes(st, 0);
	uint8_t *b = malloc(*len);
	memcpy(b, sqlite3_column_blob(st, 0), *len);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return b;
}

static void test_unchecked_format(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	static double out[CS_CHUNK_MAX], out2[CS_CHUNK_MAX];
	size_t len2;
	uint8_t *b2 = format2_blob(&len2);
	assert_int_equal(b2[0], 2);
	assert_int_equal(b2[1], 0); /* these values stay uncompressed */
	uint32_t n;
	memcpy(&n, b2 + 4, 4);
	uint32_t nb = (n + 127) / 128;
	uint8_t *v1 = malloc(len2);
	size_t len1 = to_format1(b2, len2, v1);
	cs_values_view view;
	char err[128];
	assert_int_equal(cs_values_open(c, &view, b2, len2, err, sizeof err), 0);
	assert_int_equal(view.checked, 1);
	cs_values_decode(&view, out2);
	assert_int_equal(cs_values_open(c, &view, v1, len1, err, sizeof err), 0);
	assert_int_equal(view.checked, 0);
	cs_values_decode(&view, out);
	for (uint32_t i = 0; i < n; i++)
		assert_true(isnan(out2[i]) ? isnan(out[i]) : out2[i] == out[i]);
	/* The partial path reads it too. */
	size_t head = cs_values_head_len(v1);
	assert_int_equal(head, 16 + 28 * nb);
	assert_int_equal(cs_values_open_dir(&view, v1, head, len1, err, sizeof err), 0);
	view.payload = v1 + head;
	assert_int_equal(cs_values_check_block(&view, 3 % nb, err, sizeof err), 0);
	/* A checked blob read partially: a flipped payload byte fails its
	 * block, the other blocks still check. */
	assert_int_equal(cs_values_open(c, &view, b2, len2, err, sizeof err), 0);
	head = cs_values_head_len(b2);
	assert_int_equal(head, 16 + 32 * nb + 4);
	b2[head + view.offset[2] + 5] ^= 0x10;
	assert_int_equal(cs_values_open_dir(&view, b2, head, len2, err, sizeof err), 0);
	view.payload = b2 + head;
	assert_int_equal(cs_values_check_block(&view, 2, err, sizeof err), -EBADMSG);
	assert_string_equal(err, "block checksum mismatch");
	assert_int_equal(cs_values_check_block(&view, 1, err, sizeof err), 0);
	b2[20] ^= 1; /* the directory */
	assert_int_equal(cs_values_open_dir(&view, b2, head, len2, err, sizeof err), -EBADMSG);
	free(v1);
	free(b2);
	cs_codec_free(c);
}

/* Format 3 (what is written now): the directory costs a fraction of format
 * 2's, the partial path works on it, integer payloads are not run through
 * zstd and byte-plane doubles are. */
static void test_compact_format(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	static double v[4096], out[4096];
	uint64_t seed = 11;
	for (int i = 0; i < 4096; i++)
		v[i] = i % 1000 == 7 ? (double)NAN : (double)(200000 + tu_rand(&seed) % 4096);
	cs_buf b = CS_BUF_INIT;
	cs_agg agg;
	assert_int_equal(cs_codec_set_value_format(c, 4), 0);
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	assert_int_equal(b.data[0], 3);
	assert_int_equal(b.data[1], 0);
	size_t head = cs_values_head_len(b.data);
	/* 12 bits a value, and a directory under 16 bytes a block of 256
	 * (format 2: 32 a block of 128) */
	assert_true(head < 16 + 16 * 16 + 4);
	assert_true(b.len <= head + 4096 * 12 / 8 + 5 * 32); /* 5 blocks with a bitmap */
	cs_values_view view;
	char err[128];
	assert_int_equal(cs_values_open_dir(&view, b.data, head, b.len, err, sizeof err), 0);
	view.payload = b.data + head;
	double sum = 0, want = 0;
	uint64_t count = 0;
	for (uint32_t blk = 0; blk < view.nblocks; blk++) {
		assert_int_equal(cs_values_check_block(&view, blk, err, sizeof err), 0);
		cs_values_block_decode(&view, blk, out + blk * view.bs);
		cs_agg a;
		cs_values_block_agg(&view, blk, &a);
		sum += a.sum;
		count += a.count;
	}
	for (int i = 0; i < 4096; i++) {
		assert_true(isnan(v[i]) ? isnan(out[i]) : v[i] == out[i]);
		if (!isnan(v[i]))
			want += v[i];
	}
	if (!(sum == want && count == 4091 && agg.sum == want && agg.count == 4091))
		fail_msg("sum %.17g count %llu agg %.17g %llu want %.17g", sum, (unsigned long long)count, agg.sum, (unsigned long long)agg.count, want);
	/* doubles with few distinct exponents: compressed */
	for (int i = 0; i < 4096; i++)
		v[i] = 1.0 + (double)(i % 64) / 1024.0;
	cs_buf_reset(&b);
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	assert_int_equal(b.data[1], 1);
	assert_int_equal(cs_values_open(c, &view, b.data, b.len, err, sizeof err), 0);
	cs_values_decode(&view, out);
	assert_memory_equal(v, out, sizeof v);
	cs_buf_free(&b);
	cs_codec_free(c);
}

/* Format 4: a smooth counter with noise of 201 values codes its
 * differences (rANS) where that beats packing; every value round-trips,
 * block by block through the partial-read path too, with gaps, with
 * differences near 2^54, and a damaged frequency table is refused. */
static void test_entropy_format(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	static double v[4096], out[4096];
	uint64_t seed = 17;
	for (int i = 0; i < 4096; i++)
		v[i] = (double)(20000 + (int)(3000.0 * sin(i / 300.0)) + (int)(tu_rand(&seed) % 201) - 100);
	cs_buf b = CS_BUF_INIT;
	cs_agg agg;
	assert_int_equal(cs_codec_set_value_format(c, 4), 0);
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	assert_int_equal(b.data[0], 4);
	/* the differences' entropy is about 8.3 bits (a triangle of 401
	 * values); packing the values takes 10 a value or more */
	if (!(b.len < 4096 * 9.2 / 8 + 600))
		fail_msg("format 4 chunk of %zu bytes", b.len);
	roundtrip(c, v, 4096);
	size_t head = cs_values_head_len(b.data);
	cs_values_view view;
	char err[128];
	assert_int_equal(cs_values_open_dir(&view, b.data, head, b.len, err, sizeof err), 0);
	view.payload = b.data + head;
	for (uint32_t blk = 0; blk < view.nblocks; blk++) {
		assert_int_equal(cs_values_check_block(&view, blk, err, sizeof err), 0);
		cs_values_block_decode(&view, blk, out + blk * view.bs);
	}
	assert_memory_equal(v, out, sizeof v);
	/* gaps (bitmaps) and a block of huge steps */
	for (int i = 0; i < 4096; i += 97)
		v[i] = NAN;
	for (int i = 1024; i < 1280; i++)
		v[i] = (i & 1) ? 9007199254740992.0 : -9007199254740992.0;
	roundtrip(c, v, 4096);
	/* odd lengths */
	roundtrip(c, v, 4095);
	roundtrip(c, v, 300);
	/* a frequency table that does not add up: refused, not decoded */
	for (int i = 0; i < 4096; i++)
		v[i] = (double)(20000 + (int)(3000.0 * sin(i / 300.0)) + (int)(tu_rand(&seed) % 201) - 100);
	assert_int_equal(cs_codec_set_value_format(c, 4), 0);
	cs_buf_reset(&b);
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	assert_int_equal(b.data[0], 4);
	head = cs_values_head_len(b.data);
	b.data[16 + 3] ^= 0x40; /* a frequency of the table, under the header checksum */
	assert_int_equal(cs_values_open(c, &view, b.data, b.len, err, sizeof err), -EBADMSG);
	cs_buf_free(&b);
	cs_codec_free(c);
}

/* Format 5 (what is written now): blocks of 512, a table of one byte 0
 * when no block is entropy-coded, no checksum for a block of one value
 * repeated. The lengths asserted follow from docs/schema.md alone. */
static void test_wide_format(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	static double v[4096], out[4096];
	for (int i = 0; i < 4096; i++)
		v[i] = 7;
	cs_buf b = CS_BUF_INIT;
	cs_agg agg;
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	/* 8 blocks; the first: kind, zigzag(7) = 14, range 0, zigzag(3584) =
	 * 7168 (two varint bytes); the other 7: kind and three zero varints */
	size_t dirlen = 1 + (1 + 1 + 1 + 2) + 7 * 4;
	assert_int_equal(b.data[0], 5);
	assert_int_equal(b.data[2] | b.data[3] << 8, dirlen);
	assert_int_equal(b.len, 16 + dirlen + 4);
	cs_values_view view;
	char err[128];
	assert_int_equal(cs_values_open(c, &view, b.data, b.len, err, sizeof err), 0);
	assert_int_equal(view.bs, 512);
	cs_values_decode(&view, out);
	assert_memory_equal(v, out, sizeof v);
	size_t head = cs_values_head_len(b.data);
	assert_int_equal(head, 16 + dirlen + 4);
	assert_int_equal(cs_values_open_dir(&view, b.data, head, b.len, err, sizeof err), 0);
	view.payload = b.data + head;
	for (uint32_t blk = 0; blk < view.nblocks; blk++)
		assert_int_equal(cs_values_check_block(&view, blk, err, sizeof err), 0);
	/* formats 3 and 4: 16 blocks, each with a checksum; the first's sum
	 * zigzag(1792) = 3584, two bytes */
	assert_int_equal(cs_codec_set_value_format(c, 4), 0);
	cs_buf_reset(&b);
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	assert_int_equal(b.data[0], 3);
	assert_int_equal(b.len, 16 + (1 + 1 + 1 + 2 + 4) + 15 * 8 + 4);
	/* a block of noise keeps its checksum beside a constant one */
	uint64_t seed = 23;
	for (int i = 0; i < 512; i++)
		v[i] = (double)(1000 + tu_rand(&seed) % 256);
	assert_int_equal(cs_codec_set_value_format(c, 5), 0);
	cs_buf_reset(&b);
	assert_int_equal(cs_values_encode(c, v, 1024, &b, &agg), 0);
	head = cs_values_head_len(b.data);
	/* the table; block 0: kind, min (about 1000, zigzagged: two varint
	 * bytes), range (255 or so: two), sum (about 580000, zigzagged:
	 * three), checksum; block 1: kind, 5 - min (two), range 0, the sum's
	 * change (three), no checksum; the header's checksum */
	assert_int_equal(head, 16 + 1 + (1 + 2 + 2 + 3 + 4) + (1 + 2 + 1 + 3) + 4);
	assert_int_equal(b.len, head + 512);
	b.data[head + 100] ^= 0x04;
	assert_int_equal(cs_values_open_dir(&view, b.data, head, b.len, err, sizeof err), 0);
	view.payload = b.data + head;
	assert_int_equal(cs_values_check_block(&view, 0, err, sizeof err), -EBADMSG);
	assert_int_equal(cs_values_check_block(&view, 1, err, sizeof err), 0);
	/* a smooth counter with noise: entropy-coded, and shorter than in
	 * format 4 (half the blocks, so half the entries and stream states) */
	for (int i = 0; i < 4096; i++)
		v[i] = (double)(20000 + (int)(3000.0 * sin(i / 300.0)) + (int)(tu_rand(&seed) % 201) - 100);
	cs_buf_reset(&b);
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	assert_int_equal(b.data[0], 5);
	assert_true(b.data[16] != 0); /* a table */
	size_t wide = b.len;
	assert_int_equal(cs_codec_set_value_format(c, 4), 0);
	cs_buf_reset(&b);
	assert_int_equal(cs_values_encode(c, v, 4096, &b, &agg), 0);
	assert_int_equal(b.data[0], 4);
	if (!(wide + 8 * 6 < b.len))
		fail_msg("format 5 %zu bytes, format 4 %zu", wide, b.len);
	roundtrip(c, v, 4096);
	cs_buf_free(&b);
	cs_codec_free(c);
}

/* Format 6: a counter idle between bursts (zeros, a flat stretch, absent
 * values among the zeros) codes its runs of zero differences as symbols,
 * shorter than format 5, and reads back whole, block by block and in
 * prefixes; noise that no block codes stays format 5. */
static void test_runs_format(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	enum { N = 16384 };
	static double v[N], out[CS_VALUE_BLOCK];
	uint64_t seed = 99;
	for (int i = 0; i < N; i++) {
		int at = i % 2000;
		v[i] = at < 300 ? (double)(5000 + tu_rand(&seed) % 1000) : 0.0;
		if (at >= 1000 && at < 1100)
			v[i] = 777.0; /* flat, not zero */
		if (i > 9000 && i < 9100 && i % 7 == 0)
			v[i] = NAN;
	}
	roundtrip(c, v, N);
	cs_buf b6 = CS_BUF_INIT, b5 = CS_BUF_INIT;
	cs_agg agg;
	assert_int_equal(cs_codec_set_value_format(c, 6), 0);
	assert_int_equal(cs_values_encode(c, v, N, &b6, &agg), 0);
	assert_int_equal(b6.data[0], 6);
	assert_int_equal(cs_codec_set_value_format(c, 5), 0);
	assert_int_equal(cs_values_encode(c, v, N, &b5, &agg), 0);
	assert_int_equal(b5.data[0], 5);
	if (!(b6.len < b5.len))
		fail_msg("format 6 %zu bytes, format 5 %zu", b6.len, b5.len);
	cs_values_view view;
	char err[128];
	assert_int_equal(cs_values_open(c, &view, b6.data, b6.len, err, sizeof err), 0);
	for (uint32_t blk = 0; blk < view.nblocks; blk++) {
		uint32_t blen = cs_values_block_len(&view, blk);
		const double *want = v + (size_t)blk * CS_VALUE_BLOCK;
		cs_values_block_decode(&view, blk, out);
		for (uint32_t i = 0; i < blen; i++)
			assert_true(isnan(want[i]) ? isnan(out[i]) : tu_same_bits(want[i], out[i]));
		static const uint32_t heads[] = {1, 2, 3, 301, 511, 512};
		for (size_t h = 0; h < sizeof heads / sizeof *heads; h++) {
			memset(out, 0, sizeof out);
			if (!cs_values_block_decode_head(&view, blk, heads[h], out))
				continue; /* a block with absent values */
			for (uint32_t i = 0; i < heads[h]; i++)
				assert_true(tu_same_bits(want[i], out[i]));
		}
	}
	/* independent noise, no block coded (the differences are wider than
	 * the values): format 5 */
	for (int i = 0; i < 4096; i++)
		v[i] = (double)(20000 + (int)(tu_rand(&seed) % 201));
	assert_int_equal(cs_codec_set_value_format(c, 6), 0);
	cs_buf_reset(&b6);
	assert_int_equal(cs_values_encode(c, v, 4096, &b6, &agg), 0);
	assert_int_equal(b6.data[0], 5);
	cs_buf_free(&b6);
	cs_buf_free(&b5);
	cs_codec_free(c);
}

/* v[0..n) encoded as format asks into b, which must then be of format
 * want. */
static void encode_as(cs_codec *c, const double *v, uint32_t n, unsigned format, unsigned want,
		      cs_buf *b)
{
	cs_agg agg;
	assert_int_equal(cs_codec_set_value_format(c, format), 0);
	assert_int_equal(cs_values_encode(c, v, n, b, &agg), 0);
	assert_int_equal(b->data[0], want);
}

/* Every block of view decodes as v, whole and in its first samples (every
 * step-th count up to 470, then every one); a block with absent samples,
 * which has no such prefixes, whole. */
static void check_blocks(const cs_values_view *view, const double *v, uint32_t step)
{
	static double out[CS_VALUE_BLOCK];
	for (uint32_t blk = 0; blk < view->nblocks; blk++) {
		const double *want = v + (size_t)blk * CS_VALUE_BLOCK;
		uint32_t blen = cs_values_block_len(view, blk), absent = 0;
		cs_values_block_decode(view, blk, out);
		for (uint32_t i = 0; i < blen; i++) {
			absent += isnan(want[i]);
			assert_true(isnan(want[i]) ? isnan(out[i]) : tu_same_bits(want[i], out[i]));
		}
		for (uint32_t n = 1; n <= blen; n += n < 470 ? step : 1) {
			memset(out, 0, sizeof out);
			assert_int_equal(cs_values_block_decode_head(view, blk, n, out), !absent);
			for (uint32_t i = 0; !absent && i < n; i++)
				assert_true(tu_same_bits(want[i], out[i]));
		}
	}
}

/* Format 6 coded blocks without runs of zeros start their coder's states
 * with their last raw bits (kind bit 3): each saves most of the 46 bits
 * that start held, and still decodes whole, block by block, and in every
 * prefix, those that need the last values' bits and those that do not. */
static void test_bits_back(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	enum { N = 4096 };
	static double v[N];
	uint64_t seed = 5;
	for (int i = 0; i < N; i++)
		v[i] = (double)(20000 + (int)(3000.0 * sin(i / 300.0)) + (int)(tu_rand(&seed) % 201) - 100);
	roundtrip(c, v, N);
	cs_buf b6 = CS_BUF_INIT, b5 = CS_BUF_INIT;
	encode_as(c, v, N, 5, 5, &b5);
	encode_as(c, v, N, 6, 6, &b6);
	cs_values_view view;
	char err[128];
	assert_int_equal(cs_values_open(c, &view, b6.data, b6.len, err, sizeof err), 0);
	uint32_t back = 0;
	for (uint32_t blk = 0; blk < view.nblocks; blk++)
		back += view.back[blk];
	assert_int_equal(back, view.nblocks); /* every block coded, none with runs */
	if (!(b6.len + 4 * back <= b5.len))
		fail_msg("format 6 %zu bytes, format 5 %zu, %u blocks with bits back", b6.len, b5.len,
			 back);
	check_blocks(&view, v, 67);
	cs_buf_free(&b6);
	cs_buf_free(&b5);
	cs_codec_free(c);
}

/* Format 7 codes noise about a trend as the values less a line through
 * each block (kind bit 4), where format 6 codes their differences: for
 * uniform noise of 201 values those cost the entropy of a triangular law
 * on -200..200, the values less the line about log2(201). Blocks with
 * absent samples, negative values, values at -2^53 and 2^53 (against
 * lines) and spikes round-trip, whole and in every prefix. */
static void test_line_format(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	enum { N = 8192 };
	static double v[N];
	uint64_t seed = 11;
	for (int i = 0; i < N; i++) {
		double trend = floor(30000 + 3.5 * i + 2000 * sin(i / 5000.0));
		if (i >= 2048 && i < 2560) /* crossing zero */
			trend = -25000 + 100 * (i - 2048);
		if (i >= 3072 && i < 3584) /* block 6 near -2^53 */
			trend = -9007199254740000.0 + (i - 3072);
		if (i >= 3584 && i < 4096) /* block 7 near 2^53 */
			trend = 9007199254740000.0 - 512 + (i - 3584);
		v[i] = trend + (double)(int)(tu_rand(&seed) % 201) - 100;
		if (tu_rand(&seed) % 700 == 0 && (i < 3072 || i >= 4096))
			v[i] += 100000; /* a spike */
		if (i >= 5120 && i < 5632 && i % 7 == 0)
			v[i] = NAN;
	}
	v[3072 + 100] = -9007199254740992.0;
	v[3584 + 100] = 9007199254740992.0;
	roundtrip(c, v, N);
	cs_buf b7 = CS_BUF_INIT, b6 = CS_BUF_INIT;
	encode_as(c, v, N, 6, 6, &b6);
	encode_as(c, v, N, 7, 7, &b7);
	/* what a value saves: H(triangular) - log2(201) */
	double tri = 0;
	for (int k = -200; k <= 200; k++) {
		double p = (201.0 - abs(k)) / (201.0 * 201.0);
		tri -= p * log2(p);
	}
	double gain = tri - log2(201.0);
	assert_true(gain > 0.7 && gain < 0.75);
	cs_values_view view;
	char err[128];
	assert_int_equal(cs_values_open(c, &view, b7.data, b7.len, err, sizeof err), 0);
	uint32_t lines = 0;
	for (uint32_t blk = 0; blk < view.nblocks; blk++)
		lines += view.line[blk];
	if (lines < view.nblocks - 2 || !view.line[6] || !view.line[7])
		fail_msg("%u of %u blocks against a line (near -2^53 %u, 2^53 %u)", lines, view.nblocks,
			 view.line[6], view.line[7]);
	/* at least half the gain on the line blocks' values */
	if (!(b7.len + lines * CS_VALUE_BLOCK * gain / 2 / 8 < b6.len))
		fail_msg("format 7 %zu bytes, format 6 %zu", b7.len, b6.len);
	check_blocks(&view, v, 53);
	cs_buf_free(&b7);
	cs_buf_free(&b6);
	cs_codec_free(c);
}

/* What a CSV import makes of x printed with fmt: the double strtod
 * reads. */
static char printed_text[64];
#define printed(fmt, x)                                                      \
	(snprintf(printed_text, sizeof printed_text, fmt, (double)(x)),            \
	 strtod(printed_text, NULL))

/* Format 8 keeps decimal fractions (rates of seven significant digits,
 * percentages of two decimals, some absent, tiny ones down to 10^-22) as
 * integers over 10^e in integer blocks (kind bit 5), where format 7 keeps
 * doubles; blocks no power of ten up to 10^22 fits (-0.0, 4/3's seventeen
 * digits, 10^-23, 10^15 + 0.5) stay doubles. Every value comes back bit
 * for bit; each block's min and max are its values', its sum theirs to
 * within rounding; and a run of rates costs about the bits of its
 * integers' range, computed here from the printed digits. */
static void test_decimal_format(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	enum { N = 8 * CS_VALUE_BLOCK };
	static double v[N];
	uint64_t seed = 13;
	for (int i = 0; i < N; i++) {
		int b = i / CS_VALUE_BLOCK, k = i % CS_VALUE_BLOCK;
		double u = (double)(tu_rand(&seed) % 1000000) / 1e6;
		switch (b) {
		case 0: /* rates, 7 significant digits: 20..35, so 5 decimals */
			v[i] = printed("%.7g", 20 + 15 * sin(k / 330.0) + u / 10);
			break;
		case 1: /* percentages, some absent */
			v[i] = k % 7 == 3 ? (double)NAN : printed("%.2f", 100 * u - 50);
			break;
		case 2: /* tiny: 10^-20 steps, and one 10^-22 */
			v[i] = k == 77 ? 1e-22 : printed("%.0fe-20", (double)(k % 50));
			break;
		case 3: /* a -0.0 among fractions */
			v[i] = k == 5 ? -0.0 : printed("%.2f", u);
			break;
		case 4: /* thirds: 4/3 needs 17 digits */
			v[i] = k == 9 ? 4.0 / 3.0 : (double)(k % 3) / 3.0;
			break;
		case 5: /* 10^-23: under every 10^-e's reach */
			v[i] = k == 0 ? 1e-23 : printed("%.3f", u);
			break;
		case 6: /* 10^15 + 0.5: its integer over 10 passes 2^53 */
			v[i] = k == 0 ? 1e15 + 0.5 : printed("%.1f", u);
			break;
		default: /* counts, and one half */
			v[i] = k == 100 ? 0.5 : (double)(k * 3);
			break;
		}
	}
	roundtrip(c, v, N);
	cs_buf b = CS_BUF_INIT;
	encode_as(c, v, N, 8, 8, &b);
	cs_values_view view;
	char err[128];
	assert_int_equal(cs_values_open(c, &view, b.data, b.len, err, sizeof err), 0);
	static const uint8_t want_dec[8] = {5, 2, 22, 0, 0, 0, 0, 1};
	static double out[CS_VALUE_BLOCK];
	for (uint32_t blk = 0; blk < 8; blk++) {
		if (view.dec[blk] != want_dec[blk])
			fail_msg("block %u: exponent %u, want %u", blk, view.dec[blk], want_dec[blk]);
		const double *want = v + (size_t)blk * CS_VALUE_BLOCK;
		cs_values_block_decode(&view, blk, out);
		double mn = INFINITY, mx = -INFINITY, sum = 0, mag = 0;
		uint32_t count = 0;
		for (uint32_t i = 0; i < CS_VALUE_BLOCK; i++) {
			assert_true(isnan(want[i]) ? isnan(out[i]) : tu_same_bits(want[i], out[i]));
			if (isnan(want[i]))
				continue;
			mn = want[i] < mn ? want[i] : mn;
			mx = want[i] > mx ? want[i] : mx;
			sum += want[i];
			mag += fabs(want[i]);
			count++;
		}
		cs_agg a;
		cs_values_block_agg(&view, blk, &a);
		assert_int_equal(a.count, count);
		if (view.dec[blk] && !(a.min == mn && a.max == mx && fabs(a.sum - sum) <= 1e-12 * mag))
			fail_msg("block %u: min/max/sum %.17g/%.17g/%.17g, want %.17g/%.17g/%.17g", blk,
				 a.min, a.max, a.sum, mn, mx, sum);
	}
	/* 4096 rates: the bits of their integers' range (5 decimals), and
	 * a directory entry and a checksum a block */
	for (int i = 0; i < N; i++)
		v[i] = printed("%.7g", 20 + 15 * sin(i / 700.0) + (double)(tu_rand(&seed) % 1000) / 1e4);
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (int i = 0; i < N; i++) {
		int64_t m = llround(v[i] * 1e5);
		lo = m < lo ? m : lo;
		hi = m > hi ? m : hi;
	}
	unsigned bits = 0;
	while ((hi - lo) >> bits)
		bits++;
	cs_buf b8 = CS_BUF_INIT, b7 = CS_BUF_INIT;
	encode_as(c, v, N, 8, 8, &b8);
	encode_as(c, v, N, 7, 5, &b7);
	if (!(b8.len <= (size_t)N * bits / 8 + 64 * (N / CS_VALUE_BLOCK) && 2 * b8.len < b7.len))
		fail_msg("format 8: %zu bytes; %u bits a value: %zu; format 7: %zu", b8.len, bits,
			 (size_t)N * bits / 8, b7.len);
	/* wide decimals that raw doubles under zstd hold in less (a value
	 * and a millionth in turn, 36 bits as integers): the chunk is written
	 * as format 7 writes it */
	for (int i = 0; i < N; i++)
		v[i] = i % 2 ? 123456.7 : 0.000001;
	b8.len = b7.len = 0;
	encode_as(c, v, N, 7, 5, &b7);
	assert_int_equal(cs_codec_set_value_format(c, 8), 0);
	cs_agg agg;
	assert_int_equal(cs_values_encode(c, v, N, &b8, &agg), 0);
	if (!(b8.len == b7.len && !memcmp(b8.data, b7.data, b7.len)))
		fail_msg("format 8: %zu bytes (format byte %u); format 7: %zu", b8.len, b8.data[0],
			 b7.len);
	/* a sawtooth of decimals (a step of 7.00, wrapping), whose steps the
	 * coder stores as raw bits each while zstd finds them repeated: the
	 * chunk is written as format 7 writes it too */
	for (int i = 0; i < N; i++)
		v[i] = printed("%.2f", 80 + (i * 7) % 600 + 0.37);
	b8.len = b7.len = 0;
	encode_as(c, v, N, 7, 5, &b7);
	assert_int_equal(cs_codec_set_value_format(c, 8), 0);
	assert_int_equal(cs_values_encode(c, v, N, &b8, &agg), 0);
	if (!(b8.len == b7.len && !memcmp(b8.data, b7.data, b7.len)))
		fail_msg("sawtooth, format 8: %zu bytes (format byte %u); format 7: %zu", b8.len,
			 b8.data[0], b7.len);
	/* under another rounding mode the values still come back as they
	 * were: decimal blocks are found and divided rounding to nearest */
	for (int i = 0; i < N; i++)
		v[i] = printed("%.7g", 3 + sin(i / 50.0) + (double)(tu_rand(&seed) % 1000) / 1e5);
	assert_int_equal(fesetround(FE_UPWARD), 0);
	b8.len = 0;
	assert_int_equal(cs_values_encode(c, v, N, &b8, &agg), 0);
	int opened = cs_values_open(c, &view, b8.data, b8.len, err, sizeof err);
	static double all[N];
	if (!opened)
		cs_values_decode(&view, all);
	assert_int_equal(fesetround(FE_TONEAREST), 0);
	assert_int_equal(opened, 0);
	assert_int_equal(b8.data[0], 8);
	for (int i = 0; i < N; i++)
		assert_true(tu_same_bits(v[i], all[i]));
	cs_buf_free(&b8);
	cs_buf_free(&b7);
	cs_buf_free(&b);
	cs_codec_free(c);
}

/* A format 3 timeline decodes a block at a time, each block knowing its
 * first and last t0 before it is decoded. */
/* Decodes blob b of n samples and compares it with t0/t1. */
static void timeline_back(cs_codec *c, const cs_buf *b, uint32_t n, const uint64_t *t0,
			  const uint64_t *t1)
{
	static uint64_t o0[CS_CHUNK_MAX], o1[CS_CHUNK_MAX];
	char err[128];
	if (cs_timeline_decode(c, b->data, b->len, n, o0, o1, err, sizeof err))
		fail_msg("decoding %u samples: %s", n, err);
	assert_memory_equal(t0, o0, n * sizeof *t0);
	assert_memory_equal(t1, o1, n * sizeof *t1);
}

/* Format 5 timelines (what is written) and format 4 ones (what earlier
 * versions wrote): the mode each shape takes (payload byte 0, after the
 * 16-byte header), sizes against the entropy of what varies, and the
 * edges (one sample, a last block of one, steps near 2^63). */
static void timeline_shapes(unsigned format)
{
	cs_codec *c = cs_codec_new();
	assert_int_equal(cs_codec_set_timeline_format(c, format), 0);
	static uint64_t t0[CS_CHUNK_MAX], t1[CS_CHUNK_MAX];
	cs_buf b = CS_BUF_INIT;
	uint64_t seed = 11;
	/* a steady 10 us with +-40 ns of jitter and durations 9920..10000:
	 * both against the medians; 81 equally likely values each, so
	 * 2 log2(81) = 12.68 bits a sample at best */
	uint64_t t = 1700000000000000000ull;
	for (uint32_t i = 0; i < 4096; i++) {
		t += 10000 - 40 + tu_rand(&seed) % 81;
		t0[i] = t;
		t1[i] = t + 9920 + tu_rand(&seed) % 81;
	}
	assert_int_equal(cs_timeline_encode(c, t0, t1, 4096, &b), 0);
	assert_int_equal(b.data[0], format);
	assert_int_equal(b.data[16], 3);
	/* format 5 saves a state a block and most of the block list */
	double floor_bytes = 4096 * 2 * log2(81.0) / 8;
	if (b.len > (format == 5 ? 1.07 : 1.10) * floor_bytes)
		fail_msg("jittered timeline, format %u: %zu bytes, floor %.0f", format, b.len,
			 floor_bytes);
	timeline_back(c, &b, 4096, t0, t1);
	/* a sampling interval that keeps growing (1000 + i ns) and durations
	 * equal to it: both chained to the step before */
	t = 0;
	for (uint32_t i = 0; i < 4096; i++) {
		t += 1000 + i;
		t0[i] = t;
		t1[i] = t + 1000 + i;
	}
	cs_buf_reset(&b);
	assert_int_equal(cs_timeline_encode(c, t0, t1, 4096, &b), 0);
	assert_int_equal(b.data[16], 0);
	timeline_back(c, &b, 4096, t0, t1);
	/* perfectly regular: a few bytes a block of 128 */
	for (uint32_t i = 0; i < 4096; i++)
		t0[i] = 5000 + 100 * (uint64_t)i, t1[i] = t0[i] + 100;
	cs_buf_reset(&b);
	assert_int_equal(cs_timeline_encode(c, t0, t1, 4096, &b), 0);
	if (b.len > 32 * 12 + 64)
		fail_msg("regular timeline: %zu bytes", b.len);
	timeline_back(c, &b, 4096, t0, t1);
	/* one sample, a duration near 2^63 */
	t0[0] = 5, t1[0] = 5 + (1ull << 62) + 12345;
	cs_buf_reset(&b);
	assert_int_equal(cs_timeline_encode(c, t0, t1, 1, &b), 0);
	timeline_back(c, &b, 1, t0, t1);
	/* 129 samples (a last block of one), steps of 2^59 and of 0, random
	 * durations up to 2^62: symbols of every bit length, times below 2^63 */
	t = 0;
	for (uint32_t i = 0; i < 129; i++) {
		t0[i] = t;
		t1[i] = t + (tu_rand(&seed) >> (2 + tu_rand(&seed) % 62));
		t += i < 7 ? 1ull << 59 : i % 3 ? 0 : tu_rand(&seed) % 1000;
	}
	cs_buf_reset(&b);
	assert_int_equal(cs_timeline_encode(c, t0, t1, 129, &b), 0);
	timeline_back(c, &b, 129, t0, t1);
	/* the longest chunk, equal times throughout */
	for (uint32_t i = 0; i < CS_CHUNK_MAX; i++)
		t0[i] = t1[i] = 77;
	cs_buf_reset(&b);
	assert_int_equal(cs_timeline_encode(c, t0, t1, CS_CHUNK_MAX, &b), 0);
	timeline_back(c, &b, CS_CHUNK_MAX, t0, t1);
	cs_buf_free(&b);
	cs_codec_free(c);
}

static void test_timeline_shapes(void **state)
{
	(void)state;
	timeline_shapes(5);
	timeline_shapes(4);
}

/* Blocks decoded one at a time, last first, each knowing its first and
 * last t0 from the block list alone (formats 5 and 4). */
static void test_timeline_blocks(void **state)
{
	(void)state;
	for (unsigned format = 4; format <= 5; format++) {
		cs_codec *c = cs_codec_new();
		assert_int_equal(cs_codec_set_timeline_format(c, format), 0);
		static uint64_t t0[1000], t1[1000], o0[1000], o1[1000];
		uint64_t seed = 9, t = 5;
		for (int i = 0; i < 1000; i++) {
			t0[i] = t;
			t1[i] = t + tu_rand(&seed) % 3;
			t += i % 300 < 20 ? 0 : 10 + tu_rand(&seed) % 5; /* runs of equal t0 */
		}
		cs_buf b = CS_BUF_INIT;
		assert_int_equal(cs_timeline_encode(c, t0, t1, 1000, &b), 0);
		assert_int_equal(b.data[0], format);
		cs_timeline_view tv;
		char err[128];
		assert_int_equal(cs_timeline_open(c, &tv, b.data, b.len, 1000, o0, o1, err, sizeof err), 0);
		assert_int_equal(tv.nblocks, 8);
		for (int blk = 7; blk >= 0; blk--) {
			uint32_t j0 = (uint32_t)blk * 128, j1 = j0 + 128 < 1000 ? j0 + 128 : 1000;
			assert_true(tv.first[blk] == t0[j0] && tv.last[blk] == t0[j1 - 1]);
			assert_int_equal(cs_timeline_block(&tv, (uint32_t)blk, err, sizeof err), 0);
			assert_memory_equal(t0 + j0, o0 + j0, (j1 - j0) * 8);
			assert_memory_equal(t1 + j0, o1 + j0, (j1 - j0) * 8);
		}
		cs_buf_free(&b);
		cs_codec_free(c);
	}
}

static void test_corruption(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	double v[300];
	static double out[CS_CHUNK_MAX]; /* a corrupt header may claim any n */
	uint64_t t0[300], t1[300];
	for (int i = 0; i < 300; i++) {
		v[i] = i % 5 ? (double)(i * 7) : (i % 10 ? 0.25 : (double)NAN);
		t0[i] = 1000u + (uint64_t)i * 10;
		t1[i] = t0[i] + 9;
	}
	cs_buf b = CS_BUF_INIT, tb = CS_BUF_INIT;
	cs_agg agg;
	assert_int_equal(cs_values_encode(c, v, 300, &b, &agg), 0);
	assert_int_equal(cs_timeline_encode(c, t0, t1, 300, &tb), 0);
	uint8_t *copy = malloc(b.len > tb.len ? b.len : tb.len);
	char err[128];
	int rejected = 0;
	for (size_t len = 0; len < b.len; len++) {
		cs_values_view view;
		assert_int_equal(cs_values_open(c, &view, b.data, len, err, sizeof err), -EBADMSG);
	}
	/* Every flipped bit is caught, by a checksum if nothing else, unless
	 * it changes nothing decoded (a few bits of the zstd frame). */
	double clean[300];
	cs_values_view view0;
	assert_int_equal(cs_values_open(c, &view0, b.data, b.len, err, sizeof err), 0);
	cs_values_decode(&view0, clean);
	int harmless = 0;
	for (size_t pos = 0; pos < b.len; pos++) {
		for (int flip = 1; flip < 256; flip <<= 2) {
			memcpy(copy, b.data, b.len);
			copy[pos] ^= (uint8_t)flip;
			cs_values_view view;
			if (cs_values_open(c, &view, copy, b.len, err, sizeof err) == 0) {
				cs_values_decode(&view, out);
				assert_int_equal(view.n, 300);
				for (int i = 0; i < 300; i++)
					assert_true(isnan(clean[i]) ? isnan(out[i])
								    : tu_same_bits(clean[i], out[i]));
				harmless++;
			} else {
				rejected++;
			}
		}
	}
	assert_true(rejected > 0);
	assert_true(harmless < rejected / 100);
	for (size_t pos = 0; pos < tb.len; pos++) {
		memcpy(copy, tb.data, tb.len);
		copy[pos] ^= 0x41;
		assert_int_equal(cs_timeline_decode(c, copy, tb.len, 300, t0, t1, err, sizeof err),
				 -EBADMSG);
	}
	free(copy);
	cs_buf_free(&b);
	cs_buf_free(&tb);
	cs_codec_free(c);
}

/* Value chunks of 4096 doubles that zstd compresses, each its own (seed):
 * what the cache keeps (timelines and integer blocks are entropy coded,
 * never compressed). Written in format 7, which keeps these short binary
 * fractions as doubles (format 8 would store them as decimal integers). */
static void make_values(cs_codec *c, uint64_t seed, double *v, cs_buf *b)
{
	assert_int_equal(cs_codec_set_value_format(c, 7), 0);
	double own = (double)seed / 4096.0;
	for (int i = 0; i < 4096; i++)
		v[i] = 1.5 + (double)(i % 100) * 0.25 + (double)(tu_rand(&seed) % 8) / 1024.0 + own;
	b->len = 0;
	cs_agg agg;
	assert_int_equal(cs_values_encode(c, v, 4096, b, &agg), 0);
	assert_true(b->data[1] & 1); /* compressed: what the cache keeps */
}

/* Decodes a whole value chunk of 4096 into out. */
static int decode_values(cs_codec *c, const cs_buf *b, double *out)
{
	static _Thread_local cs_values_view view;
	char err[128];
	int rc = cs_values_open(c, &view, b->data, b->len, err, sizeof err);
	if (!rc)
		cs_values_decode(&view, out);
	return rc;
}

/* Decompressed payloads kept between reads: a second read is a hit with
 * the same values, another blob of the same size is not, a smaller limit
 * evicts, 0 turns it off. */
static void test_blob_cache(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	static double v[4096], o[4096];
	cs_buf a = CS_BUF_INIT, b = CS_BUF_INIT;
	uint64_t h0, m0, h, m;
	size_t bytes;
	cs_blobcache_set_limit(1 << 20);
	cs_blobcache_stats(&h0, &m0, &bytes);
	make_values(c, 1, v, &a);
	for (int pass = 0; pass < 2; pass++) {
		memset(o, 0, sizeof o);
		assert_int_equal(decode_values(c, &a, o), 0);
		assert_memory_equal(v, o, sizeof v);
	}
	cs_blobcache_stats(&h, &m, &bytes);
	assert_int_equal(m - m0, 1);
	assert_int_equal(h - h0, 1);
	assert_true(bytes > 0 && bytes <= 1 << 20);
	make_values(c, 2, v, &b);
	assert_int_equal(decode_values(c, &b, o), 0);
	assert_memory_equal(v, o, sizeof v);
	cs_blobcache_stats(&h, &m, &bytes);
	assert_int_equal(m - m0, 2);
	size_t two = bytes;
	cs_blobcache_set_limit(two - 1);
	cs_blobcache_stats(&h, &m, &bytes);
	assert_true(bytes < two);
	cs_blobcache_set_limit(0);
	cs_blobcache_stats(&h, &m, &bytes);
	assert_int_equal(bytes, 0);
	assert_int_equal(decode_values(c, &b, o), 0);
	assert_memory_equal(v, o, sizeof v);
	cs_buf_free(&a);
	cs_buf_free(&b);
	cs_codec_free(c);
}

#define CACHE_BLOBS 16
typedef struct cache_job {
	cs_buf *blobs;
	double (*want)[4096];
	int id, bad;
} cache_job;

static void *cache_reader(void *arg)
{
	cache_job *j = arg;
	cs_codec *c = cs_codec_new();
	static _Thread_local double o[4096];
	for (int i = 0; i < 400 && c; i++) {
		int k = (i * 5 + j->id * 3) % CACHE_BLOBS;
		if (decode_values(c, &j->blobs[k], o) || memcmp(o, j->want[k], sizeof o))
			j->bad++;
	}
	cs_codec_free(c);
	return NULL;
}

/* Four threads reading 16 blobs through a cache with room for 8 of
 * them (entries evicted while others read): every read is right. */
static void test_blob_cache_threads(void **state)
{
	(void)state;
	cs_codec *c = cs_codec_new();
	static double want[CACHE_BLOBS][4096];
	cs_buf blobs[CACHE_BLOBS];
	for (int k = 0; k < CACHE_BLOBS; k++) {
		blobs[k] = (cs_buf)CS_BUF_INIT;
		make_values(c, 10 + (uint64_t)k, want[k], &blobs[k]);
	}
	/* the size of one entry, then room for half of the blobs */
	cs_blobcache_set_limit(1 << 20);
	static double o[4096];
	assert_int_equal(decode_values(c, &blobs[0], o), 0);
	uint64_t h, m;
	size_t one;
	cs_blobcache_stats(&h, &m, &one);
	cs_blobcache_set_limit(0);
	cs_blobcache_set_limit(one * (CACHE_BLOBS / 2));
	pthread_t th[4];
	cache_job jobs[4];
	for (int i = 0; i < 4; i++) {
		jobs[i] = (cache_job){blobs, want, i, 0};
		assert_int_equal(pthread_create(&th[i], NULL, cache_reader, &jobs[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(jobs[i].bad, 0);
	}
	size_t bytes;
	cs_blobcache_stats(&h, &m, &bytes);
	assert_true(bytes <= one * (CACHE_BLOBS / 2));
	assert_true(h > 0 && m > CACHE_BLOBS); /* hits, and misses after evictions */
	cs_blobcache_set_limit(0);
	for (int k = 0; k < CACHE_BLOBS; k++)
		cs_buf_free(&blobs[k]);
	cs_codec_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters_odd_sizes),
		cmocka_unit_test(test_special_values),
		cmocka_unit_test(test_sparse_presence),
		cmocka_unit_test(test_block_decode),
		cmocka_unit_test(test_compression_ratio),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_corruption),
		cmocka_unit_test(test_unchecked_format),
		cmocka_unit_test(test_compact_format),
		cmocka_unit_test(test_entropy_format),
		cmocka_unit_test(test_wide_format),
		cmocka_unit_test(test_runs_format),
		cmocka_unit_test(test_bits_back),
		cmocka_unit_test(test_line_format),
		cmocka_unit_test(test_decimal_format),
		cmocka_unit_test(test_timeline_blocks),
		cmocka_unit_test(test_timeline_shapes),
		cmocka_unit_test(test_blob_cache),
		cmocka_unit_test(test_blob_cache_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
