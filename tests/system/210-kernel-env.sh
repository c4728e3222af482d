#!/bin/sh
# 210-kernel-env: what a kernel process starts with (seed 000, "Kernel
# process environment"): only the sanitized baseline, codeexecd's own values
# and kernel_environment. A SECRET_TOKEN in the daemon's environment does not
# reach the kernel, nor its worker; LD_LIBRARY_PATH from kernel_environment
# is seen by the dynamic loader; rejected names stop `codeexecd -n`.
. "$(dirname "$0")/lib.sh"

require_cmd curl
require_py ipykernel
require_binaries
. "$(dirname "$0")/envlib.sh"

setup_tmp
PORT=$(free_port)
ENVDIR=$TMPD/envs/py
SECRET=sekrit-$$-value

# Rejected names: each stops the configuration check with the reason.
for case in "PYTHONPATH:it injects code before kernel isolation applies" \
	"LD_PRELOAD:it injects code before kernel isolation applies" \
	"LD_AUDIT:it injects code before kernel isolation applies" \
	"PYTHONSTARTUP:it injects code before kernel isolation applies" \
	"PATH:codeexecd sets it for every kernel" \
	"MCP_ASSET_CACHE_DIR:codeexecd sets it for every kernel" \
	"VIRTUAL_ENV:codeexecd sets it for every kernel" \
	"CONDA_PREFIX:codeexecd sets it for every kernel" \
	"JUPYTER_CONFIG_DIR:codeexecd sets it for every kernel" \
	"IPYTHONDIR:codeexecd sets it for every kernel"; do
	name=${case%%:*}
	EXTRA="kernel_environment:
  $name: /x"
	env_config
	"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/check.log" 2>&1 &&
		fail "kernel_environment $name was accepted"
	grep -qF "kernel_environment: $name is rejected: ${case#*:}" "$TMPD/check.log" ||
		fail "no reason for $name: $(cat "$TMPD/check.log")"
done
EXTRA="kernel_environment: {\"9LIVES\": x}"
env_config
"$CODEEXECD" -n -f "$TMPD/codeexecd.yaml" >"$TMPD/check.log" 2>&1 && fail "9LIVES accepted"
grep -q "is not a valid environment variable name" "$TMPD/check.log" || fail "no reason for 9LIVES"
ok "kernel_environment: controlled, code-injecting and invalid names rejected with the reason"

# A tiny native library, found only through LD_LIBRARY_PATH.
lib=$TMPD/vendor/lib
mkdir -p "$lib"
have_cc=
if command -v cc >/dev/null 2>&1; then
	printf 'int cxd_answer(void) { return 42; }\n' >"$TMPD/vendor/answer.c"
	cc -shared -fPIC -o "$lib/libcxdanswer.so" "$TMPD/vendor/answer.c" && have_cc=1
fi

EXTRA="kernel_environment:
  LD_LIBRARY_PATH: $lib
  DOMAIN_RUNTIME_ROOT: /usr/local/lib/domain-runtime/"
env_config
export SECRET_TOKEN=$SECRET AWS_SECRET_ACCESS_KEY=$SECRET PYTHONPATH=/nonexistent/$SECRET
start_daemon
unset SECRET_TOKEN AWS_SECRET_ACCESS_KEY PYTHONPATH
wait_ready
# The test proves something only if the daemon really has the secret.
if [ -r "/proc/$DAEMON_PID/environ" ] && tr '\0' '\n' <"/proc/$DAEMON_PID/environ" >/dev/null 2>&1; then
	tr '\0' '\n' <"/proc/$DAEMON_PID/environ" | grep -qx "SECRET_TOKEN=$SECRET" ||
		fail "the daemon was started without SECRET_TOKEN"
fi
out=$(run_code "
import os, ctypes
env = dict(l.split('=', 1) for l in open('/proc/self/environ').read().split('\0') if l)
allowed = {'PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'LC_NUMERIC', 'LC_TIME',
           'LC_COLLATE', 'LC_MONETARY', 'LC_MESSAGES', 'TZ', 'TMPDIR', 'TMP', 'TEMP',
           'VIRTUAL_ENV', 'MCP_ASSET_CACHE_DIR', 'USER_IDENTITY', 'LD_LIBRARY_PATH',
           'DOMAIN_RUNTIME_ROOT', 'PYTHONNOUSERSITE', 'PIP_NO_INPUT',
           'PIP_DISABLE_PIP_VERSION_CHECK', 'PIP_TARGET', 'PYTHONPATH',
           'CODEEXECD_OUTPUT_DIR'}
pkgs = os.path.join(os.getcwd(), '.packages')
extra = sorted(set(env) - allowed)
leak = [k for k, v in list(env.items()) + list(os.environ.items()) if '$SECRET' in v or k == 'SECRET_TOKEN']
try:
    parent = open('/proc/%d/environ' % os.getppid(), 'rb').read().decode()
except PermissionError:  # the worker is not dumpable: read below, from outside
    parent = ''
print('ppid', os.getppid())
print('extra', extra)
print('leak', leak)
print('parent_leak', '$SECRET' in parent)
print('path0', env['PATH'].split(':')[0])
print('assets', env['MCP_ASSET_CACHE_DIR'])
print('pkgs', env.get('PYTHONPATH') == pkgs and env.get('PIP_TARGET') == pkgs)
print('outputs', env.get('CODEEXECD_OUTPUT_DIR') == os.path.join(os.getcwd(), 'outputs') and
      os.path.isdir(env['CODEEXECD_OUTPUT_DIR']))
print('ld', env.get('LD_LIBRARY_PATH'), os.environ.get('DOMAIN_RUNTIME_ROOT'))
if '$have_cc':
    print('answer', ctypes.CDLL('libcxdanswer.so').cxd_answer())
") || fail "execution failed: $out"
echo "$out" | grep -qx "extra \[\]" || fail "the kernel has variables beyond the baseline: $out"
echo "$out" | grep -qx "leak \[\]" || fail "the daemon's secret reached the kernel: $out"
echo "$out" | grep -qx "parent_leak False" || fail "the secret is in the worker's environment"
wpid=$(echo "$out" | sed -n 's/^ppid //p')
if [ -r "/proc/$wpid/environ" ] && tr '\0' '\n' <"/proc/$wpid/environ" | grep -qF "$SECRET"; then
	fail "the secret is in the worker's environment"
fi
echo "$out" | grep -qx "path0 $ENVDIR/bin" || fail "PATH does not start with the environment: $out"
echo "$out" | grep -qx "assets $TMPD/envs" || fail "MCP_ASSET_CACHE_DIR is not the parent of build_dir"
echo "$out" | grep -qx "pkgs True" ||
	fail "PYTHONPATH and PIP_TARGET are not the session's .packages: $out"
echo "$out" | grep -qx "ld $lib /usr/local/lib/domain-runtime/" || fail "kernel_environment missing: $out"
ok "SECRET_TOKEN, AWS_SECRET_ACCESS_KEY, PYTHONPATH of the daemon: not in the kernel nor its worker"
echo "$out" | grep -qx "outputs True" ||
	fail "CODEEXECD_OUTPUT_DIR is not the session's outputs/ directory: $out"
ok "kernel environment: only the baseline, MCP_ASSET_CACHE_DIR, USER_IDENTITY, CODEEXECD_OUTPUT_DIR, kernel_environment"
if [ -n "$have_cc" ]; then
	echo "$out" | grep -qx "answer 42" || fail "the loader did not find the library: $out"
	ok "LD_LIBRARY_PATH from kernel_environment: the loader finds libcxdanswer.so"
else
	echo "no C compiler: LD_LIBRARY_PATH checked in the environment only"
fi
# The daemon itself is not dumpable, so a kernel of the same (non-root)
# user cannot read its environment through /proc either.
if [ "$(id -u)" != 0 ]; then
	out=$(run_code "
try:
    print('$SECRET' in open('/proc/$DAEMON_PID/environ').read())
except OSError as e:
    print('refused', e.errno)
") || fail "$out"
	case $out in refused*) ok "/proc/DAEMON/environ: refused to the kernel" ;;
	*) fail "the kernel can read the daemon's environment: $out" ;; esac
fi
