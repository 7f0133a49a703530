/*
 * curl_lib.h - libcurl, loaded when first needed (cs_curl): shipping to
 * ClickHouse (ship.c) and the CLI's requests to a daemon (cmd_live.c).
 * Linked, it pulled in about 25 libraries (TLS, Kerberos, LDAP, SSH...)
 * and half of every command's start-up time (6.2 -> 3.1 ms for a program
 * linking what cyclescope links).
 *
 * Threads: cs_curl() is safe from any thread (pthread_once).
 */
#ifndef CS_CURL_LIB_H
#define CS_CURL_LIB_H

#include <curl/curl.h>

typedef struct cs_curl_fns {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_reset)(CURL *);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	char *(*easy_escape)(CURL *, const char *, int);
	void (*free)(void *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	char err[300]; /* why it is not loaded; "" once it is */
} cs_curl_fns;

/* The functions, loaded (and curl_global_init'ed) on the first call;
 * err says why not when it failed. */
const cs_curl_fns *cs_curl(void);

#endif
