/*
 * ranges_csv.c - ranges from a CSV file (ranges_csv.h).
 */
#include "ranges_csv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_reader.h"

enum { C_KIND, C_NAME, C_T0, C_T1, C_DEVICE, C_STREAM, C_CORR, NCOLS };
static const char *const cols[NCOLS] = {"kind", "name", "t0", "t1", "device", "stream",
					"correlation_id"};

/* An integer field: 0, or -1 when it is not one (empty = none when
 * optional). */
static int field_int(const char *f, size_t len, int64_t *v)
{
	char tmp[32];
	if (!len || len >= sizeof tmp)
		return -1;
	memcpy(tmp, f, len);
	tmp[len] = '\0';
	char *end;
	long long x = strtoll(tmp, &end, 10);
	if (*end)
		return -1;
	*v = x;
	return 0;
}

void cs_ranges_csv_free(cs_range *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++) {
		free((char *)r[i].kind);
		free((char *)r[i].name);
	}
	free(r);
}

int cs_ranges_csv_parse(const char *buf, size_t len, const char *label, cs_range **out,
			size_t *n, char *err, size_t errlen)
{
	cs_csvr rd;
	cs_csvr_init(&rd, buf, len);
	int map[64], ncol = 0, have[NCOLS] = {0}, rc = 0, res;
	const char *f;
	size_t fl;
	*out = NULL;
	*n = 0;
	size_t cap = 0;
	/* The header. */
	do {
		res = cs_csvr_field(&rd, &f, &fl, err, errlen);
		if (res == CS_CSVR_ERROR || res == CS_CSVR_EOF) {
			if (res == CS_CSVR_EOF)
				snprintf(err, errlen, "%s: empty: expected a header kind,name,t0,t1", label);
			cs_csvr_free(&rd);
			return -EINVAL;
		}
		int c = -1;
		for (int k = 0; k < NCOLS; k++)
			if (strlen(cols[k]) == fl && !memcmp(cols[k], f, fl))
				c = k;
		if (ncol == 64) {
			snprintf(err, errlen, "%s:1: more than 64 columns", label);
			cs_csvr_free(&rd);
			return -EINVAL;
		}
		if (c >= 0)
			have[c] = 1;
		map[ncol++] = c;
	} while (res == CS_CSVR_FIELD);
	for (int k = 0; k < 4; k++)
		if (!have[k]) {
			snprintf(err, errlen, "%s:1: no '%s' column: the header must name kind, name, "
				 "t0, t1 (and may name device, stream, correlation_id)", label, cols[k]);
			cs_csvr_free(&rd);
			return -EINVAL;
		}
	for (;;) {
		res = cs_csvr_field(&rd, &f, &fl, err, errlen);
		if (res == CS_CSVR_EOF)
			break;
		uint64_t line = rd.line;
		if (*n == cap) {
			size_t c2 = cap ? cap * 2 : 64;
			cs_range *g = realloc(*out, c2 * sizeof *g);
			if (!g) {
				rc = -ENOMEM;
				break;
			}
			*out = g;
			cap = c2;
		}
		cs_range *r = &(*out)[*n];
		cs_range_init(r, NULL, NULL, 0, 0);
		(*n)++;
		int64_t t0 = -1, t1 = -1;
		for (int col = 0;; col++) {
			if (res == CS_CSVR_ERROR) {
				rc = -EINVAL;
				break;
			}
			int c = col < ncol ? map[col] : -1;
			int64_t v = -1;
			if (c == C_KIND || c == C_NAME) {
				char *s = malloc(fl + 1);
				if (!s) {
					rc = -ENOMEM;
					break;
				}
				memcpy(s, f, fl);
				s[fl] = '\0';
				if (c == C_KIND)
					r->kind = s;
				else
					r->name = s;
			} else if (c >= C_T0) {
				if (field_int(f, fl, &v) < 0 && (c <= C_T1 || fl)) {
					snprintf(err, errlen, "%s:%" PRIu64 ": column '%s': expected %s, found "
						 "'%.*s'", label, line, cols[c], c <= C_T1 ?
						 "a non-negative integer time" : "an integer or nothing",
						 (int)(fl < 40 ? fl : 40), f);
					rc = -EINVAL;
					break;
				}
				if (c == C_T0)
					t0 = v;
				else if (c == C_T1)
					t1 = v;
				else if (fl)
					*(c == C_DEVICE ? &r->device : c == C_STREAM ? &r->stream
										 : &r->correlation_id) = v;
			}
			if (res == CS_CSVR_LAST)
				break;
			res = cs_csvr_field(&rd, &f, &fl, err, errlen);
		}
		if (rc)
			break;
		if (!r->kind || !r->kind[0] || !r->name || t0 < 0 || t1 < t0) {
			snprintf(err, errlen, "%s:%" PRIu64 ": %s", label, line,
				 !r->kind || !r->kind[0] ? "expected a kind (kernel, nvtx, api, ...)"
				 : !r->name ? "expected a name"
				 : t0 < 0 ? "expected t0 >= 0" : "t1 comes before t0");
			rc = -EINVAL;
			break;
		}
		r->t0 = (uint64_t)t0;
		r->t1 = (uint64_t)t1;
	}
	cs_csvr_free(&rd);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", label);
	if (rc) {
		cs_ranges_csv_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}
