/*
 * config.h - the daemon's settings (cs_config_*): defaults, then the config
 * file, then the environment, then command-line flags, each overriding the
 * one before. The file is "key = value" lines with # comments and optional
 * [section] headers (keys in a section are "section.key"); every key is in
 * one table, and an unknown key or a bad value is an error that names the
 * file and line. configs/cyclescope.conf documents every key.
 */
#ifndef CS_CONFIG_H
#define CS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_config {
	char db[512];
	char listen[128];  /* host:port */
	char socket[512];
	char token[256];   /* required when listen is not loopback */
	char http_hosts[512]; /* names the daemon is reached by, besides its own */
	char log[512];     /* "" = stderr */
	char log_level[16];
	uint64_t queue_mb;         /* bounded ingest queue */
	uint64_t commit_ms;        /* commit at least this often while ingesting */
	uint64_t commit_values;    /* ... or after this many values */
	uint64_t partial_flush_ms; /* write partially filled chunks this often */
	uint64_t live_flush_ms;    /* ... and this often while a run is followed */
	uint64_t read_only;        /* 1: HTTP refuses commands and deletions */
	uint64_t max_connections;  /* ingest connections */
	uint64_t idle_producer_ms; /* when full, one that began nothing goes */
	uint64_t http_connections;
	uint64_t http_busy;
	uint64_t http_timeout_s;
	uint64_t http_header_timeout_s;
	uint64_t http_per_ip_connections;
	uint64_t query_timeout_ms;
	uint64_t query_max_rows;
	uint64_t query_max_bytes;
	/* [sink.clickhouse]: ship everything committed to ClickHouse (ship.h);
	 * off while url is "". */
	struct {
		char url[512];
		char database[128];
		char table_prefix[128];
		char host[256];    /* "" = this machine's hostname */
		char cluster[128]; /* "" = no Distributed tables */
		char user[128];
		char password[256];
		uint64_t batch_rows;
		uint64_t interval_ms;
		uint64_t timeout_s;
	} ch;
} cs_config;

/* Fills c with the defaults. */
void cs_config_defaults(cs_config *c);

/* Applies the text of a config file (buf[0..len), label for messages).
 * Returns 0 or -EINVAL with "FILE:LINE: reason" in err. */
int cs_config_parse(cs_config *c, const char *buf, size_t len, const char *label,
		    char *err, size_t errlen);

/* Sets one key (as the file would); -EINVAL with the reason in err. */
int cs_config_set(cs_config *c, const char *key, const char *value, char *err,
		  size_t errlen);

/* Applies CYCLESCOPE_DB, CYCLESCOPE_LISTEN, CYCLESCOPE_SOCKET,
 * CYCLESCOPE_TOKEN and CYCLESCOPE_LOG when set. */
int cs_config_from_env(cs_config *c, char *err, size_t errlen);

/* 1 when host:port names a loopback address (127.0.0.0/8, ::1, localhost). */
int cs_config_is_loopback(const char *listen);

#endif
