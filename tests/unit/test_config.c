/* test_config.c - the daemon's config file parser and precedence. */
#include <stdlib.h>

#include "config.h"
#include "testutil.h"

static void test_defaults_and_file(void **state)
{
	(void)state;
	cs_config c;
	char err[256];
	cs_config_defaults(&c);
	assert_string_equal(c.listen, "127.0.0.1:7070");
	assert_int_equal(c.commit_ms, 50);
	const char text[] = "# comment\n\ndb = \"/var/lib/x.db\"  # trailing\n"
			    "listen=127.0.0.1:9000\r\nquery_max_rows = 42\n";
	assert_int_equal(cs_config_parse(&c, text, sizeof text - 1, "t.conf", err, sizeof err), 0);
	assert_string_equal(c.db, "/var/lib/x.db");
	assert_string_equal(c.listen, "127.0.0.1:9000");
	assert_int_equal(c.query_max_rows, 42);
	/* [sink.clickhouse]: off (no url) by default */
	assert_string_equal(c.ch.url, "");
	assert_string_equal(c.ch.database, "cyclescope");
	assert_int_equal(c.ch.batch_rows, 1000000);
	const char sink[] = "[sink.clickhouse]\nurl = http://10.0.0.5:8123\nhost = gpu-node-17\n"
			    "cluster = fleet\nbatch_rows = 250000\ninterval_ms = 500\n";
	assert_int_equal(cs_config_parse(&c, sink, sizeof sink - 1, "t.conf", err, sizeof err), 0);
	assert_string_equal(c.ch.url, "http://10.0.0.5:8123");
	assert_string_equal(c.ch.host, "gpu-node-17");
	assert_string_equal(c.ch.cluster, "fleet");
	assert_int_equal(c.ch.batch_rows, 250000);
	assert_int_equal(c.ch.interval_ms, 500);
}

static void expect_error(const char *text, const char *needle)
{
	cs_config c;
	char err[256] = "";
	cs_config_defaults(&c);
	assert_int_equal(cs_config_parse(&c, text, strlen(text), "t.conf", err, sizeof err), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("'%s' lacks '%s'", err, needle);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("db = x\nlisten_port = 7\n", "t.conf:2: unknown key 'listen_port'");
	expect_error("commit_ms = soon\n", "t.conf:1: commit_ms: expected an integer 1..60000, got 'soon'");
	expect_error("commit_ms = 0\n", "expected an integer 1..60000");
	expect_error("commit_ms = -5\n", "got '-5'");
	expect_error("just words\n", "t.conf:1: expected key = value");
	expect_error("[sink\n", "t.conf:1: expected [section]");
	expect_error("[sink.clickhouse]\nurl = http://x\nbatch = 5\n", "t.conf:3: unknown key 'sink.clickhouse.batch'");
	expect_error("[sink.clickhouse]\ninterval_ms = 1\n", "t.conf:2: sink.clickhouse.interval_ms: expected an integer 10..3600000");
	expect_error("log_level = loud\n", "log_level: 'loud' is not error");
}

/* Every value form the config file documents. A '#' inside quotes is
 * part of the value: `token = "se#cret"` was read as the token `"se`. */
static void test_value_forms(void **state)
{
	(void)state;
	cs_config c;
	char err[256];
	cs_config_defaults(&c);
	const char text[] = "token = \"se#cret\"   # the bearer token\n"
			    "db = \"/data/with \\\"quotes\\\" and \\\\ back.db\"\n"
			    "socket = /run/x.sock# a comment right after\n"
			    "  log_level   =   info  \n"
			    "listen = \"127.0.0.1:7071\"\n";
	assert_int_equal(cs_config_parse(&c, text, sizeof text - 1, "t.conf", err, sizeof err), 0);
	assert_string_equal(c.token, "se#cret");
	assert_string_equal(c.db, "/data/with \"quotes\" and \\ back.db");
	assert_string_equal(c.socket, "/run/x.sock");
	assert_string_equal(c.listen, "127.0.0.1:7071");
	expect_error("token = \"open\n", "t.conf:1: the quoted value of 'token' has no closing quote");
	expect_error("token = caf\xe9\n", "t.conf:1: the value of 'token' is not UTF-8 (byte 0xe9 at its offset 3)");
	expect_error("token = \"a\" b\n", "t.conf:1: expected the end of the line or a # comment "
					  "after the quoted value of 'token'");
	expect_error("# key = value in a comment is no key\nfoo\n", "t.conf:2: expected key = value");
}

static void test_env_overrides_file(void **state)
{
	(void)state;
	cs_config c;
	char err[256];
	cs_config_defaults(&c);
	const char text[] = "db = from-file.db\nlisten = 127.0.0.1:1\n";
	assert_int_equal(cs_config_parse(&c, text, sizeof text - 1, "t.conf", err, sizeof err), 0);
	setenv("CYCLESCOPE_DB", "from-env.db", 1);
	assert_int_equal(cs_config_from_env(&c, err, sizeof err), 0);
	unsetenv("CYCLESCOPE_DB");
	assert_string_equal(c.db, "from-env.db");
	assert_string_equal(c.listen, "127.0.0.1:1");
	/* flags come last, through cs_config_set */
	assert_int_equal(cs_config_set(&c, "db", "from-flag.db", err, sizeof err), 0);
	assert_string_equal(c.db, "from-flag.db");
	setenv("CYCLESCOPE_LOG", "shouty", 1);
	assert_int_equal(cs_config_from_env(&c, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "$CYCLESCOPE_LOG"));
	unsetenv("CYCLESCOPE_LOG");
}

static void test_loopback(void **state)
{
	(void)state;
	assert_true(cs_config_is_loopback("127.0.0.1:7070"));
	assert_true(cs_config_is_loopback("127.1.2.3:80"));
	assert_true(cs_config_is_loopback("localhost:7070"));
	assert_true(cs_config_is_loopback("[::1]:7070"));
	assert_false(cs_config_is_loopback("0.0.0.0:7070"));
	assert_false(cs_config_is_loopback("10.0.0.5:7070"));
	assert_false(cs_config_is_loopback("[::]:7070"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_file),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_value_forms),
		cmocka_unit_test(test_env_overrides_file),
		cmocka_unit_test(test_loopback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
