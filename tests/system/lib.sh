# lib.sh - helpers sourced by every system test (tests/system/NNN-*.sh).
#
# A test starts the real daemon on a free loopback port with a config in
# its own temporary directory, talks to it over HTTP, and exits 0 (pass),
# 1 (fail) or 77 (skip: the machine lacks something, and the test says what).
# On failure the daemon's log is printed, so `make check`'s .log file holds
# the evidence.
#
# Variables a test may set before calling write_config:
#   CFG_LISTEN   listen address       (default 127.0.0.1:$PORT)
#   CFG_WARM     pool.warm            (default 1)
#   CFG_CHECKPOINT_INTERVAL  checkpoint.interval_s (default 0: the tests
#                that do not test automatic checkpoints take none, so that
#                no background cell changes what they count)
#   CFG_CHECKPOINT  more lines of the checkpoint: block ("  max_bytes: N")
#   CFG_HIBERNATE_AFTER  session_hibernate_after (default 0, for the same
#                reason: a pool that is full closes or refuses, as before)
#   CFG_PERSIST  persist_sessions (default false: a stop ends every session
#                and leaves nothing in state_dir, which the tests of the
#                stop check)
#   CFG_EXTRA    YAML lines appended to the config
# Environment knobs:
#   CODEEXECD_TEST_TIMEOUT  seconds to wait for /health 200 (default 60)
#   CODEEXECD_TEST_CLIENT_DIR  tests/client with its node_modules installed
#                           (default $top_srcdir/tests/client)
#   CODEEXECD_TEST_CLIENT_MODERN_DIR  tests/client-modern likewise (MCP
#                           2026-07-28 clients; default $top_srcdir/tests/client-modern)
#   CODEEXECD_TEST_KEEP     keep the temporary directory when set

set -eu

test_name=$(basename "$0" .sh)
sysdir=$(cd "$(dirname "$0")" && pwd)
: "${top_srcdir:=$(cd "$sysdir/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"

# `python3` on PATH may be a pyenv interpreter without Debian's packages.
PY=/usr/bin/python3
CODEEXECD=$top_builddir/supervisor/codeexecd
WORKER=$top_builddir/worker/codeexec-worker
HEALTH_TIMEOUT=${CODEEXECD_TEST_TIMEOUT:-60}

DAEMON_PID=
TMPD=
SESSION=

skip() {
	echo "SKIP: $test_name: $*"
	exit 77
}

fail() {
	echo "FAIL: $test_name: $*" >&2
	exit 1
}

ok() {
	echo "ok - $*"
}

# For a test that runs every check before it fails: check_failed WHAT
# reports one failed check and goes on; the test ends with `exit "$FAILED"`.
FAILED=0
check_failed() {
	echo "FAIL: $test_name: $*" >&2
	FAILED=1
}

# A suite too slow to run in every stage of .ci/run: it runs in the first
# (the README's test command) and skips where CODEEXECD_TEST_SLOW=0.
slow_suite() {
	[ "${CODEEXECD_TEST_SLOW:-1}" = 0 ] &&
		skip "a slow suite: .ci/run runs it in its first stage only (CODEEXECD_TEST_SLOW=0)"
	return 0
}

# Skip unless every named command exists.
require_cmd() {
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "$c not found (apt-get install $c)"
	done
}

# Skip unless Debian's python3 can import every named module.
require_py() {
	[ -x "$PY" ] || skip "$PY not found (apt-get install python3)"
	for m in "$@"; do
		"$PY" -c "import $m" 2>/dev/null ||
			skip "$PY cannot import $m (apt-get install python3-$m)"
	done
}

# Skip unless IRkernel's kernelspec and R are installed (the R kernel tests).
require_irkernel() {
	[ -r /usr/share/jupyter/kernels/ir/kernel.json ] ||
		skip "no IRkernel kernelspec (apt-get install r-cran-irkernel)"
	command -v R >/dev/null 2>&1 || skip "no R (apt-get install r-base-core)"
	return 0
}

require_binaries() {
	[ -x "$CODEEXECD" ] || fail "$CODEEXECD not built"
	[ -x "$WORKER" ] || fail "$WORKER not built"
}

# A free TCP port on 127.0.0.1, released at once for a daemon to bind
# later. It is drawn below the kernel's ephemeral range: a port the kernel
# picked (bind to 0) could be handed to a kernel's ZeroMQ socket or an
# outgoing connection before the daemon binds it (110 once lost node b's
# port to node a's kernel that way).
free_port() {
	"$PY" -c 'import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    port = random.randrange(10000, low)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    raise SystemExit("no free port below %d" % low)'
}

# Two bearer tokens as an operator makes them (random, base64url) in
# TOKEN_A and TOKEN_B, their SHA-256 in HASH_A and HASH_B, and
# $TMPD/tokens naming them agent-a and agent-b, of mode $1 (default 600).
make_tokens() {
	TOKEN_A=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
	TOKEN_B=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
	HASH_A=$(printf %s "$TOKEN_A" | sha256sum | cut -d' ' -f1)
	HASH_B=$(printf %s "$TOKEN_B" | sha256sum | cut -d' ' -f1)
	printf '# agents of the system test\nagent-a: %s\nagent-b: %s\n' "$HASH_A" "$HASH_B" \
		>"$TMPD/tokens"
	chmod "${1:-600}" "$TMPD/tokens"
}

# Make the temporary directory (short, so Unix socket paths under it fit in
# sun_path) and arm the cleanup trap.
setup_tmp() {
	TMPD=$(mktemp -d "${TMPDIR:-/tmp}/cxd-$test_name.XXXXXX")
	mkdir -p "$TMPD/state" "$TMPD/run"
	trap cleanup EXIT
	trap 'exit 1' INT TERM HUP
}

# Kernels under other identities load codeexec-seccomp.so from beside the
# worker. When the build tree is not open to them (a clone under /root, a
# 0700 temporary directory), run a copy of the worker from $TMPD instead.
# Call after setup_tmp; sets WORKER.
worker_for_other_uids() {
	so=$(dirname "$WORKER")/codeexec-seccomp.so
	# A test's stand-in worker has no library beside it: then the worker is
	# what must be reachable.
	[ -e "$so" ] || so=$WORKER
	if command -v setpriv >/dev/null 2>&1 &&
		setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$so" 2>/dev/null; then
		return 0
	fi
	mkdir -p "$TMPD/libexec"
	cp "$WORKER" "$so" "$TMPD/libexec/" 2>/dev/null || cp "$WORKER" "$TMPD/libexec/"
	chmod 755 "$TMPD/libexec"
	WORKER=$TMPD/libexec/$(basename "$WORKER")
}

# Started as root, codeexecd refuses to run kernels as root: test daemons
# drop to this account (the sample configuration's), created if absent.
. "$sysdir/kernel_user.sh"
TEST_USER=$KERNEL_USER

ensure_test_user() {
	kernel_user_create || fail "no account $TEST_USER, and useradd cannot make it"
}

# The `user:` line of a test config: as root, unless the test chose user or
# kernel_uid_range itself, the daemon (and so its kernels) runs as
# $TEST_USER, which must reach $TMPD and the worker. Sets USER_LINE and
# WORKER (not in a subshell, so the worker copy sticks).
config_user_line() {
	USER_LINE=
	[ "$(id -u)" = 0 ] || return 0
	printf '%s\n' "${CFG_EXTRA:-}" "${EXTRA:-}" | grep -qE '^(user|kernel_uid_range):' &&
		return 0
	ensure_test_user
	chmod 711 "$TMPD"
	worker_for_other_uids
	USER_LINE="user: $TEST_USER"
}

# Write $TMPD/codeexecd.yaml (or $1). Prints nothing.
write_config() {
	conf=${1:-$TMPD/codeexecd.yaml}
	config_user_line
	cat >"$conf" <<EOF
# written by tests/system/$test_name.sh
name: py
description: "Run Python code in a persistent Jupyter kernel (system test)."
server_description: "codeexecd system test server"
type: pip
dependency_file: ""
auto_build: true
build_dir: $TMPD/env
python: /usr/bin/python3
system_site_packages: true
default_timeout: 30
max_timeout: 120
listen: "${CFG_LISTEN:-127.0.0.1:$PORT}"
max_request_bytes: 65536
state_dir: $TMPD/state
runtime_dir: $TMPD/run
pool:
  warm: ${CFG_WARM:-1}
  max_sessions: 10
$USER_LINE
session_hibernate_after: ${CFG_HIBERNATE_AFTER:-0}
persist_sessions: ${CFG_PERSIST:-false}
checkpoint:
  interval_s: ${CFG_CHECKPOINT_INTERVAL:-0}
${CFG_CHECKPOINT:-}
${CFG_EXTRA:-}
EOF
}

# config_set KEY VALUE [FILE]: make the configuration write_config wrote
# (FILE, default $TMPD/codeexecd.yaml) say `KEY: VALUE`, KEY being a
# top-level key or pool.NAME. The line setting it is replaced; when there
# is none, one is added (a pool key first under pool:, another at the end).
# VALUE is YAML as it is written. Fails the test if the file does not then
# hold the line.
config_set() {
	cs_file=${3:-$TMPD/codeexecd.yaml}
	case $1 in
	pool.*) cs_line="  ${1#pool.}: $2" ;;
	*) cs_line="$1: $2" ;;
	esac
	CS_KEY=${1#pool.} CS_POOL=$(case $1 in pool.*) echo 1 ;; esac) CS_LINE=$cs_line \
		config_edit "$cs_file"
	grep -qxF -- "$cs_line" "$cs_file" || fail "could not set $1 in $cs_file"
}

# config_unset KEY [FILE]: drop the line that sets KEY (top-level or
# pool.NAME) from FILE (default $TMPD/codeexecd.yaml).
config_unset() {
	cu_file=${2:-$TMPD/codeexecd.yaml}
	CS_KEY=${1#pool.} CS_POOL=$(case $1 in pool.*) echo 1 ;; esac) CS_LINE= \
		config_edit "$cu_file"
	! grep -q -- "^$(case $1 in pool.*) printf '  ' ;; esac)${1#pool.}:" "$cu_file" ||
		fail "could not drop $1 from $cu_file"
}

# The edit behind config_set and config_unset, on FILE in place (the same
# file, so a SIGHUP test rereads what it wrote): CS_KEY's line (under pool:
# when CS_POOL) becomes CS_LINE, or goes when CS_LINE is empty.
config_edit() {
	awk '
	BEGIN { key = ENVIRON["CS_KEY"]; pool = ENVIRON["CS_POOL"] != ""; line = ENVIRON["CS_LINE"]
		want = (pool ? "  " : "") key ":" }
	{ v[NR] = $0 }
	END {
		inpool = 0; found = 0
		for (i = 1; i <= NR; i++) {
			if (v[i] ~ /^[^ #]/) inpool = (v[i] == "pool:")
			if (!found && (pool ? inpool : v[i] !~ /^ /) &&
			    (substr(v[i], 1, length(want)) == want) &&
			    (substr(v[i], length(want) + 1, 1) ~ /^( |$)/)) {
				found = 1
				if (line != "") print line
				continue
			}
			print v[i]
			if (pool && v[i] == "pool:" && !found && line != "" && !haskey()) {
				print line; found = 1
			}
		}
		if (!found && line != "") {
			if (pool) print "pool:"
			print line
		}
	}
	function haskey(   j, in_) {
		in_ = 0
		for (j = 1; j <= NR; j++) {
			if (v[j] ~ /^[^ #]/) in_ = (v[j] == "pool:")
			if (in_ && substr(v[j], 1, length(want)) == want) return 1
		}
		return 0
	}' "$1" >"$1.edit" || fail "cannot edit $1"
	cat "$1.edit" >"$1"
	rm -f "$1.edit"
}

# Start the daemon in the foreground mode (-d) in the background, logging
# to $LOG, with the extra options $DAEMON_ARGS. Sets DAEMON_PID. $1: config
# file (default $TMPD/codeexecd.yaml).
start_daemon() {
	conf=${1:-$TMPD/codeexecd.yaml}
	LOG=$TMPD/daemon.log
	# shellcheck disable=SC2086 # DAEMON_ARGS: extra options, word-split
	"$CODEEXECD" -d -f "$conf" -W "$WORKER" ${DAEMON_ARGS:-} >>"$LOG" 2>&1 &
	DAEMON_PID=$!
	BASE=http://127.0.0.1:$PORT
	URL=$BASE/mcp
}

# HTTP status of GET /health, or 000 when nothing answers.
health_status() {
	curl -s -o "$TMPD/health.body" -w '%{http_code}' --max-time 5 "$BASE/health" || true
}

# Wait (bounded) until /health answers 200; fail if the daemon dies first.
wait_ready() {
	deadline=$(($(date +%s) + HEALTH_TIMEOUT))
	while :; do
		st=$(health_status)
		[ "$st" = 200 ] && return 0
		if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
			wait "$DAEMON_PID" && rc=0 || rc=$?
			DAEMON_PID=
			fail "daemon exited with status $rc before /health said 200"
		fi
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "/health not 200 after ${HEALTH_TIMEOUT}s (last status $st)"
		sleep 0.1
	done
}

# poll_until SECONDS COMMAND [ARGS...]: run COMMAND every 0.1 s until it
# succeeds (status 0) or SECONDS pass (status 1). This, or wait_for, is how
# a test waits for a state: never a fixed sleep, which is either too short
# on a loaded machine or a waste on an idle one.
poll_until() {
	pu_deadline=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$pu_deadline" ] || return 1
		sleep 0.1
	done
}

# wait_for SECONDS WHAT COMMAND [ARGS...]: poll_until, failing the test with
# "WHAT: not within SECONDS s" on timeout.
wait_for() {
	wf_limit=$1
	wf_what=$2
	shift 2
	poll_until "$wf_limit" "$@" || fail "$wf_what: not within ${wf_limit} s"
}

# Everything in one: temp dir, port, config, daemon, ready.
start_ready_daemon() {
	setup_tmp
	PORT=$(free_port)
	write_config
	start_daemon
	wait_ready
}

# Send SIGTERM (or $1) and wait up to 20 s. Sets DAEMON_RC.
stop_daemon() {
	sig=${1:-TERM}
	[ -n "$DAEMON_PID" ] || return 0
	kill -"$sig" "$DAEMON_PID" 2>/dev/null || true
	i=0
	while [ "$(proc_state "$DAEMON_PID")" != Z ] && [ "$(proc_state "$DAEMON_PID")" != gone ]; do
		i=$((i + 1))
		if [ $i -gt 200 ]; then
			echo "daemon did not exit 20 s after SIG$sig; killing it" >&2
			kill -KILL "$DAEMON_PID" 2>/dev/null || true
		fi
		sleep 0.1
	done
	wait "$DAEMON_PID" && DAEMON_RC=0 || DAEMON_RC=$?
	DAEMON_PID=
}

# Pid of the daemon's unprivileged front (doc/README.privsep): the child of
# $DAEMON_PID (or $1) named codeexecd-front. Empty while there is none.
front_pid() {
	for c in $(cat /proc/"${1:-$DAEMON_PID}"/task/*/children 2>/dev/null); do
		[ "$(cat /proc/"$c"/comm 2>/dev/null)" = codeexecd-front ] && echo "$c" && return 0
	done
	return 0
}

# Pids of the daemon's workers: its children but the front.
worker_pids() {
	for c in $(cat /proc/"${1:-$DAEMON_PID}"/task/*/children 2>/dev/null); do
		[ "$(cat /proc/"$c"/comm 2>/dev/null)" = codeexecd-front ] || echo "$c"
	done
}

# State letter of process $1 (R, S, Z, ...), or "gone".
proc_state() {
	awk '{ sub(/^.*\) /, ""); print $1 }' /proc/"$1"/stat 2>/dev/null || echo gone
}

# Pids of every descendant of process $1.
descendants() {
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

# Pids of live processes whose command line or working directory lies in
# $TMPD (kernels, workers, anything the daemon left behind).
leftovers() {
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[ "$p" = $$ ] && continue
		case $(proc_state "$p") in Z | gone) continue ;; esac
		if tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF "$TMPD" ||
			case $(readlink "$d/cwd" 2>/dev/null) in "$TMPD"/*) true ;; *) false ;; esac; then
			echo "$p"
		fi
	done
}

# One line per pid: pid and command line.
describe_pids() {
	for p in "$@"; do
		printf '%s %s\n' "$p" "$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"
	done
}

cleanup() {
	rc=$?
	trap - EXIT
	set +e
	# Processes a test started beside $DAEMON_PID (a second daemon, a
	# proxy) are its to end, before the check for leftovers.
	command -v cleanup_extra >/dev/null 2>&1 && cleanup_extra
	if [ -n "$DAEMON_PID" ]; then
		stop_daemon TERM
	fi
	# Whatever is still there was started by this test's daemon: a daemon
	# that stopped must not leave any of it. Report it, then end it.
	if [ -n "$TMPD" ]; then
		left=$(leftovers)
		[ -n "$left" ] && sleep 2 && left=$(leftovers)
		if [ -n "$left" ]; then
			echo "processes left behind after the daemon stopped:" >&2
			describe_pids $left >&2
			kill -KILL $left 2>/dev/null
			[ $rc -eq 0 ] && rc=1
		fi
	fi
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -n "$TMPD" ] && [ -f "$TMPD/daemon.log" ]; then
		echo "---- daemon log ($TMPD/daemon.log) ----" >&2
		tail -n 200 "$TMPD/daemon.log" >&2
		echo "---- end of daemon log ----" >&2
	fi
	if [ -n "$TMPD" ] && [ -z "${CODEEXECD_TEST_KEEP:-}" ]; then
		rm -rf "$TMPD"
	fi
	exit $rc
}

# --- HTTP with curl -------------------------------------------------------

# http METHOD [curl args...]: request $URL; body in $TMPD/body, headers in
# $TMPD/headers; prints the status code.
http() {
	m=$1
	shift
	curl -s -X "$m" -o "$TMPD/body" -D "$TMPD/headers" -w '%{http_code}' \
		--max-time 120 "$@" "$URL" || echo "curl-error-$?"
}

# mcp_post BODY [curl args]: POST BODY to /mcp as JSON (session and version
# headers are the caller's); prints the HTTP status, body in $TMPD/body.
mcp_post() {
	b=$1
	shift
	http POST -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' "$@" --data-binary "$b"
}

# mcp METHOD PARAMS_JSON: a JSON-RPC request (id 1) in session $SESSION,
# protocol 2025-11-25; prints the HTTP status, body in $TMPD/body.
mcp() {
	mcp_post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":$2}" \
		-H 'MCP-Protocol-Version: 2025-11-25' -H "Mcp-Session-Id: $SESSION"
}

# header NAME: value of a header of the last response (case-insensitive).
header() {
	awk -v h="$1" 'BEGIN { h = tolower(h) ":" }
		{ sub(/\r$/, "") }
		tolower(substr($0, 1, length(h))) == h { v = substr($0, length(h) + 1); sub(/^[ \t]+/, "", v); print v }' \
		"$TMPD/headers" | tail -n 1
}

# jq-less JSON access: jget EXPR evaluates a Python expression on d, the
# parsed last response body; prints the result (JSON for dicts and lists).
jget() {
	"$PY" - "$TMPD/body" "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], {"d": d})
print(v if isinstance(v, str) else json.dumps(v))
EOF
}

# expect_status WANT GOT WHAT: fail with the evidence unless WANT == GOT.
expect_status() {
	if [ "$1" != "$2" ]; then
		echo "request: $3" >&2
		echo "response headers:" >&2
		cat "$TMPD/headers" >&2 2>/dev/null
		echo "response body:" >&2
		head -c 2000 "$TMPD/body" >&2 2>/dev/null
		echo >&2
		fail "$3: HTTP status $2, want $1"
	fi
	ok "$3: HTTP $2"
}

# run_py [ARGS]: run a Python script from stdin with mcp.py importable.
run_py() {
	PYTHONPATH=$sysdir "$PY" - "$@"
}

# --- real clients (npm) ---------------------------------------------------

# Set CLIENT_DIR to tests/client with node_modules, or skip. In CI .ci/run
# installs them (npm ci), so there they always run.
require_client() {
	CLIENT_DIR=${CODEEXECD_TEST_CLIENT_DIR:-$top_srcdir/tests/client}
	[ -d "$CLIENT_DIR/node_modules/@modelcontextprotocol/sdk" ] ||
		skip "no $CLIENT_DIR/node_modules (run: cd tests/client && npm ci)"
}

# Set MODERN_DIR to tests/client-modern (the MCP 2026-07-28 clients: the
# TypeScript client 2.x and the conformance suite 0.2.0-alpha) with its
# node_modules, or skip. .ci/run installs them (npm ci) and passes
# CODEEXECD_TEST_CLIENT_MODERN_DIR.
require_client_modern() {
	MODERN_DIR=${CODEEXECD_TEST_CLIENT_MODERN_DIR:-$top_srcdir/tests/client-modern}
	[ -d "$MODERN_DIR/node_modules/@modelcontextprotocol/client" ] ||
		skip "no $MODERN_DIR/node_modules (run: cd tests/client-modern && npm ci)"
}

# sdk_client SCRIPT WHAT: run tests/client/SCRIPT (beside common.mjs, the
# SDK from CLIENT_DIR's node_modules) against $URL for the tools of `py`,
# failing the test with "the SDK WHAT client failed" when it fails.
# Without the modules it says so and returns 1: the test's other parts
# stand, so this does not skip.
sdk_client() {
	CLIENT_DIR=${CODEEXECD_TEST_CLIENT_DIR:-$top_srcdir/tests/client}
	if [ ! -d "$CLIENT_DIR/node_modules/@modelcontextprotocol/sdk" ]; then
		echo "# no $CLIENT_DIR/node_modules: the SDK part is not run (cd tests/client && npm ci)"
		return 1
	fi
	require_node 18
	# The script from this tree, the SDK from CLIENT_DIR's node_modules.
	mkdir -p "$TMPD/client"
	cp "$top_srcdir/tests/client/$1" "$top_srcdir/tests/client/common.mjs" "$TMPD/client/"
	ln -sfn "$CLIENT_DIR/node_modules" "$TMPD/client/node_modules"
	"$NODE" "$TMPD/client/$1" "$URL" py || fail "the SDK $2 client failed (status $?)"
}

# Set NODE to a node binary of at least major version $1: the one npm's
# `node` package put in node_modules first, then the one on PATH.
require_node() {
	NODE=
	for n in "${CLIENT_DIR:-}/node_modules/node/bin/node" \
		"${MODERN_DIR:-}/node_modules/node/bin/node" "$(command -v node || true)"; do
		[ -n "$n" ] && [ -x "$n" ] || continue
		major=$("$n" -p 'process.versions.node.split(".")[0]' 2>/dev/null) || continue
		if [ "$major" -ge "$1" ]; then
			NODE=$n
			break
		fi
	done
	[ -n "$NODE" ] || skip "no Node.js >= $1 (cd tests/client && npm ci installs one)"
}
