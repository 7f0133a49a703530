/*
 * http_load.c - a closed-loop HTTP load generator for `make bench`:
 * C clients, each on its own thread with a kept-alive libcurl handle,
 * request URL one after another for S seconds (or N requests each).
 *
 *   http_load -c CLIENTS (-s SECONDS | -n REQUESTS) URL
 *
 * Prints one line: requests, failures (not 200), requests/s, latency
 * p50 / p99 / max in ms, and bytes per response.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct client {
	pthread_t th;
	const char *url;
	double until;
	long limit;
	double *lat;
	long n, cap, failed;
	double bytes;
} client;

static size_t sink(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	*(double *)ctx += (double)(size * n);
	return size * n;
}

static void *run(void *arg)
{
	client *c = arg;
	CURL *h = curl_easy_init();
	if (!h)
		return NULL;
	curl_easy_setopt(h, CURLOPT_URL, c->url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &c->bytes);
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	while ((c->limit ? c->n < c->limit : now_s() < c->until)) {
		double t = now_s();
		CURLcode rc = curl_easy_perform(h);
		long code = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (rc != CURLE_OK || code != 200)
			c->failed++;
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 1024;
			double *nl = realloc(c->lat, (size_t)c->cap * sizeof *nl);
			if (!nl)
				break;
			c->lat = nl;
		}
		c->lat[c->n++] = now_s() - t;
	}
	curl_easy_cleanup(h);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int clients = 1;
	double secs = 0;
	long reqs = 0;
	const char *url = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-c") && i + 1 < argc)
			clients = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			reqs = atol(argv[++i]);
		else
			url = argv[i];
	}
	if (!url || clients < 1 || clients > 256 || (secs <= 0 && reqs <= 0)) {
		fprintf(stderr, "usage: http_load -c CLIENTS (-s SECONDS | -n REQUESTS) URL\n");
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	client *cs = calloc((size_t)clients, sizeof *cs);
	if (!cs)
		return 1;
	double t0 = now_s();
	for (int i = 0; i < clients; i++) {
		cs[i] = (client){.url = url, .until = t0 + secs, .limit = reqs};
		pthread_create(&cs[i].th, NULL, run, &cs[i]);
	}
	long n = 0, failed = 0;
	double bytes = 0;
	for (int i = 0; i < clients; i++) {
		pthread_join(cs[i].th, NULL);
		n += cs[i].n;
		failed += cs[i].failed;
		bytes += cs[i].bytes;
	}
	double el = now_s() - t0;
	double *all = malloc((size_t)(n ? n : 1) * sizeof *all);
	long k = 0;
	for (int i = 0; i < clients && all; i++) {
		memcpy(all + k, cs[i].lat, (size_t)cs[i].n * sizeof *all);
		k += cs[i].n;
		free(cs[i].lat);
	}
	if (!all || !n) {
		printf("requests 0 failed %ld\n", failed);
		return 1;
	}
	qsort(all, (size_t)n, sizeof *all, cmp);
	printf("requests %ld failed %ld rate %.1f p50 %.1f p99 %.1f max %.1f bytes %.0f\n", n, failed,
	       (double)n / el, all[n / 2] * 1e3, all[(long)((double)n * 0.99)] * 1e3,
	       all[n - 1] * 1e3, bytes / (double)n);
	free(all);
	free(cs);
	curl_global_cleanup();
	return failed ? 1 : 0;
}
