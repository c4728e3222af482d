/* envbuild.c - see envbuild.h. */
#include "autoconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "builder.h"
#include "config.h"
#include "envbuild.h"
#include "fsutil.h"
#include "hex.h"
#include "kernel_env.h"
#include "log.h"
#include "rand.h"
#include "xmalloc.h"

/* Daemon variables a build step keeps: proxies and certificate stores. */
static const char *const build_passed[] = {
	"TZ",	     "http_proxy",    "https_proxy",  "no_proxy",	  "HTTP_PROXY",
	"HTTPS_PROXY", "NO_PROXY",    "SSL_CERT_FILE", "SSL_CERT_DIR", "MAMBA_ROOT_PREFIX",
	"CONDA_PKGS_DIRS",
};

/* What envbuild_ensure found in build_dir. */
enum env_state {
	ENV_READY,	/* complete, built from this configuration */
	ENV_EXTERNAL,	/* complete, no digest: prepared outside codeexecd */
	ENV_OUTDATED,	/* complete, built from another configuration */
	ENV_INCOMPLETE, /* bin/python without the marker, or the reverse */
	ENV_MISSING,
};

/* Add one length-prefixed field to the digest, so fields cannot run together. */
static void
digest_field(EVP_MD_CTX *md, const char *s)
{
	char len[32];

	snprintf(len, sizeof(len), "%zu:", strlen(s));
	EVP_DigestUpdate(md, len, strlen(len));
	EVP_DigestUpdate(md, s, strlen(s));
}

char *
envbuild_digest(const struct config *cfg)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char sum[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	char count[32];

	if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		fatalx("sha256: cannot initialize a digest");
	digest_field(md, "codeexecd-env-1");
	digest_field(md, config_env_type_name(cfg->type));
	if (cfg->type != ENV_CONDA) {
		/* A conda environment brings its own interpreter. */
		digest_field(md, cfg->python);
		digest_field(md, cfg->system_site_packages ? "ssp" : "no-ssp");
	}
	digest_field(md, cfg->dependency_file);
	snprintf(count, sizeof(count), "%zu", cfg->additional_commands.n);
	digest_field(md, count);
	for (size_t i = 0; i < cfg->additional_commands.n; i++)
		digest_field(md, cfg->additional_commands.v[i]);
	EVP_DigestFinal_ex(md, sum, &n);
	EVP_MD_CTX_free(md);
	char *hex = xmalloc(2 * n + 1);
	hex_encode(hex, sum, n);
	return hex;
}

/* The digest recorded in `dir`, or NULL when there is none. Caller owns. */
static char *
read_digest(const char *dir)
{
	char *path = xasprintf("%s/%s", dir, ENVBUILD_DIGEST);
	FILE *f = fopen(path, "re");
	char line[160];
	char *out = NULL;

	free(path);
	if (f == NULL)
		return NULL;
	if (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		out = xstrdup(line);
	} else {
		out = xstrdup("");
	}
	fclose(f);
	return out;
}

/* Classify build_dir; `want` is the digest of the configuration. */
static enum env_state
inspect(const struct config *cfg, const char *want)
{
	int python = fs_exists(cfg->build_dir, "bin/python");
	int marker = fs_exists(cfg->build_dir, ENVBUILD_MARKER);

	if (!python && !marker) {
		struct stat st;
		return lstat(cfg->build_dir, &st) == 0 ? ENV_INCOMPLETE : ENV_MISSING;
	}
	if (!python || !marker)
		return ENV_INCOMPLETE;
	char *have = read_digest(cfg->build_dir);
	enum env_state s = have == NULL		    ? ENV_EXTERNAL
			   : strcmp(have, want) == 0 ? ENV_READY
						     : ENV_OUTDATED;
	free(have);
	return s;
}

/* What a message says of a state that is not ready. */
static const char *
state_text(enum env_state s)
{
	switch (s) {
	case ENV_OUTDATED:
		return "out of date (built from a different type, python, system_site_packages, "
		       "dependency_file or additional_commands)";
	case ENV_INCOMPLETE:
		return "incomplete (no bin/python or no " ENVBUILD_MARKER
		       ": an interrupted or failed build)";
	case ENV_MISSING: return "missing";
	default: return "ready";
	}
}

/*
 * Lock BUILD_DIR.lock, waiting for another daemon's build. Returns the fd;
 * -2 when the directory is read-only to us (an environment prepared by
 * another user, which can only be used as it is); -1 on other errors.
 */
static int
lock_build(const struct config *cfg, char *why, size_t why_len)
{
	char *path = xasprintf("%s.lock", cfg->build_dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd == -1) {
		int e = errno;
		snprintf(why, why_len, "open lock file %s: %s", path, strerror(e));
		free(path);
		return e == EACCES || e == EPERM || e == EROFS ? -2 : -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		log_info("another codeexecd holds %s: waiting for its build to end", path);
		while (flock(fd, LOCK_EX) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(why, why_len, "lock %s: %s", path, strerror(errno));
			close(fd);
			free(path);
			return -1;
		}
	}
	free(path);
	return fd;
}

/* The name build_dir's symlink points to, or "" if it is no symlink. Caller owns. */
static char *
current_target(const struct config *cfg)
{
	char target[4096];
	ssize_t n = readlink(cfg->build_dir, target, sizeof(target) - 1);

	if (n <= 0)
		return xstrdup("");
	target[n] = '\0';
	return xstrdup(fs_basename(target));
}

/*
 * Remove what interrupted builds left beside build_dir: BUILD_DIR.gen-* and
 * BUILD_DIR.link-* entries other than the current target. Best effort: a
 * leftover is never used, so failing to remove it is only logged.
 */
static void
remove_leftovers(const struct config *cfg)
{
	char *parent = fs_dirname(cfg->build_dir);
	char *gen = xasprintf("%s.gen-", fs_basename(cfg->build_dir));
	char *link = xasprintf("%s.link-", fs_basename(cfg->build_dir));
	char *keep = current_target(cfg);
	DIR *d = opendir(parent);
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, gen, strlen(gen)) != 0 &&
		    strncmp(e->d_name, link, strlen(link)) != 0)
			continue;
		if (strcmp(e->d_name, keep) == 0)
			continue;
		char *path = xasprintf("%s/%s", parent, e->d_name);
		log_info("removing %s, left by an earlier build", path);
		if (fs_remove_tree(path) == -1)
			log_warn("remove %s", path);
		free(path);
	}
	if (d != NULL)
		closedir(d);
	free(keep);
	free(link);
	free(gen);
	free(parent);
}

/* Append "NAME=value" to a NULL-terminated vector. */
static void
envp_add(char ***envp, size_t *n, const char *name, const char *value)
{
	*envp = xreallocarray(*envp, *n + 2, sizeof(**envp));
	(*envp)[(*n)++] = xasprintf("%s=%s", name, value);
	(*envp)[*n] = NULL;
}

/* The sanitized environment of every build step for the environment `prefix`. */
static char **
build_envp(const struct config *cfg, const char *prefix)
{
	char **envp = NULL;
	size_t n = 0;
	char *path = xasprintf("%s/bin:%s", prefix, BUILDER_PATH);
	const char *tmp = getenv("TMPDIR");

	envp_add(&envp, &n, "PATH", path);
	free(path);
	envp_add(&envp, &n, "HOME", kernel_env_home());
	envp_add(&envp, &n, "LANG", "C.UTF-8");
	envp_add(&envp, &n, "TMPDIR", tmp && tmp[0] == '/' ? tmp : "/tmp");
	for (size_t i = 0; i < sizeof(build_passed) / sizeof(build_passed[0]); i++) {
		const char *v = getenv(build_passed[i]);
		if (v != NULL && v[0] != '\0')
			envp_add(&envp, &n, build_passed[i], v);
	}
	envp_add(&envp, &n, cfg->type == ENV_CONDA ? "CONDA_PREFIX" : "VIRTUAL_ENV", prefix);
	envp_add(&envp, &n, "PIP_DISABLE_PIP_VERSION_CHECK", "1");
	envp_add(&envp, &n, "PIP_NO_INPUT", "1");
	return envp;
}

/* additional_commands, in order, each by /bin/sh -c; the first failure fails the build. */
static int
run_additional(struct build_ctx *b)
{
	for (size_t i = 0; i < b->cfg->additional_commands.n; i++) {
		char *sh[] = {(char *)"/bin/sh", (char *)"-c", b->cfg->additional_commands.v[i],
			      NULL};
		if (builder_run(b, sh) == -1) {
			size_t used = strlen(b->why);
			snprintf(b->why + used, b->why_len - used,
				 " (additional_commands item %zu)", i + 1);
			return -1;
		}
	}
	return 0;
}

/* Write the digest, then the marker, then sync the file system: the build is done. */
static int
seal(struct build_ctx *b, const char *digest)
{
	char *text = xasprintf("%s\n", digest);
	char *dpath = xasprintf("%s/%s", b->prefix, ENVBUILD_DIGEST);
	char *mpath = xasprintf("%s/%s", b->prefix, ENVBUILD_MARKER);
	char stamp[64];
	int rc = -1;

	snprintf(stamp, sizeof(stamp), "built by codeexecd at %lld\n", (long long)time(NULL));
	if (builder_write(b, dpath, text) == 0 && builder_write(b, mpath, stamp) == 0) {
		int fd = open(b->prefix, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		/* Every file of the build reaches the disk before the link names it. */
		if (fd == -1 || syncfs(fd) == -1)
			snprintf(b->why, b->why_len, "sync %s: %s", b->prefix, strerror(errno));
		else
			rc = 0;
		if (fd != -1)
			close(fd);
	}
	free(mpath);
	free(dpath);
	free(text);
	return rc;
}

/*
 * Point build_dir at the complete build `prefix` in one atomic step: a new
 * symlink renamed over it, or, when build_dir is a real directory, exchanged
 * with it (the old directory is then removed).
 */
static int
install_link(const struct config *cfg, const char *prefix, char *why, size_t why_len)
{
	char hex[17];
	struct stat st;
	char *parent = fs_dirname(cfg->build_dir);
	int rc = -1;

	rand_hex(hex, 8);
	char *tmp = xasprintf("%s.link-%s", cfg->build_dir, hex);
	if (symlink(fs_basename(prefix), tmp) == -1) {
		snprintf(why, why_len, "symlink %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (lstat(cfg->build_dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, cfg->build_dir, RENAME_EXCHANGE) == -1) {
			snprintf(why, why_len, "exchange %s with %s: %s", tmp, cfg->build_dir,
				 strerror(errno));
			unlink(tmp);
			goto out;
		}
		if (fs_remove_tree(tmp) == -1)
			log_warn("remove the replaced environment, now %s", tmp);
	} else if (rename(tmp, cfg->build_dir) == -1) {
		snprintf(why, why_len, "rename %s to %s: %s", tmp, cfg->build_dir,
			 strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (fs_sync_dir(parent) == -1)
		log_warn("fsync %s", parent);
	rc = 0;
out:
	free(tmp);
	free(parent);
	return rc;
}

/* Build into a new BUILD_DIR.gen-RANDOM and link build_dir to it. */
static int
build(const struct config *cfg, const char *digest, char *why, size_t why_len)
{
	const struct builder *bl = builder_for(cfg->type);
	char hex[17];
	time_t start = time(NULL);

	rand_hex(hex, 8);
	char *prefix = xasprintf("%s.gen-%s", cfg->build_dir, hex);
	char *python = xasprintf("%s/bin/python", prefix);
	struct build_ctx b = {
		.cfg = cfg,
		.prefix = prefix,
		.envp = build_envp(cfg, prefix),
		.deadline = start + cfg->build_timeout_s,
		.env_python = python,
		.why = why,
		.why_len = why_len,
	};
	int rc = -1;

	why[0] = '\0';
	if (bl->prepare(&b) == -1)
		goto out;
	log_info("building the %s environment %s in %s", config_env_type_name(cfg->type),
		 cfg->build_dir, prefix);
	if (bl->build(&b) == -1)
		goto out;
	if (!builder_can_import(&b, python, "ipykernel")) {
		snprintf(why, why_len,
			 "the new environment cannot import ipykernel, which the kernel needs "
			 "(name it in dependency_file, or use system_site_packages with "
			 "python3-ipykernel installed)");
		goto out;
	}
	if (run_additional(&b) == -1 || seal(&b, digest) == -1 ||
	    install_link(cfg, prefix, why, why_len) == -1)
		goto out;
	log_info("environment %s built in %lld s", cfg->build_dir,
		 (long long)(time(NULL) - start));
	rc = 0;
out:
	if (rc == -1 && time(NULL) >= b.deadline && strstr(why, "build_timeout_s") == NULL)
		/* A probe killed at the deadline reads as "cannot import": say why. */
		snprintf(why, why_len, "the build took longer than build_timeout_s (%d s)",
			 cfg->build_timeout_s);
	builder_clear(&b);
	if (rc == -1 && fs_remove_tree(prefix) == -1)
		log_warn("remove the failed build %s", prefix);
	free(python);
	strv_free(b.envp);
	free(prefix);
	return rc;
}

int
envbuild_ensure(const struct config *cfg, int force, char *why, size_t why_len)
{
	char *parent = fs_dirname(cfg->build_dir);
	char *digest = envbuild_digest(cfg);
	int lock = -1, rc = -1;

	if (fs_mkdir_p(parent, 0755, why, why_len) == -1 ||
	    (lock = lock_build(cfg, why, why_len)) == -1)
		goto out;
	enum env_state s = inspect(cfg, digest);
	if (s == ENV_READY || s == ENV_EXTERNAL) {
		if (s == ENV_EXTERNAL)
			log_info("environment %s has no " ENVBUILD_DIGEST ": prepared outside "
				 "codeexecd, used as it is",
				 cfg->build_dir);
		log_info("environment %s is ready", cfg->build_dir);
		if (lock >= 0)
			remove_leftovers(cfg);
		rc = 0;
		goto out;
	}
	if (lock == -2) {
		/* why names the lock file we may not create: we cannot build here. */
		size_t used = strlen(why);
		snprintf(why + used, why_len - used, "; environment %s is %s and cannot be built",
			 cfg->build_dir, state_text(s));
		goto out;
	}
	if (!cfg->auto_build && !force) {
		snprintf(why, why_len,
			 "environment %s is %s and auto_build is false "
			 "(codeexecd --warm builds it)",
			 cfg->build_dir, state_text(s));
		goto out;
	}
	if (s != ENV_MISSING)
		log_warnx("environment %s is %s: rebuilding it", cfg->build_dir, state_text(s));
	remove_leftovers(cfg);
	if (build(cfg, digest, why, why_len) == 0) {
		remove_leftovers(cfg); /* the build it replaced */
		rc = 0;
	}
out:
	if (lock >= 0)
		close(lock);
	free(digest);
	free(parent);
	return rc;
}
