/* curl_lib.c - libcurl loaded on first use; see curl_lib.h. */
#include "curl_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static cs_curl_fns lc;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init(void)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(lc.err, sizeof lc.err, "cannot load libcurl (install libcurl4): %s",
			 dlerror());
		return;
	}
	struct {
		void **fn;
		const char *name;
	} syms[] = {
		{(void **)&lc.global_init, "curl_global_init"},
		{(void **)&lc.easy_init, "curl_easy_init"},
		{(void **)&lc.easy_setopt, "curl_easy_setopt"},
		{(void **)&lc.easy_perform, "curl_easy_perform"},
		{(void **)&lc.easy_getinfo, "curl_easy_getinfo"},
		{(void **)&lc.easy_reset, "curl_easy_reset"},
		{(void **)&lc.easy_cleanup, "curl_easy_cleanup"},
		{(void **)&lc.easy_strerror, "curl_easy_strerror"},
		{(void **)&lc.easy_escape, "curl_easy_escape"},
		{(void **)&lc.free, "curl_free"},
		{(void **)&lc.slist_append, "curl_slist_append"},
		{(void **)&lc.slist_free_all, "curl_slist_free_all"},
	};
	for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
		if (!(*syms[i].fn = dlsym(h, syms[i].name))) {
			snprintf(lc.err, sizeof lc.err, "libcurl.so.4 has no %s", syms[i].name);
			return;
		}
	if (lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		snprintf(lc.err, sizeof lc.err, "libcurl: global initialisation failed");
}

const cs_curl_fns *cs_curl(void)
{
	pthread_once(&curl_once, curl_init);
	return &lc;
}
