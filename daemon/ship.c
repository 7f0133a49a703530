/*
 * ship.c - shipping the store to ClickHouse (ship.h, docs/fleet.md).
 *
 * One pass: list the runs whose fingerprint moved since the target's
 * "done" mark; for each, send the run/device/metric rows when they changed,
 * then ranges and samples in batches from their marks, recording each mark
 * after ClickHouse confirmed the batch. Sample batches stream: curl pulls
 * the body as the scan (by sample number) decodes chunks, so a batch of a
 * million rows never sits in memory whole.
 */
#define _GNU_SOURCE
#include "ship.h"

/* the plain declarations: the calls go through the pointers below */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include "curl_lib.h"
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "outbox.h"
#include "prom.h"
#include "reader.h"
#include "store.h"

#define SHIPPER_NICE 10
#define BACKOFF_MAX_MS 60000

/* The tables, their columns and keys (docs/fleet.md). Every one is a
 * ReplacingMergeTree on its natural key; the version of the small tables
 * is the time of shipping, so a re-sent run row replaces the older one. */
typedef struct table {
	const char *name, *columns, *order;
	int versioned;
} table;

static const table tables[] = {
	{"runs",
	 "host String, run_uuid String, run_id Int64, kind String, source String, name String,"
	 " origin_host Nullable(String), pid Nullable(Int64), cmdline Nullable(String),"
	 " start_ns Nullable(Int64), end_ns Nullable(Int64), status String, time_unit String,"
	 " clock_hz Nullable(Float64), t_min Nullable(Int64), t_max Nullable(Int64),"
	 " samples Int64, dropped Int64, overflows Int64, meta String, version UInt64",
	 "host, run_uuid", 1},
	{"devices",
	 "host String, run_uuid String, idx Int64, name Nullable(String), chip Nullable(String),"
	 " uuid Nullable(String), sm_count Nullable(Int64), clock_hz Nullable(Float64),"
	 " mem_clock_hz Nullable(Float64), version UInt64",
	 "host, run_uuid, idx", 1},
	{"metrics",
	 "host String, run_uuid String, id Int64, name String, unit Nullable(String), kind String,"
	 " cumulative Int64, version UInt64",
	 "host, run_uuid, id", 1},
	{"ranges",
	 "host String, run_uuid String, id Int64, kind String, name String, t0 Int64, t1 Int64,"
	 " device Nullable(Int64), stream Nullable(Int64), correlation_id Nullable(Int64),"
	 " pid Nullable(Int64), tid Nullable(Int64), bytes Nullable(Int64)",
	 "host, run_uuid, id", 0},
	{"samples",
	 "host String, run_uuid String, device UInt32, metric String, seq UInt64, t0 UInt64,"
	 " t1 UInt64, value Float64",
	 "metric, host, run_uuid, device, t0, seq", 0},
};
enum { T_RUNS, T_DEVICES, T_METRICS, T_RANGES, T_SAMPLES, NTABLES };

/* How each outbox cell is written: S string, s nullable string, I Int64,
 * i nullable Int64, F nullable Float64, Z Int64 with NULL as 0, - not
 * sent (the uuid, which leads every row with the host). */
static const char run_types[] = "I-SSSsisiiSSFiiZZZS";
static const char device_types[] = "IsssiFF";
static const char metric_types[] = "ISsSZ";
static const char range_types[] = "ISSIIiiiiii";

typedef struct shipper {
	cs_ship_opts o;
	char url[1024], database[128], prefix[128], host[256], cluster[128], user[128], password[256];
	char target[1500];
	CURL *curl;
	cs_store *s;
	int tables_ready;
	const atomic_int *stop;
	cs_ship_stats st;
	char err[1024];
} shipper;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A failed call on the local store: records its message, returns rc. */
static int local_err(shipper *sh, int rc)
{
	if (rc < 0)
		snprintf(sh->err, sizeof sh->err, "local database %.400s: %.500s", sh->o.db_path,
			 cs_store_errmsg(sh->s));
	return rc;
}

/* ---- RowBinary ---- */

static void rb_str(cs_buf *b, const char *s, size_t len)
{
	cs_buf_put_varint(b, len);
	cs_buf_append(b, s, len);
}

static void rb_cstr(cs_buf *b, const char *s) { rb_str(b, s, strlen(s)); }

/* One outbox cell as type t (see run_types). */
static void rb_cell(cs_buf *b, char t, const cs_cell *c)
{
	int null = c->type == CS_CELL_NULL;
	switch (t) {
	case 's':
	case 'i':
	case 'F':
		cs_buf_put_u8(b, (uint8_t)null);
		if (null)
			return;
		if (t == 'i')
			cs_buf_put_u64(b, (uint64_t)c->i);
		else if (t == 'F')
			cs_buf_put_f64(b, c->d);
		else if (c->type == CS_CELL_TEXT)
			rb_str(b, c->s, c->len);
		else {
			char tmp[32];
			int n = snprintf(tmp, sizeof tmp, "%lld", (long long)c->i);
			rb_str(b, tmp, (size_t)n);
		}
		return;
	case 'S':
		if (c->type == CS_CELL_TEXT)
			rb_str(b, c->s, c->len);
		else
			rb_str(b, "", 0);
		return;
	default: /* I, Z */
		cs_buf_put_u64(b, (uint64_t)(null ? 0 : c->i));
		return;
	}
}

/* ---- HTTP ---- */

typedef struct body_reader {
	shipper *sh;
	cs_buf *buf;           /* what is waiting to be sent */
	size_t off;
	int (*fill)(void *ctx); /* refills buf; 1 = more, 0 = end, < 0 error */
	void *ctx;
	int done, failed;
	uint64_t sent;
} body_reader;

static size_t read_body(char *dst, size_t size, size_t nmemb, void *p)
{
	body_reader *r = p;
	size_t max = size * nmemb;
	while (r->off == r->buf->len && !r->done) {
		r->buf->len = 0;
		r->off = 0;
		int rc = r->fill ? r->fill(r->ctx) : 0;
		if (rc < 0) {
			r->failed = rc;
			return CURL_READFUNC_ABORT;
		}
		if (rc == 0)
			r->done = 1;
	}
	size_t n = r->buf->len - r->off;
	if (n > max)
		n = max;
	memcpy(dst, r->buf->data + r->off, n);
	r->off += n;
	r->sent += n;
	return n;
}

static size_t write_answer(char *p, size_t size, size_t nmemb, void *ctx)
{
	cs_buf *b = ctx;
	size_t n = size * nmemb;
	if (b->len < 4096)
		cs_buf_append(b, p, n < 4096 - b->len ? n : 4096 - b->len);
	return n;
}

static int xfer_progress(void *p, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const shipper *sh = p;
	(void)dt, (void)dn, (void)ut, (void)un;
	return sh->stop && atomic_load(sh->stop);
}

/* POSTs a query (in the URL, with the body as its data) or a statement
 * (as the body, query NULL); 0 only on HTTP 200. The answer's first line
 * goes into sh->err otherwise. */
static int post(shipper *sh, const char *query, body_reader *body, const char *stmt)
{
	CURL *c = sh->curl;
	char *esc = query ? cs_curl()->easy_escape(c, query, 0) : NULL;
	/* Inserts through Distributed tables answer once the shards have the
	 * rows (insert_distributed_sync), so 200 means stored. */
	char url[4096];
	int dsync = query && sh->cluster[0];
	snprintf(url, sizeof url, "%s%s%s%s%s", sh->url, strchr(sh->url, '?') ? "&" : "/?",
		 esc ? "query=" : "", esc ? esc : "", dsync ? "&insert_distributed_sync=1" : "");
	cs_curl()->free(esc);
	cs_buf answer = CS_BUF_INIT;
	cs_curl()->easy_reset(c);
	cs_curl()->easy_setopt(c, CURLOPT_URL, url);
	cs_curl()->easy_setopt(c, CURLOPT_POST, 1L);
	cs_curl()->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	cs_curl()->easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	cs_curl()->easy_setopt(c, CURLOPT_TIMEOUT, (long)sh->o.timeout_s);
	cs_curl()->easy_setopt(c, CURLOPT_WRITEFUNCTION, write_answer);
	cs_curl()->easy_setopt(c, CURLOPT_WRITEDATA, &answer);
	cs_curl()->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	cs_curl()->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, xfer_progress);
	cs_curl()->easy_setopt(c, CURLOPT_XFERINFODATA, sh);
	if (sh->user[0]) {
		cs_curl()->easy_setopt(c, CURLOPT_USERNAME, sh->user);
		cs_curl()->easy_setopt(c, CURLOPT_PASSWORD, sh->password);
	}
	struct curl_slist *hdr = cs_curl()->slist_append(NULL, "Content-Type: application/octet-stream");
	hdr = cs_curl()->slist_append(hdr, "Expect:");
	cs_curl()->easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	if (body) {
		cs_curl()->easy_setopt(c, CURLOPT_READFUNCTION, read_body);
		cs_curl()->easy_setopt(c, CURLOPT_READDATA, body);
		if (!body->fill)
			cs_curl()->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->buf->len);
	} else {
		cs_curl()->easy_setopt(c, CURLOPT_POSTFIELDS, stmt);
		cs_curl()->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(stmt));
	}
	CURLcode cc = cs_curl()->easy_perform(c);
	long code = 0;
	cs_curl()->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	cs_curl()->slist_free_all(hdr);
	int rc = 0;
	if (body && body->failed) {
		rc = local_err(sh, body->failed);
	} else if (cc == CURLE_ABORTED_BY_CALLBACK) {
		rc = -ECANCELED;
		snprintf(sh->err, sizeof sh->err, "stopped");
	} else if (cc != CURLE_OK) {
		rc = -EHOSTUNREACH;
		snprintf(sh->err, sizeof sh->err, "%.600s: %s", sh->url, cs_curl()->easy_strerror(cc));
	} else if (code != 200) {
		rc = -EPROTO;
		cs_buf_put_u8(&answer, 0);
		char *a = (char *)answer.data, *nl = strchr(a, '\n');
		if (nl)
			*nl = 0;
		snprintf(sh->err, sizeof sh->err, "ClickHouse answered HTTP %ld to %.60s...: %.700s", code,
			 query ? query : stmt, a);
	}
	cs_buf_free(&answer);
	return rc;
}

static int statement(shipper *sh, const char *sql) { return post(sh, NULL, NULL, sql); }

/* INSERT INTO the table (its _all twin with a cluster) FORMAT RowBinary. */
static int insert(shipper *sh, int t, body_reader *body)
{
	char q[600];
	snprintf(q, sizeof q, "INSERT INTO %s.%s%s%s FORMAT RowBinary", sh->database, sh->prefix,
		 tables[t].name, sh->cluster[0] ? "_all" : "");
	int rc = post(sh, q, body, NULL);
	if (!rc) {
		sh->st.batches++;
		sh->st.bytes += body->sent;
	}
	return rc;
}

static int make_tables(shipper *sh)
{
	char sql[2048];
	snprintf(sql, sizeof sql, "CREATE DATABASE IF NOT EXISTS %s", sh->database);
	int rc = statement(sh, sql);
	for (int t = 0; !rc && t < NTABLES; t++) {
		snprintf(sql, sizeof sql,
			 "CREATE TABLE IF NOT EXISTS %s.%s%s (%s) ENGINE = ReplacingMergeTree%s ORDER BY (%s)",
			 sh->database, sh->prefix, tables[t].name, tables[t].columns,
			 tables[t].versioned ? "(version)" : "", tables[t].order);
		rc = statement(sh, sql);
		if (!rc && sh->cluster[0]) {
			/* One run's rows on one shard: a re-sent batch meets its twin. */
			snprintf(sql, sizeof sql,
				 "CREATE TABLE IF NOT EXISTS %s.%s%s_all AS %s.%s%s ENGINE = "
				 "Distributed(%s, %s, %s%s, cityHash64(host, run_uuid))",
				 sh->database, sh->prefix, tables[t].name, sh->database, sh->prefix,
				 tables[t].name, sh->cluster, sh->database, sh->prefix, tables[t].name);
			rc = statement(sh, sql);
		}
	}
	sh->tables_ready = !rc;
	return rc;
}

/* ---- rows ---- */

typedef struct row_ctx {
	shipper *sh;
	cs_buf *b;
	const char *types;
	const char *uuid;
	uint64_t version; /* 0 = the table has none */
	int64_t last_id;
	uint64_t rows;
} row_ctx;

static int on_cells(void *p, const cs_cell *cells, int n)
{
	row_ctx *r = p;
	rb_cstr(r->b, r->sh->host);
	rb_cstr(r->b, r->uuid);
	for (int i = 0; i < n && r->types[i]; i++)
		if (r->types[i] != '-')
			rb_cell(r->b, r->types[i], &cells[i]);
	if (r->version)
		cs_buf_put_u64(r->b, r->version);
	r->last_id = cells[0].i;
	r->rows++;
	return 0;
}

/* Sends b, built whole, into table t. */
static int send_buf(shipper *sh, int t, cs_buf *b)
{
	body_reader body = {.sh = sh, .buf = b};
	return insert(sh, t, &body);
}

/* The run, device and metric rows, when they changed since the mark. */
static int ship_meta(shipper *sh, const cs_outbox_run *run)
{
	int64_t mark;
	int rc = local_err(sh, cs_outbox_mark(sh->s, sh->target, run->uuid, "meta", 0, &mark));
	if (rc || mark == run->meta_fingerprint)
		return rc;
	uint64_t version = now_ns();
	static const struct {
		int table;
		const char *types;
		int (*rows)(cs_store *, int64_t, cs_cell_fn, void *);
	} parts[] = {
		{T_RUNS, run_types, cs_outbox_run_row},
		{T_DEVICES, device_types, cs_outbox_devices},
		{T_METRICS, metric_types, cs_outbox_metrics},
	};
	cs_buf b = CS_BUF_INIT;
	for (size_t i = 0; !rc && i < sizeof parts / sizeof *parts; i++) {
		cs_buf_reset(&b);
		row_ctx r = {sh, &b, parts[i].types, run->uuid, version, 0, 0};
		rc = local_err(sh, parts[i].rows(sh->s, run->id, on_cells, &r));
		if (!rc && r.rows)
			rc = send_buf(sh, parts[i].table, &b);
	}
	cs_buf_free(&b);
	if (!rc)
		rc = local_err(sh, cs_outbox_set_mark(sh->s, sh->target, run->uuid, "meta", 0,
						      run->meta_fingerprint));
	return rc;
}

static int ship_ranges(shipper *sh, const cs_outbox_run *run)
{
	int64_t mark;
	int rc = local_err(sh, cs_outbox_mark(sh->s, sh->target, run->uuid, "ranges", 0, &mark));
	cs_buf b = CS_BUF_INIT;
	uint32_t limit = sh->o.batch_rows > UINT32_MAX ? UINT32_MAX : (uint32_t)sh->o.batch_rows;
	while (!rc && mark < run->last_range) {
		cs_buf_reset(&b);
		row_ctx r = {sh, &b, range_types, run->uuid, 0, mark, 0};
		if ((rc = local_err(sh, cs_outbox_ranges(sh->s, run->id, mark, limit, on_cells, &r))) < 0)
			break;
		if (!r.rows)
			break;
		if ((rc = send_buf(sh, T_RANGES, &b)) < 0)
			break;
		sh->st.ranges += r.rows;
		mark = r.last_id;
		rc = local_err(sh, cs_outbox_set_mark(sh->s, sh->target, run->uuid, "ranges", 0, mark));
	}
	cs_buf_free(&b);
	return rc;
}

/* A streamed sample batch: the scan's rows in long form, NaN left out. */
typedef struct sample_batch {
	shipper *sh;
	cs_raw_iter *it;
	cs_buf *out;
	cs_buf head;     /* host and run_uuid, encoded once */
	cs_buf *names;   /* per metric: its name, encoded */
	uint32_t m, device;
	uint64_t rows;
} sample_batch;

static int on_sample(void *p, uint64_t seq, uint64_t t0, uint64_t t1, const double *v)
{
	sample_batch *sb = p;
	cs_buf *b = sb->out;
	for (uint32_t k = 0; k < sb->m; k++) {
		if (isnan(v[k]))
			continue;
		if (cs_buf_reserve(b, sb->head.len + sb->names[k].len + 36))
			return -ENOMEM;
		cs_buf_append(b, sb->head.data, sb->head.len);
		cs_buf_put_u32(b, sb->device);
		cs_buf_append(b, sb->names[k].data, sb->names[k].len);
		cs_buf_put_u64(b, seq);
		cs_buf_put_u64(b, t0);
		cs_buf_put_u64(b, t1);
		cs_buf_put_f64(b, v[k]);
		sb->rows++;
	}
	return 0;
}

/* body_reader's fill: the next chunk of the scan (1 more, 0 end, < 0). */
static int fill_samples(void *p)
{
	sample_batch *sb = p;
	return cs_raw_next(sb->it, on_sample, sb);
}

static int ship_samples(shipper *sh, const cs_outbox_run *run)
{
	uint32_t *ids = NULL, nids = 0, *devs = NULL, ndev = 0;
	uint64_t *counts = NULL;
	sample_batch sb = {.sh = sh};
	cs_buf out = CS_BUF_INIT;
	int rc = local_err(sh, cs_read_metric_ids(sh->s, run->id, &ids, &nids));
	if (!rc)
		rc = local_err(sh, cs_outbox_device_samples(sh->s, run->id, &devs, &counts, &ndev));
	if (rc)
		goto out;
	sb.m = nids;
	sb.names = calloc(nids + 1, sizeof *sb.names);
	if (!sb.names) {
		rc = -ENOMEM;
		snprintf(sh->err, sizeof sh->err, "out of memory");
		goto out;
	}
	rb_cstr(&sb.head, sh->host);
	rb_cstr(&sb.head, run->uuid);
	for (uint32_t k = 0; k < nids; k++) {
		char name[1024];
		if ((rc = local_err(sh, cs_read_metric_name(sh->s, run->id, ids[k], name, sizeof name))) < 0)
			goto out;
		rb_cstr(&sb.names[k], name);
	}
	/* Samples per batch: batch_rows rows of m metrics each. */
	uint64_t per = nids ? sh->o.batch_rows / nids : sh->o.batch_rows;
	if (per < 1)
		per = 1;
	for (uint32_t d = 0; !rc && d < ndev && nids; d++) {
		int64_t mark;
		if ((rc = local_err(sh, cs_outbox_mark(sh->s, sh->target, run->uuid, "samples",
							  devs[d], &mark))) < 0)
			break;
		uint64_t from = (uint64_t)mark;
		while (!rc && from < counts[d]) {
			uint64_t to = counts[d] - from > per ? from + per : counts[d];
			cs_scan q = {.run = run->id, .device = devs[d], .m = nids, .metrics = ids,
				     .seq_from = from, .seq_to = to};
			sb.device = devs[d];
			sb.rows = 0;
			sb.out = &out;
			cs_buf_reset(&out);
			if (!(sb.it = cs_raw_open(sh->s, &q))) {
				rc = local_err(sh, -EIO);
				break;
			}
			body_reader body = {.sh = sh, .buf = &out, .fill = fill_samples, .ctx = &sb};
			rc = insert(sh, T_SAMPLES, &body);
			cs_raw_close(sb.it);
			sb.it = NULL;
			if (rc)
				break;
			sh->st.rows += sb.rows;
			from = to;
			rc = local_err(sh, cs_outbox_set_mark(sh->s, sh->target, run->uuid, "samples",
							      devs[d], (int64_t)from));
		}
	}
out:
	for (uint32_t k = 0; sb.names && k < nids; k++)
		cs_buf_free(&sb.names[k]);
	free(sb.names);
	cs_buf_free(&sb.head);
	cs_buf_free(&out);
	free(ids);
	free(devs);
	free(counts);
	return rc;
}

/* One pass over what is pending. *left counts the runs not brought up to
 * date (an error stops the pass). */
static int ship_pass(shipper *sh, size_t *left)
{
	cs_outbox_run *runs = NULL;
	size_t n = 0, done = 0;
	int rc = 0;
	if (!sh->tables_ready && (rc = make_tables(sh)) < 0)
		goto out;
	if ((rc = local_err(sh, cs_outbox_pending(sh->s, sh->target, sh->o.only_run, &runs, &n))) < 0)
		goto out;
	for (size_t i = 0; i < n && !rc; i++) {
		if (sh->stop && atomic_load(sh->stop))
			break;
		rc = ship_meta(sh, &runs[i]);
		if (!rc)
			rc = ship_ranges(sh, &runs[i]);
		if (!rc)
			rc = ship_samples(sh, &runs[i]);
		if (!rc)
			rc = local_err(sh, cs_outbox_set_mark(sh->s, sh->target, runs[i].uuid, "done",
							      0, runs[i].fingerprint));
		if (!rc) {
			done++;
			sh->st.runs++;
		}
	}
out:
	if (left)
		*left = n - done;
	free(runs);
	/* A refused or failed request may mean the tables are gone. */
	if (rc == -EPROTO)
		sh->tables_ready = 0;
	return rc;
}

/* ---- set-up ---- */

static int shipper_init(shipper *sh, const cs_ship_opts *o, char *err, size_t errlen)
{
	memset(sh, 0, sizeof *sh);
	sh->o = *o;
	const cs_curl_fns *lc = cs_curl();
	if (!o->url || (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8))) {
		snprintf(err, errlen, "ClickHouse URL '%s': expected http://HOST:PORT (its HTTP "
			 "interface, usually port 8123)", o->url ? o->url : "");
		return -EINVAL;
	}
	snprintf(sh->url, sizeof sh->url, "%s", o->url);
	size_t ul = strlen(sh->url);
	while (ul > 8 && sh->url[ul - 1] == '/')
		sh->url[--ul] = 0;
	const char *names[][2] = {{o->database, "database"}, {o->prefix, "table prefix"},
				  {o->cluster, "cluster"}};
	for (size_t i = 0; i < 3; i++)
		for (const char *c = names[i][0] ? names[i][0] : ""; *c; c++)
			if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9'))) {
				snprintf(err, errlen, "%s '%s': only letters, digits and _ are "
					 "allowed", names[i][1], names[i][0]);
				return -EINVAL;
			}
	snprintf(sh->database, sizeof sh->database, "%s",
		 o->database && *o->database ? o->database : "cyclescope");
	snprintf(sh->prefix, sizeof sh->prefix, "%s", o->prefix ? o->prefix : "");
	snprintf(sh->cluster, sizeof sh->cluster, "%s", o->cluster ? o->cluster : "");
	snprintf(sh->user, sizeof sh->user, "%s", o->user ? o->user : "");
	snprintf(sh->password, sizeof sh->password, "%s", o->password ? o->password : "");
	if (o->host && *o->host)
		snprintf(sh->host, sizeof sh->host, "%s", o->host);
	else if (gethostname(sh->host, sizeof sh->host - 1))
		snprintf(sh->host, sizeof sh->host, "localhost");
	if (!sh->o.batch_rows)
		sh->o.batch_rows = 1000000;
	if (!sh->o.timeout_s)
		sh->o.timeout_s = 60;
	if (!sh->o.interval_ms)
		sh->o.interval_ms = 1000;
	/* Marks belong to a destination: the server, database and tables. */
	snprintf(sh->target, sizeof sh->target, "clickhouse %s %s.%s", sh->url, sh->database,
		 sh->prefix);
	if (lc->err[0]) {
		snprintf(err, errlen, "%s", lc->err);
		return -ENOSYS;
	}
	if (!(sh->curl = cs_curl()->easy_init())) {
		snprintf(err, errlen, "libcurl: cannot start a session");
		return -ENOMEM;
	}
	sh->s = cs_store_open(o->db_path, 0, err, errlen);
	if (!sh->s) {
		cs_curl()->easy_cleanup(sh->curl);
		sh->curl = NULL;
		return -EIO;
	}
	return 0;
}

static void shipper_fini(shipper *sh)
{
	cs_store_close(sh->s);
	if (sh->curl)
		cs_curl()->easy_cleanup(sh->curl);
	sh->s = NULL;
	sh->curl = NULL;
}

int cs_ship_once(const cs_ship_opts *o, cs_ship_stats *stats, char *err, size_t errlen)
{
	shipper sh;
	int rc = shipper_init(&sh, o, err, errlen);
	if (rc)
		return rc;
	size_t left = 0;
	rc = ship_pass(&sh, &left);
	if (rc)
		snprintf(err, errlen, "%s", sh.err);
	if (stats)
		*stats = sh.st;
	shipper_fini(&sh);
	return rc;
}

/* ---- the daemon's thread ---- */

struct cs_ship {
	shipper sh;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_int stop;
	atomic_uint_fast64_t rows, ranges, batches, bytes, errors, up, pending;
};

/* Sleeps ms unless stopped; 1 when stopped. */
static int nap(cs_ship *x, uint64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&x->mu);
	while (!atomic_load(&x->stop) && pthread_cond_timedwait(&x->cv, &x->mu, &ts) == 0)
		;
	pthread_mutex_unlock(&x->mu);
	return atomic_load(&x->stop);
}

static void *ship_thread(void *p)
{
	cs_ship *x = p;
	shipper *sh = &x->sh;
	/* Below ingest, like the HTTP readers: shipping catches up in the
	 * gaps and never starves the writer. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), SHIPPER_NICE))
		(void)0;
	int state = -1; /* unknown, 0 failing, 1 shipping */
	char last_err[1024] = "";
	uint64_t backoff = 1000;
	while (!atomic_load(&x->stop)) {
		cs_ship_stats before = sh->st;
		size_t left = 0;
		int rc = ship_pass(sh, &left);
		atomic_fetch_add(&x->rows, sh->st.rows - before.rows);
		atomic_fetch_add(&x->ranges, sh->st.ranges - before.ranges);
		atomic_fetch_add(&x->batches, sh->st.batches - before.batches);
		atomic_fetch_add(&x->bytes, sh->st.bytes - before.bytes);
		atomic_store(&x->pending, left);
		if (rc == -ECANCELED && atomic_load(&x->stop))
			break;
		if (rc == 0) {
			if (state != 1)
				cs_log(CS_LOG_INFO, "clickhouse: %sshipping to %s (%s, host '%s')",
				       state == 0 ? "reachable again, catching up; " : "", sh->url,
				       sh->database, sh->host);
			state = 1;
			last_err[0] = 0;
			backoff = 1000;
			atomic_store(&x->up, 1);
			nap(x, sh->o.interval_ms);
			continue;
		}
		atomic_fetch_add(&x->errors, 1);
		atomic_store(&x->up, 0);
		if (state != 0 || strcmp(last_err, sh->err))
			cs_log(CS_LOG_WARN, "clickhouse: %s; data stays in the local file, retrying "
			       "(backing off up to %d s)", sh->err, BACKOFF_MAX_MS / 1000);
		snprintf(last_err, sizeof last_err, "%s", sh->err);
		state = 0;
		nap(x, backoff);
		backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
	}
	return NULL;
}

cs_ship *cs_ship_start(const cs_ship_opts *o, char *err, size_t errlen)
{
	cs_ship *x = calloc(1, sizeof *x);
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (shipper_init(&x->sh, o, err, errlen)) {
		free(x);
		return NULL;
	}
	x->sh.stop = &x->stop;
	pthread_mutex_init(&x->mu, NULL);
	pthread_cond_init(&x->cv, NULL);
	if (pthread_create(&x->thread, NULL, ship_thread, x)) {
		snprintf(err, errlen, "cannot start the shipping thread");
		shipper_fini(&x->sh);
		pthread_mutex_destroy(&x->mu);
		pthread_cond_destroy(&x->cv);
		free(x);
		return NULL;
	}
	return x;
}

void cs_ship_stop(cs_ship *x)
{
	if (!x)
		return;
	pthread_mutex_lock(&x->mu);
	atomic_store(&x->stop, 1);
	pthread_cond_broadcast(&x->cv);
	pthread_mutex_unlock(&x->mu);
	pthread_join(x->thread, NULL);
	shipper_fini(&x->sh);
	pthread_mutex_destroy(&x->mu);
	pthread_cond_destroy(&x->cv);
	free(x);
}

void cs_ship_metrics_text(cs_ship *x, cs_buf *out)
{
	if (!x)
		return;
	cs_prom_metric(out, "cyclescope_ship_rows_total", "counter",
		       "Sample rows ClickHouse confirmed", atomic_load(&x->rows));
	cs_prom_metric(out, "cyclescope_ship_ranges_total", "counter",
		       "Range rows ClickHouse confirmed", atomic_load(&x->ranges));
	cs_prom_metric(out, "cyclescope_ship_batches_total", "counter",
		       "Inserts ClickHouse confirmed", atomic_load(&x->batches));
	cs_prom_metric(out, "cyclescope_ship_bytes_total", "counter",
		       "Insert bodies ClickHouse confirmed", atomic_load(&x->bytes));
	cs_prom_metric(out, "cyclescope_ship_errors_total", "counter",
		       "Shipping passes that failed (ClickHouse down or refusing)",
		       atomic_load(&x->errors));
	cs_prom_metric(out, "cyclescope_ship_up", "gauge",
		       "1 when the last shipping pass succeeded", atomic_load(&x->up));
	cs_prom_metric(out, "cyclescope_ship_pending_runs", "gauge",
		       "Runs with data not yet confirmed, at the last pass", atomic_load(&x->pending));
}
