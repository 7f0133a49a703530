/*
 * catalog.c - the offline metric catalog and set checks (collector.h),
 * on the CUPTI host API: a PM_SAMPLING host object for a chip name, one
 * per question, because a host object's metric list only grows.
 *
 * Facts this relies on (reference/cupti.md section 6): GetBaseMetrics does not
 * filter for PM sampling, so a metric counts as sampleable only when
 * ConfigAddMetrics accepts it and the resulting config image needs one
 * pass; metrics that are single-pass alone can still need two passes
 * together, so a set is grown one metric at a time to name the one that
 * breaks it.
 */
#include "collector.h"
#include "catalog.h"
#include "strdist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_profiler_host.h>
#include <cupti_result.h>
#include <nvperf_host.h>

#include "patterns.h"

const char *cs_cupti_error(int result)
{
	const char *s = NULL;
	if (cuptiGetResultString((CUptiResult)result, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

static CUpti_Profiler_Host_Object *host_new(const char *chip, const uint8_t *avail,
					    CUptiResult *rc)
{
	CUpti_Profiler_Host_Initialize_Params p = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = avail;
	*rc = cuptiProfilerHostInitialize(&p);
	return *rc == CUPTI_SUCCESS ? p.pHostObject : NULL;
}

static void host_free(CUpti_Profiler_Host_Object *h)
{
	if (!h)
		return;
	CUpti_Profiler_Host_Deinitialize_Params p = {CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
	p.pHostObject = h;
	cuptiProfilerHostDeinitialize(&p);
}

int cs_catalog_chip_ok(const char *chip, char *err, size_t errlen)
{
	CUpti_Profiler_Host_GetSupportedChips_Params p = {CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE};
	CUptiResult rc = cuptiProfilerHostGetSupportedChips(&p);
	if (rc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "CUPTI cannot list supported chips: %s", cs_cupti_error(rc));
		return -EIO;
	}
	size_t off = 0;
	for (size_t i = 0; i < p.numChips; i++)
		if (!strcmp(p.ppChipNames[i], chip))
			return 0;
	off += (size_t)snprintf(err, errlen, "chip '%s' is not one CUPTI knows; known chips:", chip);
	for (size_t i = 0; i < p.numChips && off < errlen; i++)
		off += (size_t)snprintf(err + off, errlen - off, " %s", p.ppChipNames[i]);
	return -ENOENT;
}

/* The config image for names on a host object built from chip/avail. */
typedef struct config {
	CUptiResult add_rc; /* from ConfigAddMetrics */
	size_t passes;
	uint8_t *image;
	size_t size;
} config;

/* With keep, the host object is handed to the caller on success. */
static int build_config_keep(const char *chip, const uint8_t *avail, const char *const *names,
			     size_t n, config *c, CUpti_Profiler_Host_Object **keep,
			     char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	CUptiResult rc;
	CUpti_Profiler_Host_Object *h = host_new(chip, avail, &rc);
	if (!h) {
		snprintf(err, errlen, "CUPTI host object for %s: %s", chip, cs_cupti_error(rc));
		return -EIO;
	}
	int ret = 0;
	CUpti_Profiler_Host_ConfigAddMetrics_Params a = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	a.pHostObject = h;
	a.ppMetricNames = (const char **)names;
	a.numMetrics = n;
	c->add_rc = cuptiProfilerHostConfigAddMetrics(&a);
	if (c->add_rc != CUPTI_SUCCESS)
		goto out;
	CUpti_Profiler_Host_GetConfigImageSize_Params s = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
	s.pHostObject = h;
	if ((rc = cuptiProfilerHostGetConfigImageSize(&s)) != CUPTI_SUCCESS)
		goto cupti_fail;
	c->image = malloc(s.configImageSize ? s.configImageSize : 1);
	if (!c->image) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	c->size = s.configImageSize;
	CUpti_Profiler_Host_GetConfigImage_Params g = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
	g.pHostObject = h;
	g.configImageSize = c->size;
	g.pConfigImage = c->image;
	if ((rc = cuptiProfilerHostGetConfigImage(&g)) != CUPTI_SUCCESS)
		goto cupti_fail;
	CUpti_Profiler_Host_GetNumOfPasses_Params np = {CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
	np.configImageSize = c->size;
	np.pConfigImage = c->image;
	if ((rc = cuptiProfilerHostGetNumOfPasses(&np)) != CUPTI_SUCCESS)
		goto cupti_fail;
	c->passes = np.numOfPasses;
	goto out;
cupti_fail:
	snprintf(err, errlen, "CUPTI config image: %s", cs_cupti_error(rc));
	ret = -EIO;
out:
	if (keep && ret == 0 && c->add_rc == CUPTI_SUCCESS)
		*keep = h;
	else
		host_free(h);
	if (ret < 0) {
		free(c->image);
		c->image = NULL;
	}
	return ret;
}

static int build_config(const char *chip, const uint8_t *avail, const char *const *names,
			size_t n, config *c, char *err, size_t errlen)
{
	return build_config_keep(chip, avail, names, n, c, NULL, err, errlen);
}

int cs_catalog_config(const char *chip, const uint8_t *avail, const char *const *names,
		      size_t n, void **host, uint8_t **image, size_t *size, size_t *passes,
		      char *err, size_t errlen)
{
	config c;
	CUpti_Profiler_Host_Object *h = NULL;
	int rc = build_config_keep(chip, avail, names, n, &c, &h, err, errlen);
	if (rc < 0)
		return rc;
	if (c.add_rc != CUPTI_SUCCESS) {
		snprintf(err, errlen, "CUPTI refused the metric set: %s", cs_cupti_error(c.add_rc));
		return -EINVAL;
	}
	*host = h;
	*image = c.image;
	*size = c.size;
	*passes = c.passes;
	return 0;
}

void cs_catalog_host_free(void *host)
{
	host_free(host);
}

uint64_t cs_catalog_sample_bytes(const uint8_t *image, size_t size)
{
	static int host_ready;
	if (!host_ready) {
		NVPW_InitializeHost_Params ip = {NVPW_InitializeHost_Params_STRUCT_SIZE};
		if (NVPW_InitializeHost(&ip) != NVPA_STATUS_SUCCESS)
			return 0;
		host_ready = 1;
	}
	NVPW_PeriodicSampler_Config_GetGpuEstimatedSampleSize_Params p = {
		NVPW_PeriodicSampler_Config_GetGpuEstimatedSampleSize_Params_STRUCT_SIZE};
	p.pConfig = image;
	p.configSize = size;
	if (NVPW_PeriodicSampler_Config_GetGpuEstimatedSampleSize(&p) != NVPA_STATUS_SUCCESS)
		return 0;
	return p.sampleSize;
}

/* The base name of a metric: up to the first '.' after its "__"
 * ("LTS.TriageCompute.lts__t_sectors.sum" -> "LTS.TriageCompute.lts__t_sectors"). */
static void base_of(const char *name, char *out, size_t outlen)
{
	const char *u = strstr(name, "__");
	const char *dot = strchr(u ? u : name, '.');
	size_t len = dot ? (size_t)(dot - name) : strlen(name);
	if (len >= outlen)
		len = outlen - 1;
	memcpy(out, name, len);
	out[len] = '\0';
}

static const char *const type_names[] = {"counter", "ratio", "throughput"};
static const char *const rollups[] = {".sum", ".ratio", ".avg.pct_of_peak_sustained_elapsed"};

/* The base metrics of chip, all three types, as one list. */
typedef struct base_list {
	CUpti_Profiler_Host_Object *h;
	const char **names[3];
	size_t n[3];
} base_list;

static int base_list_get(const char *chip, base_list *bl, char *err, size_t errlen)
{
	memset(bl, 0, sizeof *bl);
	CUptiResult rc;
	bl->h = host_new(chip, NULL, &rc);
	if (!bl->h) {
		snprintf(err, errlen, "CUPTI host object for %s: %s", chip, cs_cupti_error(rc));
		return -EIO;
	}
	for (int t = 0; t < 3; t++) {
		CUpti_Profiler_Host_GetBaseMetrics_Params p = {CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
		p.pHostObject = bl->h;
		p.metricType = (CUpti_MetricType)t;
		if ((rc = cuptiProfilerHostGetBaseMetrics(&p)) != CUPTI_SUCCESS) {
			snprintf(err, errlen, "CUPTI base metrics of %s: %s", chip, cs_cupti_error(rc));
			host_free(bl->h);
			return -EIO;
		}
		bl->names[t] = p.ppMetricNames;
		bl->n[t] = p.numMetrics;
	}
	return 0;
}

/* Fills m's description strings from the host object (valid while it
 * lives). */
static void describe(CUpti_Profiler_Host_Object *h, const char *base, int type,
		     cs_cat_metric *m, const char *full)
{
	CUpti_Profiler_Host_GetMetricProperties_Params p = {CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
	p.pHostObject = h;
	p.pMetricName = base;
	if (cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS) {
		m->description = p.pDescription;
		m->hw_unit = p.pHwUnit;
		m->unit = p.pDimUnit && *p.pDimUnit ? p.pDimUnit : NULL;
		if ((int)p.metricType >= 0 && (int)p.metricType < 3)
			type = (int)p.metricType;
	}
	m->kind = type >= 0 && type < 3 ? type_names[type] : "counter";
	/* The rollup decides what the number is, more than the base does. */
	if (strstr(full, ".pct_of_peak") || strstr(full, ".pct"))
		m->unit = "percent";
	else if (strstr(full, ".ratio"))
		m->unit = "ratio";
	else if (strstr(full, ".per_second"))
		m->unit = m->unit && !strcmp(m->unit, "byte") ? "byte/s" : "1/s";
	else if (strstr(full, ".per_cycle"))
		m->unit = "1/cycle";
}

int cs_catalog_list(const char *chip, int all, cs_cat_fn fn, void *ctx, char *err,
		    size_t errlen)
{
	int rc = cs_catalog_chip_ok(chip, err, errlen);
	if (rc < 0)
		return rc;
	base_list bl;
	if ((rc = base_list_get(chip, &bl, err, errlen)) < 0)
		return rc;
	char full[512];
	for (int t = 0; t < 3 && rc == 0; t++) {
		for (size_t i = 0; i < bl.n[t] && rc == 0; i++) {
			snprintf(full, sizeof full, "%s%s", bl.names[t][i], rollups[t]);
			const char *one = full;
			config c;
			if ((rc = build_config(chip, NULL, &one, 1, &c, err, errlen)) < 0)
				break;
			free(c.image);
			int passes = c.add_rc == CUPTI_SUCCESS ? (int)c.passes : 0;
			if (passes != 1 && !all)
				continue;
			cs_cat_metric m = {.name = full, .passes = passes};
			describe(bl.h, bl.names[t][i], t, &m, full);
			rc = fn(ctx, &m);
		}
	}
	host_free(bl.h);
	return rc;
}

int cs_catalog_describe(const char *chip, const char *name, cs_cat_metric *m)
{
	static base_list bl;
	static char chip_of[64];
	char err[256];
	if (strcmp(chip_of, chip)) {
		if (bl.h)
			host_free(bl.h);
		chip_of[0] = '\0';
		if (base_list_get(chip, &bl, err, sizeof err) < 0) {
			bl.h = NULL;
			return -ENOENT;
		}
		snprintf(chip_of, sizeof chip_of, "%s", chip);
	}
	char base[512];
	base_of(name, base, sizeof base);
	for (int t = 0; t < 3; t++)
		for (size_t i = 0; i < bl.n[t]; i++)
			if (!strcmp(bl.names[t][i], base)) {
				memset(m, 0, sizeof *m);
				m->name = name;
				describe(bl.h, base, t, m, name);
				return 0;
			}
	return -ENOENT;
}


/* Why name alone is refused, in words: unknown (with the nearest known
 * base name) or known but not in PM-sampling mode. */
static void explain_refusal(const char *chip, const char *name, CUptiResult rc,
			    char *out, size_t outlen)
{
	char err[256], base[512];
	base_list bl;
	base_of(name, base, sizeof base);
	if (base_list_get(chip, &bl, err, sizeof err) < 0) {
		snprintf(out, outlen, "metric '%s' is refused by CUPTI on %s: %s", name, chip,
			 cs_cupti_error(rc));
		return;
	}
	const char *nearest = NULL, *suffix = NULL;
	size_t best = (size_t)-1, bl_len = strlen(base);
	int known = 0;
	for (int t = 0; t < 3; t++)
		for (size_t i = 0; i < bl.n[t]; i++) {
			const char *cand = bl.names[t][i];
			size_t cl = strlen(cand);
			if (!strcmp(cand, base))
				known = 1;
			/* a name that ends in what was typed after a '.' or "__"
			 * (ctc__rx_bytes for CTC.TriageCompute.ctc__rx_bytes)
			 * wins over the nearest by edits */
			if (!suffix && cl > bl_len + 1 && !strcmp(cand + cl - bl_len, base) &&
			    (cand[cl - bl_len - 1] == '.' ||
			     (cand[cl - bl_len - 1] == '_' && cand[cl - bl_len - 2] == '_')))
				suffix = cand;
			size_t d = cs_edit_distance(base, cand);
			if (d < best) {
				best = d;
				nearest = cand;
			}
		}
	if (suffix && !known) {
		nearest = suffix;
		best = 0;
	}
	if (known)
		snprintf(out, outlen, "metric '%s' exists on %s but PM sampling does not accept "
			 "it (%s); try another rollup or a *.TriageCompute.* variant "
			 "(cyclescope metrics --chip %s lists what it accepts)",
			 name, chip, cs_cupti_error(rc), chip);
	else if (nearest && best <= 4)
		snprintf(out, outlen, "metric '%s' is unknown on %s; did you mean '%s%s'?", name,
			 chip, nearest, name + strlen(base));
	else
		snprintf(out, outlen, "metric '%s' is unknown on %s (cyclescope metrics --chip "
			 "%s lists the known ones)", name, chip, chip);
	host_free(bl.h);
}

int cs_catalog_check(const char *chip, const char *const *names, size_t n,
		     cs_cat_check *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	out->bad = -1;
	int rc = cs_catalog_chip_ok(chip, err, errlen);
	if (rc < 0)
		return rc;
	if (n == 0) {
		snprintf(out->reason, sizeof out->reason, "the metric set is empty");
		return 0;
	}
	config c;
	/* Each metric alone: known to PM sampling, and one pass by itself. */
	for (size_t i = 0; i < n; i++) {
		if ((rc = build_config(chip, NULL, &names[i], 1, &c, err, errlen)) < 0)
			return rc;
		free(c.image);
		if (c.add_rc != CUPTI_SUCCESS) {
			out->bad = (long)i;
			explain_refusal(chip, names[i], c.add_rc, out->reason, sizeof out->reason);
			return 0;
		}
		if (c.passes != 1) {
			out->bad = (long)i;
			out->passes = (int)c.passes;
			snprintf(out->reason, sizeof out->reason,
				 "metric '%s' alone needs %zu passes on %s; PM sampling takes "
				 "one (look for a *_realtime or *.TriageCompute.* variant)",
				 names[i], c.passes, chip);
			return 0;
		}
	}
	/* The whole set; when it needs more than one pass, the first prefix
	 * that does names the metric that breaks it. */
	if ((rc = build_config(chip, NULL, names, n, &c, err, errlen)) < 0)
		return rc;
	out->passes = c.add_rc == CUPTI_SUCCESS ? (int)c.passes : 0;
	if (out->passes == 1) {
		out->bytes_per_sample = cs_catalog_sample_bytes(c.image, c.size);
		free(c.image);
		return 0;
	}
	free(c.image);
	for (size_t k = 2; k <= n; k++) {
		config p;
		if ((rc = build_config(chip, NULL, names, k, &p, err, errlen)) < 0)
			return rc;
		free(p.image);
		if (p.add_rc != CUPTI_SUCCESS || p.passes > 1) {
			out->bad = (long)(k - 1);
			snprintf(out->reason, sizeof out->reason,
				 "adding '%s' (metric %zu of %zu) makes the set need %zu passes "
				 "on %s; PM sampling takes one: drop it or sample it in another run",
				 names[k - 1], k, n, p.passes, chip);
			return 0;
		}
	}
	snprintf(out->reason, sizeof out->reason, "the set needs %d passes on %s", out->passes,
		 chip);
	return 0;
}

int cs_collector_abi(void)
{
	return CS_COLLECTOR_ABI;
}
