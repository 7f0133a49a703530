/* follow.c - a running run followed as it is committed; see follow.h. */
#define _GNU_SOURCE
#include "follow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "reader.h"
#include "series_csv.h"

struct cs_follow {
	cs_store *s;
	int64_t run;
	char run_spec[32];
	char *metrics;
	uint32_t device;
	uint64_t next_t0; /* the first t0 not sent yet */
	int64_t next_range; /* the first range id not sent yet */
	int header_sent, ranges_header_sent, ended;
};

cs_follow *cs_follow_open(cs_store *s, const cs_follow_req *r, int *status, char *err,
			  size_t errlen)
{
	cs_follow *f = calloc(1, sizeof *f);
	if (!f) {
		cs_series_fail(err, errlen, status, 500, "out of memory");
		return NULL;
	}
	f->s = s;
	int rc = cs_read_find_run(s, r->run, &f->run);
	if (rc) {
		cs_series_fail(err, errlen, status, rc == -ENOENT ? 404 : 500, "%s", cs_store_errmsg(s));
		goto bad;
	}
	snprintf(f->run_spec, sizeof f->run_spec, "%lld", (long long)f->run);
	if (r->metrics && *r->metrics && !(f->metrics = strdup(r->metrics))) {
		cs_series_fail(err, errlen, status, 500, "out of memory");
		goto bad;
	}
	uint32_t *devs = NULL, ndev = 0;
	if (cs_read_devices(s, f->run, &devs, &ndev) == 0 && ndev)
		f->device = devs[0];
	free(devs);
	if (r->have_device)
		f->device = r->device;
	f->next_t0 = r->have_from ? r->from : 0;
	/* the names checked now, with series.csv's messages */
	cs_series_req q = {.run = f->run_spec, .metrics = f->metrics, .have_device = ndev > 0,
			   .device = f->device, .from = 0, .to = 1, .have_from = 1, .have_to = 1};
	cs_series_csv *x = cs_series_csv_open(s, &q, status, err, errlen);
	if (!x)
		goto bad;
	cs_series_csv_close(x);
	return f;
bad:
	cs_follow_close(f);
	return NULL;
}

/* The SSE form of CSV text: each line a "data:" line, the event ended by
 * a blank line. Lines are CRLF-ended as series.csv writes them. */
static void sse(cs_buf *out, const char *event, const char *text, size_t len)
{
	cs_buf_printf(out, "event: %s\n", event);
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && text[e] != '\n' && text[e] != '\r')
			e++;
		if (e > i) {
			cs_json_raw(out, "data: ");
			cs_buf_append(out, text + i, e - i);
			cs_json_raw(out, "\n");
		}
		i = e + 1;
	}
	cs_json_raw(out, "\n");
}

/* New samples from next_t0 on, at most CS_FOLLOW_ROWS of them. */
static int samples(cs_follow *f, cs_buf *out, int *sent, char *err, size_t errlen)
{
	cs_series_req q = {.run = f->run_spec, .metrics = f->metrics, .have_device = 1,
			   .device = f->device, .from = f->next_t0, .to = UINT64_MAX,
			   .have_from = 1};
	int status;
	cs_series_csv *x = cs_series_csv_open(f->s, &q, &status, err, errlen);
	if (!x)
		return status == 400 && strstr(err, "device") ? 0 : -EIO; /* no samples yet */
	cs_buf csv = CS_BUF_INIT;
	int rc = 1;
	size_t rows = 0, counted = 0;
	while (rows < CS_FOLLOW_ROWS && (rc = cs_series_csv_next(x, &csv)) > 0) {
		for (; counted < csv.len; counted++)
			rows += csv.data[counted] == '\n';
	}
	cs_series_csv_close(x);
	if (rc < 0) {
		snprintf(err, errlen, "%s", cs_store_errmsg(f->s));
		cs_buf_free(&csv);
		return rc;
	}
	/* the header, then whole rows only; the last t0 sent moves next_t0 */
	const char *t = (const char *)csv.data;
	size_t len = csv.len, h = 0;
	while (h < len && t[h] != '\n')
		h++;
	if (h < len)
		h++;
	if (!f->header_sent && h) {
		sse(out, "header", t, h);
		f->header_sent = 1;
	}
	size_t end = len;
	while (end > h && t[end - 1] != '\n')
		end--;
	if (end > h) {
		size_t last = end - 1;
		while (last > h && t[last - 1] != '\n')
			last--;
		/* a leading device column never appears: one device is asked for,
		 * and its t0 is the first field unless a device column leads */
		const char *p = t + last;
		if (f->device != 0)
			p = strchr(p, ',') ? strchr(p, ',') + 1 : p;
		f->next_t0 = strtoull(p, NULL, 10) + 1;
		sse(out, "samples", t + h, end - h);
		*sent = 1;
	}
	cs_buf_free(&csv);
	return 0;
}

/* New ranges (by id), at most CS_FOLLOW_ROWS, as ranges.csv rows. */
static int ranges(cs_follow *f, cs_buf *out, int *sent, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(cs_store_db(f->s),
			       "SELECT id, kind, name, t0, t1, device, stream, correlation_id, pid, tid,"
			       " bytes FROM ranges WHERE run = ?1 AND id >= ?2 ORDER BY id LIMIT ?3",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(cs_store_db(f->s)));
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, f->run);
	sqlite3_bind_int64(st, 2, f->next_range);
	sqlite3_bind_int(st, 3, CS_FOLLOW_ROWS);
	cs_buf csv = CS_BUF_INIT;
	int n = 0;
	if (!f->ranges_header_sent)
		cs_json_raw(&csv, "kind,name,t0,t1,device,stream,correlation_id,pid,tid,bytes\r\n");
	while (sqlite3_step(st) == SQLITE_ROW) {
		f->next_range = sqlite3_column_int64(st, 0) + 1;
		for (int c = 1; c <= 10; c++) {
			if (c > 1)
				cs_json_raw(&csv, ",");
			if (sqlite3_column_type(st, c) == SQLITE_NULL)
				continue;
			const char *v = (const char *)sqlite3_column_text(st, c);
			if (strpbrk(v, ",\"\r\n")) { /* RFC 4180 quoting */
				cs_json_raw(&csv, "\"");
				for (const char *q = v; *q; q++)
					cs_json_raw(&csv, *q == '"' ? "\"\"" : (char[]){*q, 0});
				cs_json_raw(&csv, "\"");
			} else {
				cs_json_raw(&csv, v);
			}
		}
		cs_json_raw(&csv, "\r\n");
		n++;
	}
	sqlite3_finalize(st);
	if (n) {
		sse(out, "ranges", (const char *)csv.data, csv.len);
		f->ranges_header_sent = 1;
		*sent = 1;
	}
	cs_buf_free(&csv);
	return 0;
}

int cs_follow_next(cs_follow *f, cs_buf *out, char *err, size_t errlen)
{
	if (f->ended)
		return 0;
	/* the status first: what is read after it includes everything
	 * committed before the run ended */
	char status[32] = "";
	uint64_t nsamples = 0;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(cs_store_db(f->s), "SELECT status, samples FROM runs WHERE id = ?1",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, f->run);
		if (sqlite3_step(st) == SQLITE_ROW) {
			snprintf(status, sizeof status, "%s",
				 sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
			nsamples = (uint64_t)sqlite3_column_int64(st, 1);
		}
	}
	sqlite3_finalize(st);
	if (!status[0]) {
		snprintf(err, errlen, "the run was deleted");
		return -ENOENT;
	}
	int sent = 0, rc = samples(f, out, &sent, err, errlen);
	if (rc == 0)
		rc = ranges(f, out, &sent, err, errlen);
	if (rc < 0)
		return rc;
	if (sent)
		return 1;
	if (!strcmp(status, "running"))
		return 2;
	cs_buf_printf(out, "event: end\ndata: {\"status\":\"%s\",\"samples\":%llu}\n\n", status,
		      (unsigned long long)nsamples);
	f->ended = 1;
	return 1;
}

void cs_follow_close(cs_follow *f)
{
	if (!f)
		return;
	free(f->metrics);
	free(f);
}
