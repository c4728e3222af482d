/* toolreg_azure.c - see toolreg_azure.h. */
#include "autoconf.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "curl_req.h"
#include "config.h"
#include "err.h"
#include "secret_file.h"
#include "toolreg.h"
#include "toolreg_azure.h"
#include "xmalloc.h"

/* Largest answer read; a top-50 answer of names is a few kilobytes. */
#define ANSWER_MAX (1024 * 1024)
#define KEY_MAX 4096
#define CONNECT_TIMEOUT_S 5

char *
azure_search_url(const char *endpoint, const char *index, const char *version)
{
	size_t len = strlen(endpoint);

	while (len > 0 && endpoint[len - 1] == '/')
		len--;
	return xasprintf("%.*s/indexes/%s/docs/search?api-version=%s", (int)len, endpoint, index,
			 version);
}

char *
azure_search_body(const char *query, const char *category, int top)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "search", json_object_new_string(query));
	json_object_object_add(o, "top", json_object_new_int(top));
	json_object_object_add(o, "select", json_object_new_string("name"));
	json_object_object_add(o, "searchMode", json_object_new_string("any"));
	json_object_object_add(o, "queryType", json_object_new_string("simple"));
	if (category != NULL) {
		/* OData: a ' inside a string literal is written twice. */
		struct buf f;
		buf_init(&f);
		buf_adds(&f, "category eq '");
		for (const char *p = category; *p; p++) {
			if (*p == '\'')
				buf_adds(&f, "''");
			else
				buf_add(&f, p, 1);
		}
		buf_adds(&f, "'");
		buf_add(&f, "", 1);
		json_object_object_add(o, "filter", json_object_new_string(f.data));
		buf_free(&f);
	}
	char *s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

int
azure_search_parse(const char *body, char ***names, double **scores, size_t *n, char *why,
		   size_t why_len)
{
	struct json_object *root = json_tokener_parse(body), *value;

	*names = NULL;
	*scores = NULL;
	*n = 0;
	if (root == NULL || !json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "value", &value) ||
	    !json_object_is_type(value, json_type_array)) {
		json_object_put(root);
		return err_set(why, why_len, "the answer is not an object with a \"value\" array");
	}
	size_t len = json_object_array_length(value);
	*names = xcalloc(len + 1, sizeof(**names));
	*scores = xcalloc(len + 1, sizeof(**scores));
	for (size_t i = 0; i < len; i++) {
		struct json_object *hit = json_object_array_get_idx(value, i), *name, *score;
		if (!json_object_object_get_ex(hit, "name", &name) ||
		    !json_object_is_type(name, json_type_string))
			continue; /* a document without a name names no tool */
		(*names)[*n] = xstrdup(json_object_get_string(name));
		(*scores)[*n] = json_object_object_get_ex(hit, "@search.score", &score)
					? json_object_get_double(score)
					: 0;
		(*n)++;
	}
	json_object_put(root);
	return 0;
}

/* The service's own message in an error answer, or the answer's start. */
static void
service_message(const char *body, char *out, size_t len)
{
	struct json_object *root = json_tokener_parse(body), *err, *msg;

	if (root && json_object_object_get_ex(root, "error", &err) &&
	    json_object_object_get_ex(err, "message", &msg))
		snprintf(out, len, "%s", json_object_get_string(msg));
	else
		snprintf(out, len, "%.200s", body);
	json_object_put(root);
}

int
azure_search_run(const struct azure_search *a, const char *query, const char *category,
		 int top, char ***names, double **scores, size_t *n, char *why, size_t why_len)
{
	char err[ERR_LEN], msg[512];
	char *body = azure_search_body(query, category, top);
	char *key = xasprintf("api-key: %s", a->api_key);
	struct curl_slist *h = NULL;
	struct buf answer;
	struct curl_res res;
	long status;
	int rc = -1;

	*names = NULL;
	*scores = NULL;
	*n = 0;
	buf_init(&answer);
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json");
	h = curl_slist_append(h, key);
	struct curl_req req = {
		.url = a->url,
		.protocols = "https,http", /* http: loopback only (config.c) */
		.connect_timeout_s = CONNECT_TIMEOUT_S,
		.timeout_s = a->timeout_s,
		.no_proxy = 1,
		.headers = h,
		.body = body,
		.body_len = strlen(body),
		.max_answer = ANSWER_MAX,
	};
	int cc = curl_req_perform(&req, &answer, &res, err, sizeof(err));
	status = res.status;
	if (cc == -1) {
		err_set(why, why_len, "azure_ai_search: %s", err);
	} else if (status != 200) {
		service_message(answer.data, msg, sizeof(msg));
		err_set(why, why_len, "azure_ai_search: HTTP %ld: %s", status, msg);
	} else if (azure_search_parse(answer.data, names, scores, n, msg, sizeof(msg)) < 0) {
		err_set(why, why_len, "azure_ai_search: %s", msg);
	} else {
		rc = 0;
	}
	curl_slist_free_all(h);
	buf_free(&answer);
	explicit_bzero(key, strlen(key));
	free(key);
	free(body);
	return rc;
}

struct azure_search *
azure_search_dup(const struct azure_search *a)
{
	struct azure_search *d = xcalloc(1, sizeof(*d));

	d->url = xstrdup(a->url);
	d->api_key = xstrdup(a->api_key);
	d->timeout_s = a->timeout_s;
	return d;
}

void
azure_search_free(struct azure_search *a)
{
	if (a == NULL)
		return;
	free(a->url);
	if (a->api_key) {
		explicit_bzero(a->api_key, strlen(a->api_key));
		free(a->api_key);
	}
	free(a);
}

static void
backend_free(void *p)
{
	azure_search_free(p);
}

/* The key of `path`: its first line (the parent checked the file: secret_file.h). */
static char *
read_key(const char *path, char *why, size_t why_len)
{
	const char *k = "azure_ai_search.api_key_file";
	size_t n;
	char *key = secret_file_read(k, path, &n, why, why_len);

	if (key == NULL)
		return NULL;
	size_t len = strcspn(key, "\r\n");
	int bad = len == 0 || len > KEY_MAX ||
		  strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			      "0123456789-_=+/.") != len;
	explicit_bzero(key + len, n - len);
	key[len] = '\0';
	if (bad) {
		explicit_bzero(key, len);
		free(key);
		err_set(why, why_len, "%s %s: the first line is not a key (letters, digits and "
			"-_=+/.)", k, path);
		return NULL;
	}
	return key;
}

int
toolreg_azure_check(const struct config *cfg, char *why, size_t why_len)
{
	if (cfg->tool_search_backend != TOOL_BACKEND_AZURE)
		return 0;
	char *key = read_key(cfg->azure_api_key_file, why, why_len);
	if (key == NULL)
		return -1;
	explicit_bzero(key, strlen(key));
	free(key);
	return 0;
}

struct toolreg *
toolreg_from_config(const struct config *cfg, char *why, size_t why_len)
{
	struct azure_search *a;

	if (cfg->tool_search_backend != TOOL_BACKEND_AZURE)
		return toolreg_build(&cfg->tools);
	char *key = read_key(cfg->azure_api_key_file, why, why_len);
	if (key == NULL)
		return NULL;
	/* Reference-counted and thread-safe in libcurl >= 7.84; never undone. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		explicit_bzero(key, strlen(key));
		free(key);
		err_set(why, why_len, "azure_ai_search: cannot initialize libcurl");
		return NULL;
	}
	a = xcalloc(1, sizeof(*a));
	a->url = azure_search_url(cfg->azure_endpoint, cfg->azure_index, cfg->azure_api_version);
	a->api_key = key;
	a->timeout_s = cfg->azure_timeout_s;
	struct toolreg *r = toolreg_build(&cfg->tools);
	toolreg_set_backend(r, a, backend_free);
	return r;
}
