/*
 * pm_eval.c - evaluates a PM-sampling recording again without a GPU,
 * through CUPTI's own host API and nothing of cyclescope's: the
 * counter-data images a collector saved with CYCLESCOPE_SAVE_IMAGES on
 * a GPU, their index (chip, metrics, each sample's timestamps), and the
 * config image, which is built anew here and compared byte for byte.
 *
 *   pm_eval DIR [DEVICE]
 *
 * Prints `config same|differs`, then one CSV row per sample of every
 * image: pass,sample,t0,t1,<metric>... (the header names the metrics),
 * values with 17 significant digits. Exit status 0, 1 on any failure
 * (one line on stderr naming the file and the call).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_result.h>

#define MAX_METRICS 64

static char chip[64];
static size_t image_size; /* the index's counter_data_size: every image's length */
static char *names[MAX_METRICS];
static size_t nnames;

static int die(const char *what, const char *where, CUptiResult rc)
{
	const char *s = "";
	cuptiGetResultString(rc, &s);
	fprintf(stderr, "pm_eval: %s: %s (%s, code %d)\n", where, what, s, (int)rc);
	return 1;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = b ? (size_t)n : 0;
	return b;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: pm_eval DIR [DEVICE]\n");
		return 2;
	}
	const char *dir = argv[1];
	unsigned dev = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
	char path[4096], line[1024];
	snprintf(path, sizeof path, "%s/index-dev%u.txt", dir, dev);
	FILE *ix = fopen(path, "r");
	if (!ix) {
		fprintf(stderr, "pm_eval: %s: cannot open\n", path);
		return 1;
	}
	/* the header: chip, metrics */
	while (fgets(line, sizeof line, ix) && strncmp(line, "pass ", 5)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "counter_data_size ", 18))
			image_size = (size_t)strtoull(line + 18, NULL, 10);
		if (!strncmp(line, "chip ", 5))
			snprintf(chip, sizeof chip, "%.63s", line + 5);
		if (!strncmp(line, "metrics ", 8))
			for (char *t = strtok(line + 8, " "); t && nnames < MAX_METRICS; t = strtok(NULL, " "))
				names[nnames++] = strdup(t);
	}
	if (!chip[0] || !nnames || !image_size) {
		fprintf(stderr, "pm_eval: %s: no chip, counter_data_size or metrics line\n", path);
		return 1;
	}

	CUpti_Profiler_Host_Initialize_Params hi = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	hi.pChipName = chip;
	CUptiResult rc = cuptiProfilerHostInitialize(&hi);
	if (rc != CUPTI_SUCCESS)
		return die("cuptiProfilerHostInitialize", chip, rc);
	CUpti_Profiler_Host_Object *host = hi.pHostObject;
	CUpti_Profiler_Host_ConfigAddMetrics_Params am = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	am.pHostObject = host;
	am.ppMetricNames = (const char **)names;
	am.numMetrics = nnames;
	if ((rc = cuptiProfilerHostConfigAddMetrics(&am)) != CUPTI_SUCCESS)
		return die("cuptiProfilerHostConfigAddMetrics", chip, rc);
	CUpti_Profiler_Host_GetConfigImageSize_Params gs = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
	gs.pHostObject = host;
	if ((rc = cuptiProfilerHostGetConfigImageSize(&gs)) != CUPTI_SUCCESS)
		return die("cuptiProfilerHostGetConfigImageSize", chip, rc);
	uint8_t *cfg = malloc(gs.configImageSize);
	CUpti_Profiler_Host_GetConfigImage_Params gi = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
	gi.pHostObject = host;
	gi.configImageSize = gs.configImageSize;
	gi.pConfigImage = cfg;
	if (!cfg || (rc = cuptiProfilerHostGetConfigImage(&gi)) != CUPTI_SUCCESS)
		return die("cuptiProfilerHostGetConfigImage", chip, rc);
	size_t saved_len;
	snprintf(path, sizeof path, "%s/config-dev%u.bin", dir, dev);
	uint8_t *saved = slurp(path, &saved_len);
	printf("config %s\n", saved && saved_len == gs.configImageSize &&
			      !memcmp(saved, cfg, saved_len) ? "same" : "differs");

	printf("pass,sample,t0,t1");
	for (size_t k = 0; k < nnames; k++)
		printf(",%s", names[k]);
	printf("\n");
	double *v = calloc(nnames, sizeof *v);
	unsigned cur = 0;
	uint8_t *img = NULL;
	size_t img_len = 0;
	int fails = 0;
	/* the index's sample lines, in pass order */
	do {
		unsigned pass;
		size_t idx;
		unsigned long long t0, t1;
		if (sscanf(line, "pass %u sample %zu %llu %llu", &pass, &idx, &t0, &t1) != 4)
			continue;
		if (pass != cur) {
			free(img);
			snprintf(path, sizeof path, "%s/counterdata-dev%u-%04u.bin", dir, dev, pass);
			img = slurp(path, &img_len);
			cur = pass;
			if (!img) {
				fprintf(stderr, "pm_eval: %s: cannot read\n", path);
				fails++;
				continue;
			}
			/* CUPTI reads an image as long as its header says: a cut
			 * one is refused here, not read past its end */
			if (img_len != image_size) {
				fprintf(stderr, "pm_eval: %s: %zu bytes, the index says %zu\n", path,
					img_len, image_size);
				free(img);
				img = NULL;
				fails++;
				continue;
			}
			CUpti_PmSampling_GetCounterDataInfo_Params di = {
				CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
			di.pCounterDataImage = img;
			di.counterDataImageSize = img_len;
			if ((rc = cuptiPmSamplingGetCounterDataInfo(&di)) != CUPTI_SUCCESS) {
				fails += die("cuptiPmSamplingGetCounterDataInfo", path, rc);
				free(img);
				img = NULL;
				continue;
			}
			fprintf(stderr, "pm_eval: %s: %zu completed samples\n", path,
				(size_t)di.numCompletedSamples);
		}
		if (!img)
			continue;
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
		ev.pHostObject = host;
		ev.pCounterDataImage = img;
		ev.counterDataImageSize = img_len;
		ev.rangeIndex = idx;
		ev.ppMetricNames = (const char **)names;
		ev.numMetrics = nnames;
		ev.pMetricValues = v;
		if ((rc = cuptiProfilerHostEvaluateToGpuValues(&ev)) != CUPTI_SUCCESS) {
			fails += die("cuptiProfilerHostEvaluateToGpuValues", path, rc);
			continue;
		}
		printf("%u,%zu,%llu,%llu", pass, idx, t0, t1);
		for (size_t k = 0; k < nnames; k++)
			printf(",%.17g", v[k]);
		printf("\n");
	} while (fgets(line, sizeof line, ix));
	fclose(ix);
	free(img);
	free(v);
	free(cfg);
	free(saved);
	CUpti_Profiler_Host_Deinitialize_Params hd = {CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
	hd.pHostObject = host;
	cuptiProfilerHostDeinitialize(&hd);
	for (size_t k = 0; k < nnames; k++)
		free(names[k]);
	return fails ? 1 : 0;
}
