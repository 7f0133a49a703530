/*
 * textin.c - plain or multi-member gzip text, line by line (textin.h).
 */
#include "textin.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>
#include <zlib.h>

#define OUT_CHUNK (1u << 20)
#define MAX_LINE (64u << 20)

int cs_textin_is_gzip(const char *buf, size_t len)
{
	return len >= 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b;
}

typedef struct splitter {
	char *line;   /* carried partial line */
	size_t len, cap;
	uint64_t lineno;
	cs_line_fn fn;
	cs_chunk_fn chunk; /* set: text goes to it in pieces, not split */
	void *ctx;
	const char *label;
	char *err;
	size_t errlen;
} splitter;

static int emit(splitter *s, char *line, size_t len)
{
	if (len && line[len - 1] == '\r')
		len--;
	line[len] = '\0';
	s->lineno++;
	return s->fn(s->ctx, line, len, s->lineno);
}

/* Feeds text; complete lines go to the callback, the rest is carried.
 * data must have one writable byte past len (for the NUL). */
static int feed(splitter *s, char *data, size_t len)
{
	size_t start = 0;
	for (;;) {
		char *nl = memchr(data + start, '\n', len - start);
		if (!nl)
			break;
		size_t end = (size_t)(nl - data);
		int rc;
		if (s->len) {
			size_t add = end - start;
			if (s->len + add + 1 > s->cap) {
				size_t cap = s->len + add + 1;
				char *g = realloc(s->line, cap);
				if (!g)
					return -ENOMEM;
				s->line = g;
				s->cap = cap;
			}
			memcpy(s->line + s->len, data + start, add);
			rc = emit(s, s->line, s->len + add);
			s->len = 0;
		} else {
			rc = emit(s, data + start, end - start);
		}
		if (rc)
			return rc;
		start = end + 1;
	}
	size_t rest = len - start;
	if (rest) {
		if (s->len + rest > MAX_LINE) {
			snprintf(s->err, s->errlen, "%s: line %llu is longer than %u MiB", s->label,
				 (unsigned long long)s->lineno + 1, MAX_LINE >> 20);
			return -EINVAL;
		}
		if (s->len + rest + 1 > s->cap) {
			size_t cap = (s->len + rest + 1) * 2;
			char *g = realloc(s->line, cap);
			if (!g)
				return -ENOMEM;
			s->line = g;
			s->cap = cap;
		}
		memcpy(s->line + s->len, data + start, rest);
		s->len += rest;
	}
	return 0;
}

static int finish(splitter *s)
{
	if (!s->len)
		return 0;
	int rc = emit(s, s->line, s->len);
	s->len = 0;
	return rc;
}

/* Gzip input is inflated on its own thread while the caller's thread
 * splits and handles lines, so an import costs about the larger of the
 * two rather than their sum (the machines have more than one core). The
 * inflater fills NBUF chunk buffers ahead; an error it meets is handed
 * over after the good chunks before it, so the message can count the
 * lines that were complete. */
#define NBUF 4

enum gz_fail { GZ_OK = 0, GZ_JUNK, GZ_TRUNCATED, GZ_CORRUPT, GZ_NOMEM };

typedef struct gzpipe {
	const char *buf;
	size_t len;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *chunk[NBUF];
	size_t clen[NBUF], cin[NBUF]; /* bytes out, compressed bytes consumed */
	unsigned head, count;
	int done, stop;
	int fail;                     /* enum gz_fail, once done */
	size_t fail_off;
	unsigned members;
	char zmsg[128];
} gzpipe;

static void *inflater(void *arg)
{
	gzpipe *g = arg;
	z_stream z;
	memset(&z, 0, sizeof z);
	int fail = GZ_OK;
	size_t off = 0;
	unsigned members = 0;
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		fail = GZ_NOMEM;
		goto out;
	}
	for (;;) {
		pthread_mutex_lock(&g->mu);
		while (g->count == NBUF && !g->stop)
			pthread_cond_wait(&g->cv, &g->mu);
		int stop = g->stop;
		unsigned slot = (g->head + g->count) % NBUF;
		pthread_mutex_unlock(&g->mu);
		if (stop)
			break;
		unsigned char *outb = g->chunk[slot];
		size_t chunk = g->len - off > (1u << 30) ? (1u << 30) : g->len - off;
		z.next_in = (unsigned char *)(uintptr_t)(g->buf + off);
		z.avail_in = (uInt)chunk;
		z.next_out = outb;
		z.avail_out = OUT_CHUNK;
		int zr = inflate(&z, Z_NO_FLUSH);
		off += chunk - z.avail_in;
		size_t produced = OUT_CHUNK - z.avail_out;
		int end_member = zr == Z_STREAM_END;
		if (end_member) {
			members++;
			while (off < g->len && g->buf[off] == 0) /* padding some tools add */
				off++;
		}
		if (produced) {
			pthread_mutex_lock(&g->mu);
			g->clen[slot] = produced;
			g->cin[slot] = off;
			g->count++;
			g->members = members;
			pthread_cond_broadcast(&g->cv);
			pthread_mutex_unlock(&g->mu);
		}
		if (end_member) {
			if (off >= g->len)
				break;
			if (!cs_textin_is_gzip(g->buf + off, g->len - off)) {
				fail = GZ_JUNK;
				break;
			}
			inflateReset(&z);
			continue;
		}
		if (zr == Z_OK || (zr == Z_BUF_ERROR && produced))
			continue;
		fail = zr == Z_BUF_ERROR && off >= g->len ? GZ_TRUNCATED : GZ_CORRUPT;
		if (z.msg)
			snprintf(g->zmsg, sizeof g->zmsg, "%s", z.msg);
		break;
	}
	inflateEnd(&z);
out:
	pthread_mutex_lock(&g->mu);
	g->done = 1;
	g->fail = fail;
	g->fail_off = off;
	g->members = members;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

static int gunzip_lines(const char *buf, size_t len, const char *label, splitter *s,
			cs_progress_fn progress, void *pctx, cs_textin_stats *local, char *err,
			size_t errlen)
{
	gzpipe *g = calloc(1, sizeof *g);
	if (!g)
		return -ENOMEM;
	g->buf = buf;
	g->len = len;
	int rc = 0;
	for (unsigned i = 0; i < NBUF; i++)
		if (!(g->chunk[i] = malloc(OUT_CHUNK + 1)))
			rc = -ENOMEM;
	pthread_t th;
	if (rc == 0) {
		pthread_mutex_init(&g->mu, NULL);
		pthread_cond_init(&g->cv, NULL);
		if (pthread_create(&th, NULL, inflater, g) != 0) {
			pthread_mutex_destroy(&g->mu);
			pthread_cond_destroy(&g->cv);
			rc = -EAGAIN;
		}
	}
	if (rc < 0) {
		for (unsigned i = 0; i < NBUF; i++)
			free(g->chunk[i]);
		free(g);
		return rc;
	}
	for (;;) {
		pthread_mutex_lock(&g->mu);
		while (!g->count && !g->done)
			pthread_cond_wait(&g->cv, &g->mu);
		if (!g->count) { /* done, everything handed over */
			pthread_mutex_unlock(&g->mu);
			break;
		}
		unsigned slot = g->head;
		size_t n = g->clen[slot], in = g->cin[slot];
		pthread_mutex_unlock(&g->mu);
		local->text_bytes += n;
		rc = s->chunk ? s->chunk(s->ctx, (const char *)g->chunk[slot], n)
			      : feed(s, (char *)g->chunk[slot], n);
		if (rc == 0 && progress)
			progress(pctx, in, len);
		pthread_mutex_lock(&g->mu);
		g->head = (g->head + 1) % NBUF;
		g->count--;
		if (rc)
			g->stop = 1;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		if (rc)
			break;
	}
	pthread_join(th, NULL);
	local->members = g->members;
	if (rc == 0) {
		/* what was read before the fault: lines, or text bytes */
		char upto[64];
		if (s->chunk)
			snprintf(upto, sizeof upto, "%llu bytes of text",
				 (unsigned long long)local->text_bytes);
		else
			snprintf(upto, sizeof upto, "%llu complete lines", (unsigned long long)s->lineno);
		switch (g->fail) {
		case GZ_JUNK:
			snprintf(err, errlen, "%s: byte %zu: expected another gzip member or the end of "
				 "the file, found other bytes (after %s)", label, g->fail_off, upto);
			rc = -EINVAL;
			break;
		case GZ_TRUNCATED:
			snprintf(err, errlen, "%s: truncated gzip stream: the data ends inside member %u "
				 "at byte %zu (after %s)", label, g->members + 1, len, upto);
			rc = -EINVAL;
			break;
		case GZ_CORRUPT:
			snprintf(err, errlen, "%s: corrupt gzip data near byte %zu (member %u): %s", label,
				 g->fail_off, g->members + 1, g->zmsg[0] ? g->zmsg : "inflate failed");
			rc = -EINVAL;
			break;
		case GZ_NOMEM:
			rc = -ENOMEM;
			break;
		default:
			break;
		}
	}
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
	for (unsigned i = 0; i < NBUF; i++)
		free(g->chunk[i]);
	free(g);
	return rc;
}

int cs_textin_lines(const char *buf, size_t len, const char *label, cs_line_fn fn,
		    void *ctx, cs_progress_fn progress, void *pctx, cs_textin_stats *st,
		    char *err, size_t errlen)
{
	splitter s = {.fn = fn, .ctx = ctx, .label = label, .err = err, .errlen = errlen};
	cs_textin_stats local = {0};
	int rc = 0;
	if (!cs_textin_is_gzip(buf, len)) {
		/* Plain text: lines are cut from a copy in pieces, so the
		 * caller's (possibly read-only, mapped) buffer stays untouched. */
		char *piece = malloc(OUT_CHUNK + 1);
		if (!piece)
			return -ENOMEM;
		for (size_t off = 0; off < len && rc == 0; off += OUT_CHUNK) {
			size_t n = len - off < OUT_CHUNK ? len - off : OUT_CHUNK;
			memcpy(piece, buf + off, n);
			rc = feed(&s, piece, n);
			if (progress)
				progress(pctx, off + n, len);
		}
		if (rc == 0)
			rc = finish(&s);
		free(piece);
		local.text_bytes = len;
		goto out;
	}
	rc = gunzip_lines(buf, len, label, &s, progress, pctx, &local, err, errlen);
	if (rc == 0)
		rc = finish(&s);
out:
	local.lines = s.lineno;
	if (st)
		*st = local;
	free(s.line);
	if (rc == -ENOMEM && err && !err[0])
		snprintf(err, errlen, "%s: out of memory", label);
	return rc;
}

int cs_textin_chunks(const char *buf, size_t len, const char *label, cs_chunk_fn fn,
		     void *ctx, cs_progress_fn progress, void *pctx, char *err, size_t errlen)
{
	if (!cs_textin_is_gzip(buf, len)) {
		int rc = 0;
		for (size_t off = 0; off < len && rc == 0; off += OUT_CHUNK) {
			size_t n = len - off < OUT_CHUNK ? len - off : OUT_CHUNK;
			rc = fn(ctx, buf + off, n);
			if (progress)
				progress(pctx, off + n, len);
		}
		return rc;
	}
	splitter s = {.chunk = fn, .ctx = ctx, .label = label, .err = err, .errlen = errlen};
	cs_textin_stats local = {0};
	int rc = gunzip_lines(buf, len, label, &s, progress, pctx, &local, err, errlen);
	if (rc == -ENOMEM && err && !err[0])
		snprintf(err, errlen, "%s: out of memory", label);
	return rc;
}

size_t cs_textin_peek(const char *buf, size_t len, char *out, size_t outlen)
{
	if (!outlen)
		return 0;
	if (!cs_textin_is_gzip(buf, len)) {
		size_t n = len < outlen - 1 ? len : outlen - 1;
		memcpy(out, buf, n);
		out[n] = '\0';
		return n;
	}
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		out[0] = '\0';
		return 0;
	}
	z.next_in = (unsigned char *)(uintptr_t)buf;
	z.avail_in = (uInt)(len > (1u << 30) ? (1u << 30) : len);
	z.next_out = (unsigned char *)out;
	z.avail_out = (uInt)(outlen - 1);
	size_t n = 0;
	for (;;) {
		int zr = inflate(&z, Z_NO_FLUSH);
		n = outlen - 1 - z.avail_out;
		if (zr == Z_STREAM_END && z.avail_in && z.avail_out) {
			inflateReset(&z);
			continue;
		}
		break;
	}
	inflateEnd(&z);
	out[n] = '\0';
	return n;
}

int cs_textin_gunzip(const char *buf, size_t len, int fd, size_t max, const char *label,
		     char *err, size_t errlen)
{
	size_t total = 0;
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		snprintf(err, errlen, "%s: out of memory", label);
		return -ENOMEM;
	}
	unsigned char out[1 << 16];
	size_t done = 0;
	int rc = 0;
	while (rc == 0) {
		size_t chunk = len - done > (1u << 30) ? (1u << 30) : len - done;
		z.next_in = (unsigned char *)(uintptr_t)(buf + done);
		z.avail_in = (uInt)chunk;
		z.next_out = out;
		z.avail_out = sizeof out;
		int zr = inflate(&z, Z_NO_FLUSH);
		size_t n = sizeof out - z.avail_out;
		done += chunk - z.avail_in;
		if ((total += n) > max) {
			snprintf(err, errlen, "%s: decompresses to more than %zu bytes", label, max);
			rc = -EFBIG;
			break;
		}
		for (size_t w = 0; w < n && rc == 0;) {
			ssize_t k = write(fd, out + w, n - w);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				rc = k < 0 ? -errno : -EIO;
			else
				w += (size_t)k;
		}
		if (rc) {
			snprintf(err, errlen, "%s: writing its decompressed copy: %s", label,
				 strerror(-rc));
			break;
		}
		if (zr == Z_STREAM_END) {
			if (done == len)
				break;
			inflateReset(&z);
		} else if (zr != Z_OK && !(zr == Z_BUF_ERROR && n)) {
			snprintf(err, errlen, "%s: %s gzip stream at byte %zu", label,
				 done == len ? "truncated" : "corrupt", done);
			rc = -EINVAL;
		} else if (done == len && !n) {
			snprintf(err, errlen, "%s: truncated gzip stream at byte %zu", label, done);
			rc = -EINVAL;
		}
	}
	inflateEnd(&z);
	return rc;
}
