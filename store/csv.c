/* csv.c - streaming CSV writer; see csv.h. */
#include "csv.h"
#include "dtoa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_AT (64u << 10)

void cs_csv_init(cs_csv *w, cs_csv_sink_fn sink, void *ctx)
{
	memset(w, 0, sizeof *w);
	w->sink = sink;
	w->ctx = ctx;
}

int cs_csv_flush(cs_csv *w)
{
	if (w->buf.len && !w->rc)
		w->rc = w->sink(w->ctx, w->buf.data, w->buf.len);
	w->buf.len = 0;
	return w->rc;
}

int cs_csv_finish(cs_csv *w)
{
	int rc = cs_csv_flush(w);
	cs_buf_free(&w->buf);
	return rc;
}

static void sep(cs_csv *w)
{
	if (w->row_open)
		cs_buf_put_u8(&w->buf, ',');
	w->row_open = 1;
}

static size_t format_u64(char *out, uint64_t v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

void cs_csv_u64(cs_csv *w, uint64_t v)
{
	char tmp[24];
	sep(w);
	cs_buf_append(&w->buf, tmp, format_u64(tmp, v));
}

void cs_csv_i64(cs_csv *w, int64_t v)
{
	char tmp[24];
	size_t n = 0;
	sep(w);
	if (v < 0) {
		tmp[n++] = '-';
		n += format_u64(tmp + 1, (uint64_t)0 - (uint64_t)v);
	} else {
		n = format_u64(tmp, (uint64_t)v);
	}
	cs_buf_append(&w->buf, tmp, n);
}

size_t cs_format_f64(char out[32], double v)
{
	if (isnan(v))
		return (size_t)snprintf(out, 32, "nan");
	if (isinf(v))
		return (size_t)snprintf(out, 32, v > 0 ? "inf" : "-inf");
	if (v == 0)
		return (size_t)snprintf(out, 32, signbit(v) ? "-0" : "0");
	if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) {
		int64_t i = (int64_t)v;
		size_t n = 0;
		if (i < 0)
			out[n++] = '-';
		n += format_u64(out + n, i < 0 ? (uint64_t)-i : (uint64_t)i);
		out[n] = 0;
		return n;
	}
	/* The shortest digits that read back as v (Dragonbox), written as
	 * printf's %g would write them: plain when the decimal exponent X is
	 * in [-4, 17), else d.ddde[+-]XX. */
	unsigned long long digits;
	int e;
	cs_dtoa_shortest(v, &digits, &e);
	char d[24];
	size_t nd = format_u64(d, digits), n = 0;
	int x = e + (int)nd - 1;
	if (v < 0)
		out[n++] = '-';
	if (x >= -4 && x < 17) {
		if (x < 0) { /* 0.000ddd */
			out[n++] = '0';
			out[n++] = '.';
			for (int i = -1; i > x; i--)
				out[n++] = '0';
			memcpy(out + n, d, nd);
			n += nd;
		} else if ((size_t)x + 1 >= nd) { /* ddd000 */
			memcpy(out + n, d, nd);
			n += nd;
			for (size_t i = nd; i <= (size_t)x; i++)
				out[n++] = '0';
		} else { /* dd.ddd */
			memcpy(out + n, d, (size_t)x + 1);
			n += (size_t)x + 1;
			out[n++] = '.';
			memcpy(out + n, d + x + 1, nd - (size_t)x - 1);
			n += nd - (size_t)x - 1;
		}
	} else {
		out[n++] = d[0];
		if (nd > 1) {
			out[n++] = '.';
			memcpy(out + n, d + 1, nd - 1);
			n += nd - 1;
		}
		out[n++] = 'e';
		out[n++] = x < 0 ? '-' : '+';
		int ax = x < 0 ? -x : x;
		if (ax < 10)
			out[n++] = '0';
		n += format_u64(out + n, (uint64_t)ax);
	}
	out[n] = 0;
	return n;
}

void cs_csv_f64(cs_csv *w, double v)
{
	char tmp[32];
	sep(w);
	if (!isnan(v))
		cs_buf_append(&w->buf, tmp, cs_format_f64(tmp, v));
}

void cs_csv_empty(cs_csv *w) { sep(w); }

int cs_csv_buf_sink(void *ctx, const void *p, size_t n)
{
	return cs_buf_append(ctx, p, n);
}

void cs_csv_str(cs_csv *w, const char *s)
{
	sep(w);
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		cs_buf_append(&w->buf, s, strlen(s));
		return;
	}
	cs_buf_put_u8(&w->buf, '"');
	for (const char *c = s; *c; c++) {
		if (*c == '"')
			cs_buf_put_u8(&w->buf, '"');
		cs_buf_put_u8(&w->buf, (uint8_t)*c);
	}
	cs_buf_put_u8(&w->buf, '"');
}

void cs_csv_end_row(cs_csv *w)
{
	cs_buf_append(&w->buf, "\r\n", 2);
	w->row_open = 0;
	if (w->buf.len >= FLUSH_AT)
		cs_csv_flush(w);
}
