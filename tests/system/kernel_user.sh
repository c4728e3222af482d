# kernel_user.sh - the account test daemons run kernels as when the tests
# run as root (codeexecd refuses to run kernels as root), for lib.sh and
# for bench/run.sh, which writes its own configuration.

KERNEL_USER=codeexecd

# Make sure $KERNEL_USER exists (useradd --system, as .ci/run and the
# README do). 0, or 1 if it cannot be made.
kernel_user_create() {
	id "$KERNEL_USER" >/dev/null 2>&1 && return 0
	command -v useradd >/dev/null 2>&1 || return 1
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
		"$KERNEL_USER" 2>/dev/null || id "$KERNEL_USER" >/dev/null 2>&1
}

# kernel_user_setup DIR: as root, make the account, open DIR to it (0711)
# and run a copy of $worker from DIR/libexec (the build tree may be closed
# to it). Sets KERNEL_USER_LINE to "user: codeexecd" as root, else empty.
kernel_user_setup() {
	KERNEL_USER_LINE=
	[ "$(id -u)" = 0 ] || return 0
	kernel_user_create || return 1
	chmod 711 "$1"
	mkdir -p "$1/libexec"
	cp "$worker" "$1/libexec/"
	# A test's own stand-in worker has no seccomp library beside it.
	so=$(dirname "$worker")/codeexec-seccomp.so
	[ ! -e "$so" ] || cp "$so" "$1/libexec/"
	chmod 755 "$1/libexec"
	worker=$1/libexec/$(basename "$worker")
	KERNEL_USER_LINE="user: $KERNEL_USER"
}
