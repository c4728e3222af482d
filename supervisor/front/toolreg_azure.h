/*
 * toolreg_azure.h - tool_search_backend azure_ai_search: search_{name}_tools
 * asks an Azure AI Search index instead of the local BM25 index.
 *
 * The request is the REST API's "Search Documents (POST)":
 *
 *	POST {endpoint}/indexes/{index}/docs/search?api-version={version}
 *	api-key: KEY
 *	Content-Type: application/json
 *
 *	{"search": QUERY, "top": N, "select": "name", "searchMode": "any",
 *	 "queryType": "simple", "filter": "category eq 'CATEGORY'"}
 *
 * ("filter" only with a category), and the answer's "value" array holds
 * one object per hit with "@search.score" and the selected "name". The
 * index must hold one document per tool whose "name" field is the tool's
 * name (and "category" a filterable field); codeexecd does not fill it.
 * Hits whose name the registry does not hold are dropped. When the
 * service fails or times out, the local BM25 answers and the result says
 * why. Written from Microsoft's documentation and tested against a
 * loopback server only: never tried against the real service.
 */
#ifndef SUPERVISOR_TOOLREG_AZURE_H
#define SUPERVISOR_TOOLREG_AZURE_H

#include <stddef.h>

struct config;
struct toolreg;

struct azure_search {
	char *url;	/* the whole POST URL */
	char *api_key;
	int timeout_s;
};

/*
 * Before the fork and for codeexecd -n: with tool_search_backend
 * azure_ai_search, the key in azure_ai_search.api_key_file reads as
 * toolreg_from_config reads it. 0, or -1 with why.
 */
int toolreg_azure_check(const struct config *cfg, char *why, size_t why_len);
/*
 * The registry `cfg` asks for: a BM25 index of cfg->tools (borrowed, as
 * toolreg_build), with an azure_search (reading azure_ai_search's key
 * file, refused when others than its owner may read it) when
 * tool_search_backend says so. Caller owns; NULL with the reason in why.
 */
struct toolreg *toolreg_from_config(const struct config *cfg, char *why, size_t why_len);

/* The POST URL of a search of `index`. Caller owns. */
char *azure_search_url(const char *endpoint, const char *index, const char *version);
/* The JSON request body; category NULL: no filter. Caller owns. */
char *azure_search_body(const char *query, const char *category, int top);
/*
 * Parse an answer: the names of its hits, best first, with their scores,
 * into *names (NULL-terminated, caller frees with strv_free) and *scores
 * (caller frees), *n of them. 0, or -1 with the reason in why.
 */
int azure_search_parse(const char *body, char ***names, double **scores, size_t *n, char *why,
		       size_t why_len);
/*
 * Run one search with `a` (blocking, up to its timeout: call it with no
 * lock held). As azure_search_parse; why names the HTTP status and the
 * service's message on failure.
 */
int azure_search_run(const struct azure_search *a, const char *query, const char *category,
		     int top, char ***names, double **scores, size_t *n, char *why,
		     size_t why_len);
/* A copy of `a` (caller owns) / free one. */
struct azure_search *azure_search_dup(const struct azure_search *a);
void azure_search_free(struct azure_search *a);

#endif
