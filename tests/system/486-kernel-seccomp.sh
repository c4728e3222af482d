#!/bin/sh
# 486-kernel-seccomp: kernel_network_mode seccomp with the kernels other
# than the daemon's ipykernel (IRkernel, xeus-python, Octave), which are
# filtered from their exec on (worker/sandbox_seccomp_gate.c), with one
# shared uid and, as root, with kernel_uid_range. For each kernel: state
# across calls and its result; R's system() helper and a base-graphics
# plot, Octave's gnuplot plot, a matplotlib figure from xeus-python (each
# an image/png); then the escape probes of probes.py, in the kernel itself
# for xeus-python and in a python3 that R or Octave starts (a child, under
# the same filter): with kernel_uid_range each gives probes.EXPECT's
# seccomp outcome, as 311 checks for ipykernel, but for IP sockets, which
# fail with ENOSYS (the gate's, closed); with one shared uid the probes
# that need no second uid do, and those that reach a sibling of the same
# uid succeed, as codeexecd.yaml(5) says (these kernels stay dumpable).
# A bind(), listen() or UDP socket after the kernel is ready fails
# (ENOSYS) and an AF_UNIX connect to a host socket fails (EPERM); R's own
# TCP connect fails too. An .Rprofile that listens on TCP (any address)
# while R starts fails the kernel's start with kernel_uid_range.
. "$(dirname "$0")/lib.sh"
# Long (several daemons, or every mode): CI's first stage only.
slow_suite

require_cmd curl
require_binaries
setup_tmp
PORT=$(free_port)

kernels=
[ -r /usr/share/jupyter/kernels/ir/kernel.json ] && command -v R >/dev/null 2>&1 &&
	kernels="$kernels ir"
[ -r /usr/share/jupyter/kernels/xpython/kernel.json ] && kernels="$kernels xpython"
[ -r /usr/share/jupyter/kernels/octave/kernel.json ] && command -v octave-cli >/dev/null 2>&1 &&
	kernels="$kernels octave"
[ -n "$kernels" ] ||
	skip "none of IRkernel, xeus-python, Octave (apt-get install r-cran-irkernel xpython python3-octave-kernel octave)"

rounds=shared
if [ "$(id -u)" = 0 ]; then
	worker_for_other_uids
	chmod 711 "$TMPD"
	rounds="$rounds uids"
fi
for kernel in $kernels; do
	case $kernel in ir) tool=r ;; xpython) tool=xpy ;; octave) tool=oct ;; esac
	for round in $rounds; do
		range=
		[ $round = uids ] && range='kernel_uid_range: "62700-62799"'
		CFG_WARM=2
		CFG_EXTRA="kernel: $kernel
kernel_network_mode: seccomp
kernel_environment:
  MPLBACKEND: module://matplotlib_inline.backend_inline
$range"
		write_config
		sed -i "s/^name: py\$/name: $tool/" "$TMPD/codeexecd.yaml"
		start_daemon
		wait_ready
		run_py "$URL" "$kernel" "$tool" "$round" "$TMPD/run/control/codeexecd.sock" <<'EOF2'
import base64, re, sys
from mcp import Client, check, ok, value_of, images_of, png_problem
from probes import PROBES, Targets, run_probes, EXPECT, KILLED
from probes_tenant import host_pid_of_cwd

url, kernel, tool, rnd, control = sys.argv[1:6]
tag = "%s/%s" % (kernel, rnd)
a, b = Client(url), Client(url)
a.initialize()
b.initialize()


def run(code, c=a, timeout=30):
    r = c.execute(code, timeout=timeout, tool="execute_%s_code" % tool)
    return r, r["structuredContent"]


# ---- what the kernel does, filtered ----
if kernel == "ir":
    r, s = run("x <- 21\ncat('hello\\n')\nx * 2")
    check(s["success"] and s["stdout"] == "hello\n" and value_of(r) == "[1] 42",
          "%s: R runs, prints, gives its value" % tag, r)
    r, s = run("x + 1")
    check(value_of(r) == "[1] 22", "%s: state kept across calls" % tag, r)
    r, s = run("out <- system('echo from-helper; id -u', intern = TRUE)\ncat(out, sep = '\\n')")
    check(s["success"] and s["stdout"].startswith("from-helper\n"),
          "%s: system() starts a shell helper" % tag, s)
    r, s = run("plot(1:10)")
    imgs = images_of(r)
    check(imgs and png_problem(imgs[0]["data"]) is None, "%s: a plot is a PNG" % tag, r)
    cwd_code = "cat(getwd(), '\\n')"
elif kernel == "xpython":
    r, s = run("x = 21\nprint('hello')\nx * 2")
    check(s["success"] and s["stdout"] == "hello\n" and value_of(r) == "42",
          "%s: Python runs, prints, gives its value" % tag, r)
    r, s = run("x + 1")
    check(value_of(r) == "22", "%s: state kept across calls" % tag, r)
    r, s = run("import subprocess\nprint(subprocess.run(['echo', 'from-helper'], "
               "capture_output=True, text=True).stdout, end='')")
    check(s["stdout"] == "from-helper\n", "%s: a subprocess runs" % tag, s)
    r, s = run("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
    imgs = images_of(r)
    check(imgs and png_problem(imgs[0]["data"]) is None, "%s: a figure is a PNG" % tag, r)
    cwd_code = "import os; print(os.getcwd())"
else:
    r, s = run("x = 21;\ndisp('hello')\nx * 2")
    check(s["success"] and "hello" in s["stdout"] and "ans = 42" in s["stdout"],
          "%s: Octave runs, prints, gives its value" % tag, s)
    r, s = run("x + 1")
    check("ans = 22" in s["stdout"], "%s: state kept across calls" % tag, s)
    r, s = run("[st, out] = system('echo from-helper'); disp(out)")
    check("from-helper" in s["stdout"], "%s: system() starts a shell helper" % tag, s)
    r, s = run("plot([1 3 2])")
    imgs = images_of(r)
    check(imgs and png_problem(imgs[0]["data"]) is None,
          "%s: a plot through gnuplot is a PNG" % tag, r)
    cwd_code = "disp(pwd())"
ok("%s: state, output, value, a helper process, a plot" % tag)

# ---- the probes ----
r, s = run(cwd_code, c=b)
sib = host_pid_of_cwd(s["stdout"].strip())
check(sib, "%s: the sibling kernel's pid" % tag, s)
prelude = []


def in_child(code):
    """Run probe code in a python3 the kernel starts; killed:SIGSYS if it is."""
    if not prelude:
        prelude.append(code)
        return "", None
    src = base64.b64encode((prelude[0] + "\n" + code).encode()).decode()
    sh = ("/usr/bin/python3 -c \"import base64; exec(base64.b64decode('%s').decode())\" 2>&1; "
          "echo STATUS $?" % src)
    if kernel == "ir":
        kcode = "cat(system('%s', intern = TRUE), sep = '\\n')" % sh.replace("'", "\\'")
    else:
        kcode = "[st, out] = system('%s'); disp(out)" % sh.replace("'", "''")
    r, s = run(kcode)
    out = (s.get("stdout") or "").replace("\r\n", "\n")
    killed = {"STATUS 159": KILLED, "STATUS 139": "killed:SIGSEGV"}
    for status, how in killed.items():
        if "PROBE " not in out and status in out:
            name = re.search(r"_probe\('([^']+)'", code).group(1)
            return "PROBE %s %s" % (name, how), None
    return out, s.get("error")


def direct(code):
    r, s = run(code)
    return s.get("stdout"), s.get("error")


# int 0x80 tells something only where the host runs i386 code at all: on a
# host without IA-32 emulation it faults outside any sandbox too (as 340's
# baseline finds), so there it is not run.
import subprocess
INT80 = ("import ctypes, mmap, os\n"
         "m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
         "m.write(b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3')\n"
         "f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))\n"
         "print('ok' if f() == os.getpid() else 'wrong')\n")
host_int80 = subprocess.run([sys.executable, "-c", INT80], capture_output=True,
                            text=True).stdout.strip()
names = [n for n, _ in PROBES if n != "int80_i386" or host_int80 == "ok"]
if host_int80 != "ok":
    print("# int80_i386 not run: on this host, outside any sandbox, it gives %r"
          " (no IA-32 emulation)" % (host_int80 or "a fault"))
res = run_probes(direct if kernel == "xpython" else in_child, Targets(), sib, names=names,
                 control=control)
for name, got in sorted(res.items()):
    print("# %-8s %-26s %s" % (tag, name, got))
# Sibling probes need the sibling under another uid (kernel_uid_range).
needs_uid = ("ptrace_sibling", "process_vm_readv_sibling", "proc_mem_sibling",
             "proc_environ_sibling", "proc_cwd_sibling", "pidfd_getfd_sibling", "kill_sibling",
             "daemon_control_socket")
want = {k: v for k, v in EXPECT["seccomp"].items() if rnd == "uids" or k not in needs_uid}
# socket() of an IP family is gated (xeus-python needs one at start): once
# the gate is closed it fails with ENOSYS, not the filter's EPERM.
want.update({k: "ENOSYS" for k in ("socket_inet", "socket_inet6", "tcp_host_loopback")})
want = {k: v for k, v in want.items() if k in names}
bad = ["%s: want %s, got %s" % (k, v, res.get(k)) for k, v in want.items() if res.get(k) != v]
check(not bad, "%s: every probe gives the seccomp outcome" % tag, bad)
ok("%s: %d probes as EXPECT['seccomp'] says" % (tag, len(want)))
if rnd == "shared":
    # What one shared uid leaves open (codeexecd.yaml(5) says so): unlike
    # the daemon's ipykernel, which makes itself undumpable when it locks,
    # these kernels are dumpable after their exec, so a sibling of the same
    # uid reads their /proc/PID/mem, environ and cwd and may signal them.
    same = ("proc_mem_sibling", "proc_environ_sibling", "proc_cwd_sibling", "kill_sibling")
    open_ = {k: res.get(k) for k in same}
    check(all(v == "ok" for v in open_.values()),
          "%s: with one uid the sibling's /proc entries are open, as documented" % tag, open_)
    ok("%s: one shared uid: %s reach the sibling (use kernel_uid_range)" % (tag, ", ".join(same)))

# ---- the gate is closed: no bind or listen, no connect, from the kernel itself ----
if kernel == "ir":
    r, s = run("con <- tryCatch(socketConnection('127.0.0.1', %d, open = 'r+b', timeout = 2), "
               "error = function(e) 'refused', warning = function(w) 'refused')\n"
               "cat(if (identical(con, 'refused')) 'refused' else 'connected', '\\n')"
               % Targets().port)
    check(s["stdout"].strip() == "refused", "%s: R's own TCP connect fails" % tag, s)
gate = ("import errno, socket\n"
        "u = socket.socket(socket.AF_UNIX)\n"
        "for what, f in (('bind', lambda: u.bind('\\0codeexecd-483')), ('listen', lambda: u.listen(1)),\n"
        "                ('connect', lambda: u.connect('%s')),\n"
        "                ('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
        ".sendto(b'x', ('127.0.0.1', 9)))):\n"
        "    try:\n"
        "        f(); print('PROBE %%s ok' %% what)\n"
        "    except OSError as e:\n"
        "        print('PROBE %%s %%s' %% (what, errno.errorcode[e.errno]))\n" % control)
if kernel == "xpython":
    out, _ = direct(gate)
else:
    prelude[:] = ["pass"]
    out, _ = in_child(gate)
got = dict(re.findall(r"PROBE (\w+) (\w+)", out or ""))
check(got == {"bind": "ENOSYS", "listen": "ENOSYS", "connect": "EPERM", "udp": "ENOSYS"},
      "%s: after READY bind, listen and a UDP socket fail (ENOSYS), connect too (EPERM)"
      % tag, out)
ok("%s: bind %s, listen %s, connect %s, UDP %s" % (tag, got["bind"], got["listen"],
                                                  got["connect"], got["udp"]))

# ---- start-up code that listens: a kernel of its own uid that kept an IP
# socket off loopback past the gate does not start ----
if kernel == "ir" and rnd == "uids":
    # SIGUSR2 ends R without saving (IRkernel's quit() does not end it, 470)
    r, s = run("writeLines('s <- serverSocket(0L)', '.Rprofile')\n"
               "tools::pskill(Sys.getpid(), tools::SIGUSR2)\nSys.sleep(5)")
    r, s = run("1 + 1")
    err = s.get("error") or {}
    check(s["success"] is False and "kept an IP socket off loopback from its start-up" in
          (err.get("message") or ""), "%s: a listener from .Rprofile fails the start" % tag, r)
    ok("%s: .Rprofile's listener: %s" % (tag, err.get("message", "")[:160]))
EOF2
		stop_daemon
	done
done
