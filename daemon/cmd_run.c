/*
 * cmd_run.c - `cyclescope run -- CMD`: runs CMD with the collector
 * injected (CUDA_INJECTION64_PATH, and NVTX_INJECTION64_PATH for --nvtx)
 * and its settings in CYCLESCOPE_* variables, which children inherit;
 * waits and exits with CMD's status.
 *
 * The metric set is checked on the host first (--chip, GH100 unless
 * told), so a set that cannot be sampled is a usage error before a long
 * job starts rather than a log line after it.
 *
 * Every process the collector is loaded into appends one line to a
 * status file (CYCLESCOPE_STATUS, in a private temporary directory):
 * the run it recorded, or why it recorded none. After CMD ends, run
 * says on stderr what was recorded, and why nothing was when nothing
 * was (no process initialised CUDA, no driver, CUPTI refused).
 */
#define _DEFAULT_SOURCE /* realpath, mkdtemp */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "collector_lib.h"

static int run_run(int argc, char **argv);

const cs_cmd cs_cmd_run = {
	"run", run_run, "run a CUDA program with the collector injected",
	"usage: cyclescope run [--db F | --socket PATH] [--metrics LIST|@FILE]\n"
	"                      [--apis PATTERNS] [--kernels PATTERNS] [--nvtx]\n"
	"                      [--interval-ns N] [--buffer-mb N] [--mode continuous|window]\n"
	"                      [--armed] [--ranges always|in-windows] [--job NAME] [--rank N]\n"
	"                      [--name NAME] [--devices LIST] [--chip CHIP] [--no-check]\n"
	"                      -- CMD [ARGS...]\n"
	"       cyclescope run --list-apis [--apis PATTERNS]\n\n"
	"Runs CMD (and every CUDA process it starts) with libcyclescope_collector.so\n"
	"injected: PM sampling of the metric set on every device CMD uses, a range for\n"
	"each call of a hooked API and for each kernel, copy and memset on the device.\n"
	"Output goes to the daemon's socket (--socket, else $CYCLESCOPE_SOCKET or the\n"
	"default), or, with --db or when no daemon answers, straight into the\n"
	"database file. Exits with CMD's status.\n\n"
	"  --metrics     comma list or @FILE / @SET (@hopper-l2, @general, @memory-io);\n"
	"                default: @general. Checked to fit one pass on --chip (GH100)\n"
	"                unless --no-check\n"
	"  --apis        runtime/driver API globs, suffixes like _v2/_ptsz ignored\n"
	"                (default " CS_COLLECTOR_DEFAULT_APIS ")\n"
	"  --kernels     kernel symbol globs that become ranges (default '*')\n"
	"  --nvtx        NVTX push/pop and start/end ranges\n"
	"  --interval-ns sampling interval (default 100000 = 10 kHz)\n"
	"  --buffer-mb   hardware buffer per device, in GPU memory (default 256)\n"
	"  --mode        continuous (whole process) or window (sample only from a\n"
	"                hooked API's entry until its device work is done)\n"
	"  --armed       set up at the first context, sample nothing until the daemon\n"
	"                says so ('cyclescope trigger', the UI's collectors page);\n"
	"                needs a daemon (--mode armed)\n"
	"  --ranges      record API, kernel and NVTX ranges always, or only those in\n"
	"                sampling windows (default: in-windows when armed, else always)\n"
	"  --job NAME    the job this process belongs to, for grouping on the daemon\n"
	"                (default: $SLURM_JOB_ID, $TORCHELASTIC_RUN_ID, ... when set)\n"
	"  --rank N      this process's rank in the job, kept in the run's metadata\n"
	"                (default: $RANK, $SLURM_PROCID, $OMPI_COMM_WORLD_RANK, ...)\n"
	"  --devices     CUDA ordinals to sample, e.g. 0,1 (default all)\n"
	"  --name        the run's name (default: the program's name)\n"
	"  --db          write this database file, never the daemon\n"
	"  --socket      the daemon's ingest socket\n"
	"  --chip        the chip the metric set is checked against (default GH100)\n"
	"  --no-check    skip that check (the collector checks on the device)\n"
	"  --list-apis   print the callbacks the --apis patterns select, then exit\n\n"
	"After CMD ends, one line per process that loaded the collector says on\n"
	"stderr what it recorded, or why it recorded nothing.\n\n"
	"docs/collector.md has the details: overhead, privileges, conflicts.\n",
};

static pid_t child_pid;

/* The value of key in a tab-separated status line, or "". */
static const char *field(const char *line, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	out[0] = '\0';
	for (const char *p = line; p && *p; p = strchr(p, '\t') ? strchr(p, '\t') + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, "\t\n");
			snprintf(out, outlen, "%.*s", (int)n, p + kl + 1);
			break;
		}
	}
	return out;
}

/* What the collector said it recorded, from the status file, on stderr. */
static void report_status(const char *path, const char *prog)
{
	FILE *f = fopen(path, "r");
	char line[1200];
	unsigned lines = 0;
	while (f && fgets(line, sizeof line, f)) {
		char pid[32], st[32], a[600], b[600];
		lines++;
		field(line, "pid", pid, sizeof pid);
		field(line, "status", st, sizeof st);
		if (!strcmp(st, "none")) {
			fprintf(stderr, "cyclescope run: pid %s: no run recorded: %s\n", pid,
				field(line, "reason", a, sizeof a));
			continue;
		}
		char sm[32], dr[32], ov[32], bad[32], rg[32];
		fprintf(stderr, "cyclescope run: pid %s: %s%s in %s: %s samples, %s dropped, "
			"%s overflows, %s bad records, %s ranges\n", pid,
			field(line, "run", a, sizeof a), strcmp(st, "recorded") ? " (incomplete)" : "",
			field(line, "where", b, sizeof b), field(line, "samples", sm, sizeof sm),
			field(line, "dropped", dr, sizeof dr), field(line, "overflows", ov, sizeof ov),
			field(line, "bad_records", bad, sizeof bad), field(line, "ranges", rg, sizeof rg));
	}
	if (f)
		fclose(f);
	if (lines)
		return;
	/* The collector was never loaded: CUDA loads it in cuInit. */
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (cuda) {
		dlclose(cuda);
		fprintf(stderr, "cyclescope run: no run recorded: '%s' never initialised CUDA "
			"(no process called cuInit, so the collector was not loaded)\n", prog);
	} else {
		fprintf(stderr, "cyclescope run: no run recorded: no NVIDIA driver here "
			"(libcuda.so.1 cannot be loaded), so '%s' could not initialise CUDA and "
			"the collector was not loaded\n", prog);
	}
}

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static int print_hook(void *ctx, const char *domain, unsigned cbid, const char *name,
		      const char *pattern)
{
	(void)ctx;
	printf("%s\t%u\t%s\t%s\n", domain, cbid, name, pattern);
	return 0;
}

static int count_hook(void *ctx, const char *domain, unsigned cbid, const char *name,
		      const char *pattern)
{
	(void)ctx, (void)domain, (void)cbid, (void)name, (void)pattern;
	return 0;
}

static int set_env(const cs_cmd *cmd, const char *name, const char *value)
{
	if (!value)
		return 0;
	if (setenv(name, value, 1) != 0)
		return cs_cli_fail(cmd, "setenv %s: %s", name, strerror(errno));
	return 0;
}

static int check_number(const cs_cmd *cmd, const char *opt, const char *v)
{
	uint64_t x;
	if (!v)
		return 0;
	if (cs_cli_u64(cmd, opt, v, &x) < 0 || x == 0)
		return cs_cli_usage_error(cmd, "--%s must be a positive integer, not '%s'", opt, v);
	return 0;
}

static int run_run(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_run;
	const char *db = NULL, *sock = NULL, *metrics = "@general", *apis = NULL,
		   *kernels = NULL, *interval = NULL, *buffer = NULL, *mode = NULL, *name = NULL,
		   *devices = NULL, *chip = "GH100", *ranges = NULL, *job = NULL,
		   *rank = NULL;
	int nvtx = 0, list_apis = 0, no_check = 0, armed = 0;
	const cs_opt opts[] = {
		{"db", &db, NULL},           {"socket", &sock, NULL},
		{"metrics", &metrics, NULL}, {"apis", &apis, NULL},
		{"kernels", &kernels, NULL}, {"nvtx", NULL, &nvtx},
		{"interval-ns", &interval, NULL}, {"buffer-mb", &buffer, NULL},
		{"mode", &mode, NULL},       {"name", &name, NULL},
		{"devices", &devices, NULL}, {"chip", &chip, NULL},
		{"list-apis", NULL, &list_apis}, {"no-check", NULL, &no_check},
		{"armed", NULL, &armed},     {"ranges", &ranges, NULL},
		{"job", &job, NULL},         {"rank", &rank, NULL},
		{NULL, NULL, NULL},
	};
	/* Options end at "--"; everything after it is CMD. */
	int dash = argc;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, dash, argv, opts, pos, 0, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (db && sock)
		return cs_cli_usage_error(cmd, "--db and --socket exclude each other");
	if (mode && strcmp(mode, "continuous") && strcmp(mode, "window") && strcmp(mode, "armed"))
		return cs_cli_usage_error(cmd, "--mode is continuous, window or armed, not '%s'",
					  mode);
	if (armed && mode && strcmp(mode, "armed"))
		return cs_cli_usage_error(cmd, "--armed and --mode %s exclude each other", mode);
	if (armed)
		mode = "armed";
	if (mode && !strcmp(mode, "armed") && db)
		return cs_cli_usage_error(cmd, "--armed takes its commands from a daemon: it "
					  "cannot write --db directly");
	if (ranges && strcmp(ranges, "always") && strcmp(ranges, "in-windows"))
		return cs_cli_usage_error(cmd, "--ranges is always or in-windows, not '%s'", ranges);
	if ((rc = check_number(cmd, "interval-ns", interval)) ||
	    (rc = check_number(cmd, "buffer-mb", buffer)))
		return rc;
	if (devices && strcmp(devices, "all") &&
	    strspn(devices, "0123456789,") != strlen(devices))
		return cs_cli_usage_error(cmd, "--devices is 'all' or ordinals like 0,1, not '%s'",
					  devices);
	if (!list_apis && dash >= argc - 1)
		return cs_cli_usage_error(cmd, "expected -- CMD [ARGS...]");

	char err[4096];
	cs_colllib lib;
	if (cs_colllib_open(&lib, err, sizeof err) < 0)
		return cs_cli_fail(cmd, "%s", err);
	if (list_apis) {
		rc = lib.hooks(apis ? apis : CS_COLLECTOR_DEFAULT_APIS, print_hook, NULL, err,
			       sizeof err);
		cs_colllib_close(&lib);
		if (rc < 0)
			return cs_cli_usage_error(cmd, "--apis: %s", err);
		if (rc == 0)
			return cs_cli_fail(cmd, "--apis '%s' matches no runtime or driver callback",
					   apis ? apis : "");
		return CS_EXIT_OK;
	}

	char **names;
	size_t n;
	if (cs_colllib_read_metrics(metrics, &names, &n, err, sizeof err) < 0) {
		cs_colllib_close(&lib);
		return cs_cli_usage_error(cmd, "--metrics %s", err);
	}
	if (!no_check) {
		cs_cat_check c;
		rc = lib.check(chip, (const char *const *)names, n, &c, err, sizeof err);
		if (rc < 0 || c.passes != 1) {
			cs_colllib_free_list(names, n);
			cs_colllib_close(&lib);
			return cs_cli_usage_error(cmd, "--metrics: %s (--no-check to try anyway, "
						  "--chip for another GPU)", rc < 0 ? err : c.reason);
		}
	}
	if (apis && (rc = lib.hooks(apis, count_hook, NULL, err, sizeof err)) <= 0) {
		cs_colllib_free_list(names, n);
		cs_colllib_close(&lib);
		if (rc < 0)
			return cs_cli_usage_error(cmd, "--apis: %s", err);
		return cs_cli_usage_error(cmd, "--apis '%s' matches no runtime or driver callback "
					  "(--list-apis shows what a pattern selects)", apis);
	}
	char *joined = cs_colllib_join(names, n);
	cs_colllib_free_list(names, n);

	char dbpath[PATH_MAX];
	const char *dbp = cs_cli_db_path(db);
	if (!realpath(dbp, dbpath)) {
		/* not there yet: make it absolute so children elsewhere agree */
		char cwd[PATH_MAX];
		if (dbp[0] != '/' && getcwd(cwd, sizeof cwd))
			snprintf(dbpath, sizeof dbpath, "%.*s/%.*s", (int)(sizeof dbpath / 2 - 1), cwd,
				 (int)(sizeof dbpath / 2 - 1), dbp);
		else
			snprintf(dbpath, sizeof dbpath, "%s", dbp);
	}
	if ((rc = set_env(cmd, "CUDA_INJECTION64_PATH", lib.path)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_METRICS", joined)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_APIS", apis)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_KERNELS", kernels)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_INTERVAL_NS", interval)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_BUFFER_MB", buffer)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_MODE", mode)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_RANGES", ranges)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_JOB", job)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_RANK", rank)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_NAME", name)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_DEVICES", devices)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_CHIP", chip)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_DB", dbpath)) ||
	    (rc = set_env(cmd, "CYCLESCOPE_OUTPUT", db ? "db" : "auto")) ||
	    (rc = set_env(cmd, "CYCLESCOPE_SOCKET", sock))) {
		free(joined);
		cs_colllib_close(&lib);
		return rc;
	}
	free(joined);
	if (nvtx) {
		const char *cupti = cs_colllib_cupti_path();
		if (!cupti) {
			cs_colllib_close(&lib);
			return cs_cli_fail(cmd, "--nvtx: cannot find the libcupti the collector uses");
		}
		if ((rc = set_env(cmd, "CYCLESCOPE_NVTX", "1")) ||
		    (rc = set_env(cmd, "NVTX_INJECTION64_PATH", cupti))) {
			cs_colllib_close(&lib);
			return rc;
		}
	}
	cs_colllib_close(&lib);

	char statdir[PATH_MAX], statpath[PATH_MAX + 16];
	const char *tmp = getenv("TMPDIR");
	snprintf(statdir, sizeof statdir, "%s/cyclescope-run.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int have_status = mkdtemp(statdir) != NULL;
	if (have_status) {
		snprintf(statpath, sizeof statpath, "%s/status", statdir);
		if ((rc = set_env(cmd, "CYCLESCOPE_STATUS", statpath))) {
			rmdir(statdir);
			return rc;
		}
	}

	/* Signals meant for the job go to the job; we wait for its status. */
	struct sigaction sa = {0};
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	fflush(NULL);
	child_pid = fork();
	if (child_pid < 0)
		return cs_cli_fail(cmd, "fork: %s", strerror(errno));
	if (child_pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(argv[dash + 1], argv + dash + 1);
		fprintf(stderr, "cyclescope run: cannot run '%s': %s\n", argv[dash + 1],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	int status;
	while (waitpid(child_pid, &status, 0) < 0) {
		if (errno != EINTR)
			return cs_cli_fail(cmd, "waitpid: %s", strerror(errno));
	}
	if (have_status) {
		/* 127: CMD was not found, and run said so already. */
		if (!(WIFEXITED(status) && WEXITSTATUS(status) == 127))
			report_status(statpath, argv[dash + 1]);
		unlink(statpath);
		rmdir(statdir);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return CS_EXIT_FAIL;
}
