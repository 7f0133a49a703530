/* cli.c - shared command-line plumbing; see cli.h. */
#include "cli.h"
#include "strdist.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "log.h"
#include "reader.h"
#include "runs.h"
#include "text.h"

static void vprint(const cs_cmd *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "cyclescope %s: ", cmd->name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cs_cli_usage_error(const cs_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'cyclescope %s --help'.\n", cmd->name);
	return CS_EXIT_USAGE;
}

int cs_cli_fail(const cs_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint(cmd, fmt, ap);
	va_end(ap);
	return CS_EXIT_FAIL;
}

cs_cli_globals cs_cli_g;

void cs_cli_say(const char *fmt, ...)
{
	if (cs_cli_g.quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cs_cli_wrote(const char *file, uint64_t bytes, const char *format, int64_t rows, int json)
{
	if (!json) {
		cs_cli_say("wrote %s (%llu bytes)", file, (unsigned long long)bytes);
		return;
	}
	cs_buf b = CS_BUF_INIT;
	cs_json_raw(&b, "{\"file\":");
	cs_json_str(&b, file);
	if (format) {
		cs_json_raw(&b, ",\"format\":");
		cs_json_str(&b, format);
	}
	cs_buf_printf(&b, ",\"bytes\":%llu", (unsigned long long)bytes);
	if (rows >= 0)
		cs_buf_printf(&b, ",\"rows\":%lld", (long long)rows);
	cs_json_raw(&b, "}\n");
	fwrite(b.data, 1, b.len, stdout);
	cs_buf_free(&b);
}

int cs_cli_write(const cs_cmd *cmd, const char *path, const void *data, size_t len, int say,
		 int json)
{
	FILE *f = path ? fopen(path, "wb") : stdout;
	int bad = !f || fwrite(data, 1, len, f) != len;
	if (f && path)
		bad |= fclose(f) != 0;
	else if (f)
		bad |= fflush(f) != 0;
	if (bad)
		return cs_cli_fail(cmd, "%s: %s", path ? path : "standard output", strerror(errno));
	if (say && path)
		cs_cli_wrote(path, len, NULL, -1, json);
	return CS_EXIT_OK;
}

static void set_verbosity(void)
{
	if (cs_cli_g.quiet)
		cs_log_set_level(CS_LOG_WARN);
	else if (cs_cli_g.verbose)
		cs_log_set_level(cs_cli_g.verbose > 1 ? CS_LOG_DEBUG : CS_LOG_INFO);
}

int cs_cli_parse_globals(int argc, char **argv)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--db") || !strncmp(a, "--db=", 5)) {
			if (!a[4] && i + 1 >= argc) {
				fprintf(stderr, "cyclescope: --db needs a value\n");
				return -1;
			}
			cs_cli_g.db = a[4] ? a + 5 : argv[++i];
		} else if (!strcmp(a, "--quiet")) {
			cs_cli_g.quiet = 1;
		} else if (!strcmp(a, "--verbose")) {
			cs_cli_g.verbose++;
		} else if (!strcmp(a, "--json")) {
			cs_cli_g.json = 1;
		} else if (a[1] != '-' && strspn(a + 1, "qvj") == strlen(a + 1)) {
			for (const char *c = a + 1; *c; c++)
				*c == 'q' ? (void)(cs_cli_g.quiet = 1)
				: *c == 'v' ? (void)cs_cli_g.verbose++ : (void)(cs_cli_g.json = 1);
		} else {
			break; /* --help, --version, or an unknown one: main says */
		}
	}
	set_verbosity();
	return i;
}

/* The long option a short letter stands for, on commands that have it. */
static const char *short_name(char c)
{
	switch (c) {
	case 'o': return "output";
	case 'j': return "json";
	case 'q': return "quiet";
	case 'v': return "verbose";
	case 'n': return "name";
	case 'm': return "metric";
	default: return NULL;
	}
}

static const cs_opt *find_opt(const cs_opt *opts, const char *name, size_t nlen)
{
	for (const cs_opt *o = opts; o && o->name; o++)
		if (strlen(o->name) == nlen && !strncmp(o->name, name, nlen))
			return o;
	return NULL;
}

/* Options every command takes, unless it has its own of the name. */
static int generic_opt(const char *name, size_t nlen, int *takes_value)
{
	*takes_value = nlen == 6 && !strncmp(name, "output", 6);
	return *takes_value || (nlen == 5 && !strncmp(name, "quiet", 5)) ||
	       (nlen == 7 && !strncmp(name, "verbose", 7));
}

static void apply_generic(const char *name, const char *value, const char **output)
{
	if (!strcmp(name, "output"))
		*output = value;
	else if (!strcmp(name, "quiet"))
		cs_cli_g.quiet = 1;
	else
		cs_cli_g.verbose++;
}

static int unknown(const cs_cmd *cmd, const cs_opt *opts, const char *a, const char *name,
		   size_t nlen)
{
	const char *names[131];
	size_t k = 0;
	for (const cs_opt *q = opts; q && q->name && k < 128; q++)
		names[k++] = q->name;
	names[k++] = "quiet";
	names[k++] = "verbose";
	names[k++] = "output";
	char typed[64];
	snprintf(typed, sizeof typed, "%.*s", (int)(nlen < 63 ? nlen : 63), name);
	const char *near = cs_nearest(typed, names, k, 2);
	if (near)
		return cs_cli_usage_error(cmd, "unknown option '%s' (did you mean '--%s'?)", a, near);
	return cs_cli_usage_error(cmd, "unknown option '%s'", a);
}

int cs_cli_parse(const cs_cmd *cmd, int argc, char **argv, const cs_opt *opts,
		 const char **pos, int maxpos, int *npos)
{
	*npos = 0;
	int only_pos = 0;
	const char *output = NULL; /* the generic -o */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1]) {
			if (*npos == maxpos)
				return cs_cli_usage_error(cmd, "unexpected argument '%s'", a);
			pos[(*npos)++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(cmd->usage, stdout);
			return CS_CLI_HELP;
		}
		const char *name, *value = NULL;
		size_t nlen;
		if (a[1] != '-') {
			/* a cluster of short options: -jq, -oFILE, -o FILE */
			for (const char *c = a + 1; *c; c++) {
				const char *ln = short_name(*c);
				const cs_opt *o = ln ? find_opt(opts, ln, strlen(ln)) : NULL;
				int tv = 0;
				if (*c == 'h') {
					fputs(cmd->usage, stdout);
					return CS_CLI_HELP;
				}
				if (!o && !(ln && generic_opt(ln, strlen(ln), &tv)))
					return cs_cli_usage_error(cmd, "unknown option '-%c'", *c);
				if (o ? o->str != NULL : tv) {
					const char *v = c[1] ? c + 1 : (i + 1 < argc ? argv[++i] : NULL);
					if (!v)
						return cs_cli_usage_error(cmd, "option -%c needs a value", *c);
					if (o)
						*o->str = v;
					else
						apply_generic(ln, v, &output);
					break;
				}
				if (o)
					*o->flag = 1;
				else
					apply_generic(ln, NULL, &output);
			}
			continue;
		}
		name = a + 2;
		const char *eq = strchr(name, '=');
		nlen = eq ? (size_t)(eq - name) : strlen(name);
		const cs_opt *o = find_opt(opts, name, nlen);
		int tv = 0;
		if (!o && !generic_opt(name, nlen, &tv))
			return unknown(cmd, opts, a, name, nlen);
		if (o ? !o->str : !tv) {
			if (eq)
				return cs_cli_usage_error(cmd, "option --%.*s takes no value", (int)nlen,
							  name);
			if (o)
				*o->flag = 1;
			else
				apply_generic(nlen == 5 ? "quiet" : "verbose", NULL, &output);
			continue;
		}
		if (eq) {
			value = eq + 1;
		} else {
			if (i + 1 >= argc)
				return cs_cli_usage_error(cmd, "option --%.*s needs a value", (int)nlen,
							  name);
			value = argv[++i];
		}
		if (o)
			*o->str = value;
		else
			apply_generic("output", value, &output);
	}
	if (cs_cli_g.json) {
		const cs_opt *o = find_opt(opts, "json", 4);
		if (!o)
			return cs_cli_usage_error(cmd, "-j/--json: this command has no JSON output");
		if (o->flag)
			*o->flag = 1;
	}
	set_verbosity();
	if (output && !freopen(output, "w", stdout))
		return cs_cli_fail(cmd, "-o %s: %s", output, strerror(errno));
	return 0;
}

int cs_cli_parse_one(const cs_cmd *cmd, int argc, char **argv, const cs_opt *opts,
		     const char *what, const char **arg)
{
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, arg, 1, &npos);
	if (rc)
		return rc;
	if (npos != 1)
		return cs_cli_usage_error(cmd, "expected %s", what);
	return 0;
}

const char *cs_cli_db_path(const char *opt)
{
	if (opt && *opt)
		return opt;
	if (cs_cli_g.db && *cs_cli_g.db)
		return cs_cli_g.db;
	const char *env = getenv("CYCLESCOPE_DB");
	return env && *env ? env : "cyclescope.db";
}

cs_store *cs_cli_open(const cs_cmd *cmd, const char *path,
		      enum cs_cli_access mode)
{
	char err[600];
	int flags;
	if (mode == CS_CLI_WRITE) {
		flags = CS_OPEN_CREATE;
	} else if (access(path, F_OK)) {
		cs_cli_fail(cmd, "%s: no such database (import or record a run first, "
				 "or pass --db FILE)", path);
		return NULL;
	} else {
		flags = mode == CS_CLI_READONLY || access(path, W_OK) ? CS_OPEN_READONLY : 0;
	}
	/* a command reads and writes its store from its own thread only */
	cs_store *s = cs_store_open(path, flags | CS_OPEN_ONE_THREAD, err, sizeof err);
	if (!s)
		cs_cli_fail(cmd, "%s", err);
	return s;
}

int cs_cli_labels(const cs_cmd *cmd, const char *job, const char *rank, const char *more,
		  cs_buf *out)
{
	int first = 1;
	cs_json_raw(out, "{");
	if (job) {
		if (!*job)
			return cs_cli_usage_error(cmd, "--job: expected a job name");
		cs_json_key(out, &first, "job");
		cs_json_str(out, job);
	}
	if (rank) {
		uint64_t r;
		if (cs_cli_u64(cmd, "rank", rank, &r) < 0)
			return CS_EXIT_USAGE;
		char num[32];
		snprintf(num, sizeof num, "%llu", (unsigned long long)r);
		cs_json_key(out, &first, "rank");
		cs_json_str(out, num);
	}
	/* k=v,k=v: a key is letters, digits, '_', '-' or '.' */
	for (const char *p = more; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		size_t kn = eq ? (size_t)(eq - p) : 0;
		int ok = eq && kn > 0;
		for (size_t i = 0; ok && i < kn; i++)
			ok = isalnum((unsigned char)p[i]) || strchr("_-.", p[i]);
		if (!ok)
			return cs_cli_usage_error(cmd, "--label: expected KEY=VALUE[,KEY=VALUE...], "
						  "found '%.*s'", (int)n, p);
		char key[128];
		snprintf(key, sizeof key, "%.*s", (int)(kn < 127 ? kn : 127), p);
		cs_json_key(out, &first, key);
		cs_json_strn(out, eq + 1, n - kn - 1);
		p += n + (comma != NULL);
	}
	cs_json_raw(out, "}");
	return cs_buf_put_u8(out, 0) ? CS_EXIT_FAIL : 0;
}

int cs_cli_u64(const cs_cmd *cmd, const char *opt, const char *text, uint64_t *out)
{
	if (cs_parse_u64(text, out) == 0)
		return 0;
	cs_cli_usage_error(cmd, "--%s: expected a non-negative integer, got '%s'", opt,
			   text ? text : "");
	return -1;
}

int cs_cli_window(const cs_cmd *cmd, cs_store *s, const char *run, const char *from,
		  const char *to, uint64_t *f, uint64_t *t)
{
	int64_t id;
	char err[1400];
	if ((!from && !to) || cs_read_find_run(s, run, &id))
		return 0;
	const char *bad = from && cs_runs_time(s, id, from, f, err, sizeof err) ? "from"
			  : to && cs_runs_time(s, id, to, t, err, sizeof err)	 ? "to"
										 : NULL;
	if (bad)
		cs_cli_usage_error(cmd, "--%s: %s", bad, err);
	return bad ? -1 : 0;
}

int cs_cli_stdout_sink(void *ctx, const void *p, size_t n)
{
	(void)ctx;
	if (fwrite(p, 1, n, stdout) != n)
		return -EIO;
	return 0;
}

int cs_cli_read_file(const char *path, cs_cli_input *in, char *err, size_t errlen)
{
	memset(in, 0, sizeof *in);
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (st.st_size > 0) {
			void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (p == MAP_FAILED) {
				rc = -errno;
				snprintf(err, errlen, "%s: %s", path, strerror(errno));
			} else {
				in->data = p;
				in->len = (size_t)st.st_size;
				in->mapped = 1;
			}
		}
	} else if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		snprintf(err, errlen, "%s: is a directory", path);
	} else {
		cs_buf b = CS_BUF_INIT;
		for (;;) {
			if (cs_buf_reserve(&b, 1 << 16)) {
				rc = -ENOMEM;
				break;
			}
			ssize_t n = read(fd, b.data + b.len, b.cap - b.len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				rc = -errno;
				snprintf(err, errlen, "%s: %s", path, strerror(errno));
				break;
			}
			if (n == 0)
				break;
			b.len += (size_t)n;
		}
		if (rc) {
			cs_buf_free(&b);
		} else {
			in->data = (char *)b.data;
			in->len = b.len;
		}
	}
	if (fd > 0)
		close(fd);
	return rc;
}

void cs_cli_free_file(cs_cli_input *in)
{
	if (in->mapped)
		munmap(in->data, in->len);
	else
		free(in->data);
}

