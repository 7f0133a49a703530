/*
 * reports.c - Nsight's binary reports, converted by their own tools
 * (reports.h).
 */
#include "reports.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
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
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
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

int cs_import_nsys_rep(cs_producer *p, const char *path, const cs_import_opts *o, char *err,
		       size_t errlen)
{
	char base[4096];
	stem(path, base, sizeof base);
	if (!on_path("nsys")) {
		snprintf(err, errlen, "%s is an Nsight Systems report; cyclescope reads its SQLite "
			 "export, and nsys is not on PATH here. Where Nsight Systems is installed, run:\n"
			 "  nsys export --type sqlite --output %s.sqlite %s\n"
			 "then: cyclescope import %s.sqlite", path, base, path, base);
		return -ENOENT;
	}
	char dir[4096], out[4200], log[4200];
	int rc = temp_dir(dir, sizeof dir, err, errlen);
	if (rc)
		return rc;
	snprintf(out, sizeof out, "%s/report.sqlite", dir);
	snprintf(log, sizeof log, "%s/nsys.log", dir);
	char *argv[] = {"nsys", "export", "--type", "sqlite", "--force-overwrite", "true",
			"--output", out, (char *)path, NULL};
	fprintf(stderr, "cyclescope import: converting %s with nsys export\n", path);
	rc = run_tool(argv, NULL, log, err, errlen);
	if (rc == 0) {
		cs_import_opts io = *o;
		io.label = path;
		rc = cs_import_nsys_sqlite(p, out, &io, err, errlen);
	} else {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (converting %s: nsys export --type sqlite --output "
			 "%s.sqlite %s)", path, base, path);
	}
	static const char *const files[] = {"report.sqlite", "nsys.log", NULL};
	remove_dir(dir, files);
	return rc;
}

int cs_import_ncu_rep(cs_producer *p, const char *path, const cs_import_opts *o, char *err,
		      size_t errlen)
{
	char base[4096];
	stem(path, base, sizeof base);
	if (!on_path("ncu")) {
		snprintf(err, errlen, "%s is an Nsight Compute report; cyclescope reads its CSV "
			 "export, and ncu is not on PATH here. Where Nsight Compute is installed, run:\n"
			 "  ncu --import %s --csv --page raw > %s.csv\n"
			 "then: cyclescope import %s.csv", path, path, base, base);
		return -ENOENT;
	}
	char dir[4096], out[4200], log[4200];
	int rc = temp_dir(dir, sizeof dir, err, errlen);
	if (rc)
		return rc;
	snprintf(out, sizeof out, "%s/raw.csv", dir);
	snprintf(log, sizeof log, "%s/ncu.log", dir);
	char *argv[] = {"ncu", "--import", (char *)path, "--csv", "--page", "raw", NULL};
	fprintf(stderr, "cyclescope import: converting %s with ncu --import\n", path);
	rc = run_tool(argv, out, log, err, errlen);
	size_t len = 0;
	char *csv = NULL;
	if (rc) {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (converting %s: ncu --import %s --csv --page raw)",
			 path, path);
	} else if (!(csv = slurp(out, &len, err, errlen))) {
		rc = -EIO;
	} else {
		cs_import_opts io = *o;
		io.label = path;
		rc = cs_import_ncu_csv(p, csv, len, &io, err, errlen);
		free(csv);
	}
	static const char *const files[] = {"raw.csv", "ncu.log", NULL};
	remove_dir(dir, files);
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
	rc = cs_textin_gunzip(buf, len, fd, label, err, errlen);
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
