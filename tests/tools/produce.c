/*
 * produce.c - a test producer: streams one synthetic run to a daemon (or a
 * database) through cs_producer, the same client importers use, and writes
 * the CSV the daemon should give back. Used by tests/daemon.sh and the
 * ingest benchmark.
 *
 *   produce --socket P | --db F  [--name N] [--samples S] [--metrics M]
 *           [--devices D] [--batch B] [--batch-ms MS] [--ranges] [--stall-after K]
 *           [--expect FILE] [--garbage]
 *
 * Sample i of device d: t0 = 1000 + 10 i, t1 = t0 + 9; metric k has value
 * (i * (k + 1) + d * 7) % 100003, absent when (i + k) % 97 == 0. With
 * --ranges: for every i % 1000 == 0, a range "cudaMemcpy" over samples
 * i..i+99 and "gemm_kernel" over i+200..i+699. --stall-after K sends K
 * samples and then sleeps (to be killed). --batch-ms MS sends each batch
 * and waits MS ms before the next: a run that grows while it is followed.
 * --garbage sends HELLO and then a
 * malformed frame.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "csv.h"
#include "producer.h"
#include "wire.h"

static int file_sink(void *ctx, const void *p, size_t n)
{
	return fwrite(p, 1, n, ctx) == n ? 0 : -EIO;
}

static double value(uint64_t i, uint32_t k, uint32_t d)
{
	if ((i + k) % 97 == 0)
		return NAN;
	return (double)((i * (k + 1) + d * 7) % 100003);
}

static int garbage(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&a, sizeof a))
		return 1;
	cs_buf b = CS_BUF_INIT;
	cs_wire_msg m = {.type = CS_WIRE_HELLO};
	m.u.hello = (cs_wire_hello){(uint32_t)getpid(), "garbage", "produce --garbage", "test"};
	cs_wire_encode(&b, &m);
	static const uint8_t bad[12] = {'C', 'S', 'C', 'P', 1, 5, 0, 0, 3, 0, 0, 0};
	cs_buf_append(&b, bad, sizeof bad);
	cs_buf_append(&b, "xyz", 3);
	if (write(fd, b.data, b.len) != (ssize_t)b.len)
		return 1;
	char c;
	ssize_t n = read(fd, &c, 1); /* the daemon closes on us */
	close(fd);
	cs_buf_free(&b);
	return n == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *db = NULL, *name = "produced", *expect = NULL;
	uint64_t samples = 10000, stall = 0, batch_ms = 0;
	uint32_t m = 4, devices = 1, batch = 1000;
	int ranges = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
		if (!strcmp(a, "--socket"))
			sock = v, i++;
		else if (!strcmp(a, "--db"))
			db = v, i++;
		else if (!strcmp(a, "--name"))
			name = v, i++;
		else if (!strcmp(a, "--samples"))
			samples = strtoull(v, NULL, 10), i++;
		else if (!strcmp(a, "--metrics"))
			m = (uint32_t)strtoul(v, NULL, 10), i++;
		else if (!strcmp(a, "--devices"))
			devices = (uint32_t)strtoul(v, NULL, 10), i++;
		else if (!strcmp(a, "--batch"))
			batch = (uint32_t)strtoul(v, NULL, 10), i++;
		else if (!strcmp(a, "--batch-ms"))
			batch_ms = strtoull(v, NULL, 10), i++;
		else if (!strcmp(a, "--stall-after"))
			stall = strtoull(v, NULL, 10), i++;
		else if (!strcmp(a, "--expect"))
			expect = v, i++;
		else if (!strcmp(a, "--ranges"))
			ranges = 1;
		else if (!strcmp(a, "--garbage"))
			bad = 1;
		else {
			fprintf(stderr, "produce: unknown argument %s\n", a);
			return 2;
		}
	}
	if (bad)
		return garbage(sock);
	char err[512];
	cs_store *s = NULL;
	cs_producer *p;
	if (sock) {
		p = cs_producer_socket(sock, err, sizeof err);
	} else {
		s = cs_store_open(db, CS_OPEN_CREATE, err, sizeof err);
		p = s ? cs_producer_direct(s) : NULL;
	}
	if (!p) {
		fprintf(stderr, "produce: %s\n", err);
		return 1;
	}
	cs_run_info info = {.kind = "hw", .source = "test-producer", .name = name, .time_unit = "ns",
			    .meta = "{\"chip\":\"GH100\"}"};
	if (cs_producer_begin(p, &info))
		goto fail;
	for (uint32_t d = 0; d < devices; d++) {
		cs_device_info di = {.index = d, .name = "NVIDIA H200", .chip = "GH100", .sm_count = 132,
				     .clock_hz = 1.98e9};
		if (cs_producer_add_device(p, &di))
			goto fail;
	}
	uint32_t *ids = malloc(m * sizeof *ids);
	for (uint32_t k = 0; k < m; k++) {
		char mn[64];
		snprintf(mn, sizeof mn, k == 0 ? "lts__t_sectors.sum" : "metric_%u.sum", k);
		cs_metric_info mi = {.name = mn, .unit = "sector"};
		if (cs_producer_add_metric(p, &mi, &ids[k]))
			goto fail;
	}
	FILE *ef = expect ? fopen(expect, "w") : NULL;
	cs_csv w;
	if (ef) {
		cs_csv_init(&w, file_sink, ef);
		if (devices > 1)
			cs_csv_str(&w, "device");
		cs_csv_str(&w, "t0");
		cs_csv_str(&w, "t1");
		for (uint32_t k = 0; k < m; k++) {
			char mn[64];
			snprintf(mn, sizeof mn, k == 0 ? "lts__t_sectors.sum" : "metric_%u.sum", k);
			cs_csv_str(&w, mn);
		}
		cs_csv_end_row(&w);
	}
	uint64_t *t0 = malloc(batch * sizeof *t0), *t1 = malloc(batch * sizeof *t1);
	double *v = malloc((size_t)batch * m * sizeof *v);
	for (uint32_t d = 0; d < devices; d++) {
		for (uint64_t i = 0; i < samples; i += batch) {
			uint32_t n = samples - i < batch ? (uint32_t)(samples - i) : batch;
			for (uint32_t j = 0; j < n; j++) {
				t0[j] = 1000 + 10 * (i + j);
				t1[j] = t0[j] + 9;
				for (uint32_t k = 0; k < m; k++)
					v[(size_t)j * m + k] = value(i + j, k, d);
				if (ef) {
					if (devices > 1)
						cs_csv_u64(&w, d);
					cs_csv_u64(&w, t0[j]);
					cs_csv_u64(&w, t1[j]);
					for (uint32_t k = 0; k < m; k++)
						cs_csv_f64(&w, v[(size_t)j * m + k]);
					cs_csv_end_row(&w);
				}
			}
			cs_batch b = {d, i, n, m, ids, t0, t1, v};
			if (cs_producer_append(p, &b))
				goto fail;
			if (batch_ms) {
				if (cs_producer_flush(p))
					goto fail;
				struct timespec ts = {(time_t)(batch_ms / 1000), (long)(batch_ms % 1000) * 1000000L};
				nanosleep(&ts, NULL);
			}
			if (stall && i + n >= stall) {
				fprintf(stderr, "produce: stalled after %llu samples\n",
					(unsigned long long)(i + n));
				if (cs_producer_flush(p))
					goto fail;
				for (;;) /* until killed */
					pause();
			}
		}
	}
	if (ranges) {
		for (uint64_t i = 0; i + 700 <= samples; i += 1000) {
			cs_range r;
			cs_range_init(&r, "memcpy", "cudaMemcpy", 1000 + 10 * i, 1000 + 10 * (i + 99) + 9);
			r.bytes = 1 << 20;
			if (cs_producer_add_range(p, &r))
				goto fail;
			cs_range_init(&r, "kernel", "gemm_kernel", 1000 + 10 * (i + 200),
				      1000 + 10 * (i + 699) + 9);
			r.device = 0;
			if (cs_producer_add_range(p, &r))
				goto fail;
		}
	}
	if (ef) {
		cs_csv_finish(&w);
		fclose(ef);
	}
	cs_run_counters c = {3, 1, 0, 0};
	if (cs_producer_end(p, "complete", &c))
		goto fail;
	printf("%s\n", cs_producer_run_label(p));
	cs_producer_free(p);
	cs_store_close(s);
	free(ids);
	free(t0);
	free(t1);
	free(v);
	return 0;
fail:
	fprintf(stderr, "produce: %s\n", cs_producer_errmsg(p));
	return 1;
}
