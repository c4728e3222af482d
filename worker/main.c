/*
 * main.c - codeexec-worker: entry point and the main loop.
 *
 * Owns the worker's state (struct wstate, worker.h) and reads the
 * supervisor's frames on fd 3 (ipc.h): they are decoded here and routed
 * by route.c; what goes back up, log lines included, is
 * supervisor_link.c's; the kernel's life cycle is lifecycle.c's; a new
 * front after the front died, rescue.c's. One zmq_poll loop watches fd 3,
 * fd 4 (the parent's line), the signal pipe, the kernel's sockets, its
 * output pipe and its pidfd. Setup order: not dumpable, log to the
 * supervisor, signals, ZeroMQ, loop; leaving the loop always ends the
 * kernel.
 */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <zmq.h>

#include "cgroup.h"
#include "clock.h"
#include "fs_tree.h"
#include "log.h"
#include "memtrim.h"
#include "sweep.h"
#include "upstream_link.h"
#include "worker.h"

static volatile sig_atomic_t got_term;
static int sig_pipe[2] = {-1, -1};
/* For the atexit handler only. */
static struct wstate *exiting_worker;

static void
on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	got_term = 1;
	ssize_t n = write(sig_pipe[1], &c, 1); /* a full pipe is fine: the flag is set */
	(void)n;
	errno = saved;
}

/* Catch the signals that end us; ignore SIGPIPE (fd 3 errors come as EPIPE). */
static void
setup_signals(void)
{
	struct sigaction sa;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal("pipe");
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* ---- Supervisor messages ---- */

/* fd 3 is readable: read and act on every complete frame. */
static void
read_supervisor(struct wstate *w)
{
	struct ipc_msg m;
	char err[ERR_LEN] = "";
	ssize_t n = ipc_reader_fill(&w->rd);

	if (n == 0 || (n < 0 && errno != EAGAIN)) {
		if (n < 0)
			log_warn("read from the supervisor");
		log_debug("the supervisor closed the connection");
		rescue_front_lost(w);
		return;
	}
	while (!w->quit) {
		int r = ipc_reader_next(&w->rd, &m, err, sizeof(err));
		if (r == 0)
			return;
		if (r == -1) {
			worker_protocol_error(w, err);
			return;
		}
		route_supervisor(w, &m);
		ipc_msg_clear(&m);
	}
}

/* ---- The loop ---- */

/* Act on deadlines; the milliseconds until the next one, -1 if none. */
static long
run_timers(struct wstate *w)
{
	double now = clock_mono(), next, orphan;

	if (lifecycle_starting(w))
		next = lifecycle_timers(w, now);
	else
		next = route_timers(w, now);
	orphan = rescue_timers(w, now);
	if (orphan >= 0 && (next < 0 || orphan < next))
		next = orphan;
	return next < 0 ? -1 : (long)ceil(next * 1000);
}

enum { SLOT_IPC, SLOT_RESCUE, SLOT_SIG, SLOT_SHELL, SLOT_CONTROL, SLOT_IOPUB, SLOT_STDIN,
       SLOT_OUT, SLOT_PID, SLOT_UP, SLOT_MAX };

/* Fill the poll set; kernel items only while there is a kernel. */
static int
poll_items(struct wstate *w, zmq_pollitem_t *it, int *slot)
{
	int n = 0;

	for (int i = 0; i < SLOT_MAX; i++)
		slot[i] = -1;
	if (!rescue_orphaned(w)) { /* a dead front's socket hangs up for good */
		slot[SLOT_IPC] = n;
		it[n++] = (zmq_pollitem_t){NULL, IPC_WORKER_FD, ZMQ_POLLIN, 0};
	}
	if (w->rescue_fd != -1) {
		slot[SLOT_RESCUE] = n;
		it[n++] = (zmq_pollitem_t){NULL, w->rescue_fd, ZMQ_POLLIN, 0};
	}
	slot[SLOT_SIG] = n;
	it[n++] = (zmq_pollitem_t){NULL, sig_pipe[0], ZMQ_POLLIN, 0};
	if (w->k == NULL)
		return n;
	slot[SLOT_SHELL] = n;
	it[n++] = (zmq_pollitem_t){w->k->shell, 0, ZMQ_POLLIN, 0};
	slot[SLOT_CONTROL] = n;
	it[n++] = (zmq_pollitem_t){w->k->control, 0, ZMQ_POLLIN, 0};
	slot[SLOT_IOPUB] = n;
	it[n++] = (zmq_pollitem_t){w->k->iopub, 0, ZMQ_POLLIN, 0};
	slot[SLOT_STDIN] = n;
	it[n++] = (zmq_pollitem_t){w->k->stdin_sock, 0, ZMQ_POLLIN, 0};
	if (w->k->out_fd != -1) {
		slot[SLOT_OUT] = n;
		it[n++] = (zmq_pollitem_t){NULL, w->k->out_fd, ZMQ_POLLIN, 0};
	}
	slot[SLOT_PID] = n;
	it[n++] = (zmq_pollitem_t){NULL, w->k->pidfd, ZMQ_POLLIN, 0};
	if (w->k->up_fd != -1) {
		slot[SLOT_UP] = n;
		it[n++] = (zmq_pollitem_t){NULL, w->k->up_fd, ZMQ_POLLIN, 0};
	}
	return n;
}

/* Did item `which` of this round fire (and is its kernel still ours)? */
static int
fired(zmq_pollitem_t *it, int *slot, int which)
{
	return slot[which] != -1 && (it[slot[which]].revents & (ZMQ_POLLIN | ZMQ_POLLERR));
}

/* Handle the kernel's events of one round, output before death. */
static void
kernel_events(struct wstate *w, zmq_pollitem_t *it, int *slot)
{
	struct kernel *k = w->k;

	if (fired(it, slot, SLOT_OUT))
		kernel_read_output(k);
	if (fired(it, slot, SLOT_IOPUB))
		route_kernel(w, "iopub");
	if (w->k == k && fired(it, slot, SLOT_SHELL))
		route_kernel(w, "shell");
	if (w->k == k && fired(it, slot, SLOT_CONTROL))
		route_kernel(w, "control");
	if (w->k == k && fired(it, slot, SLOT_STDIN))
		route_kernel(w, "stdin");
	if (w->k == k && k->up_fd != -1 && fired(it, slot, SLOT_UP))
		upstream_link_read(w);
	if (w->k == k && !w->quit && fired(it, slot, SLOT_PID) && kernel_reap(k))
		lifecycle_died(w);
}

static void
loop(struct wstate *w)
{
	zmq_pollitem_t it[SLOT_MAX];
	int slot[SLOT_MAX];

	while (!w->quit) {
		long timeout = run_timers(w);
		if (w->quit)
			break;
		int n = poll_items(w, it, slot);
		if (zmq_poll(it, n, timeout) == -1) {
			if (zmq_errno() == EINTR)
				continue;
			fatalx("zmq_poll: %s", zmq_strerror(zmq_errno()));
		}
		if (got_term) {
			log_info("terminating on a signal");
			w->quit = 1;
			break;
		}
		if (w->k)
			kernel_events(w, it, slot);
		if (!w->quit && fired(it, slot, SLOT_RESCUE))
			rescue_read(w);
		else if (!w->quit && !rescue_orphaned(w) && fired(it, slot, SLOT_IPC))
			read_supervisor(w);
		rescue_tick(w);
	}
}

/* End the kernel, remove the runtime directory, release everything. */
static void
cleanup(struct wstate *w)
{
	/* A kernel still starting may not listen yet: asking it would only wait. */
	kernel_destroy(&w->k, &w->sess, w->graceful && w->kstate == K_READY);
	if (w->runtime_made) {
		fs_empty_dir(w->spec.runtime_dir); /* what the kernel left there */
		kernel_runtime_remove(w->spec.runtime_dir);
	}
	exec_free(&w->ex);
	for (char **p = w->spec.argv; p && *p; p++)
		free(*p);
	for (char **p = w->spec.envp; p && *p; p++)
		free(*p);
	free(w->spec.argv);
	free(w->spec.envp);
	for (char **p = w->spec.unix_fds; p && *p; p++)
		free(*p);
	free(w->spec.unix_fds);
	free(w->spec.cwd);
	free(w->spec.runtime_dir);
	for (char **p = w->allow_mime; p && *p; p++)
		free(*p);
	free(w->allow_mime);
	free(w->warm_code);
	sandbox_free(&w->sb);
	ipc_reader_free(&w->rd);
	if (w->zctx)
		zmq_ctx_term(w->zctx);
}

/* fatal() exits without cleanup(): the kernel's whole group must go too. */
static void
kill_kernel_at_exit(void)
{
	struct kernel *k = exiting_worker ? exiting_worker->k : NULL;

	if (k && k->pid > 0 && !k->reaped)
		killpg(k->pid, SIGKILL);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: codeexec-worker [-v] | -p | -r FIRST[-LAST]\n"
			"Started by codeexecd with its IPC socket as fd 3.\n"
			"-r kills every process of each kernel uid FIRST..LAST and removes its files in\n"
			"   /tmp, /var/tmp and /dev/shm; exit status 0 when all are clean.\n"
			"-p prints the cgroup layout this host offers kernels (START's \"cgroup\"), and why\n"
			"   a controller is unusable, then exits; it prepares the layout as codeexecd would.\n");
	exit(2);
}

/* -p: what cgroup_probe() finds here, as JSON on stdout. */
static int
print_cgroup_probe(void)
{
	struct cgroup_layout l;
	/* Not a pid: the parent stays for whoever uses the layout printed. */
	int n = cgroup_probe(&l, "probe");
	struct json_object *o = cgroup_layout_json(&l, "probe");
	struct json_object *why = json_object_new_object();

	for (int c = 0; c < CGROUP_NCTL; c++)
		if (l.version[c] == 0)
			json_object_object_add(why, cgroup_ctl_name(c),
					       json_object_new_string(l.reason[c]));
	json_object_object_add(o, "unusable", why);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	cgroup_layout_free(&l);
	return n == CGROUP_NCTL ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct wstate w;
	int ch;

	log_init("codeexec-worker", 1, LOG_DAEMON);
	memtrim_init();
	while ((ch = getopt(argc, argv, "pr:v")) != -1) {
		if (ch == 'p')
			return print_cgroup_probe();
		if (ch == 'r')
			return sweep_main(optarg);
		if (ch != 'v')
			usage();
		log_set_level(LOG_DEBUG);
	}
	if (optind != argc)
		usage();
	/* Keys and code live in our memory: no core dumps, no ptrace by peers. */
	if (prctl(PR_SET_DUMPABLE, 0) == -1)
		fatal("prctl PR_SET_DUMPABLE");
	if (fcntl(IPC_WORKER_FD, F_SETFD, FD_CLOEXEC) == -1)
		fatal("fd %d is not the supervisor's socket", IPC_WORKER_FD);
	/* Reads wait for zmq_poll; writes must block rather than fail half-way. */
	int fl = fcntl(IPC_WORKER_FD, F_GETFL);
	if (fl == -1 || fcntl(IPC_WORKER_FD, F_SETFL, fl & ~O_NONBLOCK) == -1)
		fatal("fcntl fd %d", IPC_WORKER_FD);
	supervisor_log_start();

	memset(&w, 0, sizeof(w));
	/* Before any descriptor of ours can take the number 4. */
	rescue_init(&w);
	setup_signals();
	exiting_worker = &w;
	atexit(kill_kernel_at_exit);
	w.graceful = 1;
	ipc_reader_init(&w.rd, IPC_WORKER_FD);
	jupyter_session_init(&w.sess, NULL); /* each kernel brings its signer */
	if ((w.zctx = zmq_ctx_new()) == NULL)
		fatalx("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
	loop(&w);
	cleanup(&w);
	exiting_worker = NULL; /* w lives on this stack frame only */
	log_debug("exiting with status %d", w.exit_code);
	return w.exit_code;
}
