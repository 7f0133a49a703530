/* import_csv.c - the generic wide CSV importer; see import_csv.h. */
#include "import_csv.h"
#include "json.h"
#include "simrun.h"
#include "totals.h"
#include "log.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "csv_reader.h"

#define MAX_COLUMNS 4096
#define MAX_DEVICES (CS_MAX_DEVICE_INDEX + 1)
#define BATCH 4096

enum col_role { COL_METRIC, COL_T0, COL_T1, COL_DEVICE };

typedef struct parser {
	const char *label;
	char *err;
	size_t errlen;
	cs_csvr r;
	uint32_t ncols;
	uint8_t role[MAX_COLUMNS];
	uint32_t metric_of[MAX_COLUMNS];
	uint32_t m;
	char **names;
	char **units;
	double *values;
	uint64_t underflows;     /* non-zero numbers below the smallest double */
	uint64_t uf_line;        /* the first of them */
	uint32_t uf_col;
	char uf_text[64];
} parser;

static int perr(parser *p, uint32_t column, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int perr(parser *p, uint32_t column, const char *fmt, ...)
{
	int n = column ? snprintf(p->err, p->errlen, "%s:%llu:%u: ", p->label,
				  (unsigned long long)p->r.line, column)
		       : snprintf(p->err, p->errlen, "%s:%llu: ", p->label,
				  (unsigned long long)p->r.line);
	if (n > 0 && (size_t)n < p->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Copies a field for messages, shortened and without control bytes. */
static const char *show(const char *f, size_t len, char *out, size_t outlen)
{
	size_t n = len < outlen - 4 ? len : outlen - 4;
	for (size_t i = 0; i < n; i++)
		out[i] = (unsigned char)f[i] < 0x20 ? '?' : f[i];
	if (n < len)
		memcpy(out + n, "...", 3), n += 3;
	out[n] = 0;
	return out;
}

static int parse_u64(const char *f, size_t len, uint64_t *v)
{
	if (!len || len > 19)
		return -1;
	uint64_t x = 0;
	for (size_t i = 0; i < len; i++) {
		if (f[i] < '0' || f[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(f[i] - '0');
	}
	if (x > INT64_MAX)
		return -1;
	*v = x;
	return 0;
}

static int parse_value(const char *f, size_t len, double *v)
{
	char tmp[64];
	if (!len) {
		*v = NAN;
		return 0;
	}
	if (len >= sizeof tmp)
		return -1;
	memcpy(tmp, f, len);
	tmp[len] = 0;
	if (!strcasecmp(tmp, "nan") || !strcasecmp(tmp, "-nan")) {
		*v = NAN;
		return 0;
	}
	char *end;
	errno = 0;
	double d = strtod(tmp, &end);
	if (end != tmp + len || end == tmp)
		return -1;
	/* ERANGE: beyond the largest double is an error; below the smallest
	 * subnormal it is 0 (returned as 1, for the caller to say so); a
	 * subnormal (4.9e-324, what export writes) is exact and fine. */
	if (errno == ERANGE && isinf(d))
		return -2;
	*v = d;
	return errno == ERANGE && d == 0 ? 1 : 0;
}

/* "name [unit]" -> "name", returning "unit" (both in nm's storage), when
 * the trailing bracket is the name's only one and reads as a unit: after
 * a space, or holding a lowercase letter, '%' or '/', or up to 3 capital
 * letters ("W", "MB"); else NULL and nm as it was. */
static const char *split_unit(char *nm)
{
	size_t n = strlen(nm);
	char *lb = strrchr(nm, '[');
	if (n < 4 || nm[n - 1] != ']' || !lb || lb == nm || memchr(nm, '[', (size_t)(lb - nm)) ||
	    memchr(lb + 1, ']', (size_t)(nm + n - 1 - (lb + 1))) || lb + 1 == nm + n - 1)
		return NULL;
	int unitlike = lb[-1] == ' ', caps = 0, other = 0;
	for (const char *c = lb + 1; c < nm + n - 1; c++) {
		unitlike |= (*c >= 'a' && *c <= 'z') || *c == '%' || *c == '/';
		caps += *c >= 'A' && *c <= 'Z';
		other += !(*c >= 'A' && *c <= 'Z');
	}
	unitlike |= !other && caps <= 3;
	if (!unitlike)
		return NULL;
	nm[n - 1] = '\0';
	*lb = '\0';
	for (char *e = lb; e > nm && e[-1] == ' '; e--)
		e[-1] = '\0';
	return nm[0] ? lb + 1 : NULL;
}

static int read_header(parser *p, const cs_csv_sink *sink)
{
	const char *f;
	size_t len;
	int rc, have_t0 = 0, have_t1 = 0, have_dev = 0;
	char shown[80];
	p->names = calloc(MAX_COLUMNS, sizeof *p->names);
	p->units = calloc(MAX_COLUMNS, sizeof *p->units);
	if (!p->names || !p->units)
		return perr(p, 0, "out of memory");
	do {
		rc = cs_csvr_field(&p->r, &f, &len, p->err, p->errlen);
		if (rc == CS_CSVR_EOF)
			return perr(p, 0, "empty file: expected a header row "
					  "t0,t1,<metric>,...");
		if (rc == CS_CSVR_ERROR) {
			char why[200];
			snprintf(why, sizeof why, "%s", p->err);
			return perr(p, 0, "%s", why);
		}
		uint32_t col = p->ncols;
		if (col == MAX_COLUMNS)
			return perr(p, col + 1, "more than %d columns", MAX_COLUMNS);
		char name[512];
		if (len >= sizeof name)
			return perr(p, col + 1, "column name longer than %zu bytes",
				    sizeof name - 1);
		if (memchr(f, 0, len))
			return perr(p, col + 1, "the column name holds a NUL byte (a binary file?)");
		long bad = cs_utf8_bad(f, len);
		if (bad >= 0)
			return perr(p, col + 1, "the column name is not UTF-8 (byte 0x%02x at its "
				    "offset %ld); save the file as UTF-8", (unsigned char)f[bad], bad);
		memcpy(name, f, len);
		name[len] = 0;
		/* trim surrounding blanks, which spreadsheets like to add */
		char *nm = name;
		while (*nm == ' ')
			nm++;
		for (size_t e = strlen(nm); e && nm[e - 1] == ' '; e--)
			nm[e - 1] = 0;
		const char *unit = split_unit(nm);
		if (!strcmp(nm, "t0")) {
			if (have_t0++)
				return perr(p, col + 1, "second t0 column");
			p->role[col] = COL_T0;
		} else if (!strcmp(nm, "t1")) {
			if (have_t1++)
				return perr(p, col + 1, "second t1 column");
			p->role[col] = COL_T1;
		} else if (!strcmp(nm, "device")) {
			if (have_dev++)
				return perr(p, col + 1, "second device column");
			p->role[col] = COL_DEVICE;
		} else {
			if (!*nm)
				return perr(p, col + 1, "empty column name in the header");
			double d;
			uint64_t u;
			if (!parse_u64(nm, strlen(nm), &u) || parse_value(nm, strlen(nm), &d) >= 0)
				return perr(p, col + 1,
					    "expected a header row naming t0, t1 and the "
					    "metrics, found the number '%s'",
					    show(nm, strlen(nm), shown, sizeof shown));
			for (uint32_t k = 0; k < p->m; k++)
				if (!strcmp(p->names[k], nm))
					return perr(p, col + 1, "metric '%s' appears twice",
						    show(nm, strlen(nm), shown, sizeof shown));
			p->names[p->m] = strdup(nm);
			if (!p->names[p->m] || (unit && !(p->units[p->m] = strdup(unit))))
				return perr(p, 0, "out of memory");
			p->role[col] = COL_METRIC;
			p->metric_of[col] = p->m++;
		}
		p->ncols++;
	} while (rc == CS_CSVR_FIELD);
	if (!have_t0 || !have_t1) {
		/* "t0;t1;..." is one column: say what the separator must be */
		int semis = p->ncols == 1 && p->names[0] && strchr(p->names[0], ';');
		return perr(p, 0, "header must name both t0 and t1 (it names %s%s)",
			    have_t0 ? "t0 only" : have_t1 ? "t1 only" : "neither",
			    semis ? "; its fields are separated by ';': the CSV must use commas"
			    : have_t0 || have_t1 ? "" : "; is the header row missing?");
	}
	if (!p->m)
		return perr(p, 0, "header names no metric column");
	p->values = malloc(p->m * sizeof *p->values);
	if (!p->values)
		return perr(p, 0, "out of memory");
	return sink->header ? sink->header(sink->ctx, p->m, (const char *const *)p->names,
					   (const char *const *)p->units)
			    : 0;
}

int cs_csv_parse(const char *buf, size_t len, const char *label,
		 const cs_csv_sink *sink, char *err, size_t errlen)
{
	parser p;
	memset(&p, 0, sizeof p);
	p.label = label ? label : "csv";
	p.err = err;
	p.errlen = errlen;
	cs_csvr_init(&p.r, buf, len);
	uint64_t *last_t0 = calloc(MAX_DEVICES, sizeof *last_t0);
	uint8_t *seen = calloc(MAX_DEVICES, 1);
	int rc = last_t0 && seen ? read_header(&p, sink) : perr(&p, 0, "out of memory");
	if (!last_t0 || !seen)
		goto done;
	char shown[80];
	while (!rc) {
		const char *f;
		size_t flen;
		uint64_t t0 = 0, t1 = 0, dev = 0;
		uint32_t col = 0;
		int r;
		do {
			r = cs_csvr_field(&p.r, &f, &flen, err, errlen);
			if (r == CS_CSVR_EOF && col == 0)
				goto done;
			if (r == CS_CSVR_ERROR) {
				char why[200];
				snprintf(why, sizeof why, "%s", err);
				rc = perr(&p, 0, "%s", why);
				goto done;
			}
			if (col >= p.ncols) {
				rc = perr(&p, col + 1, "expected %u fields as in the header, "
						       "found more",
					  p.ncols);
				goto done;
			}
			switch (p.role[col]) {
			case COL_T0:
			case COL_T1: {
				uint64_t *t = p.role[col] == COL_T0 ? &t0 : &t1;
				if (parse_u64(f, flen, t)) {
					rc = perr(&p, col + 1,
						  "%s: expected a non-negative integer time "
						  "below 2^63, found '%s'",
						  p.role[col] == COL_T0 ? "t0" : "t1",
						  show(f, flen, shown, sizeof shown));
					goto done;
				}
				break;
			}
			case COL_DEVICE:
				if (parse_u64(f, flen, &dev) || dev >= MAX_DEVICES) {
					rc = perr(&p, col + 1,
						  "device: expected an integer 0..%d, found '%s'",
						  MAX_DEVICES - 1, show(f, flen, shown, sizeof shown));
					goto done;
				}
				break;
			default: {
				int pv = parse_value(f, flen, &p.values[p.metric_of[col]]);
				if (pv == 1 && !p.underflows++) {
					p.uf_line = p.r.line;
					p.uf_col = col + 1;
					show(f, flen, p.uf_text, sizeof p.uf_text);
				}
				if (pv < 0) {
					rc = perr(&p, col + 1,
						  pv == -2 ? "metric '%s': '%s' is beyond the largest "
							     "double (1.8e308)"
							   : "metric '%s': expected a number or an empty "
							     "field, found '%s'",
						  p.names[p.metric_of[col]],
						  show(f, flen, shown, sizeof shown));
					goto done;
				}
				break;
			}
			}
			col++;
		} while (r == CS_CSVR_FIELD);
		if (col != p.ncols) {
			rc = perr(&p, 0, "expected %u fields as in the header, found %u",
				  p.ncols, col);
			break;
		}
		if (t1 < t0) {
			rc = perr(&p, 0, "t1 %llu is before t0 %llu", (unsigned long long)t1,
				  (unsigned long long)t0);
			break;
		}
		if (seen[dev] && t0 <= last_t0[dev]) {
			rc = perr(&p, 0,
				  "t0 %llu does not increase (the previous row of device "
				  "%llu has t0 %llu)",
				  (unsigned long long)t0, (unsigned long long)dev,
				  (unsigned long long)last_t0[dev]);
			break;
		}
		seen[dev] = 1;
		last_t0[dev] = t0;
		if (sink->row)
			rc = sink->row(sink->ctx, (uint32_t)dev, t0, t1, p.values);
	}
done:
	if (rc == 0 && p.underflows)
		cs_log(CS_LOG_WARN, "%s: %llu value(s) below the smallest double stored as 0 "
		       "(the first at line %llu column %u: '%s')", p.label,
		       (unsigned long long)p.underflows, (unsigned long long)p.uf_line, p.uf_col,
		       p.uf_text);
	for (uint32_t k = 0; p.names && k < p.m; k++)
		free(p.names[k]);
	for (uint32_t k = 0; p.units && k < p.m; k++)
		free(p.units[k]);
	free(p.names);
	free(p.units);
	free(p.values);
	free(last_t0);
	free(seen);
	cs_csvr_free(&p.r);
	return rc;
}

/* ---- the wide run: rows batched per device into a producer ---- */

typedef struct dev_batch {
	uint32_t index;
	uint64_t next_seq;
	uint32_t n;
	uint64_t t0[BATCH], t1[BATCH];
	double *values; /* BATCH * m */
	cs_totals totals; /* running totals among its counters */
} dev_batch;

struct cs_wide {
	cs_producer *p;
	uint32_t m;
	uint32_t *ids;
	dev_batch *devs[MAX_DEVICES];
	char *err;
	size_t errlen;
	const char *label;
	const cs_import_opts *o;
	char **names; /* the metric columns' names */
};

int cs_wide_header(void *ctx, uint32_t m, const char *const *names, const char *const *units)
{
	cs_wide *w = ctx;
	w->m = m;
	w->ids = malloc((m ? m : 1) * sizeof *w->ids);
	w->names = calloc(m + 1, sizeof *w->names);
	if (!w->ids || !w->names)
		return -ENOMEM;
	for (uint32_t k = 0; k < m; k++) {
		if (!(w->names[k] = strdup(names[k])))
			return -ENOMEM;
		cs_metric_info mi = {.name = names[k], .unit = units[k]};
		int rc = cs_producer_add_metric(w->p, &mi, &w->ids[k]);
		if (rc) {
			snprintf(w->err, w->errlen, "%s: %s", w->label, cs_producer_errmsg(w->p));
			return rc;
		}
	}
	return 0;
}

static int flush_dev(cs_wide *w, dev_batch *d)
{
	if (!d->n)
		return 0;
	cs_totals_rows(&d->totals, d->values, d->n, w->m);
	cs_batch b = {d->index, d->next_seq, d->n, w->m, w->ids, d->t0, d->t1, d->values};
	int rc = cs_producer_append(w->p, &b);
	if (rc) {
		snprintf(w->err, w->errlen, "%s: %s", w->label, cs_producer_errmsg(w->p));
		return rc;
	}
	d->next_seq += d->n;
	d->n = 0;
	return 0;
}

int cs_wide_row(void *ctx, uint32_t device, uint64_t t0, uint64_t t1, const double *values)
{
	cs_wide *w = ctx;
	if (device >= MAX_DEVICES) {
		snprintf(w->err, w->errlen, "%s: device %u is past the last device index (%d)",
			 w->label, device, MAX_DEVICES - 1);
		return -EINVAL;
	}
	dev_batch *d = w->devs[device];
	if (!d) {
		d = calloc(1, sizeof *d);
		if (!d || !(d->values = malloc((size_t)BATCH * (w->m ? w->m : 1) * sizeof(double)))) {
			free(d);
			snprintf(w->err, w->errlen, "out of memory");
			return -ENOMEM;
		}
		d->index = device;
		w->devs[device] = d;
		cs_totals_init(&d->totals, w->o->cumulative, w->o->per_window, w->label);
		for (uint32_t k = 0; k < w->m; k++)
			if (cs_totals_add(&d->totals, w->names[k]) < 0) {
				snprintf(w->err, w->errlen, "out of memory");
				return -ENOMEM;
			}
	}
	d->t0[d->n] = t0; /* NOLINT(clang-analyzer-unix.Malloc): owned by w->devs */
	d->t1[d->n] = t1;
	memcpy(d->values + (size_t)d->n * w->m, values, w->m * sizeof(double));
	if (++d->n == BATCH)
		return flush_dev(w, d);
	return 0;
}

cs_wide *cs_wide_open(cs_producer *p, const cs_import_opts *o, const char *format,
		      const char *unit, const char *kind, const char *extra, char *err,
		      size_t errlen)
{
	const char *label = o->label ? o->label : format;
	cs_buf meta = CS_BUF_INIT;
	if (cs_simrun_meta(&meta, label, format, extra)) {
		snprintf(err, errlen, "%s: out of memory", label);
		return NULL;
	}
	cs_run_info info = {
		.kind = kind,
		.source = format,
		.name = o->name ? o->name : cs_simrun_base_name(label),
		.time_unit = unit,
		.meta = (const char *)meta.data,
		.clock_hz = o->clock_hz,
	};
	cs_wide *w = calloc(1, sizeof *w);
	int rc = w ? cs_producer_begin(p, &info) : -ENOMEM;
	cs_buf_free(&meta);
	if (rc) {
		snprintf(err, errlen, "%s: %s", label, w ? cs_producer_errmsg(p) : "out of memory");
		free(w);
		return NULL;
	}
	w->p = p;
	w->err = err;
	w->errlen = errlen;
	w->label = label;
	w->o = o;
	return w;
}

int cs_wide_close(cs_wide *w, int rc)
{
	for (uint32_t d = 0; !rc && d < MAX_DEVICES; d++)
		if (w->devs[d])
			rc = flush_dev(w, w->devs[d]);
	int ndev = 0;
	for (uint32_t d = 0; d < MAX_DEVICES; d++)
		ndev += w->devs[d] != NULL;
	for (uint32_t d = 0; !rc && d < MAX_DEVICES; d++)
		if (w->devs[d]) {
			char where[32];
			snprintf(where, sizeof where, " (device %u)", d);
			cs_totals_report(&w->devs[d]->totals, ndev > 1 ? where : NULL);
		}
	if (!rc) {
		rc = cs_producer_end(w->p, "complete", NULL);
		if (rc)
			snprintf(w->err, w->errlen, "%s: %s", w->label, cs_producer_errmsg(w->p));
	} else {
		cs_producer_discard(w->p);
	}
	for (uint32_t d = 0; d < MAX_DEVICES; d++) {
		if (w->devs[d]) {
			free(w->devs[d]->values);
			cs_totals_free(&w->devs[d]->totals);
		}
		free(w->devs[d]);
	}
	for (uint32_t k = 0; w->names && k < w->m; k++)
		free(w->names[k]);
	free(w->names);
	free(w->ids);
	free(w);
	return rc;
}

int cs_import_csv(cs_producer *p, const char *buf, size_t len,
		  const cs_import_opts *opts, char *err, size_t errlen)
{
	const char *unit = opts->time_unit ? opts->time_unit : "ns";
	const char *kind = opts->kind ? opts->kind : strcmp(unit, "cycle") ? "hw" : "sim";
	cs_wide *w = cs_wide_open(p, opts, "csv", unit, kind, NULL, err, errlen);
	if (!w)
		return -EIO;
	cs_csv_sink sink = {w, cs_wide_header, cs_wide_row};
	int rc = cs_csv_parse(buf, len, opts->label ? opts->label : "csv", &sink, err, errlen);
	return cs_wide_close(w, rc);
}
