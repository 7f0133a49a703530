/* test_wire.c - the wire codec: every frame type round-trips, and each kind
 * of malformed frame is refused with its field and offset. */
#include "wire.h"
#include "testutil.h"

static void encode_ok(cs_buf *b, const cs_wire_msg *m)
{
	assert_int_equal(cs_wire_encode(b, m), 0);
}

static cs_wire_msg decode_ok(const cs_buf *b, size_t *used)
{
	cs_wire_msg m;
	char err[256] = "";
	int rc = cs_wire_decode(b->data, b->len, &m, used, err, sizeof err);
	if (rc)
		fail_msg("decode: %d %s", rc, err);
	return m;
}

static void test_roundtrip_all_types(void **state)
{
	(void)state;
	cs_buf b = CS_BUF_INIT;
	cs_wire_msg m;
	size_t used, off = 0;

	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_HELLO;
	m.u.hello = (cs_wire_hello){4242, "node-7", "./gemm --n 8192", "0.1.0"};
	encode_ok(&b, &m);

	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_RUN_BEGIN;
	m.u.run_begin = (cs_wire_run_begin){CS_WIRE_KIND_HW, CS_WIRE_UNIT_NS, 1700000000000000000ull,
					    1.755e9, "uuid-1", "collector", "gemm", "{\"chip\":\"GH100\"}"};
	encode_ok(&b, &m);

	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_DEVICE;
	m.u.device = (cs_wire_device){3, 132, 1.98e9, 2.6e9, "NVIDIA H200", "GH100", NULL};
	encode_ok(&b, &m);

	cs_wire_metric mets[2] = {{0, 0, 0, "lts__t_sectors.sum", "sector"},
				  {7, 3, 1, "sm__cycles_elapsed.avg", ""}};
	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_METRICS;
	m.u.metrics = (cs_wire_metrics){2, mets};
	encode_ok(&b, &m);

	uint32_t ids[2] = {0, 7};
	uint64_t t0[3] = {100, 200, 300}, t1[3] = {199, 299, 399};
	double vals[6] = {1, 2.5, NAN, -0.0, 1e300, 4};
	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_SAMPLES;
	m.u.samples = (cs_wire_samples){3, 2, 3, 77, ids, t0, t1, vals};
	encode_ok(&b, &m);

	cs_wire_range rg[2] = {{CS_RANGE_MEMCPY, 150, 250, 3, 7, 99, 4242, 17, 1 << 20, "cudaMemcpyAsync"},
			       {CS_RANGE_NVTX, 100, 400, -1, -1, -1, -1, -1, -1, "layer 3"}};
	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_RANGES;
	m.u.ranges = (cs_wire_ranges){2, rg};
	encode_ok(&b, &m);

	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_RUN_END;
	m.u.run_end = (cs_wire_run_end){CS_WIRE_INCOMPLETE, 5, 3, 1, 2, 0, 0};
	encode_ok(&b, &m); /* without the counters' trailer: 40 bytes, as before */
	m.u.run_end = (cs_wire_run_end){CS_WIRE_COMPLETE, 5, 3, 1, 2, 7, 9};
	encode_ok(&b, &m); /* with it */

	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_REGISTER;
	m.u.reg = (cs_wire_register){CS_WIRE_CONTROL_VERSION, CS_WIRE_MODE_ARMED,
				     CS_WIRE_STATE_IDLE, 100000, 10000, 10000000,
				     "slurm-77", "0,1", "lts__t_sectors.sum"};
	encode_ok(&b, &m);

	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_STATUS;
	m.u.report = (cs_wire_report){CS_WIRE_STATE_SAMPLING, 100000, 500, 2, 1};
	encode_ok(&b, &m);

	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_COMMAND;
	m.u.command = (cs_wire_command){9, CS_WIRE_OP_OPEN, 5000000000u, "slow step"};
	encode_ok(&b, &m);

	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_REPLY;
	m.u.reply = (cs_wire_reply){9, CS_WIRE_REPLY_REFUSED, "a window is open"};
	encode_ok(&b, &m);

	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_ACK;
	m.u.ack = (cs_wire_ack){CS_WIRE_ACK_INCOMPLETE, 123456, "0f7e2c1a-uuid", "disk full"};
	encode_ok(&b, &m);

	/* Decode the stream back frame by frame. */
	cs_buf view = b;
	int types[] = {CS_WIRE_HELLO, CS_WIRE_RUN_BEGIN, CS_WIRE_DEVICE, CS_WIRE_METRICS,
		       CS_WIRE_SAMPLES, CS_WIRE_RANGES, CS_WIRE_RUN_END, CS_WIRE_RUN_END,
		       CS_WIRE_REGISTER, CS_WIRE_STATUS, CS_WIRE_COMMAND, CS_WIRE_REPLY,
		       CS_WIRE_ACK};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		view.data = b.data + off;
		view.len = b.len - off;
		cs_wire_msg d = decode_ok(&view, &used);
		assert_int_equal(d.type, types[i]);
		switch (d.type) {
		case CS_WIRE_HELLO:
			assert_int_equal(d.u.hello.pid, 4242);
			assert_string_equal(d.u.hello.cmdline, "./gemm --n 8192");
			break;
		case CS_WIRE_RUN_BEGIN:
			assert_true(d.u.run_begin.clock_hz == 1.755e9);
			assert_string_equal(d.u.run_begin.meta, "{\"chip\":\"GH100\"}");
			break;
		case CS_WIRE_DEVICE:
			assert_int_equal(d.u.device.sm_count, 132);
			assert_string_equal(d.u.device.uuid, ""); /* NULL sent as "" */
			break;
		case CS_WIRE_METRICS:
			assert_int_equal(d.u.metrics.count, 2);
			assert_int_equal(d.u.metrics.v[1].id, 7);
			assert_int_equal(d.u.metrics.v[1].cumulative, 1);
			assert_string_equal(d.u.metrics.v[0].unit, "sector");
			break;
		case CS_WIRE_SAMPLES:
			assert_int_equal(d.u.samples.seq0, 77);
			assert_memory_equal(d.u.samples.t1, t1, sizeof t1);
			assert_true(isnan(d.u.samples.values[2]));
			assert_true(tu_same_bits(d.u.samples.values[3], -0.0));
			break;
		case CS_WIRE_RANGES:
			assert_int_equal(d.u.ranges.v[0].bytes, 1 << 20);
			assert_int_equal(d.u.ranges.v[1].device, -1);
			assert_string_equal(d.u.ranges.v[1].name, "layer 3");
			break;
		case CS_WIRE_RUN_END:
			assert_int_equal(d.u.run_end.overflows, 2);
			assert_int_equal(d.u.run_end.bad_records,
					 d.u.run_end.status == CS_WIRE_COMPLETE ? 7 : 0);
			assert_int_equal(d.u.run_end.empty_samples,
					 d.u.run_end.status == CS_WIRE_COMPLETE ? 9 : 0);
			break;
		case CS_WIRE_REGISTER:
			assert_int_equal(d.u.reg.mode, CS_WIRE_MODE_ARMED);
			assert_int_equal(d.u.reg.max_interval_ns, 10000000);
			assert_string_equal(d.u.reg.job, "slurm-77");
			assert_string_equal(d.u.reg.metrics, "lts__t_sectors.sum");
			break;
		case CS_WIRE_STATUS:
			assert_int_equal(d.u.report.state, CS_WIRE_STATE_SAMPLING);
			assert_int_equal(d.u.report.dropped, 2);
			assert_int_equal(d.u.report.windows, 1);
			break;
		case CS_WIRE_COMMAND:
			assert_int_equal(d.u.command.id, 9);
			assert_int_equal(d.u.command.value, 5000000000u);
			assert_string_equal(d.u.command.name, "slow step");
			break;
		case CS_WIRE_REPLY:
			assert_int_equal(d.u.reply.status, CS_WIRE_REPLY_REFUSED);
			assert_string_equal(d.u.reply.message, "a window is open");
			break;
		case CS_WIRE_ACK:
			assert_int_equal(d.u.ack.status, CS_WIRE_ACK_INCOMPLETE);
			assert_int_equal(d.u.ack.samples, 123456);
			assert_string_equal(d.u.ack.uuid, "0f7e2c1a-uuid");
			assert_string_equal(d.u.ack.message, "disk full");
			break;
		default:
			break;
		}
		cs_wire_msg_free(&d);
		off += used;
	}
	assert_int_equal(off, b.len);
	cs_buf_free(&b);
}

static cs_buf one_frame(void)
{
	cs_buf b = CS_BUF_INIT;
	uint32_t ids[1] = {0};
	uint64_t t0[2] = {1, 2}, t1[2] = {2, 3};
	double v[2] = {5, 6};
	cs_wire_msg m = {.type = CS_WIRE_SAMPLES};
	m.u.samples = (cs_wire_samples){0, 1, 2, 0, ids, t0, t1, v};
	encode_ok(&b, &m);
	return b;
}

static void expect_bad(const uint8_t *p, size_t len, const char *needle)
{
	cs_wire_msg m;
	size_t used;
	char err[256] = "";
	int rc = cs_wire_decode(p, len, &m, &used, err, sizeof err);
	if (rc != -EBADMSG)
		fail_msg("expected -EBADMSG (%s), got %d", needle, rc);
	if (!strstr(err, needle))
		fail_msg("'%s' lacks '%s'", err, needle);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static void test_header_errors(void **state)
{
	(void)state;
	cs_buf b = one_frame();
	uint8_t f[256];
	memcpy(f, b.data, b.len);
	f[0] = 'X';
	expect_bad(f, b.len, "bad magic");
	memcpy(f, b.data, b.len);
	f[4] = 9;
	expect_bad(f, b.len, "version 9");
	memcpy(f, b.data, b.len);
	f[5] = 99;
	expect_bad(f, b.len, "unknown frame type 99");
	memcpy(f, b.data, b.len);
	f[6] = 1;
	expect_bad(f, b.len, "flags");
	memcpy(f, b.data, b.len);
	put32(f + 8, CS_WIRE_MAX_PAYLOAD + 1);
	expect_bad(f, b.len, "exceeds the limit");
	/* Truncation asks for more, with the size needed. */
	cs_wire_msg m;
	size_t used;
	char err[256];
	for (size_t len = 0; len < b.len; len++) {
		assert_int_equal(cs_wire_decode(b.data, len, &m, &used, err, sizeof err), -EAGAIN);
		assert_int_equal(used, len < CS_WIRE_HEADER_LEN ? CS_WIRE_HEADER_LEN : b.len);
	}
	cs_buf_free(&b);
}

static void test_payload_errors(void **state)
{
	(void)state;
	cs_buf b = one_frame();
	uint8_t f[256];
	/* SAMPLES: n says 3 but arrays hold 2 */
	memcpy(f, b.data, b.len);
	put32(f + 12 + 8, 3);
	expect_bad(f, b.len, "field n at offset");
	/* m over the limit */
	memcpy(f, b.data, b.len);
	put32(f + 12 + 4, CS_WIRE_MAX_METRICS + 1);
	expect_bad(f, b.len, "exceed the limit");
	/* reserved bytes */
	memcpy(f, b.data, b.len);
	f[12 + 12] = 1;
	expect_bad(f, b.len, "reserved byte 0");
	/* payload length shorter than the fixed fields */
	memcpy(f, b.data, b.len);
	put32(f + 8, 10);
	expect_bad(f, 12 + 10, "needs 4 bytes, only 2 left");
	/* trailing bytes: claim a longer payload than the fields use */
	cs_buf h = CS_BUF_INIT;
	cs_wire_msg m = {.type = CS_WIRE_RUN_END};
	m.u.run_end = (cs_wire_run_end){CS_WIRE_COMPLETE, 1, 2, 3, 4, 0, 0};
	encode_ok(&h, &m);
	memcpy(f, h.data, h.len);
	f[h.len] = 0;
	put32(f + 8, (uint32_t)(h.len - 12 + 1));
	expect_bad(f, h.len + 1, "1 trailing bytes");
	memcpy(f, h.data, h.len);
	f[12] = 5;
	expect_bad(f, h.len, "status 5");
	cs_buf_free(&h);
	/* strings: too long, truncated, with NUL */
	cs_buf s = CS_BUF_INIT;
	memset(&m, 0, sizeof m);
	m.type = CS_WIRE_REPLY;
	m.u.reply = (cs_wire_reply){1, CS_WIRE_REPLY_DONE, "abc"};
	encode_ok(&s, &m);
	memcpy(f, s.data, s.len);
	put32(f + 20, CS_WIRE_MAX_STRING + 1);
	expect_bad(f, s.len, "exceeds the limit");
	memcpy(f, s.data, s.len);
	put32(f + 20, 4);
	expect_bad(f, s.len, "needs 4 bytes, only 3 left");
	memcpy(f, s.data, s.len);
	f[25] = 0;
	expect_bad(f, s.len, "NUL byte");
	memcpy(f, s.data, s.len);
	f[25] = 0xff; /* "a\xffc": not UTF-8 */
	expect_bad(f, s.len, "field message at offset 24: string is not UTF-8 (byte 0xff at its offset 1)");
	cs_buf_free(&s);
	/* ranges: count larger than what fits, bad kind, inverted */
	cs_buf r = CS_BUF_INIT;
	cs_wire_range rg = {CS_RANGE_KERNEL, 10, 20, 0, 0, 0, 1, 1, -1, "k"};
	m.type = CS_WIRE_RANGES;
	m.u.ranges = (cs_wire_ranges){1, &rg};
	encode_ok(&r, &m);
	memcpy(f, r.data, r.len);
	put32(f + 12, 1000000);
	expect_bad(f, r.len, "ranges need at least");
	memcpy(f, r.data, r.len);
	f[16] = 200;
	expect_bad(f, r.len, "unknown range kind 200");
	memcpy(f, r.data, r.len);
	uint64_t early = 5;
	memcpy(f + 16 + 12, &early, 8); /* t1 = 5 < t0 = 10 */
	expect_bad(f, r.len, "before t0");
	memcpy(f, r.data, r.len);
	uint64_t neg = (uint64_t)-5;
	memcpy(f + 16 + 20, &neg, 8);
	expect_bad(f, r.len, "neither -1");
	cs_buf_free(&r);
	/* metrics: bad kind, empty name */
	cs_buf mb = CS_BUF_INIT;
	cs_wire_metric met = {1, 0, 0, "x", ""};
	m.type = CS_WIRE_METRICS;
	m.u.metrics = (cs_wire_metrics){1, &met};
	encode_ok(&mb, &m);
	memcpy(f, mb.data, mb.len);
	f[12 + 8] = 9;
	expect_bad(f, mb.len, "kind 9");
	cs_buf_free(&mb);
	met.name = "";
	mb = (cs_buf)CS_BUF_INIT;
	encode_ok(&mb, &m);
	expect_bad(mb.data, mb.len, "empty name");
	cs_buf_free(&mb);
	cs_buf_free(&b);
}

static void test_encode_refuses_bad_input(void **state)
{
	(void)state;
	cs_buf b = CS_BUF_INIT;
	cs_wire_msg m = {.type = 42};
	assert_int_equal(cs_wire_encode(&b, &m), -EINVAL);
	m.type = CS_WIRE_SAMPLES;
	m.u.samples.n = CS_WIRE_MAX_SAMPLES + 1;
	assert_int_equal(cs_wire_encode(&b, &m), -EINVAL);
	assert_int_equal(b.len, 0);
	cs_buf_free(&b);
}

/* Random corruption never crashes and never leaks (ASan). */
static void test_mutations(void **state)
{
	(void)state;
	cs_buf b = CS_BUF_INIT;
	cs_wire_range rg = {CS_RANGE_KERNEL, 10, 20, 0, 0, 0, 1, 1, -1, "kernel"};
	cs_wire_msg m = {.type = CS_WIRE_RANGES};
	m.u.ranges = (cs_wire_ranges){1, &rg};
	encode_ok(&b, &m);
	uint64_t seed = 5;
	uint8_t f[512];
	int ok = 0, bad = 0;
	for (int rep = 0; rep < 20000; rep++) {
		memcpy(f, b.data, b.len);
		int flips = 1 + (int)(tu_rand(&seed) % 3);
		for (int i = 0; i < flips; i++)
			f[tu_rand(&seed) % b.len] ^= (uint8_t)(1 + tu_rand(&seed) % 255);
		cs_wire_msg d;
		size_t used;
		char err[256];
		int rc = cs_wire_decode(f, b.len, &d, &used, err, sizeof err);
		if (rc == 0) {
			ok++;
			cs_wire_msg_free(&d);
		} else {
			assert_true(rc == -EBADMSG || rc == -EAGAIN);
			bad++;
		}
	}
	assert_true(bad > 0 && ok + bad == 20000);
	cs_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_all_types),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_payload_errors),
		cmocka_unit_test(test_encode_refuses_bad_input),
		cmocka_unit_test(test_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
