/* envbuild.c - see envbuild.h. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "envbuild.h"
#include "fsutil.h"
#include "log.h"
#include "xmalloc.h"

/* The environment of every build step: nothing of the daemon's. */
static char *const build_env[] = {
	(char *)"PATH=/usr/local/bin:/usr/bin:/bin",
	(char *)"LANG=C.UTF-8",
	(char *)"PIP_DISABLE_PIP_VERSION_CHECK=1",
	(char *)"PIP_NO_INPUT=1",
	NULL,
};

static int
file_exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	int ok = access(p, F_OK) == 0;
	free(p);
	return ok;
}

/* Log each line of a step's output as it comes. */
static void
log_lines(struct buf *pending, const char *what)
{
	char *nl;
	while ((nl = memchr(pending->data, '\n', pending->len)) != NULL) {
		*nl = '\0';
		log_info("%s: %s", what, pending->data);
		buf_consume(pending, (size_t)(nl - pending->data) + 1);
	}
}

/*
 * Run argv (argv[0] a path or found in the build PATH) in `cwd`, its output
 * in the log. Returns 0, or -1 with the command and its status in err.
 */
static int
run_step(char *const argv[], const char *cwd, char *err, size_t errlen)
{
	int out[2];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	struct buf pending;
	char chunk[4096];
	ssize_t n;
	int status;

	if (pipe2(out, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, out[1], 2);
	posix_spawn_file_actions_addchdir_np(&fa, cwd);
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, build_env);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	if (rc != 0) {
		close(out[0]);
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
		return -1;
	}
	buf_init(&pending);
	while ((n = read(out[0], chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR)) {
		if (n > 0) {
			buf_add(&pending, chunk, (size_t)n);
			log_lines(&pending, argv[0]);
		}
	}
	if (pending.len)
		log_info("%s: %s", argv[0], pending.data);
	buf_free(&pending);
	close(out[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	struct buf cmd;
	buf_init(&cmd);
	for (int i = 0; argv[i]; i++)
		buf_printf(&cmd, "%s%s", i ? " " : "", argv[i]);
	if (WIFEXITED(status))
		snprintf(err, errlen, "build step failed with exit status %d: %s",
			 WEXITSTATUS(status), cmd.data);
	else
		snprintf(err, errlen, "build step killed by signal %d: %s", WTERMSIG(status),
			 cmd.data);
	buf_free(&cmd);
	return -1;
}

/* Write the dependency file's content where pip can read it. */
static char *
write_requirements(const struct config *cfg, char *err, size_t errlen)
{
	char *path = xasprintf("%s/requirements.txt", cfg->build_dir);
	FILE *f = fopen(path, "w");
	if (f == NULL || fputs(cfg->dependency_file, f) == EOF || fclose(f) == EOF) {
		snprintf(err, errlen, "write %s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	return path;
}

/* venv, pip install, the ipykernel check, then additional_commands. */
static int
build_pip(const struct config *cfg, char *err, size_t errlen)
{
	char *python = xasprintf("%s/bin/python", cfg->build_dir);
	int rc = -1;

	char *venv[] = {cfg->python, (char *)"-m", (char *)"venv", cfg->build_dir,
			cfg->system_site_packages ? (char *)"--system-site-packages" : NULL, NULL};
	if (run_step(venv, "/", err, errlen) == -1)
		goto out;
	if (cfg->dependency_file && cfg->dependency_file[0]) {
		char *req = write_requirements(cfg, err, errlen);
		if (req == NULL)
			goto out;
		char *pip[] = {python, (char *)"-m", (char *)"pip", (char *)"install",
			       (char *)"-r", req, NULL};
		rc = run_step(pip, cfg->build_dir, err, errlen);
		free(req);
		if (rc == -1)
			goto out;
		rc = -1;
	}
	char *check[] = {python, (char *)"-c", (char *)"import ipykernel", NULL};
	if (run_step(check, cfg->build_dir, err, errlen) == -1) {
		size_t used = strlen(err);
		snprintf(err + used, errlen - used,
			 " (ipykernel must be importable: add it to dependency_file, or use "
			 "system_site_packages with python3-ipykernel installed)");
		goto out;
	}
	for (size_t i = 0; i < cfg->additional_commands.n; i++) {
		char *sh[] = {(char *)"/bin/sh", (char *)"-c", cfg->additional_commands.v[i],
			      NULL};
		if (run_step(sh, cfg->build_dir, err, errlen) == -1)
			goto out;
	}
	rc = 0;
out:
	free(python);
	return rc;
}

/* The marker, written last: its presence says the whole build finished. */
static int
write_marker(const struct config *cfg, char *err, size_t errlen)
{
	char *path = xasprintf("%s/%s", cfg->build_dir, ENVBUILD_MARKER);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = 0;
	if (fd == -1 || fsync(fd) == -1) {
		snprintf(err, errlen, "write %s: %s", path, strerror(errno));
		rc = -1;
	}
	if (fd != -1)
		close(fd);
	free(path);
	return rc;
}

int
envbuild_ensure(const struct config *cfg, char *err, size_t errlen)
{
	int has_python = file_exists(cfg->build_dir, "bin/python");
	int has_marker = file_exists(cfg->build_dir, ENVBUILD_MARKER);

	if (has_python && has_marker) {
		log_info("environment %s is ready", cfg->build_dir);
		return 0;
	}
	if (!cfg->auto_build) {
		snprintf(err, errlen, "environment %s is %s and auto_build is false", cfg->build_dir,
			 has_python ? "incomplete (no " ENVBUILD_MARKER ")" : "missing");
		return -1;
	}
	if (access(cfg->build_dir, F_OK) == 0) {
		log_warnx("environment %s is stale or incomplete: removing and rebuilding",
			  cfg->build_dir);
		if (fs_remove_tree(cfg->build_dir) == -1) {
			snprintf(err, errlen, "cannot remove stale environment %s: %s",
				 cfg->build_dir, strerror(errno));
			return -1;
		}
	}
	if (fs_mkdir_p(cfg->build_dir, 0755, err, errlen) == -1)
		return -1;
	log_info("building %s environment in %s", config_env_type_name(cfg->type),
		 cfg->build_dir);
	if (build_pip(cfg, err, errlen) == -1 || write_marker(cfg, err, errlen) == -1)
		return -1;
	log_info("environment %s is ready", cfg->build_dir);
	return 0;
}
