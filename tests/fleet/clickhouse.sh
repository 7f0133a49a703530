# tests/fleet/clickhouse.sh - a private ClickHouse server for the fleet
# tests (sourced): ch_start DIR starts one bound to 127.0.0.1 only, with its
# data under DIR, the default user allowed from loopback only, and a
# one-shard cluster "cs_test" (for Distributed tables) pointing at itself;
# it sets CH_HTTP (its HTTP port), CH_TCP and CH_PID. ch_stop stops it by
# PID. ch_q SQL runs a query over HTTP and prints the answer (TSV).
# CH_EXTRA_XML, when set, goes into the server's configuration as it is.
ch_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
ch_start() {
	CH_DIR=$1
	mkdir -p "$CH_DIR/data" "$CH_DIR/tmp" "$CH_DIR/user_files" "$CH_DIR/log"
	CH_HTTP=${CH_HTTP:-$(ch_free_port)}
	CH_TCP=${CH_TCP:-$(ch_free_port)}
	cat >"$CH_DIR/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$CH_DIR/log/server.log</log><errorlog>$CH_DIR/log/error.log</errorlog></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$CH_HTTP</http_port>
  <tcp_port>$CH_TCP</tcp_port>
  <path>$CH_DIR/data/</path>
  <tmp_path>$CH_DIR/tmp/</tmp_path>
  <user_files_path>$CH_DIR/user_files/</user_files_path>
  <users_config>$CH_DIR/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>50</max_concurrent_queries>
$CH_EXTRA_XML
  <remote_servers>
    <cs_test><shard><replica><host>127.0.0.1</host><port>$CH_TCP</port></replica></shard></cs_test>
  </remote_servers>
</yandex>
XML
	cat >"$CH_DIR/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
  <users><default><password></password>
    <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
XML
	clickhouse-server --config-file="$CH_DIR/config.xml" >"$CH_DIR/log/stdout" 2>&1 &
	CH_PID=$!
	i=0
	while [ $i -lt 300 ]; do
		[ "$(curl -s --noproxy '*' "http://127.0.0.1:$CH_HTTP/ping" 2>/dev/null)" = "Ok." ] && return 0
		kill -0 "$CH_PID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	echo "# clickhouse-server did not start:"; tail -n 20 "$CH_DIR/log/stdout" "$CH_DIR/log/error.log" 2>/dev/null | sed 's/^/#   /'
	return 1
}
ch_stop() {
	[ -n "$CH_PID" ] || return 0
	kill "$CH_PID" 2>/dev/null
	i=0
	while kill -0 "$CH_PID" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 "$CH_PID" 2>/dev/null
	wait "$CH_PID" 2>/dev/null
	CH_PID=
}
ch_q() {
	curl -sS --noproxy '*' --data-binary "$1" "http://127.0.0.1:$CH_HTTP/"
}
