/*
 * patterns.c - glob lists and the callback-name suffix rule (patterns.h).
 */
#include "patterns.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAT_MAX_ITEM 255

struct cs_pat {
	size_t n;
	char **items;
};

static int check_brackets(const char *s)
{
	for (const char *c = s; *c; c++) {
		if (*c != '[')
			continue;
		const char *close = strchr(c + 1, ']');
		if (!close)
			return -1;
		c = close;
	}
	return 0;
}

cs_pat *cs_pat_parse(const char *text, char *err, size_t errlen)
{
	cs_pat *p = calloc(1, sizeof *p);
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	const char *s = text ? text : "";
	while (*s) {
		const char *end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		const char *a = s, *b = end;
		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		size_t len = (size_t)(b - a);
		if (len > PAT_MAX_ITEM) {
			snprintf(err, errlen, "pattern '%.40s...' is %zu bytes long; at most %d",
				 a, len, PAT_MAX_ITEM);
			goto fail;
		}
		if (len) {
			char **grown = realloc(p->items, (p->n + 1) * sizeof *grown);
			if (!grown)
				goto nomem;
			p->items = grown;
			char *item = malloc(len + 1);
			if (!item)
				goto nomem;
			memcpy(item, a, len);
			item[len] = '\0';
			p->items[p->n++] = item;
			if (check_brackets(item) < 0) {
				snprintf(err, errlen, "pattern '%s': '[' without a closing ']'", item);
				goto fail;
			}
		}
		s = *end ? end + 1 : end;
	}
	return p;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	cs_pat_free(p);
	return NULL;
}

void cs_pat_free(cs_pat *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->items[i]);
	free(p->items);
	free(p);
}

size_t cs_pat_count(const cs_pat *p)
{
	return p ? p->n : 0;
}

const char *cs_pat_item(const cs_pat *p, size_t i)
{
	return p && i < p->n ? p->items[i] : NULL;
}

int cs_pat_match(const cs_pat *p, const char *name)
{
	if (!p || !name)
		return -1;
	for (size_t i = 0; i < p->n; i++)
		if (fnmatch(p->items[i], name, 0) == 0)
			return (int)i;
	return -1;
}

/* Length of name once one suffix is removed from its end, or len when it
 * ends in none. */
static size_t strip_one(const char *name, size_t len)
{
	static const char *const fixed[] = {"_ptsz", "_ptds"};
	for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++) {
		size_t fl = strlen(fixed[k]);
		if (len > fl && !memcmp(name + len - fl, fixed[k], fl))
			return len - fl;
	}
	size_t d = len;
	while (d > 0 && isdigit((unsigned char)name[d - 1]))
		d--;
	if (d < len && d >= 3 && name[d - 1] == 'v' && name[d - 2] == '_')
		return d - 2;
	return len;
}

char *cs_pat_base_name(const char *name, char *out, size_t outlen)
{
	if (!outlen)
		return out;
	/* CUDA 13's <<<>>> launches go through __cudaLaunchKernel_v13000:
	 * leading underscores are not part of the name users write. */
	if (name[0] == '_' && name[1] == '_')
		while (name[0] == '_' && name[1])
			name++;
	size_t len = strlen(name);
	for (;;) {
		size_t shorter = strip_one(name, len);
		if (shorter == len)
			break;
		len = shorter;
	}
	if (len >= outlen)
		len = outlen - 1;
	memcpy(out, name, len);
	out[len] = '\0';
	return out;
}

int cs_pat_match_callback(const cs_pat *p, const char *name)
{
	char base[PAT_MAX_ITEM + 1];
	cs_pat_base_name(name, base, sizeof base);
	int i = cs_pat_match(p, base);
	return i >= 0 ? i : cs_pat_match(p, name);
}

enum cs_api_class cs_pat_api_class(const char *base)
{
	static const char *const sync_points[] = {
		"cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
		"cudaEventSynchronize", "cuCtxSynchronize", "cuStreamSynchronize",
		"cuEventSynchronize", "cudaDeviceReset",
	};
	for (size_t i = 0; i < sizeof sync_points / sizeof *sync_points; i++)
		if (!strcmp(base, sync_points[i]))
			return CS_API_SYNC_POINT;
	if (strstr(base, "Async") || strstr(base, "Launch") || strstr(base, "Memset"))
		return CS_API_ASYNC;
	/* Plain copies wait for the stream's earlier work and their own. */
	if (!strncmp(base, "cudaMemcpy", 10) || !strncmp(base, "cuMemcpy", 8))
		return CS_API_SYNC_POINT;
	return CS_API_SYNC;
}

static int is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

char **cs_words(const char *text, size_t *n)
{
	size_t len = strlen(text), count = 0;
	for (size_t i = 0; i < len; i++)
		count += !is_sep(text[i]) && (i == 0 || is_sep(text[i - 1]));
	char **out = malloc((count + 1) * sizeof *out + len + 1);
	if (!out)
		return NULL;
	char *copy = (char *)(out + count + 1);
	memcpy(copy, text, len + 1);
	size_t k = 0;
	for (size_t i = 0; i < len; i++) {
		if (is_sep(copy[i])) {
			copy[i] = '\0';
			continue;
		}
		if (i == 0 || copy[i - 1] == '\0')
			out[k++] = copy + i;
	}
	out[k] = NULL;
	*n = k;
	return out;
}
