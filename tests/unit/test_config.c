/*
 * test_config.c - the configuration loader, and the drift test that keeps
 * the key table, codeexecd.yaml(5) and etc/codeexecd.yaml in agreement.
 *
 * Drift-test conventions (the man page and the sample must keep to them):
 *  - man/codeexecd.yaml.5 documents each key as one list item whose line
 *    reads ".It Ic KEY ..." (dotted for nested keys: ".It Ic pool.warm"),
 *    under the ".Ss" subsection named by the key's group ("Identity",
 *    "Environment", "Assets", "Artifacts", "Execution", "Isolation", "Daemon",
 *    "Tools", "Sidecars"). No other line of the page starts with ".It Ic". Inside its item, a key states its default as
 *    the text line "Default:" followed by the line ".Ql VALUE" (VALUE
 *    quoted when it holds spaces), or, for an empty default, the line
 *    "Default: empty."; the one key without a default says "Required.".
 *  - etc/codeexecd.yaml SETS every key (a commented "# key:" line does not
 *    count): the dotted paths of its mappings, stopping at table keys, are
 *    exactly the table's names. The sample must also load without error.
 */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "config.h"
#include "xmalloc.h"

static char srcdir[PATH_MAX];

/* Find the source tree: $top_srcdir, else next to this file, else nearby. */
static void
find_srcdir(void)
{
	const char *env = getenv("top_srcdir");
	char here[PATH_MAX];
	char probe[PATH_MAX + 64];
	const char *cands[5];
	size_t n = 0;

	if (env != NULL && env[0] != '\0')
		cands[n++] = env;
	snprintf(here, sizeof(here), "%s", __FILE__);
	char *slash = strstr(here, "/tests/unit/test_config.c");
	if (slash != NULL) {
		*slash = '\0';
		cands[n++] = here[0] ? here : ".";
	}
	cands[n++] = "../..";
	cands[n++] = "..";
	cands[n++] = ".";
	for (size_t i = 0; i < n; i++) {
		snprintf(probe, sizeof(probe), "%s/man/codeexecd.yaml.5", cands[i]);
		if (access(probe, R_OK) == 0) {
			snprintf(srcdir, sizeof(srcdir), "%s", cands[i]);
			return;
		}
	}
	fprintf(stderr, "test_config: cannot find the source tree; set top_srcdir\n");
	exit(1);
}

/* Caller frees. */
static char *
fixture(const char *name)
{
	return xasprintf("%s/tests/unit/data/config/%s", srcdir, name);
}

static const struct config_key *
key_named(const char *name)
{
	for (const struct config_key *k = config_keys(); k->name != NULL; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

START_TEST(defaults)
{
	struct config c;

	config_defaults(&c);
	ck_assert_ptr_null(c.name);
	ck_assert_str_eq(c.description, "Execute Python code in a persistent Jupyter kernel.");
	ck_assert_str_eq(c.server_description, "");
	ck_assert_int_eq(c.type, ENV_PIP);
	ck_assert_str_eq(c.dependency_file, "");
	ck_assert_int_eq(c.auto_build, 1);
	ck_assert_str_eq(c.build_dir, "~/.cache/mcp-envs/{name}");
	ck_assert_str_eq(c.python, "python3");
	ck_assert_int_eq(c.system_site_packages, 0);
	ck_assert_uint_eq(c.additional_commands.n, 0);
	ck_assert_uint_eq(c.kernel_environment.n, 0);
	ck_assert(c.default_timeout == 300.0);
	ck_assert(c.max_timeout == 600.0);
	ck_assert_str_eq(c.listen_host, "127.0.0.1");
	ck_assert_int_eq(c.listen_port, 8000);
	ck_assert_ptr_null(c.metrics_listen_host);
	ck_assert_int_eq(c.allow_external_network_boundary, 0);
	ck_assert_uint_eq(c.allowed_origins.n, 0);
	ck_assert_int_eq(c.max_request_bytes, 4194304);
	ck_assert_str_eq(c.state_dir, "/var/lib/codeexecd");
	ck_assert_str_eq(c.runtime_dir, "/run/codeexecd");
	ck_assert_int_eq(c.pool_warm, 2);
	ck_assert_int_eq(c.pool_max_sessions, 100);
	ck_assert_str_eq(c.log_facility, "daemon");
	ck_assert_str_eq(c.asset_cache_dir, "");
	ck_assert_int_eq(c.build_timeout_s, 1800);
	ck_assert_str_eq(c.conda_executable, "");
	ck_assert_uint_eq(c.assets.n, 0);
	ck_assert_int_eq(c.auto_provision, 1);
	ck_assert_int_eq(c.asset_timeout_s, 600);
	ck_assert_int_eq(c.asset_max_mb, 10240);
	/* seed 003's ExecutionConfig */
	ck_assert_uint_eq(c.allow_mime.n, 10);
	ck_assert_str_eq(c.allow_mime.v[0], "text/plain");
	ck_assert_str_eq(c.allow_mime.v[4], "image/png");
	ck_assert_str_eq(c.allow_mime.v[9], "application/pdf");
	ck_assert_str_eq(c.matplotlib_backend, "module://matplotlib_inline.backend_inline");
	config_free(&c);
	config_free(&c); /* harmless twice */
}
END_TEST

START_TEST(minimal_file_takes_defaults)
{
	struct config c;
	char err[512];
	char *path = fixture("minimal.yaml");

	setenv("HOME", "/home/tester", 1);
	ck_assert_msg(config_load(path, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c.file, path);
	ck_assert_str_eq(c.name, "python");
	ck_assert_str_eq(c.build_dir, "/home/tester/.cache/mcp-envs/python");
	ck_assert_str_eq(c.asset_cache_dir, "/home/tester/.cache/mcp-envs");
	ck_assert_str_eq(c.description, "Execute Python code in a persistent Jupyter kernel.");
	ck_assert_int_eq(c.listen_port, 8000);
	ck_assert_int_eq(c.pool_warm, 2);
	config_free(&c);
	free(path);
}
END_TEST

START_TEST(full_file)
{
	struct config c;
	char err[512];
	char *path = fixture("full.yaml");

	ck_assert_msg(config_load(path, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c.name, "sci-py_3");
	ck_assert_str_eq(c.description, "Python with numpy and pandas.");
	ck_assert_str_eq(c.server_description, "Scientific Python for data analysis.");
	ck_assert_int_eq(c.type, ENV_PIP);
	ck_assert_str_eq(c.dependency_file, "numpy>=1.26\npandas\n");
	ck_assert_int_eq(c.auto_build, 0);
	ck_assert_str_eq(c.build_dir, "/opt/envs/sci-py_3");
	ck_assert_str_eq(c.python, "/usr/bin/python3");
	ck_assert_int_eq(c.system_site_packages, 1);
	ck_assert_uint_eq(c.additional_commands.n, 2);
	ck_assert_str_eq(c.additional_commands.v[0], "python -m pip check");
	ck_assert_str_eq(c.additional_commands.v[1], "echo done");
	ck_assert_uint_eq(c.kernel_environment.n, 3);
	ck_assert_str_eq(c.kernel_environment.keys[0], "LD_LIBRARY_PATH");
	ck_assert_str_eq(c.kernel_environment.values[0], "/opt/vendor/lib");
	ck_assert_str_eq(c.kernel_environment.keys[1], "OMP_NUM_THREADS");
	ck_assert_str_eq(c.kernel_environment.values[1], "4");
	ck_assert_str_eq(c.kernel_environment.keys[2], "DOMAIN_ROOT");
	ck_assert_str_eq(c.kernel_environment.values[2], "/usr/local/lib/domain");
	ck_assert(c.default_timeout == 12.5);
	ck_assert(c.max_timeout == 3600.0);
	ck_assert_str_eq(c.listen_host, "::1");
	ck_assert_int_eq(c.listen_port, 0);
	ck_assert_int_eq(c.allow_external_network_boundary, 1);
	ck_assert_uint_eq(c.allowed_origins.n, 2);
	ck_assert_str_eq(c.allowed_origins.v[0], "http://localhost:3000");
	ck_assert_str_eq(c.allowed_origins.v[1], "https://app.example.org");
	ck_assert_int_eq(c.max_request_bytes, 1048576);
	ck_assert_str_eq(c.state_dir, "/srv/codeexecd/state");
	ck_assert_str_eq(c.runtime_dir, "/run/codeexecd-test");
	ck_assert_int_eq(c.pool_warm, 0);
	ck_assert_int_eq(c.pool_max_sessions, 8);
	ck_assert_str_eq(c.log_facility, "local3");
	ck_assert_str_eq(c.asset_cache_dir, "/srv/assets/sci-py_3");
	ck_assert_int_eq(c.build_timeout_s, 60);
	ck_assert_str_eq(c.conda_executable, "/opt/conda/bin/mamba");
	ck_assert_uint_eq(c.assets.n, 2);
	const struct config_asset *a = config_asset_at(&c, 0);
	ck_assert_str_eq(a->name, "model");
	ck_assert_str_eq(a->source, "https://models.example.org/m.bin");
	ck_assert_str_eq(a->destination, "models/m.bin");
	ck_assert_str_eq(a->checksum, "sha256:9F86D081884C7D659A2FEAA0C55AD015"
				      "A3BF4F1B2B0B822CD15D6C15B0F00A08");
	ck_assert_int_eq(a->size_hint_mb, 12);
	a = config_asset_at(&c, 1);
	ck_assert_str_eq(a->name, "table");
	ck_assert_str_eq(a->source, "file:///srv/data/t.csv");
	ck_assert_str_eq(a->destination, "t.csv");
	ck_assert_int_eq(a->size_hint_mb, 0);
	ck_assert_int_eq(c.auto_provision, 0);
	ck_assert_int_eq(c.asset_timeout_s, 30);
	ck_assert_int_eq(c.asset_max_mb, 100);
	config_free(&c);
	free(path);
}
END_TEST

/* uv and conda are built, so a file may select them. */
START_TEST(uv_and_conda_types)
{
	struct config c;
	char err[512];
	char *path = fixture("uv.yaml");

	ck_assert_msg(config_load(path, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(c.type, ENV_UV);
	ck_assert_str_eq(c.dependency_file, "numpy\n");
	config_free(&c);
	free(path);
	path = fixture("conda.yaml");
	ck_assert_msg(config_load(path, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(c.type, ENV_CONDA);
	ck_assert_str_eq(c.conda_executable, "micromamba");
	config_free(&c);
	free(path);
}
END_TEST

START_TEST(tilde_and_name_expansion)
{
	struct config c;
	char err[512];
	char *path = fixture("expand.yaml");

	setenv("HOME", "/home/tester", 1);
	ck_assert_msg(config_load(path, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c.build_dir, "/home/tester/envs/chem/chem-x");
	config_free(&c);

	/* Without HOME, the password database names the home directory. */
	struct passwd *pw = getpwuid(getuid());
	unsetenv("HOME");
	if (pw != NULL && pw->pw_dir[0] == '/') {
		char *want = xasprintf("%s/envs/chem/chem-x", pw->pw_dir);
		ck_assert_msg(config_load(path, &c, err, sizeof(err)) == 0, "%s", err);
		ck_assert_str_eq(c.build_dir, want);
		config_free(&c);
		free(want);
	}
	free(path);
}
END_TEST

START_TEST(missing_file)
{
	struct config c;
	char err[512];

	ck_assert_int_eq(config_load("/nonexistent/codeexecd.yaml", &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "/nonexistent/codeexecd.yaml: No such file or directory");
	ck_assert_ptr_null(c.name);
	config_free(&c);
}
END_TEST

/* Each broken fixture and the message expected after "PATH:". */
static const struct {
	const char *file;
	const char *msg;
} bad[] = {
	{"unknown_top.yaml", "2:1: unknown key timeout"},
	{"unknown_key.yaml", "4:3: unknown key pool.spare (did you mean pool.start?)"},
	{"wrong_type.yaml", "2:13: auto_build: expected true or false, got \"maybe\""},
	{"wrong_type_list.yaml",
	 "2:22: additional_commands: expected a list of strings, got \"pip check\""},
	{"quoted_bool.yaml", "2:14: description: expected a string, got the YAML boolean yes; "
			     "quote it if you mean the text"},
	{"bad_enum.yaml", "2:7: type: expected one of pip, uv, conda; got \"venv\""},
	{"asset_traversal.yaml", "7:18: assets item 1: destination: \"../etc/passwd\": every part "
				 "of the path must be a name (no \"..\", \".\", empty part or "
				 "trailing /)"},
	{"asset_http.yaml", "5:13: assets item 1: source: \"http://example.org/a\": plain http:// "
			    "is allowed only to a loopback address (127.0.0.1, [::1], localhost); "
			    "use https://"},
	{"env_pythonpath.yaml", "4:3: kernel_environment: PYTHONPATH is rejected: "
				"it injects code before kernel isolation applies"},
	{"env_ld_preload.yaml", "2:22: kernel_environment: LD_PRELOAD is rejected: "
				"it injects code before kernel isolation applies"},
	{"env_path.yaml",
	 "3:5: kernel_environment: PATH is rejected: codeexecd sets it for every kernel"},
	{"env_badname.yaml", "3:3: kernel_environment: \"1X\" is not a valid environment variable "
			     "name (letters, digits and _, not starting with a digit)"},
	{"env_value_list.yaml", "3:8: kernel_environment: FOO: expected a string, got a list"},
	{"bad_listen.yaml",
	 "2:9: listen: the port of \"127.0.0.1:70000\" must be a number from 0 to 65535"},
	{"bad_listen_v6.yaml",
	 "2:9: listen: \"::1:8000\": write an IPv6 address in brackets, as [::1]:8000"},
	{"negative_warm.yaml", "3:9: pool.warm: must be between 0 and 1024, got -1"},
	{"timeouts.yaml", "3:18: default_timeout (300) exceeds max_timeout (100)"},
	{"timeouts_default.yaml", "2:14: default_timeout (300) exceeds max_timeout (100)"},
	{"syntax.yaml", "4:1: YAML syntax error: found unexpected end of stream "
			"(while scanning a quoted scalar at line 2)"},
	{"syntax2.yaml",
	 "2:14: YAML syntax error: mapping values are not allowed in this context"},
	{"duplicate.yaml", "3:1: duplicate key name (first at line 1)"},
	{"duplicate_section.yaml", "4:1: duplicate key pool (first at line 2)"},
	{"empty.yaml", "2:1: the file is empty: expected a mapping of keys"},
	{"not_mapping.yaml", "1:1: the top level must be a mapping of keys, not a list"},
	{"missing_name.yaml", "1:1: name is required: it names the environment and its tools"},
	{"bad_name.yaml", "1:7: name: \"my server\" may hold only letters, digits, _ and -, "
			  "since it becomes part of the MCP tool names"},
	{"alias.yaml", "1:7: anchors (&n) are not supported: write the value out"},
	{"two_docs.yaml", "2:1: a second YAML document: the file must hold only one"},
};

START_TEST(errors)
{
	struct config c;
	char err[512];
	char *path = fixture(bad[_i].file);
	char *want = xasprintf("%s:%s", path, bad[_i].msg);

	ck_assert_int_eq(config_load(path, &c, err, sizeof(err)), -1);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(c.name); /* left empty */
	config_free(&c);
	free(want);
	free(path);
}
END_TEST

/* Write `text` to a temporary file and load it; returns config_load's result. */
static int
load_text(const char *text, struct config *c, char *err, size_t errlen, char **pathp)
{
	char tmpl[] = "/tmp/test_config.XXXXXX";
	int fd = mkstemp(tmpl);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	int rc = config_load(tmpl, c, err, errlen);
	unlink(tmpl);
	*pathp = xstrdup(tmpl);
	return rc;
}

#define SUM "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

/* Smaller cases, written inline: the text and the expected message. */
static const struct {
	const char *text;
	const char *msg; /* NULL: must load */
} inline_cases[] = {
	{"name: x\nauto_build: \"true\"\n",
	 "2:13: auto_build: expected true or false, got \"true\""},
	{"name: x\nauto_build: off\n", NULL},
	{"name: x\npool.warm: 1\n",
	 "2:1: unknown key pool.warm: write it nested, as warm: inside pool:"},
	{"name: x\ndescripion: y\n", "2:1: unknown key descripion (did you mean description?)"},
	{"name: x\npool:\n  max_session: 3\n",
	 "3:3: unknown key pool.max_session (did you mean pool.max_sessions?)"},
	{"name: x\npool: 3\n", "2:7: pool: expected a mapping of keys, got \"3\""},
	{"name: x\npool:\n  warm: 010\n", "3:9: pool.warm: expected an integer, got \"010\""},
	{"name: x\npool:\n  max_sessions: 0\n",
	 "3:17: pool.max_sessions: must be between 1 and 65536, got 0"},
	{"name: x\nmax_request_bytes: 1e6\n",
	 "2:20: max_request_bytes: expected an integer, got \"1e6\""},
	{"name: x\nmax_request_bytes: 0\n",
	 "2:20: max_request_bytes: must be between 1 and 1073741824, got 0"},
	{"name: x\ndefault_timeout: 0\n",
	 "2:18: default_timeout: must be greater than 0 and at most 2592000, got 0"},
	{"name: x\ndefault_timeout: .inf\n",
	 "2:18: default_timeout: expected a number, got \".inf\""},
	{"name: x\ndefault_timeout: nan\n",
	 "2:18: default_timeout: expected a number, got \"nan\""},
	{"name: x\ndefault_timeout: 0x10\n",
	 "2:18: default_timeout: expected a number, got \"0x10\""},
	{"name: x\ndefault_timeout: 2.5e2\n", NULL},
	{"name: x\negress:\n  allow: [pypi.example.com, \"*.corp.example:443\", 10.0.0.0/8]\n"
	 "  deny: [\"fd00::/8\"]\n  max_connections: 4\n", NULL},
	{"name: x\negress:\n  allow: [ok.example, \"10.0.0.1/8\"]\n",
	 "3:23: egress.allow item 2: \"10.0.0.1/8\": bits are set past the prefix length"},
	{"name: x\negress:\n  allow: [\"a.*.example\"]\n",
	 "3:11: egress.allow item 1: \"a.*.example\": a wildcard is only \"*.\" at the start of "
	 "a name"},
	{"name: x\negress:\n  deny: [\"x.example:0\"]\n",
	 "3:10: egress.deny item 1: \"x.example:0\": the port must be 1 to 65535"},
	{"name: x\negress:\n  deny: [\"\"]\n", "3:10: egress.deny item 1: an empty rule"},
	{"name: x\negress:\n  hosts_file: hosts\n",
	 "3:15: egress.hosts_file: \"hosts\" is not an absolute path"},
	{"name: x\negress:\n  max_connections: 0\n",
	 "3:20: egress.max_connections: must be between 1 and 4096, got 0"},
	{"name: x\negress:\n  allow: [api.example, \"*.svc.example\"]\n  inject:\n"
	 "    - {host: api.example, header: Authorization, secret_file: /s}\n"
	 "    - {host: \"*.svc.example:443\", header: X-Key, secret_file: /s}\n", NULL},
	{"name: x\negress:\n  allow: [api.example]\n  inject:\n"
	 "    - {host: other.example, header: X, secret_file: /s}\n",
	 "5:5: egress.inject item 1: host other.example is refused by the egress rules (default "
	 "deny (no allow rule names the host)): allow it, or remove the item"},
	{"name: x\negress:\n  inject:\n    - {host: a.example, header: X, secret_file: /s}\n",
	 "4:5: egress.inject: needs egress.allow (no proxy runs without it)"},
	{"name: x\negress:\n  allow: [a.example]\n  inject:\n"
	 "    - {host: a.example, header: Content-Length, secret_file: /s}\n",
	 "5:33: egress.inject item 1: header: Content-Length: the proxy writes this header itself"},
	{"name: x\negress:\n  allow: [a.example]\n  inject:\n"
	 "    - {host: a.example, header: Proxy-Authorization, secret_file: /s}\n",
	 "5:33: egress.inject item 1: header: Proxy-Authorization: a Proxy-* header is for a "
	 "proxy, never sent on"},
	{"name: x\negress:\n  allow: [a.example]\n  inject:\n"
	 "    - {host: a.example, header: \"X Y\", secret_file: /s}\n",
	 "5:33: egress.inject item 1: header: X Y: a header name is a token of at most 64 "
	 "letters, digits and !#$%&'*+-.^_`|~"},
	{"name: x\negress:\n  allow: [10.0.0.0/8]\n  inject:\n"
	 "    - {host: 10.0.0.0/8, header: X, secret_file: /s}\n",
	 "5:14: egress.inject item 1: host: 10.0.0.0/8: an injected host is a NAME or *.SUFFIX "
	 "(its certificate is made for the name), not an address"},
	{"name: x\negress:\n  allow: [a.example]\n  inject:\n"
	 "    - {host: a.example, header: X, secret_file: /s}\n"
	 "    - {host: A.example, header: x, secret_file: /t}\n",
	 "6:7: egress.inject item 2: host A.example header x is already injected by item 1"},
	{"name: x\negress:\n  allow: [a.example]\n  inject:\n"
	 "    - {host: a.example, header: X}\n",
	 "5:7: egress.inject item 1: secret_file is required"},
	{"name: x\nallow_mime: [text/plain, image/png]\n", NULL},
	{"name: x\nallow_mime: []\n", NULL},
	{"name: x\nallow_mime: [image/png, Image/PNG]\n",
	 "2:25: allow_mime item 2: \"Image/PNG\" is not a MIME type: expected TYPE/SUBTYPE in "
	 "lower case, as image/png"},
	{"name: x\nallow_mime: [image/png, image/png]\n",
	 "2:25: allow_mime item 2: \"image/png\" is listed twice"},
	{"name: x\nallow_mime: [png]\n",
	 "2:14: allow_mime item 1: \"png\" is not a MIME type: expected TYPE/SUBTYPE in lower "
	 "case, as image/png"},
	{"name: x\nmatplotlib_backend: none\n", NULL},
	{"name: x\nmatplotlib_backend: agg\n", NULL},
	{"name: x\nmatplotlib_backend: module://my_pkg.backend_x\n", NULL},
	{"name: x\nmatplotlib_backend: module://my_pkg..x\n",
	 "2:21: matplotlib_backend: \"module://my_pkg..x\" is not a matplotlib backend: expected "
	 "none, module://MODULE (a dotted Python module name) or a built-in backend name such "
	 "as agg"},
	{"name: x\nmatplotlib_backend: \"\"\n",
	 "2:21: matplotlib_backend: \"\" is not a matplotlib backend: expected none, "
	 "module://MODULE (a dotted Python module name) or a built-in backend name such as agg"},
	{"name: x\nlisten: localhost\n", "2:9: listen: \"localhost\": expected HOST:PORT"},
	{"name: x\nlisten: \":80\"\n", "2:9: listen: \":80\": the host is empty"},
	{"name: x\nlisten: \"[::1]8000\"\n",
	 "2:9: listen: \"[::1]8000\": expected [IPV6-ADDRESS]:PORT"},
	{"name: x\nlisten: \"[zz::1]:80\"\n", "2:9: listen: \"[zz::1]:80\": bad IPv6 address"},
	{"name: x\nlisten: 127.0.0.1:-1\n",
	 "2:9: listen: the port of \"127.0.0.1:-1\" must be a number from 0 to 65535"},
	{"name: x\nlisten: 0.0.0.0:65535\n", NULL},
	{"name: x\nmetrics_listen: 127.0.0.1\n",
	 "2:17: metrics_listen: \"127.0.0.1\": expected HOST:PORT"},
	{"name: x\nmetrics_listen: \"[::1]:99999\"\n",
	 "2:17: metrics_listen: the port of \"[::1]:99999\" must be a number from 0 to 65535"},
	{"name: x\nmetrics_listen: \"[::1]:9464\"\n", NULL},
	{"name: x\nmetrics_listen: \"\"\n", NULL},
	{"name: x\nstate_dir: var/lib\n", "2:12: state_dir: \"var/lib\" is not an absolute path"},
	{"name: x\nbuild_dir: envs/{name}\n",
	 "2:12: build_dir: \"envs/x\" is not an absolute path (only a leading ~/ is expanded)"},
	{"name: x\npython: bin/python3\n", "2:9: python: \"bin/python3\" must be a command name "
					   "found in PATH or an absolute path"},
	{"name: x\nlog_facility: kern\n", "2:15: log_facility: unknown syslog facility \"kern\" "
					  "(daemon, user, auth or local0..local7)"},
	{"name: x\nallowed_origins: [\"http://a.example/\"]\n",
	 "2:19: allowed_origins item 1: \"http://a.example/\" is not an origin: "
	 "expected scheme://host[:port], with no path or trailing /"},
	{"name: x\nallowed_origins:\n  - ftp://a\n",
	 "3:5: allowed_origins item 1: \"ftp://a\" is not an origin: "
	 "it must start with http:// or https://"},
	{"name: x\nadditional_commands: [\"\"]\n",
	 "2:23: additional_commands item 1: an empty command"},
	{"name: x\nkernel_environment:\n", "2:20: kernel_environment: expected a mapping of names "
					   "to strings, got no value"},
	{"name: x\nkernel_environment: {A: 1, A: 2}\n",
	 "2:28: duplicate key kernel_environment.A (first at line 2)"},
	{"name: x\nkernel_environment: {A: yes}\n",
	 "2:25: kernel_environment: A: expected a string, got the YAML boolean yes; "
	 "quote it if you mean the text"},
	{"name: x\nkernel_environment: {A: \"yes\", LD_LIBRARY_PATH: /opt/lib}\n", NULL},
	{"name: x\nkernel_environment: {JUPYTER_PATH: /x}\n",
	 "2:22: kernel_environment: JUPYTER_PATH is rejected: codeexecd sets it for every kernel"},
	{"name: x\ndescription: \"a\\0b\"\n", "2:14: description: contains a NUL character"},
	{"name: x\ndescription: \"\"\n", "2:14: description: must not be empty"},
	{"name: x\nnode_name: node-1\n", NULL},
	{"name: x\nnode_name: \"\"\n", NULL},
	{"name: x\nnode_name: a.b\n",
	 "2:12: node_name: \"a.b\" may hold only letters, digits, _ and -, since it starts every "
	 "handle this node mints, before a dot"},
	{"name: x\nnode_name: abcdefghijklmnopqrstuvwxyz0123456\n",
	 "2:12: node_name: is 33 characters long; at most 32 are allowed"},
	{"name: x\ndescription:\n", "2:13: description: has no value"},
	{"name: !!str x\n",
	 "1:7: YAML tags (\"tag:yaml.org,2002:str\") are not supported; quote the value instead"},
	{"name: x\ndescription: *a\n",
	 "2:14: aliases (*a) are not supported: write the value out"},
	{"name: x\n[a]: 1\n", "2:1: keys must be plain names, not a list"},
	{"name: x\n\"we ird\": 1\n", "2:1: unknown key \"we ird\""},
	{"name: abcdefghijabcdefghijabcdefghijabcdefghijabcdefgh\n",
	 "1:7: name: is 48 characters long; at most 47 are allowed"},
	{"name: x\nname: x\n", "2:1: duplicate key name (first at line 1)"},
	{"name: x\n\xff: 1\n", "2:1: YAML syntax error: invalid leading UTF-8 octet"},
	{"---\n", "2:1: the top level must be a mapping of keys, not a single value"},
	{"", "1:1: the file is empty: expected a mapping of keys"},
	{"name: x\nserver_description: |\n  line one\n  line two\n", NULL},
	/* publishers (issue 16) */
	{"name: x\npublishers: [{name: l, type: local, base_dir: /srv/p}]\n", NULL},
	{"name: x\npublishers: [{name: b, type: azure_blob, account_url: "
	 "\"https://a.blob.core.windows.net\", container: c, sas_token_file: /k}]\n", NULL},
	{"name: x\npublishers: [{name: l, type: ftp}]\n",
	 "2:30: publishers item 1: type: \"ftp\": expected local or azure_blob"},
	{"name: x\npublishers: [{name: l, type: local}]\n",
	 "2:14: publishers item 1: type local needs base_dir, an absolute path"},
	{"name: x\npublishers: [{name: l, type: local, base_dir: /a}, "
	 "{name: l, type: local, base_dir: /b}]\n",
	 "2:52: publishers item 2: name l is already used by item 1"},
	{"name: x\npublishers: [{name: b, type: azure_blob, account_url: "
	 "\"https://a.blob.core.windows.net\", container: c}]\n",
	 "2:14: publishers item 1: type azure_blob needs exactly one of sas_token_file, "
	 "account_key_file and managed_identity: true"},
	{"name: x\npublishers: [{name: b, type: azure_blob, account_url: "
	 "\"https://a.blob.core.windows.net\", container: c, sas_token_file: /k, "
	 "managed_identity: true}]\n",
	 "2:14: publishers item 1: type azure_blob needs exactly one of sas_token_file, "
	 "account_key_file and managed_identity: true"},
	{"name: x\npublishers: [{name: b, type: azure_blob, account_url: "
	 "\"http://a.example.com/x\", container: c, sas_token_file: /k}]\n",
	 "2:55: publishers item 1: account_url: \"http://a.example.com/x\": plain http:// is "
	 "allowed only to a loopback address; use https://"},
	{"name: x\npublishers: [{name: l, type: local, base_dir: /a, prefix: \"../x\"}]\n",
	 "2:59: publishers item 1: prefix: \"../x\": must be relative, without .."},
	{"name: x\npublishers: [{name: l, type: local, base_dir: /a, prefix: \"{user}\"}]\n",
	 "2:59: publishers item 1: prefix: \"{user}\": the placeholders are {identity}, "
	 "{session} and {date}"},
	{"name: x\npublishers: [{name: l, type: local, base_dir: /a, max_bytes: 0}]\n",
	 "2:62: publishers item 1: max_bytes: must be between 1 and 2147483647, got 0"},
	{"name: x\nassets: {}\n", "2:9: assets: expected a list of mappings, got a mapping"},
	{"name: x\nassets: [a]\n", "2:10: assets item 1: expected a mapping of fields, got \"a\""},
	{"name: x\nassets: [{name: a, source: /a, destination: a}]\n",
	 "2:10: assets item 1: checksum is required"},
	{"name: x\nassets: [{name: a, sorce: /a}]\n",
	 "2:20: assets item 1: unknown field \"sorce\" (did you mean source?)"},
	{"name: x\nassets: [{name: a, source: /a, destination: /etc/a, checksum: " SUM "}]\n",
	 "2:45: assets item 1: destination: \"/etc/a\" is absolute: it must be relative to "
	 "asset_cache_dir"},
	{"name: x\nassets: [{name: a, source: /a, destination: a//b, checksum: " SUM "}]\n",
	 "2:45: assets item 1: destination: \"a//b\": every part of the path must be a name "
	 "(no \"..\", \".\", empty part or trailing /)"},
	{"name: x\nassets: [{name: a, source: a.bin, destination: a, checksum: " SUM "}]\n",
	 "2:28: assets item 1: source: \"a.bin\" must be an https:// URL, an http:// URL to "
	 "loopback, a file:// URL or an absolute path"},
	{"name: x\nassets: [{name: a, source: /a, destination: a, checksum: abc}]\n",
	 "2:58: assets item 1: checksum: \"abc\" is not a sha256 checksum (64 hexadecimal "
	 "digits)"},
	{"name: x\nassets: [{name: a, source: /a, destination: a, checksum: " SUM "},\n"
	 "  {name: a, source: /b, destination: b, checksum: " SUM "}]\n",
	 "3:3: assets item 2: name a is already used by item 1"},
	{"name: x\nassets: [{name: a, source: /a, destination: a, checksum: " SUM "},\n"
	 "  {name: b, source: /b, destination: a, checksum: " SUM "}]\n",
	 "3:3: assets item 2: destination a is already used by item 1"},
	{"name: x\nassets: [{name: a, source: \"http://127.0.0.1:8080/a\", destination: a, "
	 "checksum: " SUM "}, {name: b, source: \"http://[::1]/b\", destination: b, checksum: "
	 SUM "}, {name: c, source: \"http://localhost/c\", destination: c/d, checksum: "
	 SUM ", size_hint_mb: 3}]\n", NULL},
	{"name: x\nassets: [{name: a, source: \"http://127.0.0.1@evil.example/a\", "
	 "destination: a, checksum: " SUM "}]\n",
	 "2:28: assets item 1: source: \"http://127.0.0.1@evil.example/a\": plain http:// is "
	 "allowed only to a loopback address (127.0.0.1, [::1], localhost); use https://"},
	{"name: x\nassets: [{name: a, source: \"file://host/a\", destination: a, "
	 "checksum: " SUM "}]\n",
	 "2:28: assets item 1: source: \"file://host/a\": a file URL must be "
	 "file:///ABSOLUTE/PATH"},
	{"name: x\nassets: [{name: a, source: /a, destination: a, checksum: " SUM
	 ", size_hint_mb: -1}]\n",
	 "2:138: assets item 1: size_hint_mb: must be between 0 and 16777216, got -1"},
	{"name: x\nbuild_timeout_s: 0\n",
	 "2:18: build_timeout_s: must be between 1 and 604800, got 0"},
	{"name: x\nconda_executable: bin/conda\n",
	 "2:19: conda_executable: \"bin/conda\" must be a command name found in PATH or an "
	 "absolute path"},
	{"name: x\nasset_cache_dir: data\n", "2:18: asset_cache_dir: \"data\" is not an absolute "
					      "path (only a leading ~/ is expanded)"},
	{"name: x\nbuild_dir: /\n", "2:12: build_dir: must be a directory below /"},
	{"name: x\nassets:\n  - name: a\n    name: b\n",
	 "4:5: assets item 1: field name given twice (first at line 3)"},
	{"name: x\nbuild_dir: /opt/envs/x/\nasset_cache_dir: /srv/a/\n", NULL},
	{"name: x\npreprocess_command: pre.sh\n",
	 "2:21: preprocess_command: \"pre.sh\" is not an absolute path"},
	{"name: x\npreprocess_command: /nonexistent/pre\n",
	 "2:21: preprocess_command: \"/nonexistent/pre\": No such file or directory"},
	{"name: x\npreprocess_command: /etc/passwd\n",
	 "2:21: preprocess_command: \"/etc/passwd\" is not an executable file"},
	{"name: x\npreprocess_command: /bin/sh\npreprocess_timeout_s: 0\n",
	 "3:23: preprocess_timeout_s: must be between 1 and 300, got 0"},
	{"name: x\npreprocess_command: /bin/sh\npreprocess_max_bytes: 100\n",
	 "3:23: preprocess_max_bytes: must be between 1024 and 67108864, got 100"},
	{"name: x\npreprocess_command: /bin/sh\n", NULL},
	/* Authentication (issue 13). */
	{"name: x\nauth:\n  mode: oauth\n",
	 "3:9: auth.mode oauth needs auth.issuer (or entra_tenant_id)"},
	{"name: x\nauth:\n  mode: tokens\n", "3:9: auth.mode tokens needs auth.tokens_file"},
	{"name: x\nauth:\n  mode: basic\n",
	 "3:9: auth.mode: expected one of none, oauth, tokens; got \"basic\""},
	{"name: x\nauth:\n  mode: oauth\n  issuer: https://i.test\n  allowed_algorithms: [HS256]\n",
	 "5:24: auth.allowed_algorithms item 1: \"HS256\" is not one of RS256, RS384, RS512, PS256, "
	 "PS384, PS512, ES256, ES384 (none and HS* are never accepted)"},
	{"name: x\nauth:\n  allowed_algorithms: [RS256, none]\n",
	 "3:31: auth.allowed_algorithms item 2: \"none\" is not one of RS256, RS384, RS512, "
	 "PS256, PS384, PS512, ES256, ES384 (none and HS* are never accepted)"},
	{"name: x\nauth:\n  jwks_uri: http://i.test/keys\n",
	 "3:13: auth.jwks_uri: must be an https URL"},
	{"name: x\nauth:\n  resource: \"https://a.test/\\\"x\"\n",
	 "3:13: auth.resource: may not hold spaces, quotes, backslashes or non-ASCII characters "
	 "(percent-encode them)"},
	{"name: x\nauth:\n  tokens_file: tokens\n",
	 "3:16: auth.tokens_file: \"tokens\" is not an absolute path"},
	{"name: x\nentra_client_id: abc\n",
	 "2:18: the Entra preset needs both entra_client_id and entra_tenant_id"},
	{"name: x\nentra_tenant_id: \"a/b\"\n",
	 "2:18: entra_tenant_id: may hold only letters, digits, '-' and '.' (a GUID or a domain "
	 "name)"},
	{"name: x\nentra_client_id: c\nentra_tenant_id: t\nauth:\n  mode: tokens\n",
	 "5:9: auth.mode: the Entra preset (entra_client_id) needs mode oauth"},
	{"name: x\nauth:\n  mode: tokens\n  tokens_file: /etc/codeexecd/tokens\n"
	 "listen: 0.0.0.0:8000\n", NULL},
	/* sidecars (issue 14) */
	{"name: x\nsidecars: [{name: m, command: [-m, srv]}]\n", NULL},
	{"name: x\nsidecars: {}\n", "2:11: sidecars: expected a list of sidecars"},
	{"name: x\nsidecars: [{command: [a]}]\n",
	 "2:12: sidecars item 1: name is required: 1 to 32 letters, digits, _ and -"},
	{"name: x\nsidecars: [{name: m}]\n",
	 "2:12: sidecars item 1: command is required (a list of arguments)"},
	{"name: x\nsidecars: [{name: m, command: a}]\n",
	 "2:31: sidecars item 1: command: expected a non-empty list of arguments"},
	{"name: x\nsidecars: [{name: m, command: [a], restart: sometimes}]\n",
	 "2:45: sidecars item 1: restart: expected one of on-failure, always, never; got "
	 "\"sometimes\""},
	{"name: x\nsidecars: [{name: m, command: [a], port: 70000}]\n",
	 "2:42: sidecars item 1: port: must be between 0 and 65535, got 70000"},
	/* A sidecar's scalars follow the grammar of every other key. */
	{"name: x\nsidecars: [{name: m, command: [a], socket: \"true\"}]\n",
	 "2:44: sidecars item 1: socket: expected true or false, got \"true\""},
	{"name: x\nsidecars: [{name: m, command: [-m, a], use_env_python: yes}]\n", NULL},
	{"name: x\nsidecars: [{name: m, command: [a], readiness_timeout_s: 0}]\n",
	 "2:57: sidecars item 1: readiness_timeout_s: must be at least 0.1 and at most 3600, got 0"},
	{"name: x\nsidecars: [{name: m, command: [a], limits: {pids: 1.5}}]\n",
	 "2:51: sidecars item 1: limits.pids: expected an integer, got \"1.5\""},
	{"name: x\nsidecars: [{name: m, command: [a], url_env_var: PATH}]\n",
	 "2:12: sidecars item 1: url_env_var PATH is not a name kernels may be given"},
	{"name: x\nsidecars: [{name: m, command: [a], env: {LD_PRELOAD: x}}]\n",
	 "2:42: sidecars item 1: env: LD_PRELOAD is rejected: it injects code before kernel "
	 "isolation applies"},
	{"name: x\nsidecars: [{name: m, command: [a], host: localhost}]\n",
	 "2:12: sidecars item 1: host localhost is not a numeric IP address"},
	{"name: x\nsidecars: [{name: m, command: [a], health_path: health}]\n",
	 "2:12: sidecars item 1: health_path must start with / and hold no space"},
	{"name: x\nsidecars: [{name: m, command: [a], use_env_python: false}]\n",
	 "2:12: sidecars item 1: command[0] must be an absolute path when use_env_python is "
	 "false"},
	{"name: x\nkernel_environment: {M_URL_SOCKET: a}\n"
	 "sidecars: [{name: m, command: [a], socket: true}]\n",
	 "2:21: kernel_environment: M_URL_SOCKET is rejected: it holds the socket of sidecar m"},
	{"name: x\nsidecars: [{name: m, command: [a], limits: {memory: 1}}]\n",
	 "2:45: sidecars item 1: limits: unknown field memory (memory_mb, pids, cpu)"},
	{"name: x\nsidecars: [{name: m, command: [a]}, {name: m, command: [b]}]\n",
	 "2:37: sidecars item 2: name m is already used by item 1"},
	{"name: x\nsidecars: [{name: a, command: [a], url_env_var: U}, "
	 "{name: b, command: [b], url_env_var: U}]\n",
	 "2:53: sidecars item 2: url_env_var U is already used by item 1"},
	{"name: x\nsidecars: [{name: m, command: [a], colour: red}]\n",
	 "2:36: sidecars item 1: unknown field colour"},
	{"name: x\nkernel_environment: {MODEL_URL: a}\n"
	 "sidecars: [{name: model, command: [a]}]\n",
	 "2:21: kernel_environment: MODEL_URL is rejected: it is the url_env_var of sidecar "
	 "model"},
	{"name: x\nkernel_environment: {SIDECAR_HOST: a}\n",
	 "2:22: kernel_environment: SIDECAR_HOST is rejected: codeexecd sets it for every kernel"},
};

START_TEST(inline_texts)
{
	struct config c;
	char err[512];
	char *path = NULL;
	int rc = load_text(inline_cases[_i].text, &c, err, sizeof(err), &path);

	if (inline_cases[_i].msg == NULL) {
		ck_assert_msg(rc == 0, "case %d: %s", _i, err);
		config_free(&c);
	} else {
		char *want = xasprintf("%s:%s", path, inline_cases[_i].msg);
		ck_assert_msg(rc == -1, "case %d loaded", _i);
		ck_assert_str_eq(err, want);
		free(want);
	}
	free(path);
}
END_TEST

/* A sidecar's fields, its defaults and what it derives (issue 14). */
START_TEST(sidecar_fields)
{
	struct config c;
	char err[512];
	char *path = NULL;
	int rc = load_text("name: x\nsidecars:\n"
			   "  - name: my-model\n    command: [-m, srv, --fast]\n"
			   "  - name: b\n    command: [/usr/bin/b]\n    use_env_python: false\n"
			   "    url_env_var: B_ADDR\n    host: \"::1\"\n    port: 8123\n"
			   "    health_path: /ready\n    readiness_timeout_s: 2.5\n"
			   "    env: {MODEL_PATH: /m}\n    restart: never\n"
			   "    limits: {memory_mb: 512, pids: 32, cpu: 1.5}\n",
			   &c, err, sizeof(err), &path);

	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(c.sidecars.n, 2);
	const struct config_sidecar *a = &c.sidecars.v[0], *b = &c.sidecars.v[1];
	ck_assert_str_eq(a->name, "my-model");
	ck_assert_uint_eq(a->command.n, 3);
	ck_assert_str_eq(a->command.v[2], "--fast");
	ck_assert_int_eq(a->use_env_python, 1);
	ck_assert_str_eq(a->url_env_var, "MY_MODEL_URL");
	ck_assert_str_eq(a->host, "127.0.0.1");
	ck_assert_int_eq(a->port, 0);
	ck_assert_str_eq(a->health_path, "/health");
	ck_assert(a->readiness_timeout_s == 60);
	ck_assert_int_eq(a->restart, SIDECAR_RESTART_ON_FAILURE);
	ck_assert_int_eq(a->socket, 0);
	ck_assert_int_eq(b->use_env_python, 0);
	ck_assert_str_eq(b->url_env_var, "B_ADDR");
	ck_assert_str_eq(b->host, "::1");
	ck_assert_int_eq(b->port, 8123);
	ck_assert_str_eq(b->health_path, "/ready");
	ck_assert(b->readiness_timeout_s == 2.5);
	ck_assert_uint_eq(b->env.n, 1);
	ck_assert_str_eq(b->env.keys[0], "MODEL_PATH");
	ck_assert_str_eq(b->env.values[0], "/m");
	ck_assert_int_eq(b->restart, SIDECAR_RESTART_NEVER);
	ck_assert_int_eq(b->limit_memory_mb, 512);
	ck_assert_int_eq(b->limit_pids, 32);
	ck_assert(b->limit_cpu == 1.5);
	ck_assert_int_eq(sidecar_differs(a, a), 0);
	ck_assert_int_ne(sidecar_differs(a, b), 0);
	ck_assert_int_ne(sidecar_fields_changed(a, b, RELOAD_RESTART, NULL), 0);
	/* What SIGHUP regroups a sidecar for: its limits alone. */
	ck_assert_int_eq(sidecar_fields_changed(a, a, RELOAD_SIDECARS, "limits."), 0);
	ck_assert_int_eq(sidecar_fields_changed(a, b, RELOAD_SIDECARS, "limits."),
			 (a->limit_memory_mb != b->limit_memory_mb) + (a->limit_pids != b->limit_pids) +
				 (a->limit_cpu != b->limit_cpu));
	char names[128];
	sidecar_field_names(RELOAD_RESTART, names, sizeof(names));
	ck_assert_str_eq(names, "name, url_env_var, host, port or socket");
	for (const struct config_key *f = sidecar_config_fields(); f->name != NULL; f++)
		ck_assert_msg(f->scope == RELOAD_SIDECARS || f->scope == RELOAD_RESTART,
			      "sidecars: %s has no reload scope", f->name);
	/* What a reload may change in a running sidecar, and what it may not. */
	struct config_sidecar run = *a, want = *b;
	sidecar_take_settings(&run, &want);
	ck_assert_str_eq(run.name, "my-model");
	ck_assert_str_eq(run.url_env_var, "MY_MODEL_URL");
	ck_assert_str_eq(run.host, "127.0.0.1");
	ck_assert_int_eq(run.port_configured, 0);
	ck_assert_int_eq(run.use_env_python, 0);
	ck_assert_str_eq(run.command.v[0], "/usr/bin/b");
	ck_assert_str_eq(run.health_path, "/ready");
	ck_assert(run.readiness_timeout_s == 2.5);
	ck_assert_uint_eq(run.env.n, 1);
	ck_assert_int_eq(run.restart, SIDECAR_RESTART_NEVER);
	ck_assert(run.limit_cpu == 1.5);
	ck_assert_str_eq(want.health_path, "/health");
	ck_assert_str_eq(want.name, "b");
	/* Give each its own fields back, for config_free. */
	sidecar_take_settings(&run, &want);
	ck_assert_int_eq(memcmp(&run, a, sizeof(run)), 0);
	ck_assert_int_eq(memcmp(&want, b, sizeof(want)), 0);
	config_free(&c);
	free(path);
}
END_TEST

/* Seed 000's Entra preset: what entra_client_id and entra_tenant_id derive. */
START_TEST(entra_preset)
{
	struct config c;
	char err[512];
	char *path = NULL;

	ck_assert_msg(load_text("name: x\nentra_client_id: 11111111-2222-3333-4444-555555555555\n"
				"entra_tenant_id: contoso.onmicrosoft.com\n",
				&c, err, sizeof(err), &path) == 0, "%s", err);
	ck_assert_int_eq(c.auth_mode, AUTH_OAUTH);
	ck_assert_str_eq(c.auth_issuer,
			 "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0");
	ck_assert_str_eq(c.auth_jwks_uri, "https://login.microsoftonline.com/"
					  "contoso.onmicrosoft.com/discovery/v2.0/keys");
	ck_assert_uint_eq(c.auth_audience.n, 2);
	ck_assert_str_eq(c.auth_audience.v[0], "11111111-2222-3333-4444-555555555555");
	ck_assert_str_eq(c.auth_audience.v[1], "api://11111111-2222-3333-4444-555555555555");
	ck_assert_str_eq(c.auth_identity_claim, "oid");
	ck_assert_uint_eq(c.auth_allowed_algorithms.n, 2);
	ck_assert_str_eq(c.auth_allowed_algorithms.v[0], "RS256");
	config_free(&c);
	free(path);

	/* What the file sets wins: a v1 issuer, one audience, another claim. */
	ck_assert_msg(load_text("name: x\nentra_client_id: cid\nentra_tenant_id: tid\n"
				"auth:\n  mode: oauth\n  issuer: https://sts.windows.net/tid/\n"
				"  audience: [api://mcp]\n  identity_claim: upn\n",
				&c, err, sizeof(err), &path) == 0, "%s", err);
	ck_assert_str_eq(c.auth_issuer, "https://sts.windows.net/tid/");
	ck_assert_str_eq(c.auth_jwks_uri,
			 "https://login.microsoftonline.com/tid/discovery/v2.0/keys");
	ck_assert_uint_eq(c.auth_audience.n, 1);
	ck_assert_str_eq(c.auth_audience.v[0], "api://mcp");
	ck_assert_str_eq(c.auth_identity_claim, "upn");
	config_free(&c);
	free(path);

	/* Without the preset: mode none, identity sub. */
	ck_assert_msg(load_text("name: x\n", &c, err, sizeof(err), &path) == 0, "%s", err);
	ck_assert_int_eq(c.auth_mode, AUTH_NONE);
	ck_assert_str_eq(c.auth_identity_claim, "sub");
	ck_assert_int_eq(c.auth_clock_skew_s, 60);
	config_free(&c);
	free(path);
}
END_TEST

START_TEST(block_scalar)
{
	struct config c;
	char err[512];
	char *path = NULL;
	const char *text = "name: x\n"
			   "dependency_file: |\n"
			   "  # requirements.txt content\n"
			   "  numpy==2.1.*\n"
			   "\n"
			   "  pandas\n"
			   "additional_commands:\n"
			   "  - >\n"
			   "    python -c\n"
			   "    'import numpy'\n";

	ck_assert_msg(load_text(text, &c, err, sizeof(err), &path) == 0, "%s", err);
	ck_assert_str_eq(c.dependency_file,
			 "# requirements.txt content\nnumpy==2.1.*\n\npandas\n");
	ck_assert_str_eq(c.additional_commands.v[0], "python -c 'import numpy'\n");
	config_free(&c);
	free(path);
}
END_TEST

START_TEST(table_is_sound)
{
	for (const struct config_key *k = config_keys(); k->name != NULL; k++) {
		ck_assert_msg(k->doc != NULL && k->doc[0] != '\0', "%s has no doc", k->name);
		ck_assert_msg(k->group != NULL &&
				      (strcmp(k->group, "Identity") == 0 ||
				       strcmp(k->group, "Environment") == 0 ||
				       strcmp(k->group, "Assets") == 0 ||
				       strcmp(k->group, "Artifacts") == 0 ||
				       strcmp(k->group, "Execution") == 0 ||
				       strcmp(k->group, "Isolation") == 0 ||
				       strcmp(k->group, "Daemon") == 0 ||
				       strcmp(k->group, "Authentication") == 0 ||
				       strcmp(k->group, "Tools") == 0 ||
				       strcmp(k->group, "Sidecars") == 0),
			      "%s has no known group", k->name);
		ck_assert_msg(k->def != NULL || strcmp(k->name, "name") == 0, "%s has no default",
			      k->name);
		ck_assert_msg((k->kind == CFG_RECORDS) == (k->fields != NULL),
			      "%s: fields go with CFG_RECORDS", k->name);
		for (const struct config_key *f = k->fields; f && f->name; f++)
			ck_assert_msg(f->doc != NULL && f->kind != CFG_RECORDS && f->size != 0,
				      "%s.%s: bad field", k->name, f->name);
		for (const struct config_key *o = k + 1; o->name != NULL; o++)
			ck_assert_msg(strcmp(k->name, o->name) != 0, "%s twice", k->name);
		/* Reload scope: privilege separation rests on it (reload.c). */
		ck_assert_msg(k->scope == RELOAD_LIVE || k->scope == RELOAD_SIDECARS ||
				      k->scope == RELOAD_RESTART,
			      "%s has no reload scope", k->name);
		ck_assert_msg(k->scope != RELOAD_LIVE || (k->size != 0 && k->differs == NULL),
			      "%s is live but has no field of its own to swap", k->name);
		ck_assert_msg(k->scope != RELOAD_RESTART ||
				      (k->kind != CFG_NODE && (k->size != 0 || k->differs != NULL)),
			      "%s needs a restart, but a reload cannot tell it changed", k->name);
		ck_assert_msg((k->scope == RELOAD_SIDECARS) == (strcmp(k->name, "sidecars") == 0),
			      "%s: only sidecars is the parent's to reload", k->name);
	}
	ck_assert_ptr_nonnull(key_named("pool.warm"));
}
END_TEST

/* Load `path` (caller frees with config_free), failing the test on an error. */
static void
must_load(const char *path, struct config *c)
{
	char err[512];

	ck_assert_msg(config_load(path, c, err, sizeof(err)) == 0, "%s", err);
}

/*
 * config_swap_live moves the live keys, and only those: every key of the
 * running configuration that is not RELOAD_LIVE keeps its value, whatever
 * the new file says.
 */
START_TEST(swap_moves_only_live_keys)
{
	char *sample = xasprintf("%s/etc/codeexecd.yaml", srcdir), *other = fixture("full.yaml");
	struct config run, fresh, run0, fresh0;
	size_t live = 0, kept = 0;

	setenv("HOME", "/home/tester", 1);
	must_load(sample, &run);
	must_load(sample, &run0);
	must_load(other, &fresh);
	must_load(other, &fresh0);
	config_swap_live(&run, &fresh);
	for (const struct config_key *k = config_keys(); k->name != NULL; k++) {
		int changed = config_key_differs(k, &run0, &fresh0);
		if (k->scope == RELOAD_LIVE) {
			ck_assert_msg(!config_key_differs(k, &run, &fresh0), "live %s not taken",
				      k->name);
			ck_assert_msg(!config_key_differs(k, &fresh, &run0), "live %s not given back",
				      k->name);
			live += changed;
		} else {
			ck_assert_msg(!config_key_differs(k, &run, &run0), "%s changed on reload",
				      k->name);
			ck_assert_msg(!config_key_differs(k, &fresh, &fresh0), "%s moved", k->name);
			kept += changed;
		}
	}
	/* The two files differ in both kinds of keys, so the test has teeth. */
	ck_assert_uint_ge(live, 3);
	ck_assert_uint_ge(kept, 3);
	/* tools (CFG_NODE) compares as unchanged above: look at it directly. */
	ck_assert_uint_eq(run.tools.n, fresh0.tools.n);
	ck_assert_uint_eq(fresh.tools.n, run0.tools.n);
	ck_assert_int_eq(run.sidecars.n, run0.sidecars.n);
	config_free(&run);
	config_free(&fresh);
	config_free(&run0);
	config_free(&fresh0);
	free(sample);
	free(other);
}
END_TEST

/* A set of names, small and linear. */
struct names {
	char **v;
	size_t n;
};

static void
names_add(struct names *s, const char *name)
{
	s->v = xreallocarray(s->v, s->n + 1, sizeof(*s->v));
	s->v[s->n++] = xstrdup(name);
}

static int
names_has(const struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return 1;
	return 0;
}

static void
names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* Every table key in `found`, and nothing else, each once; `where` names the source. */
static void
assert_same_keys(const struct names *found, const char *where)
{
	size_t n = 0;

	for (const struct config_key *k = config_keys(); k->name != NULL; k++, n++)
		ck_assert_msg(names_has(found, k->name), "%s does not have key %s", where,
			      k->name);
	for (size_t i = 0; i < found->n; i++) {
		ck_assert_msg(key_named(found->v[i]) != NULL, "%s has %s, which is no key", where,
			      found->v[i]);
		for (size_t j = i + 1; j < found->n; j++)
			ck_assert_msg(strcmp(found->v[i], found->v[j]) != 0, "%s has %s twice",
				      where, found->v[i]);
	}
	ck_assert_uint_eq(found->n, n);
}

/* Read a whole text file; caller frees. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	char *data = NULL;
	size_t len = 0, cap = 0;
	int ch;
	while ((ch = fgetc(f)) != EOF) {
		if (len + 2 > cap) {
			cap = cap ? cap * 2 : 4096;
			data = xreallocarray(data, cap, 1);
		}
		data[len++] = (char)ch;
	}
	fclose(f);
	if (data == NULL)
		data = xstrdup("");
	else
		data[len] = '\0';
	return data;
}

/*
 * The first argument of a macro line, without quotes and zero-width
 * escapes: ".Ql \"a b\&.\"" -> "a b.". Caller frees.
 */
static char *
macro_arg(const char *line)
{
	const char *p = strchr(line, ' ');
	char *arg, *z;

	ck_assert_ptr_nonnull(p);
	p++;
	if (*p == '"') {
		const char *q = strchr(p + 1, '"');
		ck_assert_ptr_nonnull(q);
		arg = xstrndup(p + 1, (size_t)(q - p - 1));
	} else {
		arg = xstrndup(p, strcspn(p, " "));
	}
	while ((z = strstr(arg, "\\&")) != NULL)
		memmove(z, z + 2, strlen(z + 2) + 1);
	return arg;
}

/* The default of `k` as the man page must state it. */
static void
assert_default_line(const struct config_key *k, char **lines, size_t from, size_t to)
{
	int found = 0;

	for (size_t i = from; i < to; i++) {
		if (k->def == NULL) {
			found |= strcmp(lines[i], "Required.") == 0;
		} else if (k->def[0] == '\0' || strcmp(k->def, "[]") == 0 ||
			   strcmp(k->def, "{}") == 0) {
			found |= strcmp(lines[i], "Default: empty.") == 0;
		} else if (strcmp(lines[i], "Default:") == 0 && i + 1 < to &&
			   strncmp(lines[i + 1], ".Ql ", 4) == 0) {
			char *arg = macro_arg(lines[i + 1]);
			ck_assert_msg(strcmp(arg, k->def) == 0,
				      "man page: default of %s is %s, the table says %s", k->name,
				      arg, k->def);
			free(arg);
			found = 1;
		}
	}
	ck_assert_msg(found, "man page: %s does not state its default (%s)", k->name,
		      k->def ? k->def : "required");
}

START_TEST(man_page_documents_every_key)
{
	char *path = xasprintf("%s/man/codeexecd.yaml.5", srcdir);
	char *text = slurp(path);
	struct names found = {NULL, 0};
	char **lines = NULL;
	size_t nlines = 0;

	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		lines = xreallocarray(lines, nlines + 1, sizeof(*lines));
		lines[nlines++] = l;
	}

	const char *group = "";
	for (size_t i = 0; i < nlines; i++) {
		if (strncmp(lines[i], ".Sh ", 4) == 0)
			group = "";
		else if (strncmp(lines[i], ".Ss ", 4) == 0)
			group = lines[i] + 4;
		if (strncmp(lines[i], ".It Ic ", 7) != 0)
			continue;
		char *name = macro_arg(lines[i] + 4);
		const struct config_key *k = key_named(name);
		names_add(&found, name);
		if (k != NULL) {
			ck_assert_msg(strcmp(group, k->group) == 0,
				      "man page: %s is under \"%s\", not under \"%s\"", name,
				      group, k->group);
			size_t end = i + 1;
			while (end < nlines && strncmp(lines[end], ".It ", 4) != 0 &&
			       strncmp(lines[end], ".El", 3) != 0)
				end++;
			assert_default_line(k, lines, i + 1, end);
		}
		free(name);
	}
	assert_same_keys(&found, path);
	names_free(&found);
	free(lines);
	free(text);
	free(path);
}
END_TEST

/*
 * The man page's list of keys a SIGHUP applies at once (the .Bd block
 * after the comment line naming "The live keys") is the table's
 * RELOAD_LIVE keys, each once.
 */
START_TEST(man_page_lists_the_live_keys)
{
	char *path = xasprintf("%s/man/codeexecd.yaml.5", srcdir);
	char *text = slurp(path);
	struct names found = {NULL, 0};
	size_t n = 0;
	int in = 0, seen = 0;

	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, ".\\\" The live keys:", 18) == 0) {
			seen = 1;
			continue;
		}
		if (!seen || (!in && strncmp(l, ".Bd ", 4) == 0 && (in = 1)))
			continue;
		if (strcmp(l, ".Ed") == 0)
			break;
		ck_assert_msg(strncmp(l, ".Ic ", 4) == 0, "man page: %s in the live keys' list", l);
		char *name = macro_arg(l);
		names_add(&found, name);
		free(name);
	}
	ck_assert_msg(seen, "man page: no list of the live keys");
	for (const struct config_key *k = config_keys(); k->name != NULL; k++) {
		if (k->scope != RELOAD_LIVE)
			continue;
		n++;
		ck_assert_msg(names_has(&found, k->name),
			      "man page: live key %s is not in the SIGHUP list", k->name);
	}
	for (size_t i = 0; i < found.n; i++) {
		const struct config_key *k = key_named(found.v[i]);
		ck_assert_msg(k != NULL && k->scope == RELOAD_LIVE,
			      "man page: SIGHUP lists %s, which the table does not reload live",
			      found.v[i]);
	}
	ck_assert_uint_eq(found.n, n);
	names_free(&found);
	free(text);
	free(path);
}
END_TEST

/* Collect the dotted paths of mapping keys, stopping at table keys. */
static void
collect_paths(yaml_document_t *doc, yaml_node_t *map, const char *prefix, struct names *out)
{
	ck_assert_int_eq(map->type, YAML_MAPPING_NODE);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *kn = yaml_document_get_node(doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(doc, p->value);
		ck_assert_int_eq(kn->type, YAML_SCALAR_NODE);
		char *path = prefix ? xasprintf("%s.%s", prefix, (char *)kn->data.scalar.value)
				    : xstrdup((char *)kn->data.scalar.value);
		if (key_named(path) == NULL && vn->type == YAML_MAPPING_NODE)
			collect_paths(doc, vn, path, out);
		else
			names_add(out, path);
		free(path);
	}
}

START_TEST(sample_sets_every_key_and_loads)
{
	char *path = xasprintf("%s/etc/codeexecd.yaml", srcdir);
	char *text = slurp(path);
	yaml_parser_t parser;
	yaml_document_t doc;
	struct names found = {NULL, 0};
	struct config c;
	char err[512];

	ck_assert(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	ck_assert_msg(yaml_parser_load(&parser, &doc), "%s: %s", path,
		      parser.problem ? parser.problem : "?");
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	ck_assert_ptr_nonnull(root);
	collect_paths(&doc, root, NULL, &found);
	assert_same_keys(&found, path);
	names_free(&found);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);

	setenv("HOME", "/home/tester", 1);
	ck_assert_msg(config_load(path, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c.name, "python");
	ck_assert_str_eq(c.listen_host, "127.0.0.1");
	ck_assert_int_eq(c.listen_port, 8000);
	config_free(&c);
	free(text);
	free(path);
}
END_TEST

int
main(void)
{
	find_srcdir();

	Suite *s = suite_create("config");
	TCase *tc = tcase_create("load");
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, minimal_file_takes_defaults);
	tcase_add_test(tc, full_file);
	tcase_add_test(tc, uv_and_conda_types);
	tcase_add_test(tc, tilde_and_name_expansion);
	tcase_add_test(tc, missing_file);
	tcase_add_loop_test(tc, errors, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_loop_test(tc, inline_texts, 0,
			    (int)(sizeof(inline_cases) / sizeof(inline_cases[0])));
	tcase_add_test(tc, block_scalar);
	tcase_add_test(tc, sidecar_fields);
	tcase_add_test(tc, entra_preset);
	suite_add_tcase(s, tc);

	TCase *td = tcase_create("drift");
	tcase_add_test(td, table_is_sound);
	tcase_add_test(td, man_page_documents_every_key);
	tcase_add_test(td, man_page_lists_the_live_keys);
	tcase_add_test(td, swap_moves_only_live_keys);
	tcase_add_test(td, sample_sets_every_key_and_loads);
	suite_add_tcase(s, td);

	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
