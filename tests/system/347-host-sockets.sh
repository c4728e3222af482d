#!/bin/sh
# 347-host-sockets: which Unix sockets of the host a kernel reaches, per
# kernel_network_mode: root-owned, mode 0777 stream and datagram sockets in
# /run, /var/run, /tmp/.X11-unix (where D-Bus, databases and X put theirs)
# and in the daemon's state_dir and runtime_dir, probed from a kernel of
# the daemon's uid, with the daemon's directories in /tmp, then (isolated
# again) in /var/lib and /run. The outcomes must be the table of codeexecd.yaml(5)
# (kernel_network_mode): inherit reaches every one; seccomp none (connect
# and sendto to an address are refused); isolated none either: /run,
# /var/run, /tmp and the daemon's directories are its own there, but for
# its session's directories and its environment. Skips when not root or
# without user namespaces.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: the sockets are root's and kernels run as $TEST_USER"
unshare -U -n true 2>/dev/null || skip "this host refuses user and network namespaces"
setup_tmp
PORT=$(free_port)

# isolated-out: the daemon's directories outside /tmp, where a private
# /tmp hides nothing of them: state_dir under /var/lib, runtime_dir under
# /run (which the kernel has its own of).
OUT_STATE=/var/lib/cxd347-$$
OUT_RUN=/run/cxd347-$$
# lib.sh's cleanup after ours, with the test's status.
trap 'st=$?; rm -rf "$OUT_STATE" "$OUT_RUN"; (exit $st); cleanup' EXIT
for mode in inherit isolated seccomp isolated-out; do
	CFG_WARM=1
	CFG_EXTRA="kernel_network_mode: ${mode%-out}"
	write_config
	state=$TMPD/state run=$TMPD/run
	if [ "$mode" = isolated-out ]; then
		state=$OUT_STATE run=$OUT_RUN
		config_set state_dir "$state"
		config_set runtime_dir "$run"
	fi
	start_daemon
	wait_ready
	run_py "$URL" "$mode" "$state" "$run" <<'EOF2' || fail "$mode: a socket's outcome is not the documented one"
import os, shutil, socket, sys
from mcp import Client, check

url, mode, state, run = sys.argv[1:5]
tag = "cxd347-%d" % os.getpid()
places = {"run": "/run/" + tag, "var_run": "/var/run/%s-v" % tag,
          "x11": "/tmp/.X11-unix", "state": state, "runtime": run}
made, socks = [], []
for name, d in places.items():
    if not os.path.isdir(d):
        os.makedirs(d, mode=0o755)
        made.append(d)
    for kind, t in (("stream", socket.SOCK_STREAM), ("dgram", socket.SOCK_DGRAM)):
        path = "%s/%s-%s.sock" % (d, tag, kind)
        s = socket.socket(socket.AF_UNIX, t)
        s.bind(path)
        if t == socket.SOCK_STREAM:
            s.listen(4)
        os.chmod(path, 0o777)
        socks.append((name + "_" + kind, path, s))
code = ["import errno, socket", "def _p(name, path, t):",
        "    s = socket.socket(socket.AF_UNIX, t)",
        "    try:",
        "        s.connect(path) if t == socket.SOCK_STREAM else s.sendto(b'x', path)",
        "        out = 'ok'",
        "    except OSError as e:",
        "        out = errno.errorcode.get(e.errno, str(e.errno))",
        "    print('PROBE', name, out)"]
for name, path, s in socks:
    t = "socket.SOCK_STREAM" if name.endswith("stream") else "socket.SOCK_DGRAM"
    code.append("_p(%r, %r, %s)" % (name, path, t))
try:
    c = Client(url)
    c.initialize()
    r = c.execute("\n".join(code), timeout=60)["structuredContent"]
finally:
    for _, path, s in socks:
        s.close()
        os.unlink(path)
    for d in made:
        shutil.rmtree(d, ignore_errors=True)
got = {l.split()[1]: l.split()[2] for l in r["stdout"].splitlines() if l.startswith("PROBE")}
want = {}
for name, _, _ in socks:
    if mode == "inherit":
        want[name] = "ok"
    elif mode == "seccomp":
        want[name] = "EPERM"
    else:
        want[name] = "ENOENT"
print("#", mode, sorted(got.items()))
check(got == want, "%s: got %r, want %r" % (mode, got, want), r)
EOF2
	stop_daemon
done
ok "host Unix sockets: inherit reaches them, isolated and seccomp none"
