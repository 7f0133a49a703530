/*
 * wire.c - encoding and validating decoding of frames; see wire.h and
 * docs/protocol.md.
 */
#include "wire.h"
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {
	[CS_WIRE_HELLO] = "HELLO",	   [CS_WIRE_RUN_BEGIN] = "RUN_BEGIN",
	[CS_WIRE_DEVICE] = "DEVICE",	   [CS_WIRE_METRICS] = "METRICS",
	[CS_WIRE_SAMPLES] = "SAMPLES",	   [CS_WIRE_RANGES] = "RANGES",
	[CS_WIRE_RUN_END] = "RUN_END",	   [CS_WIRE_REGISTER] = "REGISTER",
	[CS_WIRE_STATUS] = "STATUS",	   [CS_WIRE_REPLY] = "REPLY",
	[CS_WIRE_COMMAND] = "COMMAND",	   [CS_WIRE_ACK] = "ACK",
};

const char *cs_wire_type_name(unsigned type)
{
	if (type < sizeof type_names / sizeof *type_names && type_names[type])
		return type_names[type];
	return "?";
}

static const char *const metric_kinds[] = {"counter", "ratio", "throughput", "gauge"};

const char *cs_wire_metric_kind_name(unsigned kind)
{
	return kind < 4 ? metric_kinds[kind] : NULL;
}

int cs_wire_metric_kind_from_name(const char *name)
{
	for (int k = 0; k < 4; k++)
		if (!strcmp(metric_kinds[k], name))
			return k;
	return -1;
}

static const char *const range_kinds[] = {
	[CS_RANGE_API] = "api",		[CS_RANGE_KERNEL] = "kernel",
	[CS_RANGE_MEMCPY] = "memcpy",	[CS_RANGE_MEMSET] = "memset",
	[CS_RANGE_GRAPH] = "graph",	[CS_RANGE_NVTX] = "nvtx",
	[CS_RANGE_WINDOW] = "window",	[CS_RANGE_SIM_KERNEL] = "sim-kernel",
	[CS_RANGE_PHASE] = "phase",	[CS_RANGE_TRIGGER] = "trigger",
};

const char *cs_wire_range_kind_name(unsigned kind)
{
	return kind >= 1 && kind <= CS_RANGE_KIND_MAX ? range_kinds[kind] : NULL;
}

unsigned cs_wire_range_kind_from_name(const char *name)
{
	for (unsigned k = 1; k <= CS_RANGE_KIND_MAX; k++)
		if (!strcmp(range_kinds[k], name))
			return k;
	return 0;
}

/* ---- encoding ---- */

static int put_str(cs_buf *b, const char *s)
{
	size_t len = s ? strlen(s) : 0;
	if (len > CS_WIRE_MAX_STRING)
		return -EINVAL;
	int rc = cs_buf_put_u32(b, (uint32_t)len);
	return rc ? rc : cs_buf_append(b, s, len);
}

static int put_zero(cs_buf *b, size_t n)
{
	static const uint8_t zeros[8];
	return cs_buf_append(b, zeros, n);
}

static int encode_payload(cs_buf *b, const cs_wire_msg *msg)
{
	int rc = 0;
	switch (msg->type) {
	case CS_WIRE_HELLO: {
		const cs_wire_hello *h = &msg->u.hello;
		rc |= cs_buf_put_u32(b, h->pid);
		rc |= put_str(b, h->host);
		rc |= put_str(b, h->cmdline);
		rc |= put_str(b, h->version);
		break;
	}
	case CS_WIRE_RUN_BEGIN: {
		const cs_wire_run_begin *r = &msg->u.run_begin;
		rc |= cs_buf_put_u8(b, r->kind);
		rc |= cs_buf_put_u8(b, r->time_unit);
		rc |= put_zero(b, 2);
		rc |= cs_buf_put_u64(b, r->start_ns);
		rc |= cs_buf_put_f64(b, r->clock_hz);
		rc |= put_str(b, r->uuid);
		rc |= put_str(b, r->source);
		rc |= put_str(b, r->name);
		rc |= put_str(b, r->meta);
		break;
	}
	case CS_WIRE_DEVICE: {
		const cs_wire_device *d = &msg->u.device;
		rc |= cs_buf_put_u32(b, d->index);
		rc |= cs_buf_put_u32(b, d->sm_count);
		rc |= cs_buf_put_f64(b, d->clock_hz);
		rc |= cs_buf_put_f64(b, d->mem_clock_hz);
		rc |= put_str(b, d->name);
		rc |= put_str(b, d->chip);
		rc |= put_str(b, d->uuid);
		break;
	}
	case CS_WIRE_METRICS: {
		const cs_wire_metrics *m = &msg->u.metrics;
		if (m->count > CS_WIRE_MAX_METRICS)
			return -EINVAL;
		rc |= cs_buf_put_u32(b, m->count);
		for (uint32_t i = 0; i < m->count; i++) {
			rc |= cs_buf_put_u32(b, m->v[i].id);
			rc |= cs_buf_put_u8(b, m->v[i].kind);
			rc |= cs_buf_put_u8(b, m->v[i].cumulative);
			rc |= put_zero(b, 2);
			rc |= put_str(b, m->v[i].name);
			rc |= put_str(b, m->v[i].unit);
		}
		break;
	}
	case CS_WIRE_SAMPLES: {
		const cs_wire_samples *s = &msg->u.samples;
		if (s->n > CS_WIRE_MAX_SAMPLES || s->m > CS_WIRE_MAX_METRICS ||
		    (size_t)s->n * s->m * 8 + (size_t)s->n * 16 + (size_t)s->m * 4 + 24 >
			    CS_WIRE_MAX_PAYLOAD)
			return -EINVAL;
		rc |= cs_buf_put_u32(b, s->device);
		rc |= cs_buf_put_u32(b, s->m);
		rc |= cs_buf_put_u32(b, s->n);
		rc |= put_zero(b, 4);
		rc |= cs_buf_put_u64(b, s->seq0);
		rc |= cs_buf_append(b, s->metrics, (size_t)s->m * 4);
		rc |= cs_buf_append(b, s->t0, (size_t)s->n * 8);
		rc |= cs_buf_append(b, s->t1, (size_t)s->n * 8);
		rc |= cs_buf_append(b, s->values, (size_t)s->n * s->m * 8);
		break;
	}
	case CS_WIRE_RANGES: {
		const cs_wire_ranges *r = &msg->u.ranges;
		rc |= cs_buf_put_u32(b, r->count);
		for (uint32_t i = 0; i < r->count; i++) {
			const cs_wire_range *x = &r->v[i];
			rc |= cs_buf_put_u8(b, x->kind);
			rc |= put_zero(b, 3);
			rc |= cs_buf_put_u64(b, x->t0);
			rc |= cs_buf_put_u64(b, x->t1);
			rc |= cs_buf_put_u64(b, (uint64_t)x->device);
			rc |= cs_buf_put_u64(b, (uint64_t)x->stream);
			rc |= cs_buf_put_u64(b, (uint64_t)x->correlation_id);
			rc |= cs_buf_put_u64(b, (uint64_t)x->pid);
			rc |= cs_buf_put_u64(b, (uint64_t)x->tid);
			rc |= cs_buf_put_u64(b, (uint64_t)x->bytes);
			rc |= put_str(b, x->name);
		}
		break;
	}
	case CS_WIRE_RUN_END: {
		const cs_wire_run_end *e = &msg->u.run_end;
		rc |= cs_buf_put_u8(b, e->status);
		rc |= put_zero(b, 7);
		rc |= cs_buf_put_u64(b, e->end_ns);
		rc |= cs_buf_put_u64(b, e->samples);
		rc |= cs_buf_put_u64(b, e->dropped);
		rc |= cs_buf_put_u64(b, e->overflows);
		if (e->bad_records || e->empty_samples) {
			rc |= cs_buf_put_u64(b, e->bad_records);
			rc |= cs_buf_put_u64(b, e->empty_samples);
		}
		break;
	}
	case CS_WIRE_REGISTER: {
		const cs_wire_register *g = &msg->u.reg;
		rc |= cs_buf_put_u8(b, g->control);
		rc |= cs_buf_put_u8(b, g->mode);
		rc |= cs_buf_put_u8(b, g->state);
		rc |= put_zero(b, 5);
		rc |= cs_buf_put_u64(b, g->interval_ns);
		rc |= cs_buf_put_u64(b, g->min_interval_ns);
		rc |= cs_buf_put_u64(b, g->max_interval_ns);
		rc |= put_str(b, g->job);
		rc |= put_str(b, g->devices);
		rc |= put_str(b, g->metrics);
		break;
	}
	case CS_WIRE_STATUS: {
		const cs_wire_report *t = &msg->u.report;
		rc |= cs_buf_put_u8(b, t->state);
		rc |= put_zero(b, 7);
		rc |= cs_buf_put_u64(b, t->interval_ns);
		rc |= cs_buf_put_u64(b, t->samples);
		rc |= cs_buf_put_u64(b, t->dropped);
		rc |= cs_buf_put_u64(b, t->windows);
		break;
	}
	case CS_WIRE_REPLY: {
		const cs_wire_reply *y = &msg->u.reply;
		rc |= cs_buf_put_u32(b, y->id);
		rc |= cs_buf_put_u8(b, y->status);
		rc |= put_zero(b, 3);
		rc |= put_str(b, y->message);
		break;
	}
	case CS_WIRE_COMMAND: {
		const cs_wire_command *k = &msg->u.command;
		rc |= cs_buf_put_u32(b, k->id);
		rc |= cs_buf_put_u8(b, k->op);
		rc |= put_zero(b, 3);
		rc |= cs_buf_put_u64(b, k->value);
		rc |= put_str(b, k->name);
		break;
	}
	case CS_WIRE_ACK: {
		const cs_wire_ack *a = &msg->u.ack;
		rc |= cs_buf_put_u8(b, a->status);
		rc |= put_zero(b, 7);
		rc |= cs_buf_put_u64(b, a->samples);
		rc |= put_str(b, a->uuid);
		rc |= put_str(b, a->message);
		break;
	}
	default:
		return -EINVAL;
	}
	/* Every failure above is -ENOMEM or -EINVAL; report the latter
	 * first since it is the caller's to fix. */
	return rc ? (rc == -ENOMEM ? -ENOMEM : -EINVAL) : 0;
}

int cs_wire_encode(cs_buf *out, const cs_wire_msg *msg)
{
	size_t start = out->len;
	uint8_t h[CS_WIRE_HEADER_LEN] = {0};
	int rc = cs_buf_append(out, h, sizeof h);
	if (!rc)
		rc = encode_payload(out, msg);
	size_t plen = out->len - start - CS_WIRE_HEADER_LEN;
	if (!rc && plen > CS_WIRE_MAX_PAYLOAD)
		rc = -EINVAL;
	if (rc) {
		out->len = start;
		return rc;
	}
	uint8_t *p = out->data + start;
	uint32_t magic = CS_WIRE_MAGIC, len32 = (uint32_t)plen;
	memcpy(p, &magic, 4);
	p[4] = CS_WIRE_VERSION;
	p[5] = msg->type;
	p[6] = p[7] = 0;
	memcpy(p + 8, &len32, 4);
	return 0;
}

/* ---- decoding ---- */

typedef struct reader {
	const uint8_t *p;
	size_t len; /* payload length */
	size_t off; /* into payload */
	const char *type;
	char *err;
	size_t errlen;
} reader;

static int bad(reader *r, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(reader *r, const char *field, const char *fmt, ...)
{
	if (r->err && r->errlen) {
		int n = snprintf(r->err, r->errlen, "%s frame, field %s at offset %zu: ",
				 r->type, field, r->off + CS_WIRE_HEADER_LEN);
		if (n > 0 && (size_t)n < r->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -EBADMSG;
}

static int need(reader *r, const char *field, size_t n)
{
	if (n > r->len - r->off)
		return bad(r, field, "needs %llu bytes, only %llu left in the payload", (unsigned long long)(n), (unsigned long long)(r->len - r->off));
	return 0;
}

static int rd_u8(reader *r, const char *field, uint8_t *v)
{
	int rc = need(r, field, 1);
	if (!rc)
		*v = r->p[r->off++];
	return rc;
}

static int rd_u32(reader *r, const char *field, uint32_t *v)
{
	int rc = need(r, field, 4);
	if (!rc) {
		*v = cs_get_u32(r->p + r->off);
		r->off += 4;
	}
	return rc;
}

static int rd_u64(reader *r, const char *field, uint64_t *v)
{
	int rc = need(r, field, 8);
	if (!rc) {
		*v = cs_get_u64(r->p + r->off);
		r->off += 8;
	}
	return rc;
}

static int rd_i64(reader *r, const char *field, int64_t *v)
{
	uint64_t u;
	int rc = rd_u64(r, field, &u);
	if (!rc) {
		*v = (int64_t)u;
		if (*v < -1)
			return bad(r, field, "%llu is neither -1 (none) nor a non-negative value", (unsigned long long)(u));
	}
	return rc;
}

static int rd_f64(reader *r, const char *field, double *v)
{
	int rc = need(r, field, 8);
	if (!rc) {
		*v = cs_get_f64(r->p + r->off);
		r->off += 8;
	}
	return rc;
}

static int rd_zero(reader *r, const char *field, size_t n)
{
	int rc = need(r, field, n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		if (r->p[r->off + i])
			return bad(r, field, "reserved byte %llu is 0x%02llx, expected 0", (unsigned long long)(i), (unsigned long long)(r->p[r->off + i]));
	r->off += n;
	return 0;
}

static int rd_str(reader *r, const char *field, char **out)
{
	uint32_t len;
	int rc = rd_u32(r, field, &len);
	if (rc)
		return rc;
	if (len > CS_WIRE_MAX_STRING)
		return bad(r, field, "string of %llu bytes exceeds the limit of %llu", (unsigned long long)(len), (unsigned long long)(CS_WIRE_MAX_STRING));
	rc = need(r, field, len);
	if (rc)
		return rc;
	if (memchr(r->p + r->off, 0, len))
		return bad(r, field, "string of %llu bytes holds a NUL byte", (unsigned long long)(len));
	long u = cs_utf8_bad((const char *)r->p + r->off, len);
	if (u >= 0)
		return bad(r, field, "string is not UTF-8 (byte 0x%02x at its offset %ld)",
			   r->p[r->off + (size_t)u], u);
	char *s = malloc((size_t)len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, r->p + r->off, len);
	s[len] = 0;
	r->off += len;
	*out = s;
	return 0;
}

static int rd_array(reader *r, const char *field, void **out, size_t count,
		    size_t size)
{
	int rc = need(r, field, count * size);
	if (rc)
		return rc;
	void *a = malloc(count * size > 0 ? count * size : 1);
	if (!a)
		return -ENOMEM;
	memcpy(a, r->p + r->off, count * size);
	r->off += count * size;
	*out = a;
	return 0;
}

static int decode_samples(reader *r, cs_wire_samples *s)
{
	int rc = 0;
	rc = rc ? rc : rd_u32(r, "device", &s->device);
	rc = rc ? rc : rd_u32(r, "m", &s->m);
	rc = rc ? rc : rd_u32(r, "n", &s->n);
	rc = rc ? rc : rd_zero(r, "reserved", 4);
	rc = rc ? rc : rd_u64(r, "seq0", &s->seq0);
	if (rc)
		return rc;
	if (s->m > CS_WIRE_MAX_METRICS)
		return bad(r, "m", "%llu metrics exceed the limit of %llu", (unsigned long long)(s->m), (unsigned long long)(CS_WIRE_MAX_METRICS));
	if (s->n > CS_WIRE_MAX_SAMPLES)
		return bad(r, "n", "%llu samples exceed the limit of %llu", (unsigned long long)(s->n), (unsigned long long)(CS_WIRE_MAX_SAMPLES));
	size_t want = (size_t)s->m * 4 + (size_t)s->n * 16 + (size_t)s->n * s->m * 8;
	if (want != r->len - r->off)
		return bad(r, "n", "n and m need %llu bytes of arrays, the payload has %llu", (unsigned long long)(want), (unsigned long long)(r->len - r->off));
	rc = rc ? rc : rd_array(r, "metrics", (void **)&s->metrics, s->m, 4);
	rc = rc ? rc : rd_array(r, "t0", (void **)&s->t0, s->n, 8);
	rc = rc ? rc : rd_array(r, "t1", (void **)&s->t1, s->n, 8);
	rc = rc ? rc : rd_array(r, "values", (void **)&s->values, (size_t)s->n * s->m, 8);
	return rc;
}

static int decode_metrics(reader *r, cs_wire_metrics *m)
{
	int rc = rd_u32(r, "count", &m->count);
	if (rc)
		return rc;
	/* Each entry takes at least 16 bytes: check before allocating. */
	if (m->count > CS_WIRE_MAX_METRICS || (size_t)m->count * 16 > r->len - r->off)
		return bad(r, "count", "%llu metrics cannot fit (limit %llu)", (unsigned long long)(m->count), (unsigned long long)(CS_WIRE_MAX_METRICS));
	m->v = calloc(m->count ? m->count : 1, sizeof *m->v);
	if (!m->v)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->count && !rc; i++) {
		cs_wire_metric *x = &m->v[i];
		rc = rc ? rc : rd_u32(r, "metric.id", &x->id);
		rc = rc ? rc : rd_u8(r, "metric.kind", &x->kind);
		rc = rc ? rc : rd_u8(r, "metric.cumulative", &x->cumulative);
		rc = rc ? rc : rd_zero(r, "metric.reserved", 2);
		if (!rc && x->kind > 3)
			rc = bad(r, "metric.kind", "kind %llu is not 0..3 (metric %llu)", (unsigned long long)(x->kind), (unsigned long long)(i));
		if (!rc && x->cumulative > 1)
			rc = bad(r, "metric.cumulative", "%llu is not 0 or 1 (metric %llu)", (unsigned long long)(x->cumulative), (unsigned long long)(i));
		rc = rc ? rc : rd_str(r, "metric.name", &x->name);
		rc = rc ? rc : rd_str(r, "metric.unit", &x->unit);
		if (!rc && x->name && !*x->name)
			rc = bad(r, "metric.name", "metric %llu has an empty name", (unsigned long long)(i));
	}
	return rc;
}

#define RANGE_MIN_LEN 72

static int decode_ranges(reader *r, cs_wire_ranges *g)
{
	int rc = rd_u32(r, "count", &g->count);
	if (rc)
		return rc;
	if ((size_t)g->count * RANGE_MIN_LEN > r->len - r->off)
		return bad(r, "count", "%llu ranges need at least %llu bytes", (unsigned long long)(g->count), (unsigned long long)((unsigned long long)g->count * RANGE_MIN_LEN));
	g->v = calloc(g->count ? g->count : 1, sizeof *g->v);
	if (!g->v)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->count && !rc; i++) {
		cs_wire_range *x = &g->v[i];
		rc = rc ? rc : rd_u8(r, "range.kind", &x->kind);
		if (!rc && !cs_wire_range_kind_name(x->kind))
			rc = bad(r, "range.kind", "unknown range kind %llu (range %llu)", (unsigned long long)(x->kind), (unsigned long long)(i));
		rc = rc ? rc : rd_zero(r, "range.reserved", 3);
		rc = rc ? rc : rd_u64(r, "range.t0", &x->t0);
		rc = rc ? rc : rd_u64(r, "range.t1", &x->t1);
		if (!rc && x->t1 < x->t0)
			rc = bad(r, "range.t1", "t1 %llu is before t0 %llu", (unsigned long long)(x->t1), (unsigned long long)(x->t0));
		rc = rc ? rc : rd_i64(r, "range.device", &x->device);
		rc = rc ? rc : rd_i64(r, "range.stream", &x->stream);
		rc = rc ? rc : rd_i64(r, "range.correlation_id", &x->correlation_id);
		rc = rc ? rc : rd_i64(r, "range.pid", &x->pid);
		rc = rc ? rc : rd_i64(r, "range.tid", &x->tid);
		rc = rc ? rc : rd_i64(r, "range.bytes", &x->bytes);
		rc = rc ? rc : rd_str(r, "range.name", &x->name);
	}
	return rc;
}

static int decode_payload(reader *r, cs_wire_msg *msg)
{
	int rc = 0;
	switch (msg->type) {
	case CS_WIRE_HELLO: {
		cs_wire_hello *h = &msg->u.hello;
		rc = rc ? rc : rd_u32(r, "pid", &h->pid);
		rc = rc ? rc : rd_str(r, "host", &h->host);
		rc = rc ? rc : rd_str(r, "cmdline", &h->cmdline);
		rc = rc ? rc : rd_str(r, "version", &h->version);
		break;
	}
	case CS_WIRE_RUN_BEGIN: {
		cs_wire_run_begin *b = &msg->u.run_begin;
		rc = rc ? rc : rd_u8(r, "kind", &b->kind);
		if (!rc && b->kind != CS_WIRE_KIND_HW && b->kind != CS_WIRE_KIND_SIM)
			rc = bad(r, "kind", "kind %llu is not 1 (hw) or 2 (sim)", (unsigned long long)(b->kind));
		rc = rc ? rc : rd_u8(r, "time_unit", &b->time_unit);
		if (!rc && b->time_unit != CS_WIRE_UNIT_NS && b->time_unit != CS_WIRE_UNIT_CYCLE)
			rc = bad(r, "time_unit", "unit %llu is not 1 (ns) or 2 (cycle)", (unsigned long long)(b->time_unit));
		rc = rc ? rc : rd_zero(r, "reserved", 2);
		rc = rc ? rc : rd_u64(r, "start_ns", &b->start_ns);
		rc = rc ? rc : rd_f64(r, "clock_hz", &b->clock_hz);
		if (!rc && !(b->clock_hz >= 0 && b->clock_hz < 1e12))
			rc = bad(r, "clock_hz", "clock %g Hz is not in [0, 1e12)", b->clock_hz);
		rc = rc ? rc : rd_str(r, "uuid", &b->uuid);
		rc = rc ? rc : rd_str(r, "source", &b->source);
		rc = rc ? rc : rd_str(r, "name", &b->name);
		rc = rc ? rc : rd_str(r, "meta", &b->meta);
		break;
	}
	case CS_WIRE_DEVICE: {
		cs_wire_device *d = &msg->u.device;
		rc = rc ? rc : rd_u32(r, "index", &d->index);
		rc = rc ? rc : rd_u32(r, "sm_count", &d->sm_count);
		rc = rc ? rc : rd_f64(r, "clock_hz", &d->clock_hz);
		rc = rc ? rc : rd_f64(r, "mem_clock_hz", &d->mem_clock_hz);
		rc = rc ? rc : rd_str(r, "name", &d->name);
		rc = rc ? rc : rd_str(r, "chip", &d->chip);
		rc = rc ? rc : rd_str(r, "uuid", &d->uuid);
		break;
	}
	case CS_WIRE_METRICS:
		rc = decode_metrics(r, &msg->u.metrics);
		break;
	case CS_WIRE_SAMPLES:
		rc = decode_samples(r, &msg->u.samples);
		break;
	case CS_WIRE_RANGES:
		rc = decode_ranges(r, &msg->u.ranges);
		break;
	case CS_WIRE_RUN_END: {
		cs_wire_run_end *e = &msg->u.run_end;
		rc = rc ? rc : rd_u8(r, "status", &e->status);
		if (!rc && (e->status < CS_WIRE_COMPLETE || e->status > CS_WIRE_DISCARD))
			rc = bad(r, "status", "status %llu is not 1, 2 or 3", (unsigned long long)(e->status));
		rc = rc ? rc : rd_zero(r, "reserved", 7);
		rc = rc ? rc : rd_u64(r, "end_ns", &e->end_ns);
		rc = rc ? rc : rd_u64(r, "samples", &e->samples);
		rc = rc ? rc : rd_u64(r, "dropped", &e->dropped);
		rc = rc ? rc : rd_u64(r, "overflows", &e->overflows);
		/* The counters' trailer is optional (older producers end here). */
		if (!rc && r->len - r->off >= 16) {
			rc = rd_u64(r, "bad_records", &e->bad_records);
			rc = rc ? rc : rd_u64(r, "empty_samples", &e->empty_samples);
		}
		break;
	}
	case CS_WIRE_REGISTER: {
		cs_wire_register *g = &msg->u.reg;
		rc = rc ? rc : rd_u8(r, "control", &g->control);
		if (!rc && !g->control)
			rc = bad(r, "control", "control version 0; the first is 1");
		rc = rc ? rc : rd_u8(r, "mode", &g->mode);
		if (!rc && (g->mode < CS_WIRE_MODE_CONTINUOUS || g->mode > CS_WIRE_MODE_ARMED))
			rc = bad(r, "mode", "mode %u is not 1 to 3", g->mode);
		rc = rc ? rc : rd_u8(r, "state", &g->state);
		if (!rc && (g->state < CS_WIRE_STATE_IDLE || g->state > CS_WIRE_STATE_OFF))
			rc = bad(r, "state", "state %u is not 1 to 3", g->state);
		rc = rc ? rc : rd_zero(r, "reserved", 5);
		rc = rc ? rc : rd_u64(r, "interval_ns", &g->interval_ns);
		rc = rc ? rc : rd_u64(r, "min_interval_ns", &g->min_interval_ns);
		rc = rc ? rc : rd_u64(r, "max_interval_ns", &g->max_interval_ns);
		if (!rc && g->min_interval_ns > g->max_interval_ns)
			rc = bad(r, "max_interval_ns", "%llu is below min_interval_ns %llu",
				 (unsigned long long)g->max_interval_ns,
				 (unsigned long long)g->min_interval_ns);
		rc = rc ? rc : rd_str(r, "job", &g->job);
		rc = rc ? rc : rd_str(r, "devices", &g->devices);
		rc = rc ? rc : rd_str(r, "metrics", &g->metrics);
		break;
	}
	case CS_WIRE_STATUS: {
		cs_wire_report *t = &msg->u.report;
		rc = rc ? rc : rd_u8(r, "state", &t->state);
		if (!rc && (t->state < CS_WIRE_STATE_IDLE || t->state > CS_WIRE_STATE_OFF))
			rc = bad(r, "state", "state %u is not 1 to 3", t->state);
		rc = rc ? rc : rd_zero(r, "reserved", 7);
		rc = rc ? rc : rd_u64(r, "interval_ns", &t->interval_ns);
		rc = rc ? rc : rd_u64(r, "samples", &t->samples);
		rc = rc ? rc : rd_u64(r, "dropped", &t->dropped);
		rc = rc ? rc : rd_u64(r, "windows", &t->windows);
		break;
	}
	case CS_WIRE_REPLY: {
		cs_wire_reply *y = &msg->u.reply;
		rc = rc ? rc : rd_u32(r, "id", &y->id);
		rc = rc ? rc : rd_u8(r, "status", &y->status);
		if (!rc && y->status != CS_WIRE_REPLY_DONE && y->status != CS_WIRE_REPLY_REFUSED)
			rc = bad(r, "status", "status %u is not 1 or 2", y->status);
		rc = rc ? rc : rd_zero(r, "reserved", 3);
		rc = rc ? rc : rd_str(r, "message", &y->message);
		break;
	}
	case CS_WIRE_COMMAND: {
		cs_wire_command *k = &msg->u.command;
		rc = rc ? rc : rd_u32(r, "id", &k->id);
		rc = rc ? rc : rd_u8(r, "op", &k->op);
		if (!rc && (k->op < CS_WIRE_OP_OPEN || k->op > CS_WIRE_OP_MAX))
			rc = bad(r, "op", "op %u is not 1 to %u", k->op, (unsigned)CS_WIRE_OP_MAX);
		rc = rc ? rc : rd_zero(r, "reserved", 3);
		rc = rc ? rc : rd_u64(r, "value", &k->value);
		rc = rc ? rc : rd_str(r, "name", &k->name);
		break;
	}
	case CS_WIRE_ACK: {
		cs_wire_ack *a = &msg->u.ack;
		rc = rc ? rc : rd_u8(r, "status", &a->status);
		if (!rc && (a->status < CS_WIRE_ACK_COMPLETE || a->status > CS_WIRE_ACK_FAILED))
			rc = bad(r, "status", "status %u is not 1 to 4", a->status);
		rc = rc ? rc : rd_zero(r, "reserved", 7);
		rc = rc ? rc : rd_u64(r, "samples", &a->samples);
		rc = rc ? rc : rd_str(r, "uuid", &a->uuid);
		rc = rc ? rc : rd_str(r, "message", &a->message);
		break;
	}
	default:
		break;
	}
	if (!rc && r->off != r->len)
		rc = bad(r, "(end)", "%llu trailing bytes after the last field", (unsigned long long)(r->len - r->off));
	return rc;
}

int cs_wire_decode(const uint8_t *buf, size_t len, cs_wire_msg *msg,
		   size_t *used, char *err, size_t errlen)
{
	memset(msg, 0, sizeof *msg);
	*used = CS_WIRE_HEADER_LEN;
	if (len < CS_WIRE_HEADER_LEN)
		return -EAGAIN;
	uint32_t magic = cs_get_u32(buf);
	uint32_t plen = cs_get_u32(buf + 8);
	uint8_t type = buf[5];
	*used = 0;
	if (magic != CS_WIRE_MAGIC) {
		snprintf(err, errlen, "frame header at offset 0: bad magic 0x%08x, expected 0x%08x",
			 magic, CS_WIRE_MAGIC);
		return -EBADMSG;
	}
	if (buf[4] != CS_WIRE_VERSION) {
		snprintf(err, errlen, "frame header at offset 4: version %u, this build speaks %u",
			 buf[4], (unsigned)CS_WIRE_VERSION);
		return -EBADMSG;
	}
	if (!strcmp(cs_wire_type_name(type), "?")) {
		snprintf(err, errlen, "frame header at offset 5: unknown frame type %u", type);
		return -EBADMSG;
	}
	if (buf[6] || buf[7]) {
		snprintf(err, errlen, "frame header at offset 6: flags 0x%02x%02x, expected 0",
			 buf[7], buf[6]);
		return -EBADMSG;
	}
	if (plen > CS_WIRE_MAX_PAYLOAD) {
		snprintf(err, errlen,
			 "frame header at offset 8: %s payload of %u bytes exceeds the limit of %u",
			 cs_wire_type_name(type), plen, CS_WIRE_MAX_PAYLOAD);
		return -EBADMSG;
	}
	if (len - CS_WIRE_HEADER_LEN < plen) {
		*used = CS_WIRE_HEADER_LEN + (size_t)plen;
		return -EAGAIN;
	}
	reader r = {buf + CS_WIRE_HEADER_LEN, plen, 0, cs_wire_type_name(type), err, errlen};
	msg->type = type;
	int rc = decode_payload(&r, msg);
	if (rc) {
		cs_wire_msg_free(msg);
		return rc;
	}
	*used = CS_WIRE_HEADER_LEN + (size_t)plen;
	return 0;
}

void cs_wire_msg_free(cs_wire_msg *msg)
{
	switch (msg->type) {
	case CS_WIRE_HELLO:
		free(msg->u.hello.host);
		free(msg->u.hello.cmdline);
		free(msg->u.hello.version);
		break;
	case CS_WIRE_RUN_BEGIN:
		free(msg->u.run_begin.uuid);
		free(msg->u.run_begin.source);
		free(msg->u.run_begin.name);
		free(msg->u.run_begin.meta);
		break;
	case CS_WIRE_DEVICE:
		free(msg->u.device.name);
		free(msg->u.device.chip);
		free(msg->u.device.uuid);
		break;
	case CS_WIRE_METRICS:
		for (uint32_t i = 0; msg->u.metrics.v && i < msg->u.metrics.count; i++) {
			free(msg->u.metrics.v[i].name);
			free(msg->u.metrics.v[i].unit);
		}
		free(msg->u.metrics.v);
		break;
	case CS_WIRE_SAMPLES:
		free(msg->u.samples.metrics);
		free(msg->u.samples.t0);
		free(msg->u.samples.t1);
		free(msg->u.samples.values);
		break;
	case CS_WIRE_RANGES:
		for (uint32_t i = 0; msg->u.ranges.v && i < msg->u.ranges.count; i++)
			free(msg->u.ranges.v[i].name);
		free(msg->u.ranges.v);
		break;
	case CS_WIRE_REGISTER:
		free(msg->u.reg.job);
		free(msg->u.reg.devices);
		free(msg->u.reg.metrics);
		break;
	case CS_WIRE_REPLY:
		free(msg->u.reply.message);
		break;
	case CS_WIRE_COMMAND:
		free(msg->u.command.name);
		break;
	case CS_WIRE_ACK:
		free(msg->u.ack.uuid);
		free(msg->u.ack.message);
		break;
	default:
		break;
	}
	memset(msg, 0, sizeof *msg);
}
