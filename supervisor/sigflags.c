/* sigflags.c - see sigflags.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "log.h"
#include "sigflags.h"

static volatile sig_atomic_t flags[SIGFLAG_N];
static int sig_pipe[2] = {-1, -1};

static void
on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	switch (sig) {
	case SIGCHLD: flags[SIGFLAG_CHLD] = 1; break;
	case SIGHUP: flags[SIGFLAG_HUP] = 1; break;
	case SIGUSR1: flags[SIGFLAG_USR1] = 1; break;
	default: flags[SIGFLAG_TERM] = 1;
	}
	(void)!write(sig_pipe[1], &c, 1);
	errno = saved;
}

void
sigflags_install(void)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};

	sigset_t ours;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal("pipe2 for signals");
	for (int i = 0; i < SIGFLAG_N; i++)
		flags[i] = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&ours);
	sigaddset(&ours, SIGTERM);
	sigaddset(&ours, SIGINT);
	sigaddset(&ours, SIGCHLD);
	sigaddset(&ours, SIGHUP);
	sigaddset(&ours, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &ours, NULL);
}

int
sigflags_fd(void)
{
	return sig_pipe[0];
}

void
sigflags_drain(void)
{
	char drain[64];

	while (read(sig_pipe[0], drain, sizeof(drain)) > 0)
		;
}

int
sigflags_take(enum sigflag f)
{
	if (!flags[f])
		return 0;
	flags[f] = 0;
	return 1;
}

int
sigflags_term(void)
{
	return flags[SIGFLAG_TERM];
}
