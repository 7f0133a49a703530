/*
 * cmd_live.c - `cyclescope collectors` and `cyclescope trigger`: the live
 * collectors a running daemon knows, and commands to them, through its
 * HTTP API (docs/http-api.md, /api/v1/collectors), with libcurl
 * (curl_lib.h). Unlike the other subcommands these need a daemon: the
 * collectors talk to it, not to the database file.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmds.h"
#include "curl_lib.h"

#define DEFAULT_URL "http://127.0.0.1:7070"

static int run_collectors(int argc, char **argv);
static int run_trigger(int argc, char **argv);

const cs_cmd cs_cmd_collectors = {
	"collectors", run_collectors, "list the live collectors a running daemon can command",
	"usage: cyclescope collectors [--url URL] [--token T] [--json | --csv]\n\n"
	"Lists the collectors registered with the daemon at URL: one line each with\n"
	"its id, pid, host, job, mode (continuous, window, armed), state (idle,\n"
	"sampling, off), devices, samples per second, samples dropped, its run and\n"
	"its command line. 'cyclescope trigger ID' opens a sampling window in one.\n\n"
	"  --url URL     the daemon's HTTP address (default $CYCLESCOPE_URL, else\n"
	"                " DEFAULT_URL ")\n"
	"  --token T     its bearer token (default $CYCLESCOPE_TOKEN)\n"
	"  --json        the API's JSON instead of the table\n"
	"  --csv         CSV with a header instead of the table\n",
};

const cs_cmd cs_cmd_trigger = {
	"trigger", run_trigger, "open (or close) a sampling window in live collectors",
	"usage: cyclescope trigger (ID | --pid P | --job J | --all) [--seconds N]\n"
	"                          [--name LABEL] [--close] [--url URL] [--token T]\n\n"
	"Asks the daemon at URL to open a sampling window now in the collector ID\n"
	"(from 'cyclescope collectors'), in those of process P or job J, or in all\n"
	"of them. An armed collector ('cyclescope run --armed') samples only inside\n"
	"such windows. Each request is stored in the collector's run as a 'trigger'\n"
	"range named LABEL, and each window as a 'window' range. Prints one line per\n"
	"collector; exit status 0 when every one did it, 1 otherwise.\n\n"
	"  --seconds N   how long the window stays open (fractions allowed; default:\n"
	"                until 'trigger --close'); a trigger while one is open\n"
	"                extends it\n"
	"  --name LABEL  the trigger's label in the run (default \"trigger\")\n"
	"  --close       close the window a trigger opened, now\n"
	"  --url URL     the daemon's HTTP address (default $CYCLESCOPE_URL, else\n"
	"                " DEFAULT_URL ")\n"
	"  --token T     its bearer token (default $CYCLESCOPE_TOKEN)\n",
};

/* libcurl's answer into a cs_buf. */
static size_t take(char *p, size_t size, size_t n, void *ctx)
{
	return cs_buf_append(ctx, p, size * n) ? 0 : size * n;
}

/* One request to the daemon: GET when form is NULL, else POST of form.
 * Prints the answer (stdout when 2xx, else stderr). Returns the HTTP
 * status, or -1 with the reason printed; *partial (when not NULL) says
 * whether a 2xx answer has a line of a collector that did not do it. */
static long request(const cs_cmd *cmd, const char *url, const char *token, const char *path,
		    const char *form, int *partial)
{
	const cs_curl_fns *lc = cs_curl();
	CURL *c = lc->err[0] ? NULL : lc->easy_init();
	if (!c) {
		cs_cli_fail(cmd, "%s", lc->err[0] ? lc->err : "libcurl: cannot make a handle");
		return -1;
	}
	char full[2048], auth[600];
	size_t ul = strlen(url);
	while (ul && url[ul - 1] == '/')
		ul--;
	snprintf(full, sizeof full, "%.*s%s", (int)ul, url, path);
	struct curl_slist *hdr = NULL;
	if (token && *token) {
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
		hdr = lc->slist_append(hdr, auth);
	}
	cs_buf b = CS_BUF_INIT;
	char errbuf[CURL_ERROR_SIZE] = "";
	lc->easy_setopt(c, CURLOPT_URL, full);
	lc->easy_setopt(c, CURLOPT_WRITEFUNCTION, take);
	lc->easy_setopt(c, CURLOPT_WRITEDATA, &b);
	lc->easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	lc->easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	lc->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (hdr)
		lc->easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	if (form)
		lc->easy_setopt(c, CURLOPT_POSTFIELDS, form);
	CURLcode rc = lc->easy_perform(c);
	long status = -1;
	if (rc != CURLE_OK) {
		cs_cli_fail(cmd, "%s: %s (is 'cyclescope serve' running there? --url)", full,
			    errbuf[0] ? errbuf : lc->easy_strerror(rc));
	} else {
		lc->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		FILE *to = status >= 200 && status < 300 ? stdout : stderr;
		if (to == stderr)
			fprintf(stderr, "cyclescope %s: the daemon answered %ld: ", cmd->name, status);
		if (b.len)
			fwrite(b.data, 1, b.len, to);
		if (b.len && b.data[b.len - 1] != '\n')
			fputc('\n', to);
		fflush(to);
		if (partial)
			*partial = b.len && memmem(b.data, b.len, ": not done: ", 12) != NULL;
	}
	lc->slist_free_all(hdr);
	lc->easy_cleanup(c);
	cs_buf_free(&b);
	return status;
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

static int run_collectors(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_collectors;
	const char *url = NULL, *token = NULL;
	int json = 0, csv = 0;
	const cs_opt opts[] = {{"url", &url, NULL},  {"token", &token, NULL},
			       {"json", NULL, &json}, {"csv", NULL, &csv},
			       {NULL, NULL, NULL}};
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, NULL, 0, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	if (json && csv)
		return cs_cli_usage_error(cmd, "--json or --csv, not both");
	long st = request(cmd, url ? url : env_or("CYCLESCOPE_URL", DEFAULT_URL),
			  token ? token : getenv("CYCLESCOPE_TOKEN"),
			  json ? "/api/v1/collectors" : csv ? "/api/v1/collectors?format=csv"
							    : "/api/v1/collectors?format=text",
			  NULL, NULL);
	return st == 200 ? CS_EXIT_OK : CS_EXIT_FAIL;
}

/* Appends &key=value to form, value URL-encoded by hand: only what a
 * label or a number can hold needs it. */
static void form_add(char *form, size_t len, const char *key, const char *value)
{
	size_t n = strlen(form);
	n += (size_t)snprintf(form + n, len - n, "%s%s=", n ? "&" : "", key);
	for (const unsigned char *c = (const unsigned char *)value; *c && n + 4 < len; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || strchr("-_.~", *c))
			form[n++] = (char)*c;
		else
			n += (size_t)snprintf(form + n, len - n, "%%%02X", *c);
	}
	form[n < len ? n : len - 1] = '\0';
}

static int run_trigger(int argc, char **argv)
{
	const cs_cmd *cmd = &cs_cmd_trigger;
	const char *url = NULL, *token = NULL, *pid = NULL, *job = NULL, *seconds = NULL,
		   *name = NULL;
	int all = 0, close_it = 0;
	const cs_opt opts[] = {{"url", &url, NULL},	    {"token", &token, NULL},
			       {"pid", &pid, NULL},	    {"job", &job, NULL},
			       {"all", NULL, &all},	    {"seconds", &seconds, NULL},
			       {"name", &name, NULL},	    {"close", NULL, &close_it},
			       {NULL, NULL, NULL}};
	const char *pos[1];
	int npos;
	int rc = cs_cli_parse(cmd, argc, argv, opts, pos, 1, &npos);
	if (rc)
		return CS_CLI_EXIT(rc);
	int targets = (npos > 0) + (pid != NULL) + (job != NULL) + all;
	if (targets != 1)
		return cs_cli_usage_error(cmd, "name the collectors: an ID, --pid P, --job J or "
					  "--all (one of them)");
	if (close_it && (seconds || name))
		return cs_cli_usage_error(cmd, "--close takes no --seconds or --name");
	char *end = NULL;
	double sec = seconds ? strtod(seconds, &end) : 1;
	if (seconds && (end == seconds || *end || !(sec > 0 && sec <= 604800)))
		return cs_cli_usage_error(cmd, "--seconds is a duration in seconds, more than 0 and "
					  "at most 604800 (a week), not '%s'", seconds);
	if (npos > 0 && strspn(pos[0], "0123456789") != strlen(pos[0]))
		return cs_cli_usage_error(cmd, "'%s': a collector id is a number (see "
					  "'cyclescope collectors')", pos[0]);
	char form[1024] = "", path[256];
	if (seconds)
		form_add(form, sizeof form, "seconds", seconds);
	if (name)
		form_add(form, sizeof form, "name", name);
	if (pid)
		form_add(form, sizeof form, "pid", pid);
	if (job)
		form_add(form, sizeof form, "job", job);
	if (all)
		form_add(form, sizeof form, "all", "1");
	const char *tail = close_it ? "window/close" : "window";
	if (npos > 0)
		snprintf(path, sizeof path, "/api/v1/collectors/%s/%s?format=text", pos[0], tail);
	else
		snprintf(path, sizeof path, "/api/v1/collectors/%s?format=text", tail);
	int partial = 0;
	long st = request(cmd, url ? url : env_or("CYCLESCOPE_URL", DEFAULT_URL),
			  token ? token : getenv("CYCLESCOPE_TOKEN"), path, form, &partial);
	return st == 200 && !partial ? CS_EXIT_OK : CS_EXIT_FAIL;
}
