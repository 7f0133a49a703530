/* config.c - daemon settings; see config.h. */
#include "config.h"
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "producer.h"
#include "text.h"

enum kind { STR, U64 };

typedef struct key {
	const char *name;
	enum kind kind;
	size_t offset;
	size_t size;       /* STR: buffer size */
	uint64_t min, max; /* U64 */
} key;

#define S(n, f) {n, STR, offsetof(cs_config, f), sizeof(((cs_config *)0)->f), 0, 0}
#define U(n, f, lo, hi) {n, U64, offsetof(cs_config, f), 0, lo, hi}

static const key keys[] = {
	S("db", db),
	S("listen", listen),
	S("socket", socket),
	S("token", token),
	S("http_hosts", http_hosts),
	S("log", log),
	S("log_level", log_level),
	U("queue_mb", queue_mb, 1, 65536),
	U("commit_ms", commit_ms, 1, 60000),
	U("commit_values", commit_values, 1000, 1000000000),
	U("partial_flush_ms", partial_flush_ms, 1, 3600000),
	U("live_flush_ms", live_flush_ms, 10, 3600000),
	U("read_only", read_only, 0, 1),
	U("max_connections", max_connections, 1, 10000),
	U("idle_producer_ms", idle_producer_ms, 0, 86400000),
	U("http_connections", http_connections, 1, 10000),
	U("http_busy", http_busy, 1, 1024),
	U("http_timeout_s", http_timeout_s, 1, 3600),
	U("http_header_timeout_s", http_header_timeout_s, 1, 3600),
	U("http_per_ip_connections", http_per_ip_connections, 1, 10000),
	U("query_timeout_ms", query_timeout_ms, 1, 3600000),
	U("query_max_rows", query_max_rows, 1, 1000000000),
	U("query_max_bytes", query_max_bytes, 1024, 1ull << 34),
	S("sink.clickhouse.url", ch.url),
	S("sink.clickhouse.database", ch.database),
	S("sink.clickhouse.table_prefix", ch.table_prefix),
	S("sink.clickhouse.host", ch.host),
	S("sink.clickhouse.cluster", ch.cluster),
	S("sink.clickhouse.user", ch.user),
	S("sink.clickhouse.password", ch.password),
	U("sink.clickhouse.batch_rows", ch.batch_rows, 1, 100000000),
	U("sink.clickhouse.interval_ms", ch.interval_ms, 10, 3600000),
	U("sink.clickhouse.timeout_s", ch.timeout_s, 1, 3600),
};

void cs_config_defaults(cs_config *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->db, sizeof c->db, "cyclescope.db");
	snprintf(c->listen, sizeof c->listen, "127.0.0.1:7070");
	cs_producer_default_socket(c->socket, sizeof c->socket);
	snprintf(c->log_level, sizeof c->log_level, "info");
	c->queue_mb = 256;
	c->commit_ms = 50;
	c->commit_values = 4u << 20;
	c->partial_flush_ms = 1000;
	c->live_flush_ms = 100;
	c->max_connections = 256;
	c->idle_producer_ms = 10000;
	c->http_connections = 64;
	c->http_busy = 2;
	c->http_timeout_s = 60;
	c->http_header_timeout_s = 10;
	c->http_per_ip_connections = 32;
	c->query_timeout_ms = 10000;
	c->query_max_rows = 1000000;
	c->query_max_bytes = 64u << 20;
	snprintf(c->ch.database, sizeof c->ch.database, "cyclescope");
	c->ch.batch_rows = 1000000;
	c->ch.interval_ms = 1000;
	c->ch.timeout_s = 60;
}

int cs_config_set(cs_config *c, const char *name, const char *value, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		const key *k = &keys[i];
		if (strcmp(k->name, name))
			continue;
		char *field = (char *)c + k->offset;
		if (k->kind == STR) {
			if (strlen(value) >= k->size) {
				snprintf(err, errlen, "%s: value longer than %zu bytes", name,
					 k->size - 1);
				return -EINVAL;
			}
			memcpy(field, value, strlen(value) + 1);
			if (!strcmp(name, "log_level") && strcmp(value, "error") &&
			    strcmp(value, "warning") && strcmp(value, "info") && strcmp(value, "debug")) {
				snprintf(err, errlen, "log_level: '%s' is not error, warning, info or debug",
					 value);
				return -EINVAL;
			}
			return 0;
		}
		uint64_t v;
		if (cs_parse_u64(value, &v) || v < k->min || v > k->max) {
			snprintf(err, errlen, "%s: expected an integer %llu..%llu, got '%s'", name,
				 (unsigned long long)k->min, (unsigned long long)k->max, value);
			return -EINVAL;
		}
		memcpy(field, &(uint64_t){v}, sizeof(uint64_t));
		return 0;
	}
	snprintf(err, errlen, "unknown key '%s'", name);
	return -EINVAL;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

int cs_config_parse(cs_config *c, const char *buf, size_t len, const char *label, char *err,
		    size_t errlen)
{
	char section[64] = "";
	size_t off = 0;
	for (unsigned line = 1; off < len; line++) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - (buf + off)) : len - off;
		char text[1024];
		if (l >= sizeof text) {
			snprintf(err, errlen, "%s:%u: line longer than %zu bytes", label, line,
				 sizeof text - 1);
			return -EINVAL;
		}
		memcpy(text, buf + off, l);
		text[l] = 0;
		off += l + (nl ? 1 : 0);
		/* A '#' starts a comment, except inside a quoted value. */
		char *eq = strchr(text, '=');
		char *hash = strchr(text, '#');
		if (hash && (!eq || hash < eq)) {
			*hash = 0;
			eq = NULL;
		}
		char *t = trim(text);
		if (!*t)
			continue;
		if (*t == '[') {
			char *close = strchr(t, ']');
			if (!close || close[1] || close - t - 1 >= (long)sizeof section ||
			    close == t + 1) {
				snprintf(err, errlen, "%s:%u: expected [section]", label, line);
				return -EINVAL;
			}
			*close = 0;
			snprintf(section, sizeof section, "%s", t + 1);
			continue;
		}
		if (!eq) {
			snprintf(err, errlen, "%s:%u: expected key = value", label, line);
			return -EINVAL;
		}
		*eq = 0;
		char *k = trim(t), *v = eq + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v == '"') {
			/* "..." with \" and \\; then only a comment may follow */
			char *out = v, *in = v + 1;
			while (*in && *in != '"') {
				if (*in == '\\' && (in[1] == '"' || in[1] == '\\'))
					in++;
				*out++ = *in++;
			}
			if (*in != '"') {
				snprintf(err, errlen, "%s:%u: the quoted value of '%s' has no closing "
					 "quote", label, line, k);
				return -EINVAL;
			}
			*out = 0;
			for (in++; *in == ' ' || *in == '\t' || *in == '\r'; in++)
				;
			if (*in && *in != '#') {
				snprintf(err, errlen, "%s:%u: expected the end of the line or a "
					 "# comment after the quoted value of '%s'", label, line, k);
				return -EINVAL;
			}
		} else {
			char *cm = strchr(v, '#');
			if (cm)
				*cm = 0;
			v = trim(v);
		}
		long bad = cs_utf8_bad(v, strlen(v));
		if (bad >= 0) {
			snprintf(err, errlen, "%s:%u: the value of '%s' is not UTF-8 (byte 0x%02x at "
				 "its offset %ld)", label, line, k, (unsigned char)v[bad], bad);
			return -EINVAL;
		}
		char name[128], why[600];
		snprintf(name, sizeof name, "%s%s%s", section, *section ? "." : "", k);
		if (cs_config_set(c, name, v, why, sizeof why)) {
			snprintf(err, errlen, "%s:%u: %s", label, line, why);
			return -EINVAL;
		}
	}
	return 0;
}

int cs_config_from_env(cs_config *c, char *err, size_t errlen)
{
	static const char *const env[][2] = {{"CYCLESCOPE_DB", "db"},
					     {"CYCLESCOPE_LISTEN", "listen"},
					     {"CYCLESCOPE_SOCKET", "socket"},
					     {"CYCLESCOPE_TOKEN", "token"},
					     {"CYCLESCOPE_LOG", "log_level"}};
	for (size_t i = 0; i < sizeof env / sizeof *env; i++) {
		const char *v = getenv(env[i][0]);
		char why[600];
		if (v && *v && cs_config_set(c, env[i][1], v, why, sizeof why)) {
			snprintf(err, errlen, "$%s: %s", env[i][0], why);
			return -EINVAL;
		}
	}
	return 0;
}

int cs_config_is_loopback(const char *listen)
{
	if (!strncmp(listen, "127.", 4) || !strncmp(listen, "localhost:", 10) ||
	    !strncmp(listen, "[::1]:", 6))
		return 1;
	return 0;
}
