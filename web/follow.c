/* follow.c - a running run followed as it is committed; see follow.h. */
#define _GNU_SOURCE
#include "follow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corr_job.h"
#include "csv.h"
#include "json.h"
#include "reader.h"
#include "ranges.h"
#include "runs.h"
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
	if (r->have_from) {
		/* ranges from the first that ends at or after from, else from
		 * the next one to come: a reconnection does not get the run's
		 * ranges again */
		int64_t id;
		if (cs_ranges_first_id(s, f->run, r->from, &id) == 0)
			f->next_range = id;
	}
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

/* Appends the whole lines of text[0, len) to out as "data:" lines (CR
 * dropped, empty lines skipped) with one reservation and memchr: every
 * sample a follower sends passes through here. Adds the lines written to
 * *rows and sets *last to where the last of them starts in text (the row
 * whose t0 moves next_t0). Returns the bytes used (through the last line
 * end; what follows it is left), or -ENOMEM. */
static long data_lines(cs_buf *out, const char *text, size_t len, size_t *rows, size_t *last)
{
	size_t n = 0, used = 0;
	if (!len)
		return 0;
	for (const char *q = text; (q = memchr(q, '\n', len - (size_t)(q - text))); q++) {
		n++;
		used = (size_t)(q - text) + 1;
	}
	if (!n)
		return 0;
	if (cs_buf_reserve(out, used + 7 * n))
		return -ENOMEM;
	uint8_t *o = out->data + out->len;
	for (size_t i = 0; i < used;) {
		const char *nl = memchr(text + i, '\n', used - i);
		size_t e = (size_t)(nl - text), end = e > i && text[e - 1] == '\r' ? e - 1 : e;
		if (end > i) {
			*last = i;
			static const uint8_t field[6] = {'d', 'a', 't', 'a', ':', ' '};
			memcpy(o, field, sizeof field);
			memcpy(o + 6, text + i, end - i);
			o[6 + end - i] = '\n';
			o += 7 + end - i;
			++*rows;
		}
		i = e + 1;
	}
	out->len = (size_t)(o - out->data);
	return (long)used;
}

/* New samples from next_t0 on, at most about CS_FOLLOW_ROWS of them (whole
 * timelines). Each piece series.csv writes (its header, then a timeline's
 * rows) becomes data: lines as it comes, so the CSV is held a piece at a
 * time and copied once. */
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
	size_t rows = 0, start = out->len;
	int rc = 1, header = 1;
	while (rows < CS_FOLLOW_ROWS && rc > 0) {
		rc = cs_series_csv_next(x, &csv);
		if (rc < 0)
			break;
		if (header) { /* the first piece: the header row */
			header = 0;
			if (!f->header_sent && csv.len) {
				sse(out, "header", (const char *)csv.data, csv.len);
				f->header_sent = 1;
			}
			csv.len = 0;
			continue;
		}
		size_t mark = out->len, last = 0, before = rows;
		if (!rows && cs_buf_printf(out, "event: samples\n")) {
			rc = -ENOMEM;
			break;
		}
		long used = data_lines(out, (const char *)csv.data, csv.len, &rows, &last);
		if (used < 0) {
			rc = -ENOMEM;
			break;
		}
		if (!rows)
			out->len = mark; /* no event without rows */
		if (rows > before) {
			/* the last row's t0 (after the device column when one
			 * leads: one device is asked for, so only when it is not 0) */
			const char *p = (const char *)csv.data + last;
			const char *comma = memchr(p, ',', (size_t)used - last);
			if (f->device != 0 && comma)
				p = comma + 1;
			f->next_t0 = strtoull(p, NULL, 10) + 1;
		}
		/* a piece is whole rows; anything after its last line end waits */
		memmove(csv.data, csv.data + used, csv.len - (size_t)used);
		csv.len -= (size_t)used;
	}
	cs_series_csv_close(x);
	cs_buf_free(&csv);
	if (rc < 0) {
		out->len = start;
		snprintf(err, errlen, "%s", rc == -ENOMEM ? "out of memory" : cs_store_errmsg(f->s));
		return rc;
	}
	if (rows) {
		cs_json_raw(out, "\n");
		*sent = 1;
	}
	return 0;
}

/* New ranges (by id), at most CS_FOLLOW_ROWS, as ranges.csv rows. */
static int ranges(cs_follow *f, cs_buf *out, int *sent, char *err, size_t errlen)
{
	cs_ranges_query q = {.run = f->run, .by_id = 1, .since_id = f->next_range,
			     .limit = CS_FOLLOW_ROWS};
	cs_ranges_cursor *cur = cs_ranges_open(f->s, &q);
	if (!cur) {
		snprintf(err, errlen, "%s", cs_store_errmsg(f->s));
		return -EIO;
	}
	cs_buf csv = CS_BUF_INIT;
	cs_csv w;
	cs_csv_init(&w, cs_csv_buf_sink, &csv);
	int n = 0;
	if (!f->ranges_header_sent)
		cs_ranges_csv_header(&w);
	cs_range_row rr;
	int more;
	while ((more = cs_ranges_next(cur, &rr)) == 1) {
		f->next_range = rr.id + 1;
		cs_ranges_csv_row(&w, &rr);
		n++;
	}
	cs_ranges_close(cur);
	if (more < 0) {
		cs_buf_free(&csv);
		snprintf(err, errlen, "%s", cs_store_errmsg(f->s));
		return -EIO;
	}
	if (cs_csv_finish(&w) < 0) {
		cs_buf_free(&csv);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
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
	cs_run_summary sum;
	if (cs_runs_summary(f->s, f->run, &sum) == 0) {
		snprintf(status, sizeof status, "%s", sum.status);
		nsamples = (uint64_t)sum.samples;
	}
	if (!status[0]) {
		snprintf(err, errlen, "the run was deleted");
		return -ENOENT;
	}
	int sent = 0, rc = samples(f, out, &sent, err, errlen);
	if (rc == 0)
		rc = ranges(f, out, &sent, err, errlen);
	if (rc < 0)
		return rc;
	if (sent) {
		/* the daemon's clock beside what it committed: a follower of a
		 * hardware run (wall-clock ns) shows the lag as now_ns - the
		 * newest t1 it has */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		cs_buf_printf(out, "event: status\ndata: {\"now_ns\":%llu,\"samples\":%llu}\n\n",
			      (unsigned long long)ts.tv_sec * 1000000000ull +
				      (unsigned long long)ts.tv_nsec,
			      (unsigned long long)nsamples);
		return 1;
	}
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
