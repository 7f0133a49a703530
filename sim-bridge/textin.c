/*
 * textin.c - plain or multi-member gzip text, line by line (textin.h).
 */
#include "textin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	unsigned char *out = malloc(OUT_CHUNK + 1);
	if (!out)
		return -ENOMEM;
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		free(out);
		snprintf(err, errlen, "%s: cannot start zlib", label);
		return -ENOMEM;
	}
	size_t off = 0;
	int in_member = 1;
	while (rc == 0) {
		size_t chunk = len - off > (1u << 30) ? (1u << 30) : len - off;
		z.next_in = (unsigned char *)(uintptr_t)(buf + off);
		z.avail_in = (uInt)chunk;
		z.next_out = out;
		z.avail_out = OUT_CHUNK;
		int zr = inflate(&z, Z_NO_FLUSH);
		size_t used = chunk - z.avail_in;
		off += used;
		size_t produced = OUT_CHUNK - z.avail_out;
		local.text_bytes += produced;
		if (produced && (rc = feed(&s, (char *)out, produced)) != 0)
			break;
		if (progress)
			progress(pctx, off, len);
		if (zr == Z_STREAM_END) {
			local.members++;
			/* Another member may follow (one per GPGPU-Sim sample). */
			while (off < len && buf[off] == 0) /* padding some tools add */
				off++;
			if (off >= len)
				break;
			if (!cs_textin_is_gzip(buf + off, len - off)) {
				snprintf(err, errlen, "%s: byte %zu: expected another gzip member or the "
					 "end of the file, found other bytes (after %llu lines)", label, off,
					 (unsigned long long)s.lineno);
				rc = -EINVAL;
				break;
			}
			inflateReset(&z);
			in_member = 1;
			continue;
		}
		if (zr == Z_OK || (zr == Z_BUF_ERROR && produced))
			continue;
		if (zr == Z_BUF_ERROR && off >= len && in_member) {
			snprintf(err, errlen, "%s: truncated gzip stream: the data ends inside member "
				 "%u at byte %zu (after %llu complete lines)", label, local.members + 1,
				 len, (unsigned long long)s.lineno);
			rc = -EINVAL;
			break;
		}
		snprintf(err, errlen, "%s: corrupt gzip data near byte %zu (member %u): %s", label, off,
			 local.members + 1, z.msg ? z.msg : "inflate failed");
		rc = -EINVAL;
	}
	inflateEnd(&z);
	free(out);
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
