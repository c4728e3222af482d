"""escape_table.py - the escape suite's probes and its table of expected
outcomes (issue 11 "Tests"), run by 340-escape-suite.sh from inside kernels
in every mode and uid configuration, and the source of the table in
doc/README.privsep (341-privsep-table.sh checks that the two agree).

Like bubblewrap's tests: each probe is a small piece of Python run in the
probed kernel A, printing "PROBE <name> <outcome>"; TABLE says, for every
configuration, the exact outcome (a few rows accept one of several
outcomes where the host decides, written "a|b"). The probes of probes.py
(issue 5) run too, with their outcomes in the same table.

Configurations: the three kernel_network_modes, with kernels sharing the
daemon's user (user: codeexecd, the sample's setup), with
kernel_uid_range (the daemon stays root), and with kernel_uid_range and
LIMITS (limits need kernel_uid_range). A is probed; B is a sibling
session (its kernel pid, working directory, HOME, runtime directory and
session id are the targets); C is a session started after A, to see
whether anything A left in its HOME runs there; D a session started after
A's session ended, to see whether it reads what A left in /tmp, /var/tmp
and /dev/shm. The harness (root) checks what A left on the host.
"""

import json
import os
import sys

import probes
import probes_tenant

CONFIGS = ["inherit", "isolated", "seccomp", "inherit+uids", "isolated+uids", "seccomp+uids",
           "inherit+uids+limits", "isolated+uids+limits", "seccomp+uids+limits"]

# The limits of the +limits configurations (they need kernel_uid_range: a
# daemon with limits and kernels of its own uid refuses to start, 332).
LIMITS = """limits:
  memory_mb: 512
  pids: 128
  cpu: 1
  required: true"""

# Helpers of the new probes; the constants come from consts() below.
PRELUDE = r'''
import ctypes, errno, os, select, site, socket, subprocess, sys
def _probe(name, fn):
    try:
        v = fn()
        out = v if isinstance(v, str) else "ok"
    except OSError as e:
        out = errno.errorcode.get(e.errno, str(e.errno))
    print("PROBE", name, out, flush=True)
def _env_write():
    import sysconfig
    p = os.path.join(sysconfig.get_paths()["purelib"], "cxd-escape.pth")
    open(p, "w").close()
    os.unlink(p)
def _control_talk(sock_path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    try:
        s.connect(sock_path)
        s.sendall(b'{"cmd":"sessions"}\n')
        data = b""
        while not data.endswith(b"\n"):
            c = s.recv(65536)
            if not c:
                break
            data += c
    finally:
        s.close()
    text = data.decode(errors="replace")
    if '"sessions"' in text:
        return "listed"
    return "refused" if "not allowed" in text else "answer:" + text[:40]
def _control_detached():
    # The attack of issue 11 item 4: a double-forked setsid child, no
    # descendant of the daemon any more, asks for every session id.
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                out = _control_talk(CONTROL)
            except OSError as e:
                out = errno.errorcode.get(e.errno, str(e.errno))
            os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    select.select([r], [], [], 10)
    out = os.read(r, 200).decode() or "no answer"
    os.close(r)
    return out
def _readable(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""
def _in_proc(needle, parts):
    found = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            for part in parts:
                if needle.encode() in _readable("/proc/%s/%s" % (p, part)):
                    found.append(part)
    return "found:" + ",".join(sorted(set(found))) if found else "none"
def _dgram(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", addr)
    finally:
        s.close()
def _pair_send():
    a, b = socket.socketpair()
    a.send(b"x")
    return "ok" if b.recv(1) == b"x" else "lost"
def _pair_sendmsg():
    a, b = socket.socketpair()
    a.sendmsg([b"x"])
    return "ok" if b.recv(1) == b"x" else "lost"
def _sidecar_conn():
    # The sidecar's socket (issue 14): its path, or in seccomp the broker.
    if "PROBE_URL_SOCKET" in os.environ:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(os.environ["PROBE_URL_SOCKET"])
        return s
    b = socket.socket(fileno=os.dup(int(os.environ["PROBE_URL_SOCKET_FD"])))
    b.settimeout(5)
    b.send(b"c")
    _, fds, _, _ = socket.recv_fds(b, 1, 1)
    b.close()
    s = socket.socket(fileno=fds[0])
    s.settimeout(5)
    return s
def _sidecar_relay():
    # A request for another host service: the relay reaches its sidecar only.
    s = _sidecar_conn()
    s.sendall(b"GET http://127.0.0.1:1/other HTTP/1.0\r\nHost: 127.0.0.1:1\r\n\r\n")
    data = b""
    while True:
        c = s.recv(65536)
        if not c:
            break
        data += c
    s.close()
    return "sidecar" if b"escape-sidecar" in data else "other"
def _sidecar_tcp():
    host, port = os.environ["PROBE_URL"][len("http://"):].rsplit(":", 1)
    socket.create_connection((host, int(port)), timeout=3).close()
def _sidecar_path():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(3)
    try:
        s.connect(RUNTIME + "/sidecars/probe.sock")
    finally:
        s.close()
def _leave_behind():
    # What would run in a later session if HOME were shared: an IPython
    # startup file and a .pth file in the user site directory.
    home = os.environ["HOME"]
    d = os.path.join(home, ".ipython", "profile_default", "startup")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "00-cxd.py"), "w").write("CXD_LEFT = 'startup'\n")
    us = site.getusersitepackages()
    os.makedirs(us, exist_ok=True)
    open(os.path.join(us, "cxd.pth"), "w").write("import builtins; builtins.CXD_LEFT = 'pth'\n")
    return "ok"
def _egress_get(url, proxy=None):
    # Through the proxy the environment names (HTTP_PROXY), or `proxy`.
    import urllib.error, urllib.request
    h = urllib.request.ProxyHandler({"http": proxy} if proxy else None)
    try:
        body = urllib.request.build_opener(h).open(url, timeout=10).read()
        return "allowed" if body == b"upstream ok\n" else "other"
    except urllib.error.HTTPError as e:
        return str(e.code)
    except urllib.error.URLError as e:
        if isinstance(e.reason, socket.gaierror):
            return "unresolved"
        if isinstance(e.reason, OSError) and e.reason.errno:
            return errno.errorcode.get(e.reason.errno, str(e.reason.errno))
        return "URLError"
def _egress_dns():
    # A resolver on the host (the harness answers every datagram).
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    try:
        s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00"
                 b"\x00\x01\x00\x01", ("127.0.0.1", EGRESS_DNS))
        return "answered" if s.recv(512) else "empty"
    except socket.timeout:
        return "no-answer"
    finally:
        s.close()
def _egress_sockets():
    # Every session's proxy socket on the host, reached around the forwarder.
    outs = set()
    for p in EGRESS_SOCKS:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(3)
        try:
            s.connect(p)
            outs.add("connected")
        except OSError as e:
            outs.add(errno.errorcode.get(e.errno, str(e.errno)))
        finally:
            s.close()
    return ",".join(sorted(outs)) or "none"
def _history():
    hm = get_ipython().history_manager
    return "off" if not hm.enabled else str(hm.hist_file)
'''

# name, code calling _probe's function (run in kernel A)
PROBES = [
    ("kernel_uid", "lambda: 'root' if os.getuid() == 0 else 'not-root'"),
    ("env_writable", "_env_write"),
    ("control_connect", "lambda: _control_talk(CONTROL)"),
    ("control_detached", "_control_detached"),
    ("runtime_dir_list", "lambda: os.listdir(RUNTIME)"),
    ("sibling_workdir", "lambda: os.listdir(B_CWD)"),
    ("sibling_runtime_dir", "lambda: os.listdir(B_RUN)"),
    # The kernel binds through /proc/self/fd/N/k of its runtime directory:
    # that descriptor's ".." must show no other kernel's.
    ("sibling_via_own_fd", "lambda: 'listed' if os.path.basename(B_RUN) in os.listdir("
     "os.path.dirname(__import__('ipykernel.kernelapp', fromlist=['IPKernelApp'])"
     ".IPKernelApp.instance().ip) + '/..') else 'hidden'"),
    ("sibling_conn_fd", "lambda: _readable_strict(B_CONN)"),
    ("session_id_in_proc", "lambda: _in_proc(B_SID, ('cmdline', 'environ'))"),
    ("sibling_dir_in_cmdline", "lambda: _in_proc(B_CWD, ('cmdline',))"),
    ("home_private", "lambda: 'own' if os.environ['HOME'] not in (B_HOME, '/') else 'shared'"),
    ("user_site", "lambda: 'enabled' if site.check_enableusersite() else 'disabled'"),
    ("history", "_history"),
    ("leave_behind", "_leave_behind"),
    ("dgram_abstract_host", "lambda: _dgram(DGRAM_ABSTRACT)"),
    ("dgram_fs_host", "lambda: _dgram(DGRAM_FS)"),
    ("socketpair_send", "_pair_send"),
    ("socketpair_sendmsg", "_pair_sendmsg"),
    ("sidecar_relay", "_sidecar_relay"),
    ("sidecar_tcp", "_sidecar_tcp"),
    ("sidecar_path", "_sidecar_path"),
    # Code mode (issue 35): the upstream the daemon calls for the kernel,
    # reached directly, around the daemon (its host:port is UPSTREAM).
    ("upstream_direct", "lambda: socket.create_connection(UPSTREAM, timeout=3).close()"),
    # Egress by policy (issue 36): an allowed host through the proxy the
    # environment names; the metadata address through the kernel's proxy
    # port; and around the proxy: the allowed host directly, a resolver on
    # the host, raw and packet sockets, the sessions' proxy sockets.
    ("egress_allowed", "lambda: _egress_get('http://allowed.egress.test:%d/' % EGRESS[1])"),
    ("egress_metadata", "lambda: _egress_get('http://169.254.169.254/latest/meta-data/', "
     "'http://127.0.0.1:3128')"),
    ("egress_direct", "lambda: socket.create_connection(EGRESS, timeout=3).close()"),
    ("egress_dns", "_egress_dns"),
    ("egress_raw", "lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()"),
    ("egress_packet", "lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()"),
    ("egress_sockets", "_egress_sockets"),
]

# Items 3 and 9 of issue 11 are probes_tenant.py's CGROUP_PROBES (may the
# kernel write its own limits or leave its group; the memory, pids and cpu
# ones count only where limits make those groups) and NESTED_PROBES (may
# it make namespaces of its own; each in a forked child, since a success
# changes the process), run in A after probes_tenant.TENANT_PRELUDE.

# Item 2's second attack, run in A after TENANT_PRELUDE: a detached
# grandchild first makes a control group below its kernel's own ("own": a
# kill that read only the kernel's group's cgroup.procs would not look
# there) or beside it in the shared parent ("parent": outside the kernel's
# subtree), and moves into it; then it sleeps, tagged. Prints its setup's
# outcome (ok, or the errno of mkdir or of the move). Then the moves into
# groups that are not the kernel's: a forked child writes its pid to the
# shared parent's cgroup.procs or tasks (v2: cgroup.threads), or to a
# sibling kernel's (B's, or a warm kernel's: an isolated kernel, in a pid
# namespace of its own, sees no pid in either's cgroup.procs), and exits.
ESCAPE_GROUP = r'''
def _escape_group(tag, where="own"):
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                g = _cg_files()
                own, parent = g["freezer" if "freezer" in g else "v2"]
                d = (own if where == "own" else parent) + "/escape-" + tag
                os.mkdir(d)
                with open(d + "/cgroup.procs", "w") as f:
                    f.write(str(os.getpid()))
                out = "ok"
            except OSError as e:
                out = errno.errorcode.get(e.errno, str(e.errno))
            except KeyError:
                out = "no-group"
            os.write(w, out.encode())
            os.close(w)
            os.execvp("sleep", ["sleep", "1002." + tag])
        os._exit(0)
    os.close(w)
    out = os.read(r, 100).decode() or "child died"
    os.close(r)
    os.wait()
    return out
def _move_child(path):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            with open(path, "w") as f:
                f.write(str(os.getpid()))
            out = "ok"
        except OSError as e:
            out = errno.errorcode.get(e.errno, str(e.errno))
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 100).decode() or "child died"
    os.close(r)
    os.waitpid(pid, 0)
    return out
def _cg_main():
    g = _cg_files()
    if "freezer" in g:
        return g["freezer"] + (1,)
    return g["v2"] + (2,)
def _parent_move(v1_file, v2_file):
    own, parent, v = _cg_main()
    return _move_child(parent + "/" + (v1_file if v == 1 else v2_file))
def _sibling_move(v1_file, v2_file):
    own, parent, v = _cg_main()
    for n in sorted(os.listdir(parent)):
        d = parent + "/" + n
        if d != own and not n.startswith("escape-") and os.path.isdir(d):
            return _move_child(d + "/" + (v1_file if v == 1 else v2_file))
    return "no-sibling"
'''

# Those moves, run in A after ESCAPE_GROUP.
MOVE_PROBES = [
    ("parent_procs_move", "lambda: _parent_move('cgroup.procs', 'cgroup.procs')"),
    ("parent_tasks_move", "lambda: _parent_move('tasks', 'cgroup.threads')"),
    ("sibling_procs_move", "lambda: _sibling_move('cgroup.procs', 'cgroup.procs')"),
    ("sibling_tasks_move", "lambda: _sibling_move('tasks', 'cgroup.threads')"),
]

# Item 1: A writes a secret, mode 0600, in every directory any uid may write
# to, and ends; the harness (root) looks for the files on the host (after
# the sweep of A's uid, with kernel_uid_range) and session D, started after
# A's end (another uid, or the same shared one), reads them.
def leave_files(token):
    return ("import os\nfor d in %r:\n"
            "    fd = os.open(os.path.join(d, %r), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)\n"
            "    os.write(fd, b'SECRET')\n    os.close(fd)\nprint('LEFT')\n"
            % (probes_tenant.SHARED_DIRS, token))


def read_later(token):
    lines = ["import errno, os", "def _r(p):", "    try:",
             "        return 'ok' if open(p).read() == 'SECRET' else 'other'",
             "    except OSError as e:",
             "        return errno.errorcode.get(e.errno, str(e.errno))"]
    lines += ["print('PROBE', %r, _r(%r))" % (name, os.path.join(d, token))
              for name, d in zip(LATER_READ_ROWS, probes_tenant.SHARED_DIRS)]
    return "\n".join(lines)


LATER_READ_ROWS = ["later_read_tmp", "later_read_var_tmp", "later_read_dev_shm"]

# Asked of session C, started after A's probes.
LATER = "print('PROBE later_session', globals().get('CXD_LEFT') or getattr(__import__('builtins'), 'CXD_LEFT', None) or 'clean')"

# B tells A's probes where it is (as a leak would). Its connection file is
# the descriptor /proc/self/fd/N given by ipykernel's connection_file; its
# endpoint is /proc/self/fd/M/k, M being its runtime directory, whose path
# the link gives.
SIBLING_INFO = r'''
import json, os
from ipykernel.kernelapp import IPKernelApp
_app = IPKernelApp.instance()
print(json.dumps({"pid": os.getpid(), "cwd": os.getcwd(), "home": os.environ.get("HOME", ""),
                  "run": os.path.realpath(os.path.dirname(_app.ip)),
                  "conn": _app.connection_file}))
'''

U = "+uids"
ALL = {c: None for c in CONFIGS}


def row(inherit, isolated, seccomp, inherit_u=None, isolated_u=None, seccomp_u=None,
        inherit_l=None, isolated_l=None, seccomp_l=None):
    """Expected outcomes per configuration; the +uids ones default to the
    shared ones, the +uids+limits ones to the +uids ones."""
    r = {"inherit": inherit, "isolated": isolated, "seccomp": seccomp}
    r["inherit+uids"] = inherit if inherit_u is None else inherit_u
    r["isolated+uids"] = isolated if isolated_u is None else isolated_u
    r["seccomp+uids"] = seccomp if seccomp_u is None else seccomp_u
    r["inherit+uids+limits"] = r["inherit+uids"] if inherit_l is None else inherit_l
    r["isolated+uids+limits"] = r["isolated+uids"] if isolated_l is None else isolated_l
    r["seccomp+uids+limits"] = r["seccomp+uids"] if seccomp_l is None else seccomp_l
    return r


def limits_only(v):
    """A row probed only where limits make the kernel's memory, pids and cpu groups."""
    return {c: v for c in CONFIGS if c.endswith("+limits")}


def same(v):
    return row(v, v, v)


LOCKED = probes.LOCKED
NS_ONLY = probes.NS_ONLY
OWN_UID = "Seccomp=0,NoNewPrivs=1,caps_empty=True"
KILLED = probes.KILLED

# The table: probe -> configuration -> outcome. Rows in the order of
# README.privsep. "a|b": the host decides (x32 and i386 ABIs compiled out).
TABLE = {
    # issue 11, items 4-8
    "kernel_uid": same("not-root"),
    "env_writable": same("EACCES"),
    # isolated: runtime_dir and state_dir are its own tmpfs there, holding
    # only its own session's directories and the sidecars' (issue 28, item 6).
    "control_connect": row("EACCES", "ENOENT", "EPERM"),
    "control_detached": row("EACCES", "ENOENT", "EPERM"),
    "runtime_dir_list": row("ok", "ok", "ok", "EACCES", "ok", "EACCES"),
    "sibling_workdir": row("ok", "ENOENT", "ok", "EACCES", "ENOENT", "EACCES"),
    "sibling_runtime_dir": row("ok", "ENOENT", "ok", "EACCES", "ENOENT", "EACCES"),
    "sibling_via_own_fd": row("listed", "hidden", "listed", "EACCES", "hidden", "EACCES"),
    "sibling_conn_fd": row("ok", "ENOENT", "EACCES", "EACCES", "ENOENT", "EACCES"),
    "session_id_in_proc": same("none"),
    "sibling_dir_in_cmdline": same("none"),
    "home_private": same("own"),
    "user_site": same("disabled"),
    "history": same(":memory:"),
    "later_session": same("clean"),
    "dgram_abstract_host": row("ok", "ECONNREFUSED", "EPERM"),
    "dgram_fs_host": row("ok", "ok", "EPERM"),
    "socketpair_send": same("ok"),
    "socketpair_sendmsg": row("ok", "ok", "EPERM"),
    # issue 14: a sidecar with socket: true (the broker's connection in seccomp)
    "sidecar_relay": same("sidecar"),
    "sidecar_tcp": row("ok", "ECONNREFUSED", "EPERM"),
    "sidecar_path": row("ok", "ok", "EPERM"),
    # issue 35: an inherit kernel shares the host's network, so reaches it
    "upstream_direct": row("ok", "ECONNREFUSED", "EPERM"),
    # issue 36: egress applies to isolated kernels; inherit ones have the
    # host's network, which no proxy stands in
    "egress_allowed": row("unresolved", "allowed", "unresolved"),
    "egress_metadata": row("ECONNREFUSED", "403", "EPERM"),
    "egress_direct": row("ok", "ECONNREFUSED", "EPERM"),
    "egress_dns": row("answered", "no-answer", "EPERM"),
    "egress_raw": same("EPERM"),
    "egress_packet": same("EPERM"),
    "egress_sockets": row("none", "ENOENT", "none"),
    "pip_install_shared_env": {"inherit": "absent"},
    # item 1: A's 0600 files in /tmp, /var/tmp and /dev/shm, after A ended
    "tmp_left_on_host": row("kept", "gone", "kept", "gone", "gone", "gone"),
    "later_read_tmp": row("ok", "ENOENT", "ok", "ENOENT", "ENOENT", "ENOENT"),
    "later_read_var_tmp": row("ok", "ENOENT", "ok", "ENOENT", "ENOENT", "ENOENT"),
    "later_read_dev_shm": row("ok", "ENOENT", "ok", "ENOENT", "ENOENT", "ENOENT"),
    # item 2: what A detached from itself, once A's DELETE has returned
    "detached_after_delete": same("gone"),
    "group_escape": same("EACCES"),
    "group_escaper_after_delete": same("gone"),
    "beside_escape": same("EACCES"),
    "beside_escaper_after_delete": same("gone"),
    "parent_procs_move": same("EACCES"),
    "parent_tasks_move": same("EACCES"),
    "sibling_procs_move": same("EACCES"),
    "sibling_tasks_move": same("EACCES"),
    # item 3: the kernel's own control groups
    "memory_limit_writable": limits_only("EACCES"),
    "pids_max_writable": limits_only("EACCES"),
    "cpu_quota_writable": limits_only("EACCES"),
    "freezer_state_writable": same("EACCES"),
    "own_procs_writable": same("EACCES"),
    "parent_procs_writable": same("EACCES"),
    "parent_mkdir": same("EACCES"),
    # item 9: namespaces of its own (each in a forked child)
    "unshare_user": row("ok", "ENOSPC", "EPERM"),
    "unshare_net": row("EPERM", "EPERM", "EPERM"),
    "unshare_mount": row("EPERM", "EPERM", "EPERM"),
    "clone3_user": row("ok", "ENOSPC", "ENOSYS"),
    "userns_then_mount": row("ok", "ENOSPC", "EPERM"),
    "chroot": same("EPERM"),
    "raise_max_userns": same("EACCES"),
    # issue 5's probes (probes.py), the sibling under the same uid or another
    "socket_inet": row("ok", "ok", "EPERM"),
    "socket_inet6": row("ok", "ok", "EPERM"),
    "tcp_host_loopback": row("ok", "ECONNREFUSED", "EPERM"),
    "abstract_unix_host": row("ok", "ECONNREFUSED", "EPERM"),
    "io_uring_setup": row("ok", "ok", "EPERM"),
    "ptrace_sibling": row("ok", "ESRCH", "EPERM", "EPERM", "ESRCH"),
    "process_vm_readv_sibling": row("ok", "ESRCH", "EPERM", "EPERM", "ESRCH"),
    "proc_mem_sibling": row("ok", "ENOENT", "EACCES", "EACCES", "ENOENT"),
    "proc_environ_sibling": row("ok", "ENOENT", "EACCES", "EACCES", "ENOENT"),
    "proc_cwd_sibling": row("ok", "ENOENT", "EACCES", "EACCES", "ENOENT"),
    "pidfd_getfd_sibling": row("ok", "ESRCH", "EPERM", "EPERM", "ESRCH"),
    "kill_sibling": row("ok", "ESRCH", "ok", "EPERM", "ESRCH", "EPERM"),
    "status_self": row("Seccomp=0,NoNewPrivs=0,caps_empty=True", NS_ONLY, LOCKED, OWN_UID),
    "status_grandchild": row("Seccomp=0,NoNewPrivs=0,caps_empty=True", NS_ONLY, LOCKED, OWN_UID),
    "x32_syscall": row("ok|ENOSYS", "ok|ENOSYS", KILLED),
    "int80_i386": row("ok|killed:SIGSEGV", "ok|killed:SIGSEGV", KILLED + "|killed:SIGSEGV"),
}

# What each row means, for the README.privsep table.
LABELS = {
    "kernel_uid": "kernel runs as root",
    "env_writable": "write the environment",
    "control_connect": "control socket: list sessions",
    "control_detached": "same, from a setsid grandchild",
    "runtime_dir_list": "list runtime_dir",
    "sibling_workdir": "list sibling's working dir",
    "sibling_runtime_dir": "list sibling's runtime dir",
    "sibling_via_own_fd": "sibling via own dir's fd",
    "sibling_conn_fd": "read sibling's connection fd",
    "session_id_in_proc": "a session id in /proc/*/",
    "sibling_dir_in_cmdline": "sibling's dir in a cmdline",
    "home_private": "HOME of its own",
    "user_site": "user site directory",
    "history": "IPython history file",
    "later_session": "startup file/.pth run later",
    "dgram_abstract_host": "datagram to host abstract",
    "dgram_fs_host": "datagram to host fs socket",
    "socketpair_send": "socketpair send",
    "socketpair_sendmsg": "socketpair sendmsg",
    "sidecar_relay": "sidecar socket, other URL",
    "sidecar_tcp": "sidecar's TCP port",
    "sidecar_path": "connect sidecar socket path",
    "upstream_direct": "code mode upstream's TCP port",
    "egress_allowed": "allowed host, HTTP_PROXY",
    "egress_metadata": "metadata via 127.0.0.1:3128",
    "egress_direct": "allowed host, directly",
    "egress_dns": "a resolver on the host (UDP)",
    "egress_raw": "socket(AF_INET, SOCK_RAW)",
    "egress_packet": "socket(AF_PACKET)",
    "egress_sockets": "sessions' proxy sockets",
    "pip_install_shared_env": "%pip install seen later",
    "tmp_left_on_host": "A's 0600 files, A ended",
    "later_read_tmp": "later session reads /tmp/x",
    "later_read_var_tmp": "same, /var/tmp/x",
    "later_read_dev_shm": "same, /dev/shm/x",
    "detached_after_delete": "setsid grandchild, DELETEd",
    "group_escape": "grandchild makes a cgroup",
    "group_escaper_after_delete": "it, after DELETE",
    "beside_escape": "same, beside its group",
    "beside_escaper_after_delete": "it, after DELETE",
    "parent_procs_move": "move to parent's cgroup.procs",
    "parent_tasks_move": "same, tasks/cgroup.threads",
    "sibling_procs_move": "move to sibling's group",
    "sibling_tasks_move": "same, tasks/cgroup.threads",
    "memory_limit_writable": "open memory.max/limit",
    "pids_max_writable": "open pids.max",
    "cpu_quota_writable": "open cpu.max/cfs_quota_us",
    "freezer_state_writable": "open freezer.state",
    "own_procs_writable": "open own cgroup.procs",
    "parent_procs_writable": "open parent's cgroup.procs",
    "parent_mkdir": "mkdir beside its group",
    "unshare_user": "unshare(CLONE_NEWUSER)",
    "unshare_net": "unshare(CLONE_NEWNET)",
    "unshare_mount": "unshare(CLONE_NEWNS)",
    "clone3_user": "clone3(CLONE_NEWUSER)",
    "userns_then_mount": "userns, then mount tmpfs",
    "chroot": "chroot",
    "raise_max_userns": "write max_user_namespaces",
    "socket_inet": "socket(AF_INET)",
    "socket_inet6": "socket(AF_INET6)",
    "tcp_host_loopback": "TCP to host 127.0.0.1",
    "abstract_unix_host": "host abstract Unix socket",
    "io_uring_setup": "io_uring_setup",
    "ptrace_sibling": "ptrace sibling",
    "process_vm_readv_sibling": "process_vm_readv sibling",
    "proc_mem_sibling": "/proc/SIB/mem",
    "proc_environ_sibling": "/proc/SIB/environ",
    "proc_cwd_sibling": "/proc/SIB/cwd",
    "pidfd_getfd_sibling": "pidfd_getfd sibling",
    "kill_sibling": "kill(sibling, 0)",
    "status_self": "Seccomp/NoNewPrivs/caps",
    "status_grandchild": "same, in a grandchild",
    "x32_syscall": "x32 getpid",
    "int80_i386": "int 0x80 (i386 getpid)",
}

SHORT = {
    "Seccomp=0,NoNewPrivs=0,caps_empty=True": "0/0/0",
    NS_ONLY: "0/1/0", LOCKED: "2/1/0", KILLED: "killed",
    "ok|ENOSYS": "ok/ENOSYS", "ok|killed:SIGSEGV": "ok/SEGV", "not-root": "no",
    KILLED + "|killed:SIGSEGV": "SYS/SEGV",
    ":memory:": "memory", "disabled": "off", "absent": "no", "clean": "no",
    "none": "none", "own": "yes", "listed": "listed", "ECONNREFUSED": "ECONNREF",
    "sidecar": "only it",
    "unresolved": "no name", "answered": "answer", "allowed": "allowed",
}


def consts(targets, sib, control, runtime, dgram_abstract, dgram_fs, sid, upstream, egress):
    """The constants of PRELUDE's probes; upstream: code mode's upstream, (host, port);
    egress: the allowed host's (host, port), the host resolver's port, the proxy sockets."""
    return ("UPSTREAM = %r\nEGRESS = %r\nEGRESS_DNS = %d\nEGRESS_SOCKS = %r\n"
            % (tuple(upstream), tuple(egress[0]), egress[1], egress[2]) +"SIB = %d\nB_CWD = %r\nB_HOME = %r\nB_RUN = %r\nB_CONN = %r\nB_SID = %r\n"
            "CONTROL = %r\nRUNTIME = %r\nDGRAM_ABSTRACT = %r\nDGRAM_FS = %r\n"
            "def _readable_strict(p):\n    open(p, 'rb').read()\n" % (
                sib["pid"], sib["cwd"], sib["home"], sib["run"],
                "/proc/%d/fd/%s" % (sib["pid"], sib["conn"].rsplit("/", 1)[-1]),
                sid, control, runtime, dgram_abstract, dgram_fs))


def matches(want, got):
    return got in want.split("|")


def compare(config, results):
    """Problems: rows of TABLE for `config` whose outcome differs."""
    problems = []
    for name, per in TABLE.items():
        if config not in per:
            continue
        got = results.get(name)
        if not matches(per[config], got or ""):
            problems.append("%s: want %s, got %s" % (name, per[config], got))
    return problems


# Column heads of the README.privsep table.
HEADS = {"inherit": "inh", "isolated": "isol", "seccomp": "secc", "+uids": "+u",
         "+limits": "l"}


def head(config):
    for long, short in HEADS.items():
        config = config.replace(long, short)
    return config


def render():
    """The README.privsep table: one line per probe, one column per configuration."""
    cells = {name: [SHORT.get(per.get(c, "-"), per.get(c, "-")) for c in CONFIGS]
             for name, per in TABLE.items()}
    widths = [max([len(head(c))] + [len(v[i]) for v in cells.values()]) + 1
              for i, c in enumerate(CONFIGS)]
    label = max(len(v) for v in LABELS.values()) + 1

    def line(first, vals):
        return ("    %-*s" % (label, first) + "".join(
            "%-*s" % (w, v) for w, v in zip(widths, vals))).rstrip()
    lines = [line("probe (kernel A)", [head(c) for c in CONFIGS])]
    lines += [line(LABELS[name], cells[name]) for name in TABLE]
    return "\n".join(lines) + "\n"


if __name__ == "__main__" and sys.argv[1:] == ["--render"]:
    sys.stdout.write(render())
