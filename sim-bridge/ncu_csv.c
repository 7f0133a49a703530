/*
 * ncu_csv.c - Nsight Compute CSV exports (ncu_csv.h).
 *
 * The identifying columns (ID, Process ID, Process Name, Host Name, Kernel
 * Name, Kernel Time, Context, Stream, Block Size, Grid Size, Device, CC,
 * and NVTX context columns) are found by name. On the raw page every
 * other column is a metric; device__attribute_* columns go to the run's
 * metadata (the first kernel's), the clock (device__attribute_clock_rate,
 * kHz) to the run's clock. On the details page, rows of one ID are one
 * kernel; rule rows (no metric name) are skipped. Numbers may carry
 * thousands separators; text cells ("(128, 1, 1)", "n/a") are absent
 * values, counted in one warning.
 */
#include "ncu_csv.h"
#include "json.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_reader.h"
#include "log.h"
#include "simrun.h"

#define MAX_COLS 16384

enum { C_ID, C_PID, C_PNAME, C_HOST, C_KNAME, C_KTIME, C_CTX, C_STREAM, C_BLOCK, C_GRID, C_DEV,
       C_CC, C_SECTION, C_MNAME, C_MUNIT, C_MVALUE, C_RULE, NKNOWN };
static const char *const known[NKNOWN] = {
	"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context",
	"Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name",
	"Metric Unit", "Metric Value", "Rule Name",
};

typedef struct col {
	char *name;
	int role;     /* a known column, or -1: a metric (raw page) */
	int attr;     /* device__attribute_* */
	char unit[64];
	double factor;
	int metric;   /* simrun index, -1 until declared */
} col;

typedef struct kernel {
	char id[32], name[1024], stream[32], dev[32];
} kernel;

/* A details-page metric seen so far: name -> simrun index. */
typedef struct dmet {
	char *name;
	int metric;
	double v;
} dmet;

typedef struct ncu {
	cs_imp im;
	cs_simrun *run;
	col *c;
	size_t nc;
	int details;
	int known_at[NKNOWN]; /* column of each known role, -1 */
	int dur_col;          /* gpu__time_duration.sum (raw) */
	double t;             /* the axis: cumulative duration, ns */
	uint64_t kernels;
	/* details: the kernel being read */
	kernel cur;
	int have_cur;
	dmet *dm;
	size_t ndm, capdm, hint;
	uint64_t text_cells, text_line;
	char text_metric[160];
	const char *base; /* the CSV (after any ==PROF== lines) */
	uint64_t line0;   /* lines skipped before it */
} ncu;

#define fail(st, ...) cs_imp_fail(&(st)->im, __VA_ARGS__)

/* One unit component: its factor to the base and the base's name. Time
 * becomes ns in a numerator, seconds in a denominator. */
static double unit_part(const char *u, size_t n, int den, char *base, size_t baselen)
{
	static const struct {
		const char *name;
		double s;
	} times[] = {{"second", 1}, {"msecond", 1e-3}, {"usecond", 1e-6}, {"nsecond", 1e-9},
		     {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
	for (size_t i = 0; i < sizeof times / sizeof *times; i++)
		if (strlen(times[i].name) == n && !memcmp(times[i].name, u, n)) {
			snprintf(base, baselen, "%s", den ? "second" : "ns");
			return den ? times[i].s : times[i].s * 1e9;
		}
	double f = 1;
	size_t skip = 0;
	if (n > 1) {
		switch (u[0]) {
		case 'K': case 'k': f = 1e3, skip = 1; break;
		case 'M': f = 1e6, skip = 1; break;
		case 'G': f = 1e9, skip = 1; break;
		case 'T': f = 1e12, skip = 1; break;
		default: break;
		}
	}
	static const char *const bases[] = {"byte", "sector", "cycle", "inst", "warp", "request",
					    "transaction", "thread", "register", "block", "hz", "Hz",
					    "bit"};
	for (size_t i = 0; skip && i < sizeof bases / sizeof *bases; i++)
		if (n - skip == strlen(bases[i]) && !strncmp(u + skip, bases[i], n - skip)) {
			snprintf(base, baselen, "%s", !strcmp(bases[i], "hz") ? "Hz" : bases[i]);
			return f;
		}
	if ((n == 2 && !strncmp(u, "hz", 2)) || (n == 2 && !strncmp(u, "Hz", 2))) {
		snprintf(base, baselen, "Hz");
		return 1;
	}
	snprintf(base, baselen, "%.*s", (int)n, u);
	return 1;
}

double cs_ncu_unit(const char *u, char *base, size_t baselen)
{
	while (*u == ' ')
		u++;
	size_t n = strlen(u);
	while (n && u[n - 1] == ' ')
		n--;
	const char *slash = memchr(u, '/', n);
	if (!slash)
		return unit_part(u, n, 0, base, baselen);
	char b1[64], b2[64];
	double f1 = unit_part(u, (size_t)(slash - u), 0, b1, sizeof b1);
	double f2 = unit_part(slash + 1, n - (size_t)(slash - u) - 1, 1, b2, sizeof b2);
	/* a time numerator stays a count of ns; per-time rates are per second */
	snprintf(base, baselen, "%s/%s", b1, b2);
	return f1 / f2;
}

/* A cell as a number: thousands separators dropped; NaN for text. */
static double cell_number(const char *f, size_t n, int *is_text)
{
	char tmp[64];
	size_t o = 0;
	*is_text = 0;
	while (n && *f == ' ')
		f++, n--;
	while (n && f[n - 1] == ' ')
		n--;
	if (!n)
		return NAN; /* empty: absent */
	for (size_t i = 0; i < n && o < sizeof tmp - 1; i++)
		if (f[i] != ',')
			tmp[o++] = f[i];
	tmp[o] = '\0';
	char *end;
	double v = strtod(tmp, &end);
	if (end == tmp || *end || o == sizeof tmp - 1 || !isfinite(v)) {
		*is_text = 1;
		return NAN;
	}
	return v;
}

static void copy_cell(char *out, size_t outlen, const char *f, size_t n)
{
	snprintf(out, outlen, "%.*s", (int)(n < outlen ? n : outlen - 1), f);
}

static void text_seen(ncu *u, const char *metric, const char *f, size_t n)
{
	if (!u->text_cells++) {
		u->text_line = u->im.line;
		snprintf(u->text_metric, sizeof u->text_metric, "%.60s: '%.*s'", metric,
			 (int)(n < 40 ? n : 40), f);
	}
}

/* One kernel: its sample [t, t + duration) and its range. */
static int emit_kernel(ncu *u, const kernel *k, double dur_ns)
{
	if (!(dur_ns > 0) || !isfinite(dur_ns))
		dur_ns = 1000; /* no duration: 1 us per kernel */
	if (u->t + dur_ns >= 9e18)
		return fail(u, "kernel %s: a duration of %.6g ns does not fit the time axis", k->id, dur_ns);
	uint64_t t0 = (uint64_t)u->t, t1 = (uint64_t)(u->t + dur_ns);
	if (t1 <= t0)
		t1 = t0 + 1;
	u->t = (double)t1;
	if (cs_simrun_row(u->run, t0, t1) < 0)
		return fail(u, "%s", cs_simrun_errmsg(u->run));
	cs_range r;
	cs_range_init(&r, "kernel", k->name[0] ? k->name : "(unnamed kernel)", t0, t1);
	char *end;
	long long v = strtoll(k->id, &end, 10);
	if (end != k->id && !*end)
		r.correlation_id = v;
	v = strtoll(k->stream, &end, 10);
	if (end != k->stream && !*end)
		r.stream = v;
	v = strtoll(k->dev, &end, 10);
	r.device = end != k->dev && !*end ? v : 0;
	if (cs_simrun_range(u->run, &r) < 0)
		return fail(u, "%s", cs_simrun_errmsg(u->run));
	u->kernels++;
	return 0;
}

static void kernel_cells(ncu *u, kernel *k, const char *const *cells, const size_t *lens)
{
	memset(k, 0, sizeof *k);
	struct {
		int role;
		char *out;
		size_t len;
	} m[] = {{C_ID, k->id, sizeof k->id},	      {C_KNAME, k->name, sizeof k->name},
		 {C_STREAM, k->stream, sizeof k->stream}, {C_DEV, k->dev, sizeof k->dev}};
	for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
		int at = u->known_at[m[i].role];
		if (at >= 0)
			copy_cell(m[i].out, m[i].len, cells[at], lens[at]);
	}
}

/* Raw page: one row is one kernel. */
static int raw_row(ncu *u, const char *const *cells, const size_t *lens)
{
	kernel k;
	kernel_cells(u, &k, cells, lens);
	double dur = NAN;
	if (u->dur_col >= 0) {
		int t;
		dur = cell_number(cells[u->dur_col], lens[u->dur_col], &t) * u->c[u->dur_col].factor;
	}
	int rc = emit_kernel(u, &k, dur);
	for (size_t i = 0; rc == 0 && i < u->nc; i++) {
		col *c = &u->c[i];
		if (c->role >= 0 || c->attr)
			continue;
		if (c->metric < 0 &&
		    (c->metric = cs_simrun_metric(u->run, c->name, c->unit[0] ? c->unit : NULL, NULL)) < 0)
			return fail(u, "%s", cs_simrun_errmsg(u->run));
		int text;
		double v = cell_number(cells[i], lens[i], &text);
		if (text)
			text_seen(u, c->name, cells[i], lens[i]);
		cs_simrun_set(u->run, c->metric, v * c->factor);
	}
	return rc;
}

/* Details page: the kernel read so far, written. */
static int details_flush(ncu *u)
{
	if (!u->have_cur)
		return 0;
	double dur = NAN;
	for (size_t i = 0; i < u->ndm; i++)
		if (!strcmp(u->dm[i].name, "Duration"))
			dur = u->dm[i].v;
	int rc = emit_kernel(u, &u->cur, dur);
	for (size_t i = 0; rc == 0 && i < u->ndm; i++) {
		cs_simrun_set(u->run, u->dm[i].metric, u->dm[i].v);
		u->dm[i].v = NAN;
	}
	u->have_cur = 0;
	return rc;
}

static int details_row(ncu *u, const char *const *cells, const size_t *lens)
{
	int ai = u->known_at[C_ID], an = u->known_at[C_MNAME], au = u->known_at[C_MUNIT],
	    av = u->known_at[C_MVALUE];
	if (u->have_cur && (lens[ai] != strlen(u->cur.id) || memcmp(cells[ai], u->cur.id, lens[ai]))) {
		int rc = details_flush(u);
		if (rc)
			return rc;
	}
	if (!u->have_cur) {
		kernel_cells(u, &u->cur, cells, lens);
		u->have_cur = 1;
	}
	if (!lens[an])
		return 0; /* a rule row */
	char name[256], unit[64], base[64];
	copy_cell(name, sizeof name, cells[an], lens[an]);
	copy_cell(unit, sizeof unit, au >= 0 ? cells[au] : "", au >= 0 ? lens[au] : 0);
	double f = cs_ncu_unit(unit, base, sizeof base);
	int text;
	double v = cell_number(cells[av], lens[av], &text);
	if (text)
		text_seen(u, name, cells[av], lens[av]);
	/* kernels print their metrics in the same order: try the next first */
	dmet *d = NULL;
	if (u->hint < u->ndm && !strcmp(u->dm[u->hint].name, name))
		d = &u->dm[u->hint];
	for (size_t i = 0; i < u->ndm && !d; i++)
		if (!strcmp(u->dm[i].name, name))
			d = &u->dm[i];
	if (!d) {
		if (u->ndm == u->capdm) {
			size_t c = u->capdm ? u->capdm * 2 : 64;
			dmet *g = realloc(u->dm, c * sizeof *g);
			if (!g)
				return -ENOMEM;
			u->dm = g;
			u->capdm = c;
		}
		d = &u->dm[u->ndm];
		if (!(d->name = strdup(name)))
			return -ENOMEM;
		u->ndm++;
		if ((d->metric = cs_simrun_metric(u->run, name, base[0] ? base : NULL, NULL)) < 0)
			return fail(u, "%s", cs_simrun_errmsg(u->run));
		d->v = NAN;
	}
	if (isnan(d->v)) /* a name in two sections: the first */
		d->v = v * f;
	u->hint = (size_t)(d - u->dm) + 1;
	return 0;
}

/* Where the CSV starts: after ncu's "==PROF==" and other lines before the
 * header. */
static const char *csv_start(const char *buf, size_t len, uint64_t *skipped)
{
	const char *p = buf, *end = buf + len;
	*skipped = 0;
	while (p < end) {
		size_t room = (size_t)(end - p);
		if ((room >= 5 && !memcmp(p, "\"ID\",", 5)) || (room >= 3 && !memcmp(p, "ID,", 3)))
			return p;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		p = nl + 1;
		(*skipped)++;
	}
	return NULL;
}

int cs_ncu_csv_sniff(const char *text)
{
	uint64_t n;
	const char *p = csv_start(text, strlen(text), &n);
	return p && (!strncmp(p, "\"ID\",\"Process ID\"", 17) || !strncmp(p, "ID,Process ID", 13));
}

int cs_import_ncu_csv(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		      char *err, size_t errlen)
{
	const char *label = o->label ? o->label : "input";
	ncu *u = calloc(1, sizeof *u);
	if (!u) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cs_imp_init(&u->im, o, err, errlen);
	u->dur_col = -1;
	for (int i = 0; i < NKNOWN; i++)
		u->known_at[i] = -1;
	int rc = 0;
	const char **cells = NULL;
	size_t *lens = NULL;
	char **owned = NULL;
	u->base = csv_start(buf, len, &u->line0);
	if (!u->base) {
		rc = cs_imp_fail(&u->im, "no header line starting \"ID\",\"Process ID\": not an ncu "
				 "--csv export");
		free(u);
		return rc;
	}
	cs_csvr rd;
	cs_csvr_init(&rd, u->base, len - (size_t)(u->base - buf));
	/* The header. */
	int res;
	const char *f;
	size_t fl;
	do {
		res = cs_csvr_field(&rd, &f, &fl, err, errlen);
		if (res == CS_CSVR_ERROR || res == CS_CSVR_EOF) {
			u->im.line = u->line0 + 1;
			rc = fail(u, "%s", res == CS_CSVR_EOF ? "no header" : err);
			break;
		}
		if (u->nc == MAX_COLS) {
			u->im.line = u->line0 + 1;
			rc = fail(u, "more than %d columns", MAX_COLS);
			break;
		}
		col *g = realloc(u->c, (u->nc + 1) * sizeof *g);
		if (!g) {
			rc = -ENOMEM;
			break;
		}
		u->c = g;
		col *c = &u->c[u->nc];
		memset(c, 0, sizeof *c);
		c->metric = -1;
		c->factor = 1;
		c->role = -1;
		if (!(c->name = strndup(f, fl))) {
			rc = -ENOMEM;
			break;
		}
		for (int k = 0; k < NKNOWN; k++)
			if (!strcmp(c->name, known[k]))
				c->role = k;
		/* NVTX context and the rules' columns are not metrics */
		if (strstr(c->name, "Domain:") || !strncmp(c->name, "Rule ", 5) ||
		    !strncmp(c->name, "Estimated Speedup", 17))
			c->role = NKNOWN;
		c->attr = !strncmp(c->name, "device__attribute_", 18);
		for (size_t k = 0; k < u->nc; k++)
			if (!strcmp(u->c[k].name, c->name) && c->role < NKNOWN) {
				u->im.line = u->line0 + 1;
				rc = fail(u, "column '%s' appears twice (columns %zu and %zu)", c->name,
					  k + 1, u->nc + 1);
			}
		if (c->role >= 0 && c->role < NKNOWN)
			u->known_at[c->role] = (int)u->nc;
		if (!strcmp(c->name, "gpu__time_duration.sum"))
			u->dur_col = (int)u->nc;
		u->nc++;
	} while (rc == 0 && res == CS_CSVR_FIELD);
	if (rc == 0 && u->known_at[C_ID] < 0) {
		u->im.line = u->line0 + 1;
		rc = fail(u, "no \"ID\" column");
	}
	u->details = u->known_at[C_MNAME] >= 0 && u->known_at[C_MVALUE] >= 0;
	cells = calloc(u->nc + 1, sizeof *cells);
	lens = calloc(u->nc + 1, sizeof *lens);
	owned = calloc(u->nc + 1, sizeof *owned);
	if (rc == 0 && (!cells || !lens || !owned))
		rc = -ENOMEM;
	/* The rows. */
	uint64_t row = 1, truncated = 0;
	int units_seen = 0;
	while (rc == 0) {
		res = cs_csvr_field(&rd, &f, &fl, err, errlen);
		if (res == CS_CSVR_EOF)
			break;
		row++;
		u->im.line = u->line0 + rd.line;
		size_t n = 0;
		for (;;) {
			if (res == CS_CSVR_ERROR) {
				if (rd.p >= rd.end || strstr(err, "never closed")) {
					/* the file ends inside a quoted cell */
					truncated = row;
					rc = 1;
					break;
				}
				char why[512];
				snprintf(why, sizeof why, "%s", err);
				snprintf(err, errlen, "%s: %s", label, why);
				rc = -EINVAL;
				break;
			}
			if (n < u->nc) {
				/* fields are borrowed until the next call: keep copies */
				free(owned[n]);
				owned[n] = strndup(f, fl);
				if (!owned[n]) {
					rc = -ENOMEM;
					break;
				}
				cells[n] = owned[n];
				lens[n] = fl;
			}
			n++;
			if (res == CS_CSVR_LAST)
				break;
			res = cs_csvr_field(&rd, &f, &fl, err, errlen);
		}
		if (rc == 1) {
			rc = 0;
			break;
		}
		if (rc)
			break;
		/* details rows end with a comma less than the header */
		for (size_t k = n; k < u->nc; k++)
			cells[k] = "", lens[k] = 0;
		if (n < u->nc && !u->details) {
			/* a row cut short: the last one is a cut-off file */
			const char *rest = rd.p;
			while (rest < rd.end && (*rest == '\r' || *rest == '\n'))
				rest++;
			if (rest == rd.end) {
				truncated = row;
				break;
			}
			rc = fail(u, "expected %zu fields as in the header, found %zu", u->nc, n);
			break;
		}
		if (n > u->nc) {
			rc = fail(u, "expected %zu fields as in the header, found %zu", u->nc, n);
			break;
		}
		int id = u->known_at[C_ID];
		if (!lens[id]) {
			/* the units row (raw page, second row) */
			if (u->details || units_seen || row != 2) {
				rc = fail(u, "a row with no ID (only the raw page's second row, its units, "
					  "has none)");
				break;
			}
			units_seen = 1;
			for (size_t k = 0; k < u->nc; k++) {
				copy_cell(u->c[k].unit, sizeof u->c[k].unit, cells[k], lens[k]);
				char base[64];
				u->c[k].factor = cs_ncu_unit(u->c[k].unit, base, sizeof base);
				snprintf(u->c[k].unit, sizeof u->c[k].unit, "%s", base);
			}
			continue;
		}
		if (!u->details && !units_seen && row == 2)
			cs_log(CS_LOG_WARN, "%s:%" PRIu64 ": no units row (the second row is a kernel): "
			       "values stored as printed, units unknown", label, u->im.line);
		if (!u->run) {
			/* the run opens at the first kernel: the raw page's device
			 * attributes go to its metadata, its clock to the run's */
			char e2[512];
			if (u->details) {
				u->run = cs_simrun_open(p, o, "ncu-csv", "hw", "ns", 0,
							"\"page\":\"details\"", e2, sizeof e2);
			} else {
				/* the first kernel's device attributes into meta */
				cs_buf meta = CS_BUF_INIT;
				cs_json_raw(&meta, "\"page\":\"raw\",\"device_attributes\":{");
				int first = 1;
				double clock = 0;
				for (size_t k = 0; k < u->nc; k++) {
					if (!u->c[k].attr || !lens[k])
						continue;
					cs_json_raw(&meta, first ? "" : ",");
					cs_json_str(&meta, u->c[k].name + 18);
					cs_json_raw(&meta, ":");
					cs_json_strn(&meta, cells[k], lens[k]);
					first = 0;
					if (!strcmp(u->c[k].name, "device__attribute_clock_rate")) {
						int t;
						double khz = cell_number(cells[k], lens[k], &t);
						if (khz > 0)
							clock = khz * 1e3;
					}
				}
				cs_json_raw(&meta, "}");
				u->run = cs_buf_put_u8(&meta, 0)
						 ? NULL
						 : cs_simrun_open(p, o, "ncu-csv", "hw", "ns", clock,
								  (const char *)meta.data, e2, sizeof e2);
				if (!u->run && !e2[0])
					snprintf(e2, sizeof e2, "%s: out of memory", label);
				cs_buf_free(&meta);
			}
			if (!u->run) {
				snprintf(err, errlen, "%s", e2);
				rc = -EIO;
				break;
			}
		}
		rc = u->details ? details_row(u, cells, lens) : raw_row(u, cells, lens);
		if (o->progress && !(row & 1023))
			o->progress(o->progress_ctx, (size_t)(rd.p - buf), len);
	}
	if (rc == 0 && o->progress)
		o->progress(o->progress_ctx, len, len);
	if (rc == 0 && u->details)
		rc = details_flush(u);
	if (rc == 0 && !u->kernels)
		rc = fail(u, "no kernel rows");
	if (rc == 0) {
		if (truncated)
			cs_log(CS_LOG_WARN, "%s: the last row (row %" PRIu64 ") is cut short: not "
			       "imported", label, truncated);
		if (u->text_cells)
			cs_log(CS_LOG_WARN, "%s: %" PRIu64 " text cells in metric columns stored as "
			       "absent (the first at line %" PRIu64 ", %s)", label, u->text_cells,
			       u->text_line, u->text_metric);
		cs_log(CS_LOG_INFO, "%s: %s page, %" PRIu64 " kernels", label,
		       u->details ? "details" : "raw", u->kernels);
	}
	rc = cs_simrun_finish(u->run, p, rc, label, err, errlen);
	cs_csvr_free(&rd);
	for (size_t k = 0; k < u->nc; k++) {
		free(u->c[k].name);
		if (owned)
			free(owned[k]);
	}
	for (size_t i = 0; i < u->ndm; i++)
		free(u->dm[i].name);
	free(u->dm);
	free(u->c);
	free(cells);
	free(lens);
	free(owned);
	free(u);
	return rc;
}
