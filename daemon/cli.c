/* cli.c - shared command-line plumbing; see cli.h. */
#include "cli.h"
#include "strdist.h"

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

int cs_cli_parse(const cs_cmd *cmd, int argc, char **argv, const cs_opt *opts,
		 const char **pos, int maxpos, int *npos)
{
	*npos = 0;
	int only_pos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1] || (a[1] != '-' && a[1] != 'h')) {
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
		const char *name = a + 2;
		const char *eq = strchr(name, '=');
		size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
		const cs_opt *o = opts;
		while (o && o->name && (strlen(o->name) != nlen || strncmp(o->name, name, nlen)))
			o++;
		if (!o || !o->name) {
			const char *names[128];
			size_t k = 0;
			for (const cs_opt *q = opts; q && q->name && k < 128; q++)
				names[k++] = q->name;
			char typed[64];
			snprintf(typed, sizeof typed, "%.*s", (int)(nlen < 63 ? nlen : 63), name);
			const char *near = cs_nearest(typed, names, k, 2);
			if (near)
				return cs_cli_usage_error(cmd, "unknown option '%s' (did you mean "
							  "'--%s'?)", a, near);
			return cs_cli_usage_error(cmd, "unknown option '%s'", a);
		}
		if (!o->str) {
			if (eq)
				return cs_cli_usage_error(cmd, "option --%s takes no value",
							  o->name);
			*o->flag = 1;
			continue;
		}
		if (eq) {
			*o->str = eq + 1;
		} else {
			if (i + 1 >= argc)
				return cs_cli_usage_error(cmd, "option --%s needs a value",
							  o->name);
			*o->str = argv[++i];
		}
	}
	return 0;
}

const char *cs_cli_db_path(const char *opt)
{
	if (opt && *opt)
		return opt;
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
		flags = access(path, W_OK) ? CS_OPEN_READONLY : 0;
	}
	cs_store *s = cs_store_open(path, flags, err, sizeof err);
	if (!s)
		cs_cli_fail(cmd, "%s", err);
	return s;
}

int cs_cli_u64(const cs_cmd *cmd, const char *opt, const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!text || !*text || *text == '-' || *text == '+')
		goto bad;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || *end)
		goto bad;
	*out = v;
	return 0;
bad:
	cs_cli_usage_error(cmd, "--%s: expected a non-negative integer, got '%s'", opt,
			   text ? text : "");
	return -1;
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
		in->data = (char *)b.data;
		in->len = b.len;
		if (rc)
			cs_buf_free(&b);
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

