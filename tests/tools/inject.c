/*
 * inject.c - loads libcyclescope_collector.so the way the CUDA driver
 * does (dlopen, then InitializeInjection) and prints what it returned.
 * On a machine without a driver this is the "no GPU" path of a real
 * application: the call must return cleanly with one line on stderr and
 * nothing on stdout but ours.
 *
 *   inject LIBRARY [SECONDS]
 * With SECONDS the "application" then lives that long (a fraction is
 * fine) before it exits normally: with CYCLESCOPE_SOURCE=test the
 * collector samples the clock meanwhile (docs/collector.md), so a test
 * can arm, trigger and follow it through a real daemon. SIGUSR1 ends
 * that life early, as a normal exit (so a test ends the run when it is
 * ready for the end, not after a time a busy machine may outlast).
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t ended;

static void on_usr1(int sig)
{
	(void)sig;
	ended = 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: inject LIBRARY [SECONDS]\n");
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
	if (argc > 2) {
		double sec = atof(argv[2]);
		struct timespec ts = {(time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9)};
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		while (!ended && nanosleep(&ts, &ts) != 0)
			;
	}
	return 0;
}
