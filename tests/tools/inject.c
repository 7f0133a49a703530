/*
 * inject.c - loads libcyclescope_collector.so the way the CUDA driver
 * does (dlopen, then InitializeInjection) and prints what it returned.
 * On a machine without a driver this is the "no GPU" path of a real
 * application: the call must return cleanly with one line on stderr and
 * nothing on stdout but ours.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: inject LIBRARY\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 3;
	}
	int (*init)(void);
	void *sym = dlsym(h, "InitializeInjection");
	if (!sym) {
		fprintf(stderr, "no InitializeInjection\n");
		return 4;
	}
	memcpy(&init, &sym, sizeof init);
	int first = init();
	int second = init(); /* a second call must be harmless */
	printf("InitializeInjection=%d,%d\n", first, second);
	fflush(stdout);
	return 0;
}
