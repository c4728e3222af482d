/*
 * main.c - codeexecctl: the command line, the config, and the command table.
 *
 * The config is read only when a command needs something from it (the
 * control socket under runtime_dir, the listen address), so -s and -u let
 * an operator reach a daemon whose config file this user cannot read.
 */
#include "autoconf.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_proto.h"
#include "ctl.h"
#include "log.h"
#include "xmalloc.h"

static const struct ctl_cmd *const commands[] = {
	&cmd_status,
	&cmd_sessions,
	&cmd_close,
	&cmd_drain,
	&cmd_undrain,
	&cmd_exec,
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *f)
{
	fprintf(f, "usage: codeexecctl [-j] [-f file] [-s socket] [-u url] command [argument]\n"
		   "       codeexecctl -V | -h\n"
		   "commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "       %s%s%s\n", commands[i]->name, commands[i]->args[0] ? " " : "",
			commands[i]->args);
}

/* A command-line tool's messages: "codeexecctl: ..." on stderr, no time stamp. */
static void
ctl_log_sink(int priority, const char *line)
{
	fprintf(stderr, "codeexecctl: %s\n", line);
}

const struct config *
ctl_config(struct ctl *c)
{
	char err[1024];

	if (c->cfg_loaded)
		return &c->cfg;
	if (config_load(c->conffile, &c->cfg, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		return NULL;
	}
	c->cfg_loaded = 1;
	return &c->cfg;
}

const char *
ctl_socket_path(struct ctl *c)
{
	const struct config *cfg;

	if (c->socket_path)
		return c->socket_path;
	if ((cfg = ctl_config(c)) == NULL)
		return NULL;
	c->owned_socket_path =
		xasprintf("%s/" CONTROL_SOCKET_DIR "/" CONTROL_SOCKET_FILE, cfg->runtime_dir);
	return c->owned_socket_path;
}

/* -u as given, with "/mcp" added when it names no path, as in http://host:port. */
static char *
url_with_path(const char *url)
{
	const char *authority = strstr(url, "://");
	const char *path = strchr(authority ? authority + 3 : url, '/');

	if (path == NULL)
		return xasprintf("%s/mcp", url);
	if (path[1] == '\0')
		return xasprintf("%smcp", url);
	return xstrdup(url);
}

/* The listen address as a client reaches it: a wildcard means this host. */
static char *
url_from_listen(const struct config *cfg)
{
	const char *host = cfg->listen_host;

	if (cfg->listen_port == 0) {
		log_warnx("%s: listen has port 0 (any free port): give the daemon's URL with -u",
			  cfg->file);
		return NULL;
	}
	if (strcmp(host, "0.0.0.0") == 0 || host[0] == '\0')
		host = "127.0.0.1";
	else if (strcmp(host, "::") == 0)
		host = "::1";
	if (strchr(host, ':') != NULL)
		return xasprintf("http://[%s]:%d/mcp", host, cfg->listen_port);
	return xasprintf("http://%s:%d/mcp", host, cfg->listen_port);
}

const char *
ctl_mcp_url(struct ctl *c)
{
	const struct config *cfg;

	if (c->owned_url)
		return c->owned_url;
	if (c->url) {
		c->owned_url = url_with_path(c->url);
		return c->owned_url;
	}
	if ((cfg = ctl_config(c)) == NULL)
		return NULL;
	c->owned_url = url_from_listen(cfg);
	return c->owned_url;
}

static const struct ctl_cmd *
find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

static void
ctl_free(struct ctl *c)
{
	if (c->cfg_loaded)
		config_free(&c->cfg);
	free(c->owned_socket_path);
	free(c->owned_url);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ctl c = {.conffile = CONFIG_PATH};
	const struct ctl_cmd *cmd;
	int ch;

	log_init("codeexecctl", 1, LOG_USER);
	log_set_sink(ctl_log_sink);
	/* A daemon that closes the socket early must not kill us mid-write. */
	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt_long(argc, argv, "+f:hjs:u:V", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f': c.conffile = optarg; break;
		case 'j': c.json = 1; break;
		case 's': c.socket_path = optarg; break;
		case 'u': c.url = optarg; break;
		case 'V': printf("codeexecctl %s\n", PACKAGE_VERSION); return CTL_OK;
		case 'h': usage(stdout); return CTL_OK;
		default: usage(stderr); return CTL_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		usage(stderr);
		return CTL_USAGE;
	}
	if ((cmd = find_command(argv[0])) == NULL) {
		log_warnx("unknown command %s", argv[0]);
		usage(stderr);
		return CTL_USAGE;
	}
	if (argc - 1 != cmd->nargs) {
		fprintf(stderr, "usage: codeexecctl [options] %s%s%s\n", cmd->name,
			cmd->args[0] ? " " : "", cmd->args);
		return CTL_USAGE;
	}
	int status = cmd->run(&c, argv + 1);
	ctl_free(&c);
	return status;
}
