#!/bin/sh
# tests/docs.sh - the documentation's shell examples, run against the demo
# database: every example in README.md and docs/*.md runs, and fails on an
# error or on output other than what the page shows. TAP-style: one "ok"
# or "not ok" line per command, "# skipped: FILE:LINE (reason)" per block
# that cannot run here.
#   sh tests/docs.sh [BUILD_DIR [PAGE...]]     (PAGE...: only these pages)
#
# The convention (README.md, "Building and checking", says it in short):
#
# - Examples are fenced blocks tagged sh, bash, shell or console, and
#   untagged blocks whose first line starts with "$ ". Other blocks
#   (diagrams, file contents, text, python, sql, ...) are not run unless
#   marked (below); an untagged
#   block that begins like a command (cyclescope, curl, sqlite3, $B, ...)
#   is an error: tag it sh (to run it) or text (a synopsis, an output).
# - A block with "$ " lines is a session: each "$ " line is a command
#   (continued over the next lines while a quote is open or a line ends
#   in \, |, && or ||); the lines up to the next "$ " line are its output,
#   compared with what it prints (stdout and stderr together, CR and
#   trailing blanks dropped, trailing blank lines ignored).
#   A line "..." stands for any number of lines, "..." inside a line for
#   any text (times, uuids, paths). A last output line "[exit N]" is the
#   exit status expected; otherwise it must be 0. A command
#   followed by no output lines is only run. Any other block: every line
#   is a command (with the same continuations), run, its output not shown.
# - A block's commands run in document order in one shell per page, so
#   variables (B=build/cyclescope) carry on to later blocks of that page,
#   in a fresh work directory per page holding a copy of the demo database
#   as ./cyclescope.db (tests/demo.sh, what `make demo` loads), and copies
#   of docs/, configs/, tests/fixtures/, tests/tools/ and build/, so
#   relative paths work and nothing is written into the repository.
#   `cyclescope` is on PATH. Any cyclescope or curl that fails (exit not 0,
#   HTTP status 400 or more, even inside a pipeline) fails the command.
# - A page whose examples use $U or http://127.0.0.1:7070, or that runs a
#   Python block, gets a daemon on its copy (`serve --db cyclescope.db
#   --socket ./cyclescope.sock`, HTTP on a free port, which replaces 7070
#   in the commands and their output), and U=http://127.0.0.1:PORT. A
#   command that starts a daemon in the background (`... serve ... &`)
#   is not run: that daemon stands in for it.
# - An HTML comment on the line before a block (blank lines between are
#   allowed) changes what happens to it:
#     <!-- docs.sh: skip (REASON) -->        not run; "# skipped" says why
#     <!-- docs.sh: needs PATH (REASON) -->  run only where PATH exists in
#                                            the work directory (e.g. the
#                                            collector, built with CUDA)
#     <!-- docs.sh: run -->                  run a python block (python3,
#                                            in the work directory): it
#                                            must exit 0; or an sql block:
#                                            each statement (ending in ;)
#                                            through `cyclescope query`,
#                                            which must return a row
#
# Besides the pages: the curl lines tests/demo.sh prints are run the same
# way, and README's package list must be what .ci/install-deps installs.
# With a sanitizer build (BUILD_DIR=build-asan) sqlite3 gets the runtime
# preloaded for the extension, and blocks that need the collector are
# skipped (CUPTI's RTLD_DEEPBIND and the sanitizers do not mix).
B=${1:-build}
[ $# -gt 0 ] && shift
. tests/lib.sh
# lib.sh's cleanup (the temp dir, the daemon) also when stopped by a signal
trap 'exit 1' INT TERM HUP PIPE
# Nothing from the caller's environment steers the examples or the daemon
# (a $CYCLESCOPE_TOKEN would make every curl a 401).
for v in $(env | sed -n 's/^\(CYCLESCOPE_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
REPO=$(pwd)
case $B in /*) BD=$B ;; *) BD=$REPO/$B ;; esac
START=$(date +%s)
if [ ! -x "$BD/cyclescope" ]; then
	no "docs: $BD/cyclescope is missing (make first)"
	exit 1
fi
CURL=$(command -v curl)

# The demo database, as `make demo` loads it.
if ! CYCLESCOPE_DB="$T/demo.db" TMPDIR=$T sh tests/demo.sh "$B" --no-serve >"$T/demo.log" 2>&1; then
	no "docs: tests/demo.sh --no-serve loads the demo database" "$T/demo.log"
	exit 1
fi
ok "docs: tests/demo.sh --no-serve loads the demo database"

# README's package list is what .ci/install-deps installs (make setup).
want=$(sed -n 's/^PKGS="\(.*\)"$/\1/p' .ci/install-deps | tr ' ' '\n' | grep -v '^\$' | sort -u)
said=$(tr '\n' ' ' <README.md | sed -n 's/.*that are missing: `\([^`]*\)`.*/\1/p' | tr -s ' ' '\n' | grep . | sort -u)
if [ -n "$want" ] && [ "$want" = "$said" ] && grep -q '`npm` where there is no Node.js' README.md; then
	ok "docs: README names the packages .ci/install-deps installs"
else
	printf 'install-deps: %s\nREADME: %s\n' "$(echo $want)" "$(echo $said)" >"$T/pkgs"
	no "docs: README names the packages .ci/install-deps installs" "$T/pkgs"
fi

# docs/architecture.md names every source file (a newcomer finds where any
# behaviour lives in one hop) and no file that is gone.
: >"$T/arch"
for f in store/*.c store/*.cc collector/*.c sim-bridge/*.c web/*.c daemon/*.c web/ui/*.js; do
	grep -q "\`$(basename "$f")\`" docs/architecture.md || echo "not named: $f" >>"$T/arch"
done
for f in $(grep -o '`[a-z_]*\.\(c\|cc\|js\)`' docs/architecture.md | tr -d '`' | sort -u); do
	[ -n "$(find store collector sim-bridge web daemon tests -name "$f" | head -n 1)" ] ||
		echo "named but gone: $f" >>"$T/arch"
done
[ ! -s "$T/arch" ] && ok "docs: architecture.md names every source file" || no "docs: architecture.md names every source file" "$T/arch"

# The tree every page's work directory links to: copies, so that what an
# example writes stays in $T.
TREE=$T/tree
mkdir -p "$TREE/build" "$TREE/tests" "$TREE/bin" "$T/xdg" "$T/x"
cp -R docs configs "$TREE/"
cp -R tests/fixtures tests/tools "$TREE/tests/"
for f in "$BD"/*; do ln -s "$f" "$TREE/build/"; done
rm -f "$TREE/build/cyclescope"
# A sanitizer build: its extension needs the runtime preloaded into the
# stock sqlite3 (as tests/cli.sh does), and its collector cannot load
# CUPTI's libnvperf_host (RTLD_DEEPBIND), so the pages' blocks that need
# the collector are skipped.
san_rt=$(ldd "$BD/cyclescope_series.so" 2>/dev/null | awk '/libasan|libtsan/ { print $3 }')
SQLITE3=$(command -v sqlite3)
if [ -n "$san_rt" ]; then
	echo "# sanitizer build: sqlite3 runs with $san_rt preloaded; the collector's blocks are skipped"
	rm -f "$TREE/build/libcyclescope_collector.so"
	cat >"$TREE/bin/sqlite3" <<EOF
#!/bin/sh
LD_PRELOAD="$san_rt" ASAN_OPTIONS=detect_leaks=0 exec "$SQLITE3" "\$@"
EOF
	chmod +x "$TREE/bin/sqlite3"
fi
FAILS=$T/fails
# cyclescope and curl as the examples see them: the real ones, a failure
# (not SIGPIPE from a `| head`) noted in $FAILS.
cat >"$TREE/build/cyclescope" <<EOF
#!/bin/sh
"$BD/cyclescope" "\$@"
rc=\$?
[ \$rc -ne 0 ] && [ \$rc -ne 141 ] && echo "cyclescope \$*: exit \$rc" >>"$FAILS"
exit \$rc
EOF
cat >"$TREE/bin/curl" <<EOF
#!/bin/sh
"$CURL" --fail-with-body --max-time 30 "\$@"
rc=\$?
[ \$rc -ne 0 ] && [ \$rc -ne 23 ] && echo "curl \$*: exit \$rc" >>"$FAILS"
exit \$rc
EOF
chmod +x "$TREE/build/cyclescope" "$TREE/bin/curl"
ln -s "$TREE/build/cyclescope" "$TREE/bin/cyclescope"

# extract PAGE DIR: the page's examples into DIR: c.ID (a command), e.ID
# (its output as shown), and DIR/list, one record a line, tab-separated:
#   block LINE NEEDS REASON      a block starts (NEEDS: a path or -)
#   cmd ID LINE STATUS HASOUT    a command, its expected exit status
#   py ID LINE                   a python block
#   sql ID LINE                  an SQL statement
#   bg ID LINE                   a daemon started in the background
#   skip LINE REASON             a block not run
#   err LINE MESSAGE             a block that breaks the convention
extract() {
	awk -v dir="$2" '
	function opens(s,   i, c, n, last, bs) {
		n = length(s); last = ""; bs = 0
		for (i = 1; i <= n; i++) {
			c = substr(s, i, 1)
			if (q == 1) { if (c == "\047") q = 0; continue }
			if (c == "\\") { if (i == n) bs = 1; i++; last = "\\"; continue }
			if (q == 2) { if (c == "\"") q = 0; continue }
			if (c == "\047") q = 1
			else if (c == "\"") q = 2
			else if (c == "#" && (i == 1 || substr(s, i - 1, 1) ~ /[ \t]/)) break
			if (c !~ /[ \t]/) last = last c
		}
		if (q || bs) return 1
		return last ~ /(\||&&)$/
	}
	function rec(s) { print s > (dir "/list") }
	function emit(cmd, line, nout,   id, st, k, f) {
		id = ++ncmd; st = 0
		if (nout > 0 && O[nout] ~ /^\[exit [0-9]+\]$/) { st = substr(O[nout], 7, length(O[nout]) - 7); nout-- }
		f = dir "/c." id; print cmd > f; close(f)
		if (nout > 0) { f = dir "/e." id; for (k = 1; k <= nout; k++) print O[k] > f; close(f) }
		t = cmd; sub(/[ \t]*#[^\047"]*$/, "", t); sub(/[ \t]+$/, "", t)
		if (t ~ /[^&]&$/) { rec("bg\t" id "\t" line); if (t !~ /(^|[ \/])(cyclescope|\$B|\$CS) serve( |$)/) rec("err\t" line "\ta command in the background that is not a daemon"); return }
		rec("cmd\t" id "\t" line "\t" st "\t" (nout > 0))
	}
	function block(   i, j, cmd, cl, nout, console, first, m, reason, need) {
		first = 0; for (i = 1; i <= nb; i++) if (L[i] !~ /^[ \t]*$/) { first = i; break }
		if (!first) return
		console = 0; for (i = 1; i <= nb; i++) if (L[i] ~ /^\$( |$)/) console = 1
		m = marker
		if (lang == "python") {
			if (m ~ /^run/) { f = dir "/c." (++ncmd); for (i = 1; i <= nb; i++) print L[i] > f; close(f); rec("py\t" ncmd "\t" start) }
			return
		}
		if (lang == "sql") {
			if (m !~ /^run/) return
			cmd = ""
			for (i = 1; i <= nb; i++) {
				if (cmd == "" && L[i] ~ /^[ \t]*$/) continue
				if (cmd == "") cl = LN[i]
				cmd = cmd (cmd == "" ? "" : "\n") L[i]
				if (L[i] ~ /;[ \t]*$/) { f = dir "/c." (++ncmd); print cmd > f; close(f); rec("sql\t" ncmd "\t" cl); cmd = "" }
			}
			if (cmd != "") rec("err\t" cl "\ta statement without its ;")
			return
		}
		if (lang == "") {
			if (L[first] !~ /^\$( |$)/) {
				if (L[first] ~ /^(cyclescope|curl|sqlite3|make|python3?|ncu|nsys)( |$)|^[A-Z_]+=|^\$[A-Z]+ /)
					rec("err\t" start "\tan untagged block of commands: tag it sh (run) or text (not run)")
				return
			}
		} else if (lang !~ /^(sh|bash|shell|console)$/) return
		if (m ~ /^skip/) {
			reason = m; sub(/^skip[ \t]*/, "", reason); sub(/^\(/, "", reason); sub(/\)$/, "", reason)
			rec("skip\t" start "\t" reason); return
		}
		need = "-"; reason = ""
		if (m ~ /^needs /) {
			need = m; sub(/^needs[ \t]+/, "", need); reason = need
			sub(/[ \t].*$/, "", need); sub(/^[^ \t]*[ \t]*/, "", reason); sub(/^\(/, "", reason); sub(/\)$/, "", reason)
		} else if (m != "" && m != "run")
			rec("err\t" start "\tunknown docs.sh marker: " m)
		rec("block\t" start "\t" need "\t" reason)
		i = first
		while (i <= nb) {
			if (L[i] ~ /^[ \t]*$/ || (!console && L[i] ~ /^[ \t]*#/)) { i++; continue }
			if (console && L[i] !~ /^\$( |$)/) { rec("err\t" LN[i] "\toutput before the first command of the block"); return }
			cmd = console ? substr(L[i], 3) : L[i]; cl = LN[i]; q = 0; i++
			if (console && cmd ~ /^[ \t]*(#|$)/) continue
			open = opens(cmd)
			while (open && i <= nb) { cmd = cmd "\n" L[i]; open = opens(L[i]); i++ }
			nout = 0
			if (console) {
				while (i <= nb && L[i] !~ /^\$( |$)/) O[++nout] = L[i++]
				while (nout > 0 && O[nout] ~ /^[ \t]*$/) nout--
			}
			emit(cmd, cl, nout)
		}
	}
	BEGIN { inf = 0; ncmd = 0; lastnb = 0; printf "" > (dir "/list") }
	!inf && /^[ \t]*<!--[ \t]*docs\.sh:/ {
		mk = $0; sub(/^[ \t]*<!--[ \t]*docs\.sh:[ \t]*/, "", mk); sub(/[ \t]*-->[ \t]*$/, "", mk)
		mline = NR; lastnb = NR; next
	}
	!inf && /^```/ {
		lang = $0; sub(/^```+[ \t]*/, "", lang); sub(/[ \t].*$/, "", lang)
		marker = (mline && mline == lastnb) ? mk : ""; mline = 0
		inf = 1; start = NR; nb = 0; next
	}
	inf && /^```+[ \t]*$/ { block(); inf = 0; lastnb = NR; next }
	inf { L[++nb] = $0; LN[nb] = NR; next }
	/[^ \t]/ { lastnb = NR }
	' "$1"
}

# match EXPECTED ACTUAL: whether the output matches the page ("..." lines
# and "..." inside lines as wildcards).
match_out() {
	awk '
	function lm(p, s,   n, k, parts, pos, at) {
		if (index(p, "...") == 0) return p == s
		n = split(p, parts, /\.\.\./)
		if (substr(s, 1, length(parts[1])) != parts[1]) return 0
		pos = length(parts[1]) + 1
		for (k = 2; k < n; k++) {
			at = index(substr(s, pos), parts[k]); if (!at) return 0
			pos += at - 1 + length(parts[k])
		}
		return length(s) - pos + 1 >= length(parts[n]) && substr(s, length(s) - length(parts[n]) + 1) == parts[n]
	}
	function m(i, j,   k) {
		if (i > ne) return j > na
		if (E[i] == "...") { for (k = j; k <= na + 1; k++) if (m(i + 1, k)) return 1; return 0 }
		if (j > na || !lm(E[i], A[j])) return 0
		return m(i + 1, j + 1)
	}
	{ sub(/\r$/, ""); sub(/[ \t]+$/, "") }
	FNR == NR { E[++ne] = $0; next }
	{ A[++na] = $0 }
	END { while (na > 0 && A[na] == "") na--; exit !m(1, 1) }
	' "$1" "$2"
}

# run_page FILE [NAME]: a page's examples in a fresh work directory.
ncmds=0 ncompared=0 nskipped=0
run_page() {
	page=${2:-$1}
	X=$T/x/$(echo "$page" | tr / _)
	W=$T/w/$(echo "$page" | tr / _)
	mkdir -p "$X" "$W"
	extract "$1" "$X"
	for d in docs configs tests build; do ln -s "$TREE/$d" "$W/$d"; done
	# tests/demo.sh names the build it was given (build-asan/cyclescope)
	case $B in build | /*) ;; *) mkdir -p "$W/$(dirname "$B")" && ln -s "$TREE/build" "$W/$B" ;; esac
	for f in "$T"/demo.db*; do cp "$f" "$W/cyclescope.db${f#"$T"/demo.db}"; done
	port=
	if grep -q '^\(py\|bg\)' "$X/list" || cat "$X"/c.* 2>/dev/null | grep -q '\$U\b\|\${U}\|127\.0\.0\.1:7070'; then
		(cd "$W" && exec "$BD/cyclescope" serve --db cyclescope.db --listen 127.0.0.1:0 --socket ./cyclescope.sock) >"$W/serve.log" 2>&1 &
		DPID=$!
		i=0
		while [ $i -lt 100 ]; do
			port=$(sed -n 's|.*http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$W/serve.log")
			[ -n "$port" ] && break
			sleep 0.05
			i=$((i + 1))
		done
		if [ -z "$port" ]; then
			no "$page: a daemon on its copy of the demo database" "$W/serve.log"
			kill "$DPID" 2>/dev/null
			DPID=
			return
		fi
	fi
	# The page's commands, in one shell of their own (a subshell, so that
	# nothing they set leaks into the next page); what they count comes
	# back through $X/counts. The watchdog ends a page that hangs.
	(
		cd "$W" || exit 1
		PATH=$TREE/bin:$PATH XDG_RUNTIME_DIR=$T/xdg LC_ALL=C
		export PATH XDG_RUNTIME_DIR LC_ALL
		[ -n "$port" ] && U=http://127.0.0.1:$port && export U
		_ds_n=$n _ds_f=0 _ds_run=0 _ds_cmp=0 _ds_skip=0 _ds_need=- _ds_why=
		while IFS='	' read -r _ds_k _ds_id _ds_l _ds_a _ds_b; do
			case $_ds_k in
			err)
				_ds_n=$((_ds_n + 1)) _ds_f=$((_ds_f + 1))
				echo "not ok $_ds_n - $page:$_ds_id: $_ds_l"
				continue ;;
			skip)
				echo "# skipped: $page:$_ds_id ($_ds_l)"
				_ds_skip=$((_ds_skip + 1))
				continue ;;
			block)
				_ds_need=$_ds_l _ds_why=$_ds_a
				if [ "$_ds_need" != - ] && [ ! -e "$_ds_need" ]; then
					echo "# skipped: $page:$_ds_id (${_ds_why:-needs $_ds_need}: no $_ds_need here)"
					_ds_skip=$((_ds_skip + 1))
				fi
				continue ;;
			bg)
				echo "# not run: $page:$_ds_l: $(head -n 1 "$X/c.$_ds_id") (the test's daemon at $U stands in for it)"
				continue ;;
			esac
			[ "$_ds_need" != - ] && [ ! -e "$_ds_need" ] && continue
			_ds_d="$page:$_ds_l: $(head -n 1 "$X/c.$_ds_id" | cut -c 1-70)"
			sed "s/127\.0\.0\.1:7070/127.0.0.1:$port/g" "$X/c.$_ds_id" >"$X/r.$_ds_id"
			: >"$FAILS"
			_ds_run=$((_ds_run + 1))
			if [ "$_ds_k" = py ]; then
				_ds_d="$page:$_ds_l: the python block"
				python3 "$X/r.$_ds_id" >"$X/o.$_ds_id" 2>&1 </dev/null
				_ds_rc=$? _ds_a=0 _ds_b=0
			elif [ "$_ds_k" = sql ]; then
				_ds_d="$page:$_ds_l: $(head -n 1 "$X/c.$_ds_id" | cut -c 1-70)"
				cyclescope query "$(cat "$X/r.$_ds_id")" >"$X/o.$_ds_id" 2>&1 </dev/null
				_ds_rc=$? _ds_a=0 _ds_b=0
				[ "$_ds_rc" = 0 ] && [ "$(wc -l <"$X/o.$_ds_id")" -lt 2 ] && echo "(no rows)" >>"$FAILS"
			else
				{ . "$X/r.$_ds_id"; } >"$X/o.$_ds_id" 2>&1 </dev/null
				_ds_rc=$?
			fi
			_ds_why=
			if [ "$_ds_rc" != "$_ds_a" ]; then
				_ds_why="exit $_ds_rc, the page says $_ds_a"
			elif [ "$_ds_a" = 0 ] && [ -s "$FAILS" ]; then
				_ds_why=$(cat "$FAILS")
			fi
			if [ "$_ds_b" = 1 ]; then
				_ds_cmp=$((_ds_cmp + 1))
				sed "s/127\.0\.0\.1:7070/127.0.0.1:$port/g" "$X/e.$_ds_id" >"$X/x.$_ds_id"
				if [ -z "$_ds_why" ] && ! match_out "$X/x.$_ds_id" "$X/o.$_ds_id"; then
					_ds_why="the output differs from the page's"
				fi
			fi
			_ds_n=$((_ds_n + 1))
			if [ -z "$_ds_why" ]; then
				echo "ok $_ds_n - $_ds_d"
			else
				_ds_f=$((_ds_f + 1))
				echo "not ok $_ds_n - $_ds_d: $_ds_why"
				sed 's/^/#   \$ /;2,$s/^#   \$ /#     /' "$X/c.$_ds_id" | head -n 10
				if [ "$_ds_b" = 1 ]; then
					tr -d '\r' <"$X/o.$_ds_id" | sed 's/[ \t]*$//' >"$X/a.$_ds_id"
					diff -u "$X/x.$_ds_id" "$X/a.$_ds_id" | tail -n +3 | head -n 60 | sed 's/^/#   /'
				else
					head -n 30 "$X/o.$_ds_id" | sed 's/^/#   /'
				fi
			fi
		done <"$X/list"
		echo "$_ds_n $_ds_f $_ds_run $_ds_cmp $_ds_skip" >"$X/counts"
	) &
	sub=$!
	# The watchdog's own sleep is named in a variable of its own, empty until
	# it is known: a TERM that comes before then must not reach `kill` with
	# a value this shell set elsewhere (kill 0 would stop the whole process
	# group, make and its callers included).
	(
		_dog_sleep=
		trap '[ -n "$_dog_sleep" ] && kill "$_dog_sleep" 2>/dev/null; exit 0' TERM
		sleep 60 &
		_dog_sleep=$!
		wait "$_dog_sleep" && echo "# $page: still running after 60 s: stopped" && kill "$sub"
	) 2>/dev/null &
	dog=$!
	wait "$sub"
	kill "$dog" 2>/dev/null
	if [ -s "$X/counts" ]; then
		read -r _pg_n _pg_f _pg_r _pg_c _pg_s <"$X/counts"
		n=$_pg_n
		fails=$((fails + _pg_f)) ncmds=$((ncmds + _pg_r)) ncompared=$((ncompared + _pg_c)) nskipped=$((nskipped + _pg_s))
	else
		no "$page: its examples did not finish"
	fi
	if [ -n "$DPID" ]; then
		kill -TERM "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
		DPID=
	fi
}

if [ $# -gt 0 ]; then
	for page in "$@"; do
		run_page "$page"
	done
else
	for page in README.md docs/*.md; do
		run_page "$page"
	done
	# The lines tests/demo.sh prints to try against the daemon.
	{
		echo '```sh'
		sed -n '/^With the daemon running/,$s/^  //p' "$T/demo.log"
		echo '```'
	} >"$T/demo-try.md"
	run_page "$T/demo-try.md" tests/demo.sh
fi
echo "# docs: $ncmds commands run, $ncompared outputs compared, $nskipped blocks skipped, $(($(date +%s) - START)) s"
[ "$fails" -eq 0 ]
