/*
 * collector_lib.c - loading the collector library; see collector_lib.h.
 */
#define _GNU_SOURCE /* dladdr */
#include "collector_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define LIB_NAME "libcyclescope_collector.so"

static int exe_dir(char *out, size_t outlen)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(out, outlen, "%s", buf);
	return 0;
}

#define LOAD_SYM(lib, field, name)                                             \
	do {                                                                   \
		void *sym_ = dlsym((lib)->handle, name);                       \
		memcpy(&(lib)->field, &sym_, sizeof((lib)->field));            \
	} while (0)

static int try_load(cs_colllib *lib, const char *path, char *why, size_t whylen)
{
	if (access(path, R_OK) != 0)
		return -1;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, whylen, "; %s would not load: %s", path, dlerror());
		return -1;
	}
	int (*abi)(void);
	void *sym = dlsym(h, "cs_collector_abi");
	memcpy(&abi, &sym, sizeof abi);
	if (!sym || abi() != CS_COLLECTOR_ABI) {
		snprintf(why, whylen, "; %s is from another cyclescope version", path);
		dlclose(h);
		return -1;
	}
	lib->handle = h;
	if (!realpath(path, lib->path))
		snprintf(lib->path, sizeof lib->path, "%s", path);
	LOAD_SYM(lib, list, "cs_catalog_list");
	LOAD_SYM(lib, check, "cs_catalog_check");
	LOAD_SYM(lib, hooks, "cs_hooks_list");
	LOAD_SYM(lib, describe, "cs_catalog_describe");
	if (!lib->list || !lib->check || !lib->hooks) {
		snprintf(why, whylen, "; %s lacks the catalog entry points", path);
		dlclose(h);
		lib->handle = NULL;
		return -1;
	}
	return 0;
}

/* Sanitizer runtimes abort a process that dlopens with RTLD_DEEPBIND,
 * which CUPTI does for libnvperf_host: their builds never load it just
 * for a unit. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CATALOG_UNITS 0
#else
#define CATALOG_UNITS 1
#endif

const char *cs_colllib_unit(const char *name)
{
	static cs_colllib lib;
	static int tried;
	static cs_cat_metric m;
	if (!CATALOG_UNITS || !strstr(name, "__"))
		return NULL;
	if (!tried) {
		char err[PATH_MAX + 512];
		tried = 1;
		if (cs_colllib_open(&lib, err, sizeof err))
			lib.handle = NULL;
	}
	if (!lib.handle || !lib.describe || lib.describe("GH100", name, &m) || !m.unit || !*m.unit)
		return NULL;
	return m.unit;
}

int cs_colllib_open(cs_colllib *lib, char *err, size_t errlen)
{
	memset(lib, 0, sizeof *lib);
	char dir[PATH_MAX], path[PATH_MAX + 64], why[PATH_MAX + 256] = "";
	const char *env = getenv("CYCLESCOPE_COLLECTOR");
	if (env && *env) {
		if (try_load(lib, env, why, sizeof why) == 0)
			return 0;
		snprintf(err, errlen, "CYCLESCOPE_COLLECTOR=%s: not a usable collector library%s",
			 env, why);
		return -ENOENT;
	}
	if (exe_dir(dir, sizeof dir) == 0) {
		snprintf(path, sizeof path, "%s/%s", dir, LIB_NAME);
		if (try_load(lib, path, why, sizeof why) == 0)
			return 0;
		snprintf(path, sizeof path, "%s/../lib/cyclescope/%s", dir, LIB_NAME);
		if (try_load(lib, path, why, sizeof why) == 0)
			return 0;
	}
	snprintf(err, errlen, "%s was not found next to the cyclescope binary (%s) or in "
		 "../lib/cyclescope/%s; it is built when the CUDA toolkit (nvcc, CUPTI) is "
		 "found: install it, or set CUDA_HOME, and run make again; or point "
		 "CYCLESCOPE_COLLECTOR at it", LIB_NAME, dir, why);
	return -ENOENT;
}

/* The library stays mapped: libcupti keeps threads and state that do
 * not survive being unloaded, and the process is short-lived anyway. */
void cs_colllib_close(cs_colllib *lib)
{
	if (lib)
		lib->handle = NULL;
}

const char *cs_colllib_cupti_path(void)
{
	static char path[PATH_MAX];
	void *h = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	void *sym = dlsym(h, "cuptiGetTimestamp");
	Dl_info info;
	const char *out = NULL;
	if (sym && dladdr(sym, &info) && info.dli_fname && realpath(info.dli_fname, path))
		out = path;
	dlclose(h);
	return out;
}

void cs_colllib_free_list(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

static int add_names(const char *text, char ***names, size_t *n, size_t *cap)
{
	const char *s = text;
	while (*s) {
		size_t skip = strspn(s, ", \t\r\n");
		s += skip;
		if (!*s)
			break;
		if (*s == '#') { /* to the end of the line */
			s += strcspn(s, "\n");
			continue;
		}
		size_t len = strcspn(s, ", \t\r\n#");
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			char **grown = realloc(*names, nc * sizeof *grown);
			if (!grown)
				return -ENOMEM;
			*names = grown;
			*cap = nc;
		}
		char *name = strndup(s, len);
		if (!name)
			return -ENOMEM;
		(*names)[(*n)++] = name;
		s += len;
	}
	return 0;
}

/* A shipped set's file: configs/metric-sets/NAME.txt beside the binary
 * (the build tree) or in ../share/cyclescope/metric-sets. */
static int find_set(const char *name, char *out, size_t outlen)
{
	char dir[PATH_MAX];
	if (strchr(name, '/') || exe_dir(dir, sizeof dir) < 0)
		return -1;
	static const char *const places[] = {"../configs/metric-sets", "../share/cyclescope/metric-sets",
					     "configs/metric-sets"};
	for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
		snprintf(out, outlen, "%s/%s/%s.txt", dir, places[i], name);
		if (access(out, R_OK) == 0)
			return 0;
	}
	snprintf(out, outlen, "configs/metric-sets/%s.txt", name);
	return access(out, R_OK) == 0 ? 0 : -1;
}

int cs_colllib_read_metrics(const char *spec, char ***names, size_t *n, char *err,
			    size_t errlen)
{
	*names = NULL;
	*n = 0;
	size_t cap = 0;
	int rc;
	if (spec[0] == '@') {
		const char *file = spec + 1;
		char found[PATH_MAX + 128];
		if (access(file, R_OK) != 0 && find_set(file, found, sizeof found) == 0)
			file = found;
		cs_cli_input in;
		if ((rc = cs_cli_read_file(file, &in, err, errlen)) < 0) {
			if (!strchr(spec + 1, '/'))
				snprintf(err + strlen(err), errlen - strlen(err),
					 " (nor is it a set in configs/metric-sets/)");
			return rc;
		}
		char *text = in.data ? strndup(in.data, in.len) : strdup("");
		cs_cli_free_file(&in);
		if (!text)
			return -ENOMEM;
		rc = add_names(text, names, n, &cap);
		free(text);
	} else {
		rc = add_names(spec, names, n, &cap);
	}
	if (rc == 0 && *n == 0) {
		snprintf(err, errlen, "%s: no metric names", spec);
		rc = -EINVAL;
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		cs_colllib_free_list(*names, *n);
		*names = NULL;
		*n = 0;
	}
	return rc;
}

char *cs_colllib_join(char *const *names, size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	char *out = malloc(len);
	if (!out)
		return NULL;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		if (i)
			out[at++] = ',';
		size_t l = strlen(names[i]);
		memcpy(out + at, names[i], l);
		at += l;
	}
	out[at] = '\0';
	return out;
}
