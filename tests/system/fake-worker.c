/*
 * fake-worker.c - a worker that misbehaves on purpose, for the system
 * tests 510, 511 and 504. It speaks the IPC protocol on fd 3 as codeexec-worker
 * does, starts no Jupyter kernel, and sends what MODE says:
 *
 *   lie PID       READY naming PID, some other process, as its kernel
 *   child         a child of its own (a session leader, like a kernel) as
 *                 its kernel; answers EXECUTE with a RESULT
 *   early-result  a RESULT while its kernel is still starting
 *   malformed     READY whose kernel_pid is a string
 *   junk          READY with a member the protocol does not have
 *   output-idle   like child, then an OUTPUT while no request is in flight
 *   wrong-id      like child, but answers EXECUTE under another request id
 *   mute          like child, but reads EXECUTE and never answers it
 *   streamed-lie  like child, but its RESULT says 100 bytes of stdout were
 *                 streamed to a call that streamed nothing
 *
 * Arguments after these are ignored (tests put their directory there, so
 * that lib.sh's leftovers() finds a fake worker or child left running).
 * It logs (IPC_LOG) "fake kernel PID" for every kernel it names, and exits
 * on SHUTDOWN or when the supervisor closes the socket, killing its child.
 */
#include "autoconf.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <syslog.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc_msg.h"

static const char *mode;
static pid_t child = -1;

/* Log "fake kernel PID" through the supervisor, as a worker logs. */
static void
say_kernel(int pid)
{
	char line[200];

	snprintf(line, sizeof(line), "fake kernel %d", pid);
	struct ipc_log l = {LOG_WARNING, ipc_text_of(line)};
	ipc_log_send(IPC_WORKER_FD, 0, &l);
}

/* A raw READY payload, for the modes the codec would not encode. */
static void
send_raw(unsigned type, uint32_t id, const char *json)
{
	struct buf b;
	char err[ERR_LEN] = "";
	struct json_object *o = json_tokener_parse(json);

	buf_init(&b);
	if (o == NULL || ipc_frame(&b, type, id, o, err, sizeof(err)) == -1 ||
	    ipc_write(IPC_WORKER_FD, b.data, b.len) == -1)
		exit(3);
	json_object_put(o);
	buf_free(&b);
}

/*
 * A child leading its own session, as kernel.c makes a kernel; returns once
 * it does. `unclaimed`: the supervisor will not take it as our kernel, so
 * it dies with us rather than outlive the test.
 */
static void
start_child(int unclaimed)
{
	int p[2];
	char c;
	pid_t parent = getpid();

	if (pipe(p) == -1 || (child = fork()) == -1)
		exit(3);
	if (child == 0) {
		if (unclaimed && (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent))
			_exit(3);
		setsid();
		close(p[0]);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	/* EOF once the child has closed its end, after setsid() */
	while (read(p[0], &c, 1) == -1 && errno == EINTR)
		;
	close(p[0]);
}

static void
on_start(int argc, char **argv)
{
	struct ipc_ready r = {0, "fake", 0, NULL};
	char json[200];

	if (strcmp(mode, "lie") == 0 && argc > 2) {
		r.kernel_pid = atoi(argv[2]);
	} else if (strcmp(mode, "early-result") == 0) {
		struct ipc_result res = {.success = 1, .out = ipc_text_of("early\n"),
					 .err = ipc_text_of("")};
		ipc_result_send(IPC_WORKER_FD, 1, &res);
		return;
	} else if (strcmp(mode, "malformed") == 0 || strcmp(mode, "junk") == 0) {
		start_child(1);
		say_kernel((int)child);
		if (strcmp(mode, "junk") == 0)
			snprintf(json, sizeof(json),
				 "{\"kernel_pid\": %d, \"language\": \"fake\", \"restarted\": false, \"pgid\": 1}",
				 (int)child);
		else
			snprintf(json, sizeof(json),
				 "{\"kernel_pid\": \"%d\", \"language\": \"fake\", \"restarted\": false}",
				 (int)child);
		send_raw(IPC_READY, 0, json);
		return;
	} else {
		start_child(0);
		r.kernel_pid = child;
	}
	say_kernel(r.kernel_pid);
	ipc_ready_send(IPC_WORKER_FD, 0, &r);
	if (strcmp(mode, "output-idle") == 0) {
		struct ipc_output o = {IPC_STDOUT, ipc_text_of("nobody asked\n")};
		ipc_output_send(IPC_WORKER_FD, 1, &o);
	}
	/* Two descriptors in one message: no frame may take them. */
	if (strcmp(mode, "two-fds") == 0) {
		int fds[2] = {0, 1};
		char byte = 0;
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(fds))];
		} ctl;
		struct iovec iov = {&byte, 1};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				    .msg_controllen = sizeof(ctl.buf)};
		memset(&ctl, 0, sizeof(ctl));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(c), fds, sizeof(fds));
		if (sendmsg(IPC_WORKER_FD, &mh, 0) != 1)
			exit(3);
	}
	/* A descriptor where none belongs: with a LOG, or a FILE nobody asked for. */
	if (strcmp(mode, "fd-with-log") == 0 || strcmp(mode, "file-idle") == 0) {
		struct buf b;
		struct ipc_log l = {LOG_INFO, ipc_text_of("a log line with a descriptor")};
		struct ipc_artifact a = {"x.txt", 1, "text/plain", "2026-12-01T00:00:00Z"};
		struct ipc_file f = {{NULL, 0}, &a};
		char err[IPC_ERR_LEN];
		buf_init(&b);
		int rc = strcmp(mode, "fd-with-log") == 0
				 ? ipc_log_encode(&b, 0, &l, err, sizeof(err))
				 : ipc_file_encode(&b, 1, &f, err, sizeof(err));
		if (rc == -1 || ipc_write_fd(IPC_WORKER_FD, b.data, b.len, 0) == -1)
			exit(3);
		buf_free(&b);
	}
}

static void
on_execute(uint32_t id)
{
	if (strcmp(mode, "mute") == 0)
		return;
	struct ipc_result res = {.success = 1, .out = ipc_text_of("fake\n"),
				 .err = ipc_text_of("")};

	if (strcmp(mode, "streamed-lie") == 0)
		res.out_streamed = 100;

	ipc_result_send(IPC_WORKER_FD, strcmp(mode, "wrong-id") == 0 ? id + 1 : id, &res);
}

static void
quit(int code)
{
	if (child > 0) {
		kill(-child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	exit(code);
}

int
main(int argc, char **argv)
{
	struct ipc_reader rd;
	struct ipc_msg m;
	char err[ERR_LEN] = "";

	if (argc < 2) {
		fprintf(stderr, "usage: fake-worker MODE [PID] [ignored...]\n");
		return 2;
	}
	mode = argv[1];
	signal(SIGPIPE, SIG_IGN);
	ipc_reader_init(&rd, IPC_WORKER_FD);
	for (;;) {
		ssize_t n = ipc_reader_fill(&rd);
		if (n <= 0)
			quit(0);
		int rc;
		while ((rc = ipc_reader_next(&rd, &m, err, sizeof(err))) == 1) {
			if (m.hdr.type == IPC_START)
				on_start(argc, argv);
			else if (m.hdr.type == IPC_EXECUTE)
				on_execute(m.hdr.id);
			else if (m.hdr.type == IPC_SHUTDOWN)
				quit(0);
			ipc_msg_clear(&m);
		}
		if (rc == -1)
			quit(1);
	}
}
