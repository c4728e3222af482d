#!/bin/sh
# 340-escape-suite: every escape probe (escape_table.py's own,
# probes_tenant.py's cgroup and nesting probes, probes.py's), run from
# inside a kernel through the real daemon in each configuration of
# escape_table.CONFIGS: each kernel_network_mode with kernels sharing the
# daemon's user (user: codeexecd), with kernel_uid_range, and with
# kernel_uid_range and limits. Kernel A of each leaves 0600 files in /tmp,
# /var/tmp and /dev/shm and detached processes behind, and its session is
# DELETEd; the harness (root) then looks for those processes and files, and
# a session started after A's end reads the files. Each outcome must be
# exactly the one escape_table.TABLE gives, which is also the table of
# doc/README.privsep (341 checks that). Every configuration has a code
# mode upstream (issue 35) on the host's loopback, whose port A tries
# around the daemon (upstream_direct), and an egress allow-list (issue 36)
# of one host, with a resolver on the host's loopback: A tries that host
# through the proxy and around it, the metadata address, raw and packet
# sockets and every session's proxy socket. Skips when not root (per-kernel
# uids and the drop to codeexecd need it) or without user namespaces.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/envlib.sh"
slow_suite

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: kernels run as codeexecd or under kernel_uid_range uids"
unshare -U -n true 2>/dev/null || skip "this host refuses user and network namespaces"
setup_tmp
ensure_test_user
worker_for_other_uids
chmod 711 "$TMPD"
make_wheel "$TMPD/wheels" 1.0
chmod -R a+rX "$TMPD/wheels"
mkdir -m 777 "$TMPD/dg"
PORT=$(free_port)
# A sidecar with socket: true in every configuration: the
# relay must reach it and nothing else, and leave every other probe as is.
cat >"$TMPD/escape_sidecar.py" <<'EOF2'
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"escape-sidecar " + self.path.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ThreadingHTTPServer((os.environ["SIDECAR_HOST"], int(os.environ["SIDECAR_PORT"])), H).serve_forever()
EOF2
chmod 644 "$TMPD/escape_sidecar.py"
SIDECARS="sidecars:
  - name: probe
    command: [$TMPD/escape_sidecar.py]
    url_env_var: PROBE_URL
    socket: true"
# Code mode's upstream: 490's SDK server where Node.js and the SDK are,
# else a bare listener (the daemon then only warns it cannot list tools).
mkdir -p "$TMPD/srv"
CLIENT_DIR=${CODEEXECD_TEST_CLIENT_DIR:-$top_srcdir/tests/client}
NODE=$( (require_node 18 >/dev/null 2>&1 && printf %s "$NODE") || true)
if [ -n "$NODE" ] && [ -d "$CLIENT_DIR/node_modules/@modelcontextprotocol/sdk" ]; then
	cp "$top_srcdir/tests/client/upstream_server.mjs" "$TMPD/srv/"
	ln -sfn "$CLIENT_DIR/node_modules" "$TMPD/srv/node_modules"
	"$NODE" "$TMPD/srv/upstream_server.mjs" "$TMPD/srv/port" >"$TMPD/srv/log" 2>&1 &
else
	"$PY" -c 'import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    s.accept()[0].close()' "$TMPD/srv/port" >"$TMPD/srv/log" 2>&1 &
fi
SRV_PID=$!
# Egress (issue 36): one allowed host, named in the proxy's hosts file, and
# a resolver on the host's loopback that answers every datagram.
EG_PORT=$(free_port)
DNS_PORT=$(free_port)
printf '127.0.0.2   allowed.egress.test\n' >"$TMPD/egress_hosts"
chmod 644 "$TMPD/egress_hosts"
"$PY" "$sysdir/egress_upstream.py" serve 127.0.0.2 "$EG_PORT" &
EG_PID=$!
"$PY" -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True:
    d, a = s.recvfrom(512)
    s.sendto(d[:2] + b"\x81\x80" + d[4:], a)' "$DNS_PORT" &
DNS_PID=$!
cleanup_extra() { kill "$SRV_PID" "$EG_PID" "$DNS_PID" 2>/dev/null; }
wait_for 20 "the upstream listens" test -s "$TMPD/srv/port"
UP_PORT=$(cat "$TMPD/srv/port")
UPSTREAMS="upstreams:
  - name: probe
    url: http://127.0.0.1:$UP_PORT/mcp"
EGRESS="egress:
  allow: [allowed.egress.test, 127.0.0.2/32]
  hosts_file: $TMPD/egress_hosts"
results=$TMPD/results.json
echo '{}' >"$results"

configs=$(cd "$sysdir" && "$PY" -c 'import escape_table as et; print(" ".join(et.CONFIGS))')
limits=$(cd "$sysdir" && "$PY" -c 'import escape_table as et; print(et.LIMITS)')
for config in $configs; do
	mode=${config%%+*}
	CFG_WARM=3
	# The baseline without Landlock, which README.privsep's table gives;
	# 346-landlock probes what Landlock stops on top of it.
	CFG_EXTRA="kernel_network_mode: $mode
kernel_landlock: off
$SIDECARS
$UPSTREAMS
$EGRESS"
	case $config in *+uids*) CFG_EXTRA="$CFG_EXTRA
kernel_uid_range: \"62300-62399\"" ;; esac
	case $config in *+limits*) CFG_EXTRA="$CFG_EXTRA
$limits" ;; esac
	write_config
	t0=$(date +%s)
	start_daemon
	wait_ready
	echo "# $config: ready in $(($(date +%s) - t0)) s"
	run_py "$URL" "$config" "$results" "$TMPD" "$UP_PORT" "$EG_PORT" "$DNS_PORT" <<'EOF' || fail "$config: the probes did not run"
import glob, json, os, random, socket, sys, time
from mcp import Client, check
import escape_table as et
import probes
import probes_tenant as pt
from probes_tenant import host_pid_of_cwd

url, config, path, tmpd, up_port, eg_port, dns_port = sys.argv[1:8]
control = tmpd + "/run/control/codeexecd.sock"
a, b = Client(url), Client(url)
a.initialize()
b.initialize()
sib = json.loads(b.execute(et.SIBLING_INFO)["structuredContent"]["stdout"])
# An isolated kernel has its own pid namespace: its getpid() is not the
# pid the host (and so a sibling outside that namespace) knows it by.
sib["pid"] = host_pid_of_cwd(sib["cwd"]) or sib["pid"]

targets = probes.Targets()
dg_abs = "\0codeexecd-escape-dgram-%d" % os.getpid()
dg_fs = tmpd + "/dg/sock"
listeners = []
if os.path.exists(dg_fs):
    os.unlink(dg_fs)
for addr in (dg_abs, dg_fs):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(addr)
    listeners.append(s)
os.chmod(dg_fs, 0o777)


def execute(code):
    s = a.execute(code, timeout=30)["structuredContent"]
    return s.get("stdout"), s.get("error")


res = {}
execute(et.PRELUDE + et.consts(targets, sib, control, tmpd + "/run", dg_abs, dg_fs,
                               b.session_id, ("127.0.0.1", int(up_port)),
                               (("127.0.0.2", int(eg_port)), int(dns_port),
                                sorted(glob.glob(tmpd + "/run/egress/*.sock")))))
for name, fn in et.PROBES:
    res[name] = probes.outcome(*execute("_probe(%r, %s)" % (name, fn)))
# Items 3 and 9: the kernel's control groups and namespaces of its own.
# None of them ends the kernel: they run as one execution.
execute(pt.TENANT_PRELUDE)
res.update(pt.outcomes(execute("\n".join(
    ["_probe(%r, %s)" % p for p in pt.CGROUP_PROBES] +
    ["print('PROBE', %r, _in_child(%s), flush=True)" % p for p in pt.NESTED_PROBES]))[0]))
if config == "inherit":
    # The default setup: %pip install in one session must not change the
    # environment the next one runs.
    execute("import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'pip', 'install', "
            "'--no-index', '--no-deps', %r], capture_output=True)"
            % (tmpd + "/wheels/tinypkg-1.0-py3-none-any.whl"))
c = Client(url)
c.initialize()
out = c.execute(et.LATER)["structuredContent"]
res["later_session"] = probes.outcome(out.get("stdout"), out.get("error"))
if config == "inherit":
    out = c.execute("try:\n    import tinypkg\n    print('PROBE p present')\n"
                    "except ImportError:\n    print('PROBE p absent')")["structuredContent"]
    res["pip_install_shared_env"] = probes.outcome(out.get("stdout"), out.get("error"))
# probes.py's probes last: in seccomp the other-ABI ones kill the kernel, so
# x32 ends A's run and int 0x80 runs in C: no kernel needs restarting.
def execute_c(code):
    s = c.execute(code, timeout=30)["structuredContent"]
    return s.get("stdout"), s.get("error")


prelude = probes.PRELUDE + targets.consts(sib["pid"], control)
for run, names in ((execute, [n for n, _ in probes.PROBES if n != "int80_i386"]),
                   (execute_c, ["int80_i386"])):
    run(prelude)
    for name, fn in probes.PROBES:
        if name in names:
            res[name] = probes.outcome(*run("_probe(%r, %s)" % (name, fn)))

# Items 1 and 2: A (a fresh kernel, in seccomp, since x32 ended the last)
# leaves files and processes behind and is DELETEd.
token = "cxd340-%d-%s" % (os.getpid(), config.replace("+", "-"))
check(execute(et.leave_files(token))[0] == "LEFT\n", "%s: A writes its files" % config)
out = execute(pt.LEAVE_PROCS)[0].split()
left = pt.host_pids(out[out.index("LEFT") + 1])
check(len(left) == 2, "%s: A's two detached processes run" % config, left)
execute(pt.TENANT_PRELUDE + et.ESCAPE_GROUP)
tag = "%d" % random.randrange(10 ** 8, 10 ** 9)
res["group_escape"] = probes.outcome(*execute("_probe('group_escape', lambda: _escape_group(%r))"
                                              % tag))
tag2 = "%d" % random.randrange(10 ** 8, 10 ** 9)
res["beside_escape"] = probes.outcome(*execute(
    "_probe('beside_escape', lambda: _escape_group(%r, 'parent'))" % tag2))
res.update(pt.outcomes(execute("\n".join("_probe(%r, %s)" % p for p in et.MOVE_PROBES))[0]))
escaper = pt.host_pids(tag, want=1)
check(len(escaper) == 1, "%s: A's grandchild that tried its own group runs" % config, escaper)
beside = pt.host_pids(tag2, want=1)
check(len(beside) == 1, "%s: A's grandchild that tried the parent runs" % config, beside)
escaper_groups = []
for l in open("/proc/%d/cgroup" % escaper[0]).readlines() + \
        open("/proc/%d/cgroup" % beside[0]).readlines():
    _h, ctls, grp = l.rstrip("\n").split(":", 2)
    if os.path.basename(grp).startswith("escape-"):
        escaper_groups += ["/sys/fs/cgroup/" + c + grp for c in (ctls.split(",")[0],)
                           if c] or ["/sys/fs/cgroup" + grp, "/sys/fs/cgroup/unified" + grp]
a.delete()
res["detached_after_delete"] = "alive" if pt.wait_gone(left) else "gone"
# Whatever ended those (the kernel's group, its pid namespace) ends the
# escaper at the same time, if at all: 2 s more for it.
res["group_escaper_after_delete"] = "alive" if pt.wait_gone(escaper, 2) else "gone"
res["beside_escaper_after_delete"] = "alive" if pt.wait_gone(beside, 2) else "gone"
for p in escaper + beside + left:
    try:
        os.kill(p, 9)
    except ProcessLookupError:
        pass
if "+uids" in config:
    # A uid of its own is swept once its worker is gone: wait (bounded) for that.
    end = time.time() + 30
    while any(os.path.exists(os.path.join(d, token)) for d in pt.SHARED_DIRS) and \
            time.time() < end:
        time.sleep(0.1)
on_host = [d for d in pt.SHARED_DIRS if os.path.exists(os.path.join(d, token))]
if not on_host:
    res["tmp_left_on_host"] = "gone"
elif len(on_host) == len(pt.SHARED_DIRS):
    res["tmp_left_on_host"] = "kept"
else:
    res["tmp_left_on_host"] = "some:" + ",".join(on_host)
d = Client(url)
d.initialize()
res.update(pt.outcomes(d.execute(et.read_later(token))["structuredContent"].get("stdout")))
d.delete()
for dirname in on_host:
    os.unlink(os.path.join(dirname, token))
# An escaper's group outlives the kernel's, which it keeps from being removed.
for esc in escaper_groups:
    if os.path.isdir(esc):
        end = time.time() + 10
        while True:
            try:
                os.rmdir(esc)
                break
            except OSError:
                check(time.time() < end, "%s: the escaper's group %s is removed" % (config, esc))
                time.sleep(0.1)

for name, got in res.items():
    # A host without the i386 ABI faults on int 0x80 before any filter sees it.
    if got.startswith("KernelDied") and "(SIGSEGV)" in got:
        res[name] = "killed:SIGSEGV"
for name in et.TABLE:
    if name in res:
        print("# %-14s %-26s %s" % (config, name, res[name]))
allres = json.load(open(path))
allres[config] = res
json.dump(allres, open(path, "w"))
EOF
	t1=$(date +%s)
	stop_daemon
	ok "$config: probes ran in $((t1 - t0)) s, stopped in $(($(date +%s) - t1)) s"
done

run_py "$results" <<'EOF'
import json, sys
from mcp import check, ok
import escape_table as et

res = json.load(open(sys.argv[1]))
bad = []
for config in et.CONFIGS:
    problems = et.compare(config, res[config])
    bad += ["%s: %s" % (config, p) for p in problems]
    if not problems:
        ok("%s: every probe as the table says" % config)
check(not bad, "every probe gives the outcome of escape_table.TABLE", bad)
EOF
