#!/bin/sh
# run.sh - benchmark a built codeexecd against jupyter_client, in one run.
#
# usage: bench/run.sh [-n] [-s | -m | -c | -H | -R | -o | -C] [CODEEXECD [CODEEXEC_WORKER]] [-- bench.py, scale.py, memory.py, checkpoint.py, hibernate.py, restart.py, outputs.py or codemode.py options]
#
# It builds nothing. Build first, out of tree, e.g. in ../build:
#     autoreconf -fi && mkdir -p build && cd build && ../configure && make
# (or `autoreconf -fi && ./configure && make` in the source tree, and point
# CODEEXECD and CODEEXEC_WORKER at supervisor/codeexecd and
# worker/codeexec-worker).
#
# The daemon and worker are, in this order: the arguments, $CODEEXECD and
# $CODEEXEC_WORKER, then ../build/supervisor/codeexecd and
# ../build/worker/codeexec-worker beside this directory.
#
#   -n   do not write the results into bench/README.md (print them only)
#   -s   run scale.py (many concurrent sessions against as many kernels
#        driven by jupyter_client; issue 18 goal 4) instead of bench.py,
#        with a daemon configured for 64 sessions from one address, e.g.
#        bench/run.sh -s -- --sessions 1,8 --calls 20
#   -m   measure memory instead (memory.py: worker PSS, supervisor RSS over
#        mixed calls and after large outputs); options after -- go to
#        memory.py, e.g. `-- -n 1000` for a quick run
#   -c   time py_checkpoint and py_restore against namespace size
#        (checkpoint.py; prints a table, README untouched), e.g.
#        `-- --max-mb 100 --rounds 3`
#   -H   what hibernation and automatic checkpoints cost (hibernate.py;
#        prints tables, README untouched), e.g. `-- --sessions 200`
#   -R   what keeping sessions across a restart costs (restart.py, with
#        persist_sessions; prints a table), e.g. `-- --sessions 20 --mb 10`,
#        or `-- --sessions 10 --mb 1 --clone 1000` for 1,000 hibernated sessions,
#        or `-- --sessions 10 --mb 10 --front-crash` for a SIGKILL of the front first
#   -o   rich outputs inline and by reference (outputs.py: 1, 5 and 20
#        plots under three settings, switched by SIGHUP; prints a table),
#        e.g. `-- --rounds 5`
#   -C   code mode against one tool call per step (codemode.py: the same
#        task over an upstream MCP server, bench/upstream_records.mjs, run
#        by Node.js with tests/client's SDK; prints a table), e.g.
#        `-- --rounds 3`
#
# Environment:
#   CODEEXECD_BENCH_BUILD_DIR  the environment (venv) the daemon builds once
#                              and reuses on later runs
#                              (default ~/.cache/codeexecd-bench/env-py)
#   CODEEXECD_BENCH_KEEP       keep the temporary directory (daemon log,
#                              results.json) when set
#   CODEEXECD_BENCH_VERBOSE    start the daemon with -v (debug log, with the
#                              time of every /mcp request; slows it a little)
#   CODEEXECD_BENCH_COMMIT     the commit the binaries were built from, to
#                              record (default: HEAD of this checkout)
#   CODEEXECD_BENCH_WRAP       a command the daemon is started under, for
#                              diagnosis: "env LD_PRELOAD=...", "perf record -g"
#   CODEEXECD_BENCH_MAX_STARTING  with -s: the daemon's pool.max_starting
#                              (default 0, one per CPU)
#   CODEEXECD_BENCH_HISTORY    the daemon's kernel_history (memory, none or
#                              disk; default: the daemon's default, memory)
#
# Needs Debian's /usr/bin/python3 with python3-ipykernel and
# python3-jupyter-client; `python3` on PATH may be another interpreter.
# Takes about two minutes. Exit status 0 on success, 1 on failure.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
record=1
scale=
memory=
checkpoint=
hibernate=
restart=
outputs=
codemode=
while [ $# -gt 0 ]; do
	case $1 in
	-n) record= ;;
	-s) scale=1 ;;
	-m) memory=1 ;;
	-c) checkpoint=1 ;;
	-H) hibernate=1 ;;
	-R) restart=1 ;;
	-o) outputs=1 ;;
	-C) codemode=1 ;;
	*) break ;;
	esac
	shift
done
daemon=${CODEEXECD:-$here/../build/supervisor/codeexecd}
worker=${CODEEXEC_WORKER:-$here/../build/worker/codeexec-worker}
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	daemon=$1
	shift
fi
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	worker=$1
	shift
fi
[ "${1:-}" = -- ] && shift

die() {
	echo "bench: $*" >&2
	exit 1
}

[ -x "$daemon" ] || die "no codeexecd at $daemon (build it, or pass its path; see the head of $0)"
[ -x "$worker" ] || die "no codeexec-worker at $worker (build it, or pass its path)"
[ -x "$PY" ] || die "$PY not found (apt-get install python3)"
"$PY" -c 'import jupyter_client, ipykernel' 2>/dev/null ||
	die "$PY cannot import jupyter_client and ipykernel (apt-get install python3-jupyter-client python3-ipykernel)"
daemon=$(cd "$(dirname "$daemon")" && pwd)/$(basename "$daemon")
worker=$(cd "$(dirname "$worker")" && pwd)/$(basename "$worker")

build_dir=${CODEEXECD_BENCH_BUILD_DIR:-${HOME:-/tmp}/.cache/codeexecd-bench/env-py}
mkdir -p "$(dirname "$build_dir")"

# Short, so the kernels' Unix socket paths under it fit in sun_path.
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/cxb.XXXXXX")
DAEMON_PID=
BENCH_PID=
UP_PID=

# State letter of process $1 (R, S, Z, ...), or "gone".
proc_state() {
	awk '{ sub(/^.*\) /, ""); print $1 }' /proc/"$1"/stat 2>/dev/null || echo gone
}

# Pids of live processes whose command line mentions $TMPD: the daemon's
# workers and kernels, and the kernels bench.py started (their connection
# files live there).
leftovers() {
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[ "$p" = $$ ] && continue
		case $(proc_state "$p") in Z | gone) continue ;; esac
		tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF "$TMPD" && echo "$p"
	done
	return 0
}

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	set +e
	if [ -n "$BENCH_PID" ] && kill -0 "$BENCH_PID" 2>/dev/null; then
		kill -TERM "$BENCH_PID" 2>/dev/null
		wait "$BENCH_PID" 2>/dev/null
	fi
	[ -n "$UP_PID" ] && kill -TERM "$UP_PID" 2>/dev/null
	if [ -n "$DAEMON_PID" ]; then
		kill -TERM "$DAEMON_PID" 2>/dev/null
		i=0
		while kill -0 "$DAEMON_PID" 2>/dev/null && [ $i -lt 150 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
	fi
	left=$(leftovers)
	if [ -n "$left" ]; then
		sleep 1
		left=$(leftovers)
	fi
	if [ -n "$left" ]; then
		echo "bench: ending processes left behind: $left" >&2
		kill -KILL $left 2>/dev/null
	fi
	if [ $rc -ne 0 ] && [ -f "$TMPD/daemon.log" ]; then
		echo "---- daemon log (last 60 lines) ----" >&2
		tail -n 60 "$TMPD/daemon.log" >&2
	fi
	if [ -n "${CODEEXECD_BENCH_KEEP:-}" ]; then
		echo "bench: kept $TMPD" >&2
	else
		rm -rf "$TMPD"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mkdir -p "$TMPD/state" "$TMPD/run"
# As root, codeexecd refuses to run kernels as root: drop to the test
# suite's account, with a copy of the worker it can reach, and an
# environment built in the run's own directory (root's home is closed to it).
. "$here/../tests/system/kernel_user.sh"
kernel_user_setup "$TMPD" || die "no account $KERNEL_USER, and useradd cannot make it"
if [ -n "$KERNEL_USER_LINE" ] && [ -z "${CODEEXECD_BENCH_BUILD_DIR:-}" ]; then
	build_dir=$TMPD/env
fi
cat >"$TMPD/codeexecd.yaml" <<EOF
$KERNEL_USER_LINE
# written by bench/run.sh
name: py
description: "Run Python code in a persistent Jupyter kernel (benchmark)."
type: pip
dependency_file: ""
auto_build: true
build_dir: $build_dir
python: /usr/bin/python3
system_site_packages: true
listen: "127.0.0.1:0"
state_dir: $TMPD/state
runtime_dir: $TMPD/run
EOF
if [ -n "$scale" ]; then
	# Room for 64 sessions (and a few more) from this one client address:
	# http.threads 0 sizes the threads from max_sessions; every session
	# holds one kept-alive connection.
	cat >>"$TMPD/codeexecd.yaml" <<EOF
pool:
  warm: 2
  max_sessions: 80
  max_starting: ${CODEEXECD_BENCH_MAX_STARTING:-0}
http:
  max_connections_per_client: 256
EOF
else
	cat >>"$TMPD/codeexecd.yaml" <<EOF
pool:
  warm: 2
  max_sessions: 20
EOF
fi
[ -n "$hibernate" ] && cat >>"$TMPD/codeexecd.yaml" <<EOF
session_hibernate_after: 1
max_hibernated_sessions: 5000
EOF
[ -n "$restart" ] && printf "persist_sessions: true\nmax_hibernated_sessions: 5000\n" >>"$TMPD/codeexecd.yaml"
[ -n "$checkpoint" ] && cat >>"$TMPD/codeexecd.yaml" <<EOF
checkpoint:
  max_bytes: 4294967296
  max_seconds: 1800
max_timeout: 1800
EOF
if [ -n "$codemode" ]; then
	# The upstream, as tests/system/490 runs its server: beside a link to
	# tests/client's node_modules (the SDK), with the node npm put there or PATH's.
	client=$here/../tests/client
	[ -d "$client/node_modules/@modelcontextprotocol/sdk" ] ||
		die "no $client/node_modules (cd tests/client && npm ci)"
	node=$client/node_modules/node/bin/node
	[ -x "$node" ] || node=$(command -v node) || die "no Node.js"
	mkdir -p "$TMPD/srv"
	cp "$here/upstream_records.mjs" "$TMPD/srv/"
	ln -s "$(cd "$client" && pwd)/node_modules" "$TMPD/srv/node_modules"
	"$node" "$TMPD/srv/upstream_records.mjs" "$TMPD/srv/port" >"$TMPD/srv/log" 2>&1 &
	UP_PID=$!
	i=0
	while [ ! -s "$TMPD/srv/port" ]; do
		kill -0 "$UP_PID" 2>/dev/null || die "the upstream exited: $(cat "$TMPD/srv/log")"
		i=$((i + 1))
		[ $i -lt 200 ] || die "the upstream did not listen within 20 s"
		sleep 0.1
	done
	up_port=$(cat "$TMPD/srv/port")
	cat >>"$TMPD/codeexecd.yaml" <<EOF
upstreams:
  - name: shop
    url: http://127.0.0.1:$up_port/mcp
    required: true
    max_calls: 10000
    max_response_bytes: 4194304
EOF
fi
[ -n "${CODEEXECD_BENCH_HISTORY:-}" ] &&
	echo "kernel_history: $CODEEXECD_BENCH_HISTORY" >>"$TMPD/codeexecd.yaml"
# memory.py and bench.py's measurement 5 print 10 MB in a call and want it back whole.
[ -z "$scale" ] && echo "output_truncation_threshold: 30000000" >>"$TMPD/codeexecd.yaml"

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
v=
[ -n "${CODEEXECD_BENCH_VERBOSE:-}" ] && v=-v
${CODEEXECD_BENCH_WRAP:-} "$daemon" -d $v -f "$TMPD/codeexecd.yaml" -W "$worker" >"$TMPD/daemon.log" 2>&1 &
DAEMON_PID=$!

# Port 0: the daemon picks a free port and logs it. The first run builds
# the environment (a venv over Debian's Python), which takes a while.
port=
deadline=$(($(date +%s) + 600))
while [ -z "$port" ]; do
	kill -0 "$DAEMON_PID" 2>/dev/null || die "codeexecd exited during start-up"
	[ "$(date +%s)" -lt "$deadline" ] || die "codeexecd did not listen within 600 s"
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$TMPD/daemon.log" | head -n 1)
	[ -n "$port" ] || sleep 0.1
done
"$PY" - "$port" "$DAEMON_PID" <<'EOF' || die "the pool did not become ready"
import http.client, json, os, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
deadline = time.time() + 600
while time.time() < deadline:
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", "/health")
        r = c.getresponse()
        if r.status == 200 and json.loads(r.read()).get("idle_kernels", 0) >= 2:
            sys.exit(0)
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(1)
    time.sleep(0.1)
sys.exit(1)
EOF
echo "bench: codeexecd $(basename "$daemon") pid $DAEMON_PID on 127.0.0.1:$port, pool ready" >&2

# What the binaries were built from, if the caller says; else the checkout.
commit=${CODEEXECD_BENCH_COMMIT:-}
if [ -z "$commit" ]; then
	commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || true)
	[ -n "$commit" ] && commit="$commit (HEAD of bench/'s checkout)"
fi
if [ -n "$memory" ]; then
	readme=
	[ -n "$record" ] && readme="--readme $here/README.md"
	"$PY" "$here/memory.py" --port "$port" --daemon-pid "$DAEMON_PID" \
		--out "$TMPD/memory.json" --codeexecd "$daemon" --commit "$commit" \
		--loadavg-start "$load_start" $readme "$@" &
	BENCH_PID=$!
	wait "$BENCH_PID" || die "memory.py failed"
	BENCH_PID=
	exit 0
fi
if [ -n "$hibernate" ]; then
	"$PY" "$here/hibernate.py" --port "$port" --rundir "$TMPD/run" --daemon-pid "$DAEMON_PID" \
		"$@" &
	BENCH_PID=$!
	wait "$BENCH_PID" || die "hibernate.py failed"
	BENCH_PID=
	exit 0
fi
if [ -n "$restart" ]; then
	"$PY" "$here/restart.py" --port "$port" --daemon-pid "$DAEMON_PID" --daemon "$daemon" \
		--config "$TMPD/codeexecd.yaml" --worker "$worker" --log "$TMPD/daemon.log" "$@" &
	BENCH_PID=$!
	wait "$BENCH_PID" || die "restart.py failed"
	BENCH_PID=
	exit 0
fi
if [ -n "$outputs" ]; then
	"$PY" "$here/outputs.py" --port "$port" --daemon-pid "$DAEMON_PID" \
		--config "$TMPD/codeexecd.yaml" --log "$TMPD/daemon.log" "$@" &
	BENCH_PID=$!
	wait "$BENCH_PID" || die "outputs.py failed"
	BENCH_PID=
	exit 0
fi
if [ -n "$codemode" ]; then
	"$PY" "$here/codemode.py" --port "$port" --upstream-port "$up_port" "$@" &
	BENCH_PID=$!
	wait "$BENCH_PID" || die "codemode.py failed"
	BENCH_PID=
	exit 0
fi
if [ -n "$checkpoint" ]; then
	"$PY" "$here/checkpoint.py" --port "$port" "$@" &
	BENCH_PID=$!
	wait "$BENCH_PID" || die "checkpoint.py failed"
	BENCH_PID=
	exit 0
fi
# ipykernel's debugger warns about frozen modules on every start; quiet it.
export PYDEVD_DISABLE_FILE_VALIDATION=1
if [ -n "$scale" ]; then
	readme=
	[ -n "$record" ] && readme="--readme $here/README.md"
	"$PY" "$here/scale.py" --port "$port" --warm 2 --tmpdir "$TMPD" \
		--out "$TMPD/results.json" --codeexecd "$daemon" --commit "$commit" \
		--loadavg-start "$load_start" --max-starting "${CODEEXECD_BENCH_MAX_STARTING:-0}" \
		$readme "$@" &
	BENCH_PID=$!
	wait "$BENCH_PID" || die "scale.py failed"
	BENCH_PID=
	exit 0
fi
 "$PY" "$here/bench.py" --port "$port" --warm 2 \
	--tmpdir "$TMPD" --out "$TMPD/results.json" --codeexecd "$daemon" \
	--commit "$commit" --loadavg-start "$load_start" "$@" &
BENCH_PID=$!
wait "$BENCH_PID" || die "bench.py failed"
BENCH_PID=

if [ -n "$record" ]; then
	"$PY" "$here/report.py" "$TMPD/results.json" --readme "$here/README.md"
else
	"$PY" "$here/report.py" "$TMPD/results.json"
fi
