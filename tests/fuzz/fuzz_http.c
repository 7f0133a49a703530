/* fuzz_http.c - libFuzzer target: the HTTP handlers' parameter parsing,
 * through the functions libmicrohttpd itself calls. The daemon's HTTP side
 * (cs_http_start) serves a small database on a loopback port; each input
 * is one request: its first byte picks an endpoint, the rest is the query
 * string (bytes that would end the request line are %-encoded, so every
 * byte reaches the parameter parsers). The answer must be a well-formed
 * HTTP response with a status other than 500: bad parameters are the
 * client's (4xx), never the server's. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "http.h"
#include "store.h"

static const char *const endpoints[] = {
	"/api/v1/runs",
	"/api/v1/runs/1",
	"/api/v1/runs/1/metrics",
	"/api/v1/runs/1/series.csv",
	"/api/v1/runs/sim1/series.csv",
	"/api/v1/runs/1/ranges.csv",
	"/api/v1/runs/1/phases",
	"/api/v1/runs/1/trace.json",
	"/api/v1/correlate",
	"/report",
	"/api/v1/query",
	"/api/v1/health",
	"/api/v1/runs/2/series.csv",
	"/ui/app.js",
};

static unsigned port;

/* A hardware run (1) and a simulator run (2, "sim1") with two metrics,
 * ranges and 5000 samples each. */
static void make_db(const char *path)
{
	char err[512];
	cs_store *s = cs_store_open(path, CS_OPEN_CREATE, err, sizeof err);
	if (!s) {
		fprintf(stderr, "fuzz_http: %s\n", err);
		abort();
	}
	static const char *const kinds[] = {"hw", "sim"}, *const names[] = {"hw1", "sim1"},
				 *const units[] = {"ns", "cycle"};
	for (int r = 0; r < 2; r++) {
		cs_run_info ri = {.kind = kinds[r], .source = "csv", .name = names[r],
				  .time_unit = units[r], .clock_hz = 1.5e9};
		cs_writer *w = cs_writer_begin(s, &ri, err, sizeof err);
		uint32_t ids[2];
		cs_metric_info m0 = {"lts__t_sectors.sum", "sector", "counter", 0};
		cs_metric_info m1 = {"sm__inst_executed.sum", NULL, "counter", 0};
		if (!w || cs_writer_add_metric(w, &m0, &ids[0]) || cs_writer_add_metric(w, &m1, &ids[1]))
			abort();
		enum { N = 5000 };
		static uint64_t t0[N], t1[N];
		static double v[2 * N];
		for (uint32_t i = 0; i < N; i++) {
			t0[i] = 1000 + 100ull * i;
			t1[i] = t0[i] + 100;
			v[2 * i] = (double)(i % 977);
			v[2 * i + 1] = i % 13 ? (double)i * 0.5 : (double)NAN;
		}
		cs_batch b = {0, 0, N, 2, ids, t0, t1, v};
		if (cs_writer_append(w, &b))
			abort();
		for (int k = 0; k < 20; k++) {
			cs_range rg;
			cs_range_init(&rg, k % 2 ? "kernel" : "nvtx", k % 2 ? "_Z4gemmPfS_i" : "step",
				      t0[k * 200], t0[k * 200 + 150]);
			if (cs_writer_add_range(w, &rg))
				abort();
		}
		if (cs_writer_end(w, "complete", NULL))
			abort();
	}
	cs_store_close(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char dir[] = "/tmp/fuzz_http.XXXXXX";
	if (!mkdtemp(dir))
		abort();
	static char db[64];
	snprintf(db, sizeof db, "%s/f.db", dir);
	make_db(db);
	cs_http_opts o = {.db_path = db, .listen = "127.0.0.1:0", .token = "", .connections = 64,
			  .busy = 2, .timeout_s = 10, .query_timeout_ms = 500,
			  .query_max_rows = 20000, .query_max_bytes = 4u << 20};
	char err[512];
	cs_http *h = cs_http_start(&o, err, sizeof err);
	if (!h) {
		fprintf(stderr, "fuzz_http: %s\n", err);
		abort();
	}
	port = cs_http_port(h);
	return 0; /* the server lives as long as the process */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	static char req[4096 * 3 + 256];
	int n = snprintf(req, sizeof req, "GET %s?", endpoints[data[0] % (sizeof endpoints / sizeof *endpoints)]);
	for (size_t i = 1; i < size; i++) {
		uint8_t c = data[i];
		if (c <= ' ' || c >= 0x7f || c == '#')
			n += snprintf(req + n, sizeof req - (size_t)n, "%%%02X", c);
		else
			req[n++] = (char)c;
	}
	n += snprintf(req + n, sizeof req - (size_t)n, " HTTP/1.0\r\nHost: fuzz\r\n\r\n");
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct timeval tv = {20, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) || send(fd, req, (size_t)n, 0) != n)
		abort();
	char head[16] = "";
	size_t got = 0;
	static char sink[1 << 16];
	for (;;) {
		ssize_t r = recv(fd, sink, sizeof sink, 0);
		if (r < 0) {
			fprintf(stderr, "fuzz_http: no answer within 20 s: %s\n", req);
			abort();
		}
		if (r == 0)
			break;
		if (got < sizeof head - 1) {
			size_t k = (size_t)r < sizeof head - 1 - got ? (size_t)r : sizeof head - 1 - got;
			memcpy(head + got, sink, k);
		}
		got += (size_t)r;
	}
	close(fd);
	/* "HTTP/1.0 200 ..." */
	if (strncmp(head, "HTTP/1.", 7) || head[8] != ' ' || !strncmp(head + 9, "500", 3)) {
		fprintf(stderr, "fuzz_http: answer '%.12s' to: %s\n", head, req);
		abort();
	}
	return 0;
}
