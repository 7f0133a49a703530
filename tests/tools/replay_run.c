/*
 * replay_run.c - the collector pipeline end to end without a GPU: the
 * engine fed by replay sources (one per --devices), a few API ranges
 * and windows from an "application" thread, output through the producer
 * to a daemon's socket or a database file, exactly as the injected
 * collector does. Prints the engine's final counters on stdout.
 *
 *   replay_run (--socket PATH | --db FILE) [--devices N] [--mode window]
 *              [--name NAME] [--queue-kb N] [--status FILE] [--close-ms N]
 *              [--no-ranges] [--park] RECORDING
 * The output is the injected collector's own (output.h): opened at the
 * first sample or range, socket sends bounded, left alone (leaked) after
 * a close that timed out. --no-ranges adds no application ranges (a
 * process that did no GPU work, with an empty recording); --park stops
 * device 0 midway as a context teardown would and starts it again. Exits
 * 0, or 3 when the close timed out.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "log.h"
#include "output.h"
#include "replay_source.h"
#include "store.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *grown = realloc(buf, cap *= 2);
			if (!grown) {
				free(buf);
				buf = NULL;
			}
			buf = grown;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

static uint64_t wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *db = NULL, *rec = NULL, *name = "replay", *status = NULL;
	int devices = 1, window = 0, ranges = 1, park = 0;
	unsigned close_ms = 0;
	size_t queue_kb = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			sock = argv[++i];
		else if (!strcmp(argv[i], "--db") && i + 1 < argc)
			db = argv[++i];
		else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
			devices = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--queue-kb") && i + 1 < argc)
			queue_kb = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			window = !strcmp(argv[++i], "window");
		else if (!strcmp(argv[i], "--status") && i + 1 < argc)
			status = argv[++i];
		else if (!strcmp(argv[i], "--close-ms") && i + 1 < argc)
			close_ms = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-ranges"))
			ranges = 0;
		else if (!strcmp(argv[i], "--park"))
			park = 1;
		else
			rec = argv[i];
	}
	if (!rec || (!sock == !db)) {
		fprintf(stderr, "usage: replay_run (--socket PATH | --db FILE) [--devices N] "
				"[--mode window] RECORDING\n");
		return 2;
	}
	size_t len;
	char *text = slurp(rec, &len);
	if (!text) {
		fprintf(stderr, "replay_run: %s: %s\n", rec, strerror(errno));
		return 1;
	}
	/* The metric names come from the recording's "metrics" line. */
	const char *ml = strstr(text, "metrics ");
	if (!ml) {
		fprintf(stderr, "replay_run: %s: no 'metrics' line\n", rec);
		return 1;
	}
	char names[4096];
	snprintf(names, sizeof names, "%.*s", (int)strcspn(ml + 8, "\n"), ml + 8);
	cs_metric_info metrics[64];
	size_t m = 0;
	char *save = NULL;
	for (char *t = strtok_r(names, ",", &save); t && m < 64; t = strtok_r(NULL, ",", &save))
		metrics[m++] = (cs_metric_info){.name = t, .kind = "counter"};

	char err[512];
	cs_out_opts oo = {.db_only = db != NULL, .db = db, .socket = sock,
			  .send_timeout_ms = 2000, .status_path = status,
			  .info = {.kind = "hw", .source = "collector", .name = name,
				   .time_unit = "ns", .cmdline = "replay_run"}};
	cs_out *out = cs_out_new(&oo);
	const char *kv[] = {"replay", "yes", NULL};
	cs_engine_opts o = {.metrics = metrics, .nmetrics = m, .interval_ns = 10000,
			    .buffer_bytes = 64u << 20, .max_samples = 4096,
			    .mode = window ? CS_ENGINE_WINDOW : CS_ENGINE_CONTINUOUS,
			    .queue_bytes = queue_kb << 10, .decode_ms = 1, .close_ms = close_ms,
			    .meta_kv = kv};
	cs_engine *e = out ? cs_engine_new(&o, &cs_out_sink_ops, out, err, sizeof err) : NULL;
	if (!e) {
		fprintf(stderr, "replay_run: %s\n", out ? err : "out of memory");
		return 1;
	}
	for (int d = 0; d < devices; d++) {
		cs_replay_opts ro = {.device = (uint32_t)d, .rebase = window};
		cs_pm_source *src = cs_replay_source_new(&ro, text, len, err, sizeof err);
		if (!src) {
			fprintf(stderr, "replay_run: %s: %s\n", rec, err);
			return 1;
		}
		cs_engine_add_source(e, src, 5000);
	}
	/* What an application's hooked calls would add. */
	for (int i = 0; ranges && i < 100; i++) {
		uint64_t t0 = wall();
		if (window && i == 0)
			cs_engine_window_open(e, "cudaMemcpy", t0);
		cs_range r;
		cs_range_init(&r, "api", i % 2 ? "cudaMemcpy" : "cuLaunchKernel", t0, t0 + 1000);
		r.correlation_id = i;
		r.tid = 1;
		cs_engine_range(e, &r);
		cs_range_init(&r, i % 2 ? "memcpy" : "kernel", i % 2 ? "memcpy HtoD" : "gemm_kernel",
			      t0 + 100, t0 + 900);
		r.correlation_id = i;
		r.device = 0;
		r.bytes = i % 2 ? 1 << 20 : -1;
		cs_engine_range(e, &r);
	}
	if (window) {
		struct timespec ts = {0, 20 * 1000000L};
		nanosleep(&ts, NULL);
		cs_engine_window_close(e, wall());
	}
	if (park) {
		struct timespec ts = {0, 5 * 1000000L};
		nanosleep(&ts, NULL);
		cs_engine_park_device(e, 0, 5000);
		cs_engine_resume_device(e, 0, 5000);
	}
	cs_engine_stats st;
	int rc = cs_engine_close(e, "complete", &st);
	cs_out_finish(out, rc, &st, "no GPU work was replayed");
	if (rc != -ETIMEDOUT)
		cs_engine_free(e);
	free(text);
	printf("samples=%llu dropped=%llu overflows=%llu ranges=%llu ranges_dropped=%llu "
	       "windows=%llu gaps=%llu empty=%llu bad_records=%llu first_skipped=%llu "
	       "run_begun=%d\n",
	       (unsigned long long)st.samples, (unsigned long long)st.dropped,
	       (unsigned long long)st.overflows, (unsigned long long)st.ranges,
	       (unsigned long long)st.ranges_dropped, (unsigned long long)st.windows,
	       (unsigned long long)st.gaps, (unsigned long long)st.empty,
	       (unsigned long long)st.bad_records, (unsigned long long)st.first_skipped,
	       st.run_begun);
	fflush(stdout);
	return rc == -ETIMEDOUT ? 3 : rc < 0 ? 1 : 0;
}
