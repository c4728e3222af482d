/* uid.c - see uid.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "uid.h"
#include "xmalloc.h"

/* At most this many sweepers at once: each is quick, a burst is not. */
#define SWEEPERS_MAX 4
/* A failed sweep is tried again after this many seconds. */
#define RETRY_S 5
/* At start-up and stop, how long the sweep of the whole range may take. */
#define FULL_SWEEP_S 30

enum uid_state { UID_CLEAN, UID_USED, UID_DIRTY, UID_SWEEPING };

struct uid_slot {
	enum uid_state state;
	pid_t sweeper;	/* while UID_SWEEPING */
	time_t retry;	/* UID_DIRTY: not before */
	char *leftover; /* UID_DIRTY: not before this path is gone (owned) */
};

static struct uid_slot *slots; /* NULL: no kernel_uid_range */
static unsigned first, count, next;
static const char *sweeper_path;
/* uid_keep_for's before uid_init: applied after its sweep. */
struct pending_keep {
	struct pending_keep *next;
	uid_t uid;
	char *dir;
};
static struct pending_keep *pending;

/* Start `codeexec-worker -r A[-B]`; its pid, or -1 (logged). */
static pid_t
spawn_sweeper(uid_t a, uid_t b)
{
	char range[64];
	char *argv[] = {(char *)"codeexec-worker", (char *)"-r", range, NULL};
	char *envp[] = {(char *)"PATH=/usr/bin:/bin", NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid;

	if (a == b)
		snprintf(range, sizeof(range), "%u", (unsigned)a);
	else
		snprintf(range, sizeof(range), "%u-%u", (unsigned)a, (unsigned)b);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	int rc = posix_spawn(&pid, sweeper_path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		errno = rc;
		log_warn("spawn the sweeper of kernel uid %s (%s)", range, sweeper_path);
		return -1;
	}
	return pid;
}

/* Wait for pid up to `deadline`, then kill it; 1 if it exited 0. */
static int
wait_sweeper(pid_t pid, time_t deadline)
{
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (r == -1 && errno != EINTR)
			return 0;
		if (time(NULL) >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
				;
			return 0;
		}
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* Sweep every uid that is not in use, now; the clean ones become CLEAN. */
static void
sweep_all_now(void)
{
	pid_t pid = spawn_sweeper(first, first + count - 1);
	int clean = pid != -1 && wait_sweeper(pid, time(NULL) + FULL_SWEEP_S);

	if (!clean)
		log_warnx("kernel_uid_range %u-%u: the sweep of processes and files left by "
			  "earlier kernels failed; uids are handed out only once swept",
			  first, first + count - 1);
	for (unsigned i = 0; i < count; i++)
		if (slots[i].state != UID_USED && slots[i].state != UID_SWEEPING)
			slots[i].state = clean ? UID_CLEAN : UID_DIRTY;
}

void
uid_init(const struct config *cfg, const char *worker_path)
{
	if (cfg->kernel_uid_first == 0)
		return;
	first = cfg->kernel_uid_first;
	count = cfg->kernel_uid_last - cfg->kernel_uid_first + 1;
	slots = xcalloc(count, sizeof(*slots));
	sweeper_path = worker_path;
	sweep_all_now();
	while (pending) {
		struct pending_keep *k = pending;
		pending = k->next;
		uid_release(k->uid, k->dir);
		free(k->dir);
		free(k);
	}
}

void
uid_keep_for(uid_t uid, const char *dir)
{
	if (slots) {
		uid_release(uid, dir);
		return;
	}
	struct pending_keep *k = xcalloc(1, sizeof(*k));
	k->uid = uid;
	k->dir = xstrdup(dir);
	k->next = pending;
	pending = k;
}

uid_t
uid_take(void)
{
	for (unsigned n = 0; slots && n < count; n++) {
		unsigned i = (next + n) % count;
		if (slots[i].state == UID_CLEAN) {
			slots[i].state = UID_USED;
			next = (i + 1) % count;
			return (uid_t)(first + i);
		}
	}
	return 0;
}

void
uid_release(uid_t uid, const char *leftover)
{
	if (slots == NULL || uid < first || uid - first >= count)
		return;
	slots[uid - first].state = UID_DIRTY;
	slots[uid - first].retry = 0;
	free(slots[uid - first].leftover);
	slots[uid - first].leftover = leftover ? xstrdup(leftover) : NULL;
}

int
uid_retake(uid_t uid, const char *leftover)
{
	if (slots == NULL || uid == 0)
		return 0;
	if (uid < first || uid - first >= count)
		return -1;
	struct uid_slot *s = &slots[uid - first];
	if (s->state != UID_DIRTY || s->leftover == NULL || strcmp(s->leftover, leftover) != 0)
		return -1;
	s->state = UID_USED;
	free(s->leftover);
	s->leftover = NULL;
	return 0;
}

/* 1 while the path a dirty uid waits for still exists. */
static int
waits(struct uid_slot *s)
{
	struct stat st;

	if (s->leftover == NULL)
		return 0;
	if (lstat(s->leftover, &st) == 0 || errno != ENOENT)
		return 1;
	free(s->leftover);
	s->leftover = NULL;
	return 0;
}

void
uid_tick(void)
{
	int running = 0;
	time_t now = time(NULL);

	for (unsigned i = 0; slots && i < count; i++)
		running += slots[i].state == UID_SWEEPING;
	for (unsigned i = 0; slots && i < count && running < SWEEPERS_MAX; i++) {
		if (slots[i].state != UID_DIRTY || slots[i].retry > now || waits(&slots[i]))
			continue;
		pid_t pid = spawn_sweeper(first + i, first + i);
		if (pid == -1) {
			slots[i].retry = now + RETRY_S;
			continue;
		}
		slots[i].state = UID_SWEEPING;
		slots[i].sweeper = pid;
		running++;
	}
}

int
uid_child_exited(pid_t pid, int status)
{
	for (unsigned i = 0; slots && i < count; i++) {
		if (slots[i].state != UID_SWEEPING || slots[i].sweeper != pid)
			continue;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			slots[i].state = UID_CLEAN;
			log_debug("kernel uid %u swept clean", first + i);
		} else {
			slots[i].state = UID_DIRTY;
			slots[i].retry = time(NULL) + RETRY_S;
			log_warnx("kernel uid %u: its sweep failed; it is not handed out until one "
				  "succeeds", first + i);
		}
		return 1;
	}
	return 0;
}

void
uid_finish(void)
{
	if (slots == NULL)
		return;
	/* Sweepers still running were spawned by us: let them finish first. */
	for (unsigned i = 0; i < count; i++) {
		if (slots[i].state != UID_SWEEPING)
			continue;
		wait_sweeper(slots[i].sweeper, time(NULL) + FULL_SWEEP_S);
		slots[i].state = UID_DIRTY;
	}
	for (unsigned i = 0; i < count; i++)
		if (slots[i].state == UID_USED)
			slots[i].state = UID_DIRTY;
	sweep_all_now();
	for (unsigned i = 0; i < count; i++)
		free(slots[i].leftover);
	free(slots);
	slots = NULL;
}
