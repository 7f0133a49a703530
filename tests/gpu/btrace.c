/*
 * btrace.c - LD_PRELOAD'ed into a workload by the GPU check (run.sh) where
 * a run crashed before: on a fatal signal, writes the signal, the thread
 * and the stack (library+offset per frame) to stderr, then dies of the
 * signal as it would have. Nothing else changes.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	char msg[160];
	int n = snprintf(msg, sizeof msg, "btrace: signal %d (%s) code %d addr %p in thread %ld\n",
			 sig, strsignal(sig), si->si_code, si->si_addr, (long)syscall(SYS_gettid));
	if (write(2, msg, (size_t)n) < 0)
		return;
	void *frames[64];
	int k = backtrace(frames, 64);
	backtrace_symbols_fd(frames, k, 2);
	raise(sig); /* SA_RESETHAND: the default action now */
}

__attribute__((constructor)) static void btrace_init(void)
{
	void *f[1];
	backtrace(f, 1); /* loads libgcc_s now, not in the handler */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	int sigs[] = {SIGFPE, SIGSEGV, SIGBUS, SIGILL, SIGABRT};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &sa, NULL);
}
