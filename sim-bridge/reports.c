/*
 * reports.c - Nsight's binary reports, converted by their own tools
 * (reports.h).
 */
#include "reports.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ncu_csv.h"
#include "nsys_sqlite.h"
#include "textin.h"

extern char **environ;

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n > t && !strcmp(s + n - t, tail);
}

int cs_reports_is_nsys(const char *path)
{
	return ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep");
}

int cs_reports_is_ncu(const char *path)
{
	return ends_with(path, ".ncu-rep");
}

/* Whether tool is an executable on PATH. */
static int on_path(const char *tool)
{
	const char *path = getenv("PATH");
	char full[4096];
	for (const char *p = path ? path : ""; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(full, sizeof full, "%.*s/%s", (int)n, n ? p : ".", tool);
		if (access(full, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

/* A new private directory for the conversion's files. */
static int temp_dir(char *dir, size_t len, char *err, size_t errlen)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, len, "%s/cyclescope-import-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		int e = errno;
		snprintf(err, errlen, "making a temporary directory in %s: %s", t && *t ? t : "/tmp",
			 strerror(e));
		return -e;
	}
	return 0;
}

/* Runs argv with stdout to out_path (or /dev/null) and stderr to
 * log_path; 0 when it exits 0, else -EIO with its last stderr line. */
static int run_tool(char *const argv[], const char *out_path, const char *log_path, char *err,
		    size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null",
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		snprintf(err, errlen, "running %s: %s", argv[0], strerror(rc));
		return -rc;
	}
	int st = 0;
	pid_t w;
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w < 0) {
		snprintf(err, errlen, "waiting for %s: %s", argv[0], strerror(errno));
		return -EIO;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	char last[512] = "", line[512];
	FILE *f = fopen(log_path, "r");
	while (f && fgets(line, sizeof line, f))
		if (line[strspn(line, " \t\r\n")])
			snprintf(last, sizeof last, "%s", line);
	if (f)
		fclose(f);
	last[strcspn(last, "\r\n")] = '\0';
	if (WIFEXITED(st))
		snprintf(err, errlen, "%s exited with status %d%s%s", argv[0], WEXITSTATUS(st),
			 last[0] ? ": " : "", last);
	else
		snprintf(err, errlen, "%s was killed by signal %d", argv[0], WTERMSIG(st));
	return -EIO;
}

/* Removes dir's files (the conversion's own, flat) and dir. */
static void remove_dir(const char *dir, const char *const *names)
{
	char p[4200];
	for (; *names; names++) {
		snprintf(p, sizeof p, "%s/%s", dir, *names);
		unlink(p);
	}
	rmdir(dir);
}

/* The whole file at path into a new buffer (*len bytes). */
static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t n = 0, cap = 0;
	while (f) {
		if (n == cap) {
			char *g = realloc(b, cap = cap ? cap * 2 : 1 << 20);
			if (!g)
				break;
			b = g;
		}
		size_t k = fread(b + n, 1, cap - n, f);
		n += k;
		if (k == 0) {
			if (ferror(f))
				break;
			fclose(f);
			*len = n;
			return b ? b : calloc(1, 1);
		}
	}
	snprintf(err, errlen, "reading %s: %s", path, strerror(errno ? errno : ENOMEM));
	if (f)
		fclose(f);
	free(b);
	return NULL;
}

/* path without its report extension, for the commands a message gives. */
static void stem(const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s", path);
	char *dot = strrchr(out, '.');
	if (dot && strchr(dot, '/') == NULL)
		*dot = '\0';
}

/* A report's tool and how it exports: its arguments and the commands a
 * person runs by hand, with @IN (the report), @OUT (the export in the
 * temporary directory) and @BASE (the report's name without extension). */
typedef struct tool {
	const char *name, *what, *reads;
	const char *file;      /* the export's name in the temporary directory */
	int to_stdout;         /* the export is the tool's standard output */
	const char *const *argv;
	const char *by_hand;
} tool;

static const char *const nsys_argv[] = {"nsys", "export", "--type", "sqlite", "--force-overwrite",
					 "true", "--output", "@OUT", "@IN", NULL};
static const tool nsys_tool = {"nsys", "an Nsight Systems report", "its SQLite export",
			       "report.sqlite", 0, nsys_argv,
			       "nsys export --type sqlite --output @BASE.sqlite @IN\n"
			       "then: cyclescope import @BASE.sqlite"};
static const char *const ncu_argv[] = {"ncu", "--import", "@IN", "--csv", "--page", "raw", NULL};
static const tool ncu_tool = {"ncu", "an Nsight Compute report", "its CSV export", "raw.csv", 1,
			      ncu_argv,
			      "ncu --import @IN --csv --page raw > @BASE.csv\n"
			      "then: cyclescope import @BASE.csv"};

/* t with @IN, @OUT and @BASE replaced, into out. */
static void subst(const char *t, const char *in, const char *outp, const char *base, char *out,
		  size_t len)
{
	size_t o = 0;
	while (*t && o + 1 < len) {
		const char *v = !strncmp(t, "@IN", 3) ? in : !strncmp(t, "@OUT", 4) ? outp
			      : !strncmp(t, "@BASE", 5) ? base : NULL;
		if (v) {
			o += (size_t)snprintf(out + o, len - o, "%s", v);
			t += t[1] == 'I' ? 3 : t[1] == 'O' ? 4 : 5;
		} else {
			out[o++] = *t++;
		}
	}
	out[o < len ? o : len - 1] = '\0';
}

/* Exports the report at path with t into a new temporary directory dir:
 * the export's path into out. 0, or a negative errno with what to run by
 * hand in err (dir is then gone). */
static int convert(const tool *t, const char *path, char *dir, size_t dirlen, char *out,
		   size_t outlen, char *err, size_t errlen)
{
	char base[4096], manual[8192];
	stem(path, base, sizeof base);
	subst(t->by_hand, path, "", base, manual, sizeof manual);
	if (!on_path(t->name)) {
		snprintf(err, errlen, "%s is %s; cyclescope reads %s, and %s is not on PATH here. "
			 "Where it is installed, run:\n  %s", path, t->what, t->reads, t->name, manual);
		return -ENOENT;
	}
	int rc = temp_dir(dir, dirlen, err, errlen);
	if (rc)
		return rc;
	char log[4200], args[10][4200];
	char *argv[11];
	snprintf(out, outlen, "%s/%s", dir, t->file);
	snprintf(log, sizeof log, "%s/tool.log", dir);
	size_t n = 0;
	for (; t->argv[n] && n < 10; n++) {
		subst(t->argv[n], path, out, base, args[n], sizeof args[n]);
		argv[n] = args[n];
	}
	argv[n] = NULL;
	fprintf(stderr, "cyclescope import: converting %s with %s %s\n", path, t->name, argv[1]);
	rc = run_tool(argv, t->to_stdout ? out : NULL, log, err, errlen);
	if (rc) {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (converting %s; by hand: %s)", path, manual);
		const char *const files[] = {t->file, "tool.log", NULL};
		remove_dir(dir, files);
	}
	return rc;
}

static void convert_done(const tool *t, const char *dir)
{
	const char *const files[] = {t->file, "tool.log", NULL};
	remove_dir(dir, files);
}

int cs_import_nsys_rep(cs_producer *p, const char *path, const cs_import_opts *o, char *err,
		       size_t errlen)
{
	char dir[4096], out[4300];
	int rc = convert(&nsys_tool, path, dir, sizeof dir, out, sizeof out, err, errlen);
	if (rc)
		return rc;
	cs_import_opts io = *o;
	io.label = path;
	rc = cs_import_nsys_sqlite(p, out, &io, err, errlen);
	convert_done(&nsys_tool, dir);
	return rc;
}

int cs_import_ncu_rep(cs_producer *p, const char *path, const cs_import_opts *o, char *err,
		      size_t errlen)
{
	char dir[4096], out[4300];
	int rc = convert(&ncu_tool, path, dir, sizeof dir, out, sizeof out, err, errlen);
	if (rc)
		return rc;
	size_t len = 0;
	char *csv = slurp(out, &len, err, errlen);
	if (!csv) {
		rc = -EIO;
	} else {
		cs_import_opts io = *o;
		io.label = path;
		rc = cs_import_ncu_csv(p, csv, len, &io, err, errlen);
		free(csv);
	}
	convert_done(&ncu_tool, dir);
	return rc;
}

int cs_reports_gzipped_sqlite(const char *buf, size_t len)
{
	char head[17];
	return cs_textin_is_gzip(buf, len) && cs_textin_peek(buf, len, head, sizeof head) == 16 &&
	       !memcmp(head, "SQLite format 3", 16);
}

int cs_reports_gunzip(const char *buf, size_t len, const char *label, char *out, size_t outlen,
		      char *err, size_t errlen)
{
	char dir[4096];
	int rc = temp_dir(dir, sizeof dir, err, errlen);
	if (rc)
		return rc;
	snprintf(out, outlen, "%s/export.sqlite", dir);
	int fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", out, strerror(-rc));
		rmdir(dir);
		return rc;
	}
	/* The SQLite header says how large the file is: page size x pages. */
	unsigned char h[100];
	size_t max = SIZE_MAX;
	if (cs_textin_peek(buf, len, (char *)h, sizeof h) == sizeof h - 1) {
		size_t page = (size_t)h[16] << 8 | h[17];
		size_t pages = (size_t)h[28] << 24 | (size_t)h[29] << 16 | (size_t)h[30] << 8 | h[31];
		page = page == 1 ? 65536 : page;
		if (pages)
			max = page * pages;
	}
	rc = cs_textin_gunzip(buf, len, fd, max, label, err, errlen);
	if (close(fd) < 0 && rc == 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", out, strerror(-rc));
	}
	if (rc)
		cs_reports_cleanup(out);
	return rc;
}

void cs_reports_cleanup(const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	static const char *const files[] = {"export.sqlite", "export.sqlite-journal", NULL};
	remove_dir(dir, files);
}
