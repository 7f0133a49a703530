/*
 * nvsmi.c - nvidia-smi query logs (nvsmi.h).
 *
 * The file is read twice. The first pass reads the header and learns
 * which columns hold numbers (every value a number with or without a
 * unit word, or absent), how GPUs are told apart and whether the
 * timestamps are sound; the second writes one sample per row through a
 * wide run (import_csv.h), each GPU's row kept until its next row says
 * where it ends.
 */
#include "nvsmi.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "log.h"
#include "simrun.h"
#include "store.h"
#include "textin.h"

#define MAX_COLS 256
#define MAX_GPUS ((int)CS_MAX_DEVICE_INDEX + 1)
#define NS 1000000000ull
#define HEAD 65536 /* what the first pass reads */

enum col_role { C_VALUE, C_TIME, C_INDEX, C_IDENT, C_TEXT };

typedef struct col {
	char name[128];
	char unit[32];
	int role;
	int numeric;   /* every value so far a number or absent */
	int any;       /* at least one number */
	int metric;    /* its place among the stored columns, -1 */
} col;

/* A GPU's row, kept until its next one gives its end. */
typedef struct pend {
	int have;
	uint64_t t0, prev_t0;
	uint64_t rows;
	double *v;
} pend;

typedef struct nvsmi {
	cs_imp im;
	int pass;            /* 1: learn, 2: write */
	col cols[MAX_COLS];
	size_t ncols, nmetrics;
	char *header;        /* the header line as printed (repeats are skipped) */
	int have_header;
	int c_time, c_index, c_ident;
	/* GPUs told apart by an identity column (pci.bus_id, uuid) */
	char **idents;
	size_t nidents;
	/* or by the order of rows sharing a timestamp */
	uint64_t group_t;
	size_t group_pos, group_size;
	uint64_t group_line;
	int by_order;
	/* hour cache for local time: the epoch of (y, m, d, h) */
	int cy, cm, cd, ch;
	int64_t cbase;
	int64_t cfold;       /* the hour's second, standard-time pass; -1: none */
	int folded;          /* the rows of this hour are on that pass now */
	/* a malformed row: an error unless it is the last line */
	char pend_err[512];
	uint64_t pend_line;
	uint64_t rows, skipped_msgs, nul_lines, dup_rows;
	uint64_t odd, odd_line; /* later non-numbers in a numeric field */
	char odd_what[96];
	size_t hlen;             /* the header line's length */
	uint64_t last_t[MAX_GPUS];
	pend *gpus[MAX_GPUS];
	int ngpus;
	cs_wide *w;
	double *row;
} nvsmi;

#define fail(st, ...) cs_imp_fail(&(st)->im, __VA_ARGS__)

/* s[0..n) without its leading blanks and trailing blanks and CR, ended
 * with a NUL there (s[n] may be the NUL already); *len its length. Every
 * line and field of a log passes here: lengths are carried, not counted
 * again. */
static char *trim(char *s, size_t n, size_t *len)
{
	char *e = s + n;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*e = '\0';
	*len = (size_t)(e - s);
	return s;
}

/* Splits line at commas (nvidia-smi never quotes), trimmed. */
static size_t split(char *line, char **f, size_t max)
{
	size_t n = 0;
	for (char *p = line;;) {
		char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		if (n < max)
			f[n] = trim(p, len, &len);
		n++;
		if (!c)
			break;
		p = c + 1;
	}
	return n;
}

/* n digits at t as a number, or -1. */
static int digits(const char *t, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (t[i] < '0' || t[i] > '9')
			return -1;
		v = v * 10 + (t[i] - '0');
	}
	return v;
}

/* "YYYY/MM/DD HH:MM:SS[.fff]" as local time into epoch ns. */
static int timestamp(nvsmi *s, const char *t, uint64_t *ns)
{
	if (strlen(t) < 19 || t[4] != '/' || t[7] != '/' || t[10] != ' ' || t[13] != ':' ||
	    t[16] != ':')
		return -1;
	int y = digits(t, 4), mo = digits(t + 5, 2), d = digits(t + 8, 2), h = digits(t + 11, 2);
	int mi = digits(t + 14, 2), sec = digits(t + 17, 2);
	if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
	    mi > 59 || sec < 0 || sec > 60)
		return -1;
	uint64_t frac = 0;
	const char *f = t + 19;
	if (*f == '.') {
		uint64_t scale = NS;
		for (f++; *f >= '0' && *f <= '9'; f++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*f - '0') * scale;
			}
	}
	if (*f)
		return -1;
	if (y != s->cy || mo != s->cm || d != s->cd || h != s->ch) {
		struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
				.tm_isdst = -1};
		time_t base = mktime(&tm);
		if (base == (time_t)-1 || base < 0)
			return -1;
		s->cy = y, s->cm = mo, s->cd = d, s->ch = h;
		s->cbase = (int64_t)base;
		s->folded = 0;
		s->cfold = -1;
		/* The hour a clock set back repeats: it exists in summer and in
		 * standard time; the first pass is summer time, the second not. */
		struct tm dst = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
				 .tm_isdst = 1};
		struct tm std = dst;
		std.tm_isdst = 0;
		time_t a = mktime(&dst), b = mktime(&std);
		if (a != (time_t)-1 && b != (time_t)-1 && dst.tm_isdst == 1 && std.tm_isdst == 0 &&
		    dst.tm_hour == h && std.tm_hour == h && b > a) {
			s->cbase = (int64_t)a;
			s->cfold = (int64_t)b;
		}
	}
	*ns = ((uint64_t)(s->folded ? s->cfold : s->cbase) + (uint64_t)mi * 60 + (uint64_t)sec) * NS +
	      frac;
	return 0;
}

/* An absent value: [N/A], [Not Supported], [Unknown Error], N/A, empty. */
static int absent(const char *v)
{
	return !*v || *v == '[' || !strcmp(v, "N/A");
}

/* A number, optionally followed by a unit word ("83.78 W", "0 %",
 * "3441 MiB"); pstate's "P2" is 2. unit gets the word (may be empty). */
static int value(const col *c, const char *v, double *x, char *unit, size_t ulen)
{
	unit[0] = '\0';
	if (!strcmp(c->name, "pstate") && v[0] == 'P' && isdigit((unsigned char)v[1]))
		v++;
	char *end;
	errno = 0;
	*x = strtod(v, &end);
	if (end == v || errno == ERANGE || isnan(*x) || isinf(*x))
		return -1;
	while (*end == ' ')
		end++;
	size_t n = strlen(end);
	if (n >= ulen)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!isalpha((unsigned char)end[i]) && !strchr("%/", end[i]))
			return -1;
	memcpy(unit, end, n + 1);
	return 0;
}

static int header(nvsmi *s, char *line)
{
	free(s->header);
	if (!(s->header = strdup(line)))
		return fail(s, "out of memory");
	s->hlen = strlen(s->header);
	char *f[MAX_COLS + 1];
	size_t n = split(line, f, MAX_COLS + 1);
	if (n > MAX_COLS)
		return fail(s, "more than %d columns", MAX_COLS);
	s->c_time = s->c_index = s->c_ident = -1;
	for (size_t i = 0; i < n; i++) {
		col *c = &s->cols[i];
		memset(c, 0, sizeof *c);
		c->numeric = 1;
		c->metric = -1;
		const char *br = strchr(f[i], '[');
		size_t nl = br ? (size_t)(br - f[i]) : strlen(f[i]);
		while (nl && f[i][nl - 1] == ' ')
			nl--;
		if (!nl || nl >= sizeof c->name)
			return fail(s, "column %zu: expected a field name (as --query-gpu names it)",
				    i + 1);
		memcpy(c->name, f[i], nl);
		if (br) {
			const char *e = strchr(br, ']');
			if (!e || e[1] || (size_t)(e - br - 1) >= sizeof c->unit)
				return fail(s, "column %zu ('%s'): expected 'NAME [UNIT]'", i + 1, f[i]);
			memcpy(c->unit, br + 1, (size_t)(e - br - 1));
		} else if (!strncmp(c->name, "temperature.", 12)) {
			snprintf(c->unit, sizeof c->unit, "C");
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->cols[j].name, c->name))
				return fail(s, "column %zu repeats '%s' (column %zu)", i + 1, c->name,
					    j + 1);
		if (!strcmp(c->name, "timestamp")) {
			c->role = C_TIME;
			s->c_time = (int)i;
		} else if (!strcmp(c->name, "index")) {
			c->role = C_INDEX;
			s->c_index = (int)i;
		} else if (!strcmp(c->name, "pci.bus_id") || !strcmp(c->name, "gpu_bus_id") ||
			   !strcmp(c->name, "uuid") || !strcmp(c->name, "gpu_uuid")) {
			c->role = C_IDENT;
			if (s->c_ident < 0 || !strcmp(c->name, "pci.bus_id") ||
			    !strcmp(c->name, "gpu_bus_id"))
				s->c_ident = (int)i;
		} else if (!strcmp(c->name, "name") || !strcmp(c->name, "gpu_name") ||
			   !strcmp(c->name, "driver_version") || !strcmp(c->name, "vbios_version") ||
			   !strcmp(c->name, "serial")) {
			c->role = C_TEXT;
		}
	}
	s->ncols = n;
	if (s->c_time < 0)
		return fail(s, "the header has no timestamp column: query it (--query-gpu="
			    "timestamp,...) so that the samples have times");
	s->have_header = 1;
	return 0;
}

/* The GPU a row is about, or -1 with the error said. */
static int gpu_of(nvsmi *s, char **f, uint64_t t)
{
	if (s->c_index >= 0) {
		char *end;
		long v = strtol(f[s->c_index], &end, 10);
		if (end == f[s->c_index] || *end || v < 0 || v >= MAX_GPUS)
			return fail(s, "index '%s': expected a GPU index 0..%d", f[s->c_index],
				    MAX_GPUS - 1), -1;
		return (int)v;
	}
	if (s->c_ident >= 0) {
		const char *id = f[s->c_ident];
		for (size_t i = 0; i < s->nidents; i++)
			if (!strcmp(s->idents[i], id))
				return (int)i;
		if (s->nidents == MAX_GPUS)
			return fail(s, "more than %d GPUs", MAX_GPUS), -1;
		char **g = realloc(s->idents, (s->nidents + 1) * sizeof *g);
		if (!g || !(g[s->nidents] = strdup(id))) {
			if (g)
				s->idents = g;
			return fail(s, "out of memory"), -1;
		}
		s->idents = g;
		return (int)s->nidents++;
	}
	/* Rows that share a timestamp: the GPUs in order. */
	if (s->rows && t == s->group_t) {
		s->group_pos++;
	} else {
		size_t size = s->group_pos + 1;
		if (s->rows && !s->group_size)
			s->group_size = size;
		else if (s->rows && size != s->group_size)
			return fail(s, "%zu rows share the timestamp of line %" PRIu64 ", %zu that of "
				    "the first such group: with no index, pci.bus_id or uuid column "
				    "the GPUs are told apart by the order of the rows that share a "
				    "timestamp, and their number must not change (query index)", size,
				    s->group_line, s->group_size), -1;
		s->group_t = t;
		s->group_pos = 0;
		s->group_line = s->im.line;
	}
	if (s->group_pos >= MAX_GPUS)
		return fail(s, "more than %d rows share one timestamp", MAX_GPUS), -1;
	if (s->group_pos)
		s->by_order = 1;
	return (int)s->group_pos;
}

/* A row that cannot be read: an error, unless the file ends with it. */
static int malformed(nvsmi *s, const char *why)
{
	snprintf(s->pend_err, sizeof s->pend_err, "%s", why);
	s->pend_line = s->im.line;
	return 0;
}

static int emit(nvsmi *s, int g, uint64_t t1)
{
	pend *p = s->gpus[g];
	if (cs_wide_row(s->w, (uint32_t)g, p->t0, t1, p->v))
		return -EIO;
	p->prev_t0 = p->t0;
	p->have = 0;
	return 0;
}

static int on_row(nvsmi *s, char **f, size_t n)
{
	uint64_t t;
	if (timestamp(s, f[s->c_time], &t)) {
		char why[256];
		snprintf(why, sizeof why, "timestamp '%.64s': expected YYYY/MM/DD HH:MM:SS.mmm "
			 "(local time)", f[s->c_time]);
		return malformed(s, why);
	}
	for (size_t i = 0; i < n; i++) {
		col *c = &s->cols[i];
		if (c->role != C_VALUE || absent(f[i]))
			continue;
		double x;
		char unit[32];
		if (value(c, f[i], &x, unit, sizeof unit) < 0) {
			c->numeric = 0;
			if (s->pass == 2 && c->metric >= 0 && !s->odd++) {
				s->odd_line = s->im.line;
				snprintf(s->odd_what, sizeof s->odd_what, "%s: '%.40s'", c->name, f[i]);
			}
			continue;
		}
		c->any = 1;
		if (s->pass == 1 && !c->unit[0] && unit[0])
			snprintf(c->unit, sizeof c->unit, "%s", unit);
		if (s->pass == 2 && c->metric >= 0)
			s->row[c->metric] = x;
	}
	int g = gpu_of(s, f, t);
	if (g < 0)
		return -EINVAL;
	s->rows++;
	if (s->pass == 1) {
		if (g >= s->ngpus)
			s->ngpus = g + 1;
		return 0;
	}
	pend *p = s->gpus[g];
	if (!p) {
		if (!(p = s->gpus[g] = calloc(1, sizeof *p)) ||
		    !(p->v = malloc((s->nmetrics ? s->nmetrics : 1) * sizeof *p->v)))
			return fail(s, "out of memory");
	}
	if (p->rows && t < s->last_t[g] && !s->folded && s->cfold >= 0 &&
	    s->last_t[g] - t <= (uint64_t)(s->cfold - s->cbase) * NS) {
		s->folded = 1; /* the clock was set back: the repeated hour, its second pass */
		t += (uint64_t)(s->cfold - s->cbase) * NS;
	}
	if (p->rows && t <= s->last_t[g]) {
		if (t == s->last_t[g]) { /* the same query printed twice */
			s->dup_rows++;
			return 0;
		}
		return fail(s, "GPU %d's timestamp '%s' is before its previous row's (a clock "
			    "change, or a daylight-saving hour read in the wrong zone: see --tz)", g,
			    f[s->c_time]);
	}
	if (p->have && emit(s, g, t))
		return -EIO;
	p->t0 = t;
	p->have = 1;
	p->rows++;
	s->last_t[g] = t;
	memcpy(p->v, s->row, s->nmetrics * sizeof *p->v);
	return 0;
}

static int on_line(void *ctx, char *line, size_t len, uint64_t lineno)
{
	nvsmi *s = ctx;
	s->im.line = lineno;
	if (s->pend_err[0]) { /* the malformed row was not the last */
		s->im.line = s->pend_line;
		return fail(s, "%s", s->pend_err);
	}
	if (memchr(line, '\0', len)) { /* a killed job's log: NULs where text was due */
		s->nul_lines++;
		len = strlen(line);
	}
	size_t llen;
	char *l = trim(line, len, &llen);
	if (!llen)
		return 0;
	if (!s->have_header) {
		if (isdigit((unsigned char)l[0]) && strchr(l, '/'))
			return fail(s, "no header line: the log was written with --format=csv,"
				    "noheader; put the --query-gpu field names first (as nvidia-smi "
				    "prints them: 'timestamp, index, power.draw [W], ...')");
		return header(s, l);
	}
	if (llen == s->hlen && !memcmp(l, s->header, s->hlen))
		return 0; /* one nvidia-smi per sample, appended: its header again */
	if (!strchr(l, ',')) { /* nvidia-smi's own messages ("No devices were found") */
		s->skipped_msgs++;
		return 0;
	}
	char *f[MAX_COLS + 1];
	size_t n = split(l, f, MAX_COLS + 1);
	if (n != s->ncols) {
		char why[128];
		snprintf(why, sizeof why, "expected %zu fields (one per header column), found %zu",
			 s->ncols, n);
		return malformed(s, why);
	}
	if (s->pass == 2)
		for (size_t i = 0; i < s->nmetrics; i++)
			s->row[i] = NAN;
	return on_row(s, f, n);
}

/* The zone local times are read in, for messages and the run's meta. */
static void zone_name(const char *tz, char *out, size_t len)
{
	char link[256];
	ssize_t n;
	if (tz) {
		snprintf(out, len, "%s", tz);
	} else if ((tz = getenv("TZ")) && *tz) {
		snprintf(out, len, "%s", *tz == ':' ? tz + 1 : tz);
	} else if ((n = readlink("/etc/localtime", link, sizeof link - 1)) > 0) {
		link[n] = '\0';
		const char *z = strstr(link, "zoneinfo/");
		snprintf(out, len, "%s", z ? z + 9 : link);
	} else {
		snprintf(out, len, "UTC");
	}
}

/* A zone TZ can name: a zoneinfo file, or a POSIX rule with an offset. */
static int zone_ok(const char *tz)
{
	char path[512];
	if (!*tz || strstr(tz, ".."))
		return 0;
	snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", *tz == ':' ? tz + 1 : tz);
	if (access(path, R_OK) == 0)
		return 1;
	return *tz != '/' && strpbrk(tz, "0123456789") != NULL;
}

static int run_pass(nvsmi *s, const char *buf, size_t len, const cs_import_opts *o, int pass)
{
	cs_textin_stats st;
	s->pass = pass; /* the header is read once: the second pass skips it as a repeat */
	s->rows = s->group_pos = s->group_size = 0;
	s->skipped_msgs = s->nul_lines = s->dup_rows = 0;
	s->pend_err[0] = '\0';
	for (size_t i = 0; i < s->nidents; i++)
		free(s->idents[i]);
	s->nidents = 0;
	int rc = cs_textin_lines(buf, len, s->im.label, on_line, s,
				 pass == 2 ? o->progress : NULL, o->progress_ctx, &st, s->im.err,
				 s->im.errlen);
	if (rc == 0 && s->pend_err[0] && pass == 2)
		cs_log(CS_LOG_WARN, "%s:%" PRIu64 ": the log ends inside this row (%s): it is not "
		       "imported", s->im.label, s->pend_line, s->pend_err);
	s->pend_err[0] = '\0'; /* the head's last line may be cut where the head ends */
	return rc;
}

int cs_import_nvsmi(cs_producer *p, const char *buf, size_t len, const cs_import_opts *o,
		    char *err, size_t errlen)
{
	nvsmi *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cs_imp_init(&s->im, o, err, errlen);
	s->cy = -1;
	char zone[256], *old_tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
	zone_name(o->tz, zone, sizeof zone);
	int rc = 0;
	if (o->tz && !zone_ok(o->tz))
		rc = fail(s, "--tz '%s': not a time zone (a name under /usr/share/zoneinfo such as "
			  "Europe/Berlin or UTC, or a POSIX rule such as CET-1CEST)", o->tz);
	else if (o->tz)
		setenv("TZ", o->tz, 1);
	tzset();
	/* The first pass reads the file's head only (its first 64 KiB): the
	 * header, which fields are numbers, how GPUs are told apart. The
	 * second reads it all, once. */
	char *head = rc == 0 ? malloc(HEAD) : NULL;
	if (rc == 0 && !head)
		rc = fail(s, "out of memory");
	if (rc == 0) {
		size_t hn = cs_textin_peek(buf, len, head, HEAD);
		if (hn == HEAD - 1) { /* the head ends inside a line: up to its last whole one */
			size_t k = hn;
			while (k && head[k - 1] != '\n')
				k--;
			hn = k ? k : hn;
			head[hn] = '\0';
		}
		rc = run_pass(s, head, hn, o, 1);
	}
	free(head);
	if (rc == 0 && !s->have_header)
		rc = fail(s, "empty file: expected nvidia-smi's header line");
	if (rc == 0 && !s->rows)
		rc = fail(s, "no rows after the header");
	char text[512] = "";
	for (size_t i = 0; rc == 0 && i < s->ncols; i++) {
		col *c = &s->cols[i];
		if (c->role == C_VALUE && c->numeric && c->any) {
			c->metric = (int)s->nmetrics++;
		} else if (c->role == C_VALUE || c->role == C_TEXT) {
			size_t l = strlen(text);
			snprintf(text + l, sizeof text - l, "%s%s", l ? ", " : "", c->name);
		}
	}
	if (rc == 0 && !s->nmetrics)
		rc = fail(s, "no numeric field: nothing to store (query power.draw, clocks.sm, "
			  "utilization.gpu, ...)");
	const char *devs = s->c_index >= 0 ? "index" : s->c_ident >= 0 ? s->cols[s->c_ident].name
			   : s->by_order ? "order" : "one";
	if (rc == 0 && s->by_order)
		cs_log(CS_LOG_WARN, "%s: no index, pci.bus_id or uuid column: the %zu rows that "
		       "share each timestamp are read as GPUs 0..%zu in the order printed (query "
		       "index to be sure)", s->im.label, s->group_size ? s->group_size : (size_t)2,
		       (s->group_size ? s->group_size : 2) - 1);
	if (rc == 0 && text[0])
		cs_log(CS_LOG_INFO, "%s: text fields not stored: %s", s->im.label, text);
	if (rc == 0 && s->nul_lines)
		cs_log(CS_LOG_WARN, "%s: %" PRIu64 " line(s) hold NUL bytes (the log of a job that "
		       "was killed?): their text before the NULs was read", s->im.label,
		       s->nul_lines);
	cs_buf extra = CS_BUF_INIT;
	cs_json_raw(&extra, "\"timezone\":");
	cs_json_str(&extra, zone);
	cs_json_raw(&extra, ",\"gpus_from\":");
	cs_json_str(&extra, devs);
	if (rc == 0 && cs_buf_put_u8(&extra, 0))
		rc = fail(s, "out of memory");
	if (rc == 0 && !(s->w = cs_wide_open(p, o, "nvidia-smi", "ns", o->kind ? o->kind : "hw",
					     (const char *)extra.data, err, errlen)))
		rc = -EIO;
	cs_buf_free(&extra);
	if (rc == 0) {
		const char *names[MAX_COLS], *units[MAX_COLS];
		for (size_t i = 0; i < s->ncols; i++)
			if (s->cols[i].metric >= 0) {
				names[s->cols[i].metric] = s->cols[i].name;
				units[s->cols[i].metric] = s->cols[i].unit[0] ? s->cols[i].unit : NULL;
			}
		rc = cs_wide_header(s->w, (uint32_t)s->nmetrics, names, units);
	}
	if (rc == 0 && !(s->row = malloc(s->nmetrics * sizeof *s->row)))
		rc = fail(s, "out of memory");
	if (rc == 0)
		rc = run_pass(s, buf, len, o, 2);
	/* Each GPU's last row lasts as long as the one before it. */
	for (int g = 0; rc == 0 && g < MAX_GPUS; g++) {
		pend *q = s->gpus[g];
		if (q && q->have)
			rc = emit(s, g, q->t0 + (q->rows > 1 ? q->t0 - q->prev_t0 : 0));
	}
	if (rc == 0)
		cs_log(CS_LOG_INFO, "%s: %" PRIu64 " rows, %zu series, GPUs from %s, timestamps "
		       "read in %s%s", s->im.label, s->rows, s->nmetrics, devs, zone,
		       o->tz ? "" : " (this machine's zone; --tz names another)");
	if (rc == 0 && s->odd)
		cs_log(CS_LOG_WARN, "%s: %" PRIu64 " value(s) of numeric fields are not numbers (the "
		       "first at line %" PRIu64 ", %s): stored as absent", s->im.label, s->odd,
		       s->odd_line, s->odd_what);
	if (rc == 0 && s->dup_rows)
		cs_log(CS_LOG_WARN, "%s: %" PRIu64 " row(s) repeat their GPU's previous timestamp: "
		       "skipped", s->im.label, s->dup_rows);
	if (s->w)
		rc = cs_wide_close(s->w, rc);
	if (o->tz) {
		if (old_tz)
			setenv("TZ", old_tz, 1);
		else
			unsetenv("TZ");
		tzset();
	}
	free(old_tz);
	for (size_t i = 0; i < s->nidents; i++)
		free(s->idents[i]);
	free(s->idents);
	for (int g = 0; g < MAX_GPUS; g++)
		if (s->gpus[g]) {
			free(s->gpus[g]->v);
			free(s->gpus[g]);
		}
	free(s->row);
	free(s->header);
	free(s);
	return rc;
}

int cs_nvsmi_sniff(const char *head)
{
	static const char *const fields[] = {"power.draw", "clocks.", "utilization.", "memory.used",
					     "memory.total", "temperature.gpu", "pci.bus_id",
					     "fan.speed", "pstate", "enforced.power.limit", NULL};
	size_t hl = strcspn(head, "\n");
	if (hl >= 4096)
		return 0;
	char line[4096];
	memcpy(line, head, hl);
	line[hl] = '\0';
	if (!strstr(line, "timestamp") || !strstr(line, ", "))
		return 0;
	for (const char *const *f = fields; *f; f++)
		if (strstr(line, *f))
			return 1;
	return 0;
}
