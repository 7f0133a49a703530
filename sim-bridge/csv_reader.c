/* csv_reader.c - RFC 4180 tokenizer; see csv_reader.h. */
#include "csv_reader.h"

#include <stdio.h>
#include <string.h>

void cs_csvr_init(cs_csvr *r, const char *buf, size_t len)
{
	memset(r, 0, sizeof *r);
	r->p = buf;
	r->end = buf + len;
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		r->p += 3;
	r->line = 1;
	r->at_record_start = 1;
}

void cs_csvr_free(cs_csvr *r) { cs_buf_free(&r->scratch); }

/* Consumes a line end at p if there is one; returns 1 if it did. */
static int eat_eol(cs_csvr *r)
{
	if (r->p < r->end && *r->p == '\n') {
		r->p++;
		return 1;
	}
	if (r->p + 1 < r->end && r->p[0] == '\r' && r->p[1] == '\n') {
		r->p += 2;
		return 1;
	}
	if (r->p + 1 == r->end && r->p[0] == '\r') {
		r->p++;
		return 1;
	}
	return 0;
}

static int finish_field(cs_csvr *r)
{
	if (r->p >= r->end) {
		r->at_record_start = 1;
		return CS_CSVR_LAST;
	}
	if (*r->p == ',') {
		r->p++;
		return CS_CSVR_FIELD;
	}
	if (eat_eol(r)) {
		r->at_record_start = 1;
		return CS_CSVR_LAST;
	}
	return CS_CSVR_ERROR;
}

int cs_csvr_field(cs_csvr *r, const char **f, size_t *flen, char *err,
		  size_t errlen)
{
	if (r->at_record_start) {
		if (r->column)
			r->line++;
		/* Skip blank lines. */
		while (r->p < r->end && eat_eol(r))
			r->line++;
		if (r->p >= r->end)
			return CS_CSVR_EOF;
		r->at_record_start = 0;
		r->column = 0;
	}
	r->column++;
	if (r->lenient) { /* spaces before an opening quote */
		const char *q = r->p;
		while (q < r->end && (*q == ' ' || *q == '\t'))
			q++;
		if (q < r->end && *q == '"')
			r->p = q;
	}
	if (r->p < r->end && *r->p == '"') {
		uint64_t start_line = r->line;
		cs_buf_reset(&r->scratch);
		r->p++;
		for (;;) {
			const char *q = memchr(r->p, '"', (size_t)(r->end - r->p));
			if (!q) {
				snprintf(err, errlen,
					 "line %llu, column %u: quoted field never closed",
					 (unsigned long long)start_line, r->column);
				return CS_CSVR_ERROR;
			}
			for (const char *c = r->p; c < q; c++)
				r->line += *c == '\n';
			if (cs_buf_append(&r->scratch, r->p, (size_t)(q - r->p))) {
				snprintf(err, errlen, "out of memory");
				return CS_CSVR_ERROR;
			}
			r->p = q + 1;
			if (r->p < r->end && *r->p == '"') {
				cs_buf_append(&r->scratch, "\"", 1);
				r->p++;
				continue;
			}
			break;
		}
		*f = r->scratch.len ? (const char *)r->scratch.data : "";
		*flen = r->scratch.len;
		uint64_t line = r->line;
		while (r->lenient && r->p < r->end && (*r->p == ' ' || *r->p == '\t'))
			r->p++; /* spaces after a closing quote */
		int rc = finish_field(r);
		if (rc == CS_CSVR_ERROR)
			snprintf(err, errlen,
				 "line %llu, column %u: unexpected character after a "
				 "closing quote",
				 (unsigned long long)line, r->column);
		/* Line numbers refer to where the record started. */
		if (rc == CS_CSVR_LAST)
			r->line = line;
		return rc;
	}
	const char *s = r->p;
	while (r->p < r->end && *r->p != ',' && *r->p != '\n' &&
	       !(*r->p == '\r' && (r->p + 1 == r->end || r->p[1] == '\n'))) {
		if (*r->p == '"' && !r->lenient) {
			snprintf(err, errlen,
				 "line %llu, column %u: quote inside an unquoted field",
				 (unsigned long long)r->line, r->column);
			return CS_CSVR_ERROR;
		}
		r->p++;
	}
	*f = s;
	*flen = (size_t)(r->p - s);
	return finish_field(r);
}

/* cs_csvr_split for a line without quotes (most simulator rows): fields
 * end at commas. */
static long split_plain(const char *line, size_t len, cs_buf *fields, char **f, size_t max,
			char *why, size_t whylen)
{
	if (cs_buf_reserve(fields, 2 * len + 2)) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	char *out = (char *)fields->data;
	size_t o = 0, n = 0;
	for (const char *p = line, *end = line + len;;) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		const char *fe = c ? c : end;
		while (p < fe && (*p == ' ' || *p == '\t'))
			p++;
		const char *q = fe;
		while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		if (n < max)
			f[n] = out + o;
		n++;
		memcpy(out + o, p, (size_t)(q - p));
		o += (size_t)(q - p);
		out[o++] = '\0';
		if (!c)
			break;
		p = c + 1;
	}
	fields->len = o;
	return (long)n;
}

long cs_csvr_split(const char *line, size_t len, cs_buf *fields, char **f, size_t max,
		   char *why, size_t whylen)
{
	fields->len = 0;
	if (!memchr(line, '"', len) && (len < 3 || memcmp(line, "\xEF\xBB\xBF", 3)))
		return split_plain(line, len, fields, f, max, why, whylen);
	cs_csvr r;
	cs_csvr_init(&r, line, len);
	r.lenient = 1;
	fields->len = 0;
	size_t n = 0;
	int k;
	do {
		const char *fp;
		size_t fl;
		k = cs_csvr_field(&r, &fp, &fl, why, whylen);
		if (k < 0) {
			cs_csvr_free(&r);
			return -1;
		}
		if (k == CS_CSVR_EOF)
			break;
		while (fl && (*fp == ' ' || *fp == '\t'))
			fp++, fl--;
		while (fl && (fp[fl - 1] == ' ' || fp[fl - 1] == '\t'))
			fl--;
		if (n < max) /* its offset now: the buffer may move */
			f[n] = (char *)(uintptr_t)fields->len;
		n++;
		if (cs_buf_append(fields, fp, fl) || cs_buf_put_u8(fields, 0)) {
			cs_csvr_free(&r);
			snprintf(why, whylen, "out of memory");
			return -1;
		}
	} while (k == CS_CSVR_FIELD);
	cs_csvr_free(&r);
	for (size_t i = 0; i < n && i < max; i++)
		f[i] = (char *)fields->data + (uintptr_t)f[i];
	return (long)n;
}
