/*
 * tool_search_tools.c - search_{name}_tools(query, top, category): the
 * registered domain tools that best match a query (toolreg.h), each with
 * what an agent needs to call it from execute_{name}_code: its signature,
 * description, parameters, return, an example and its import line.
 * Code mode's upstream tools (upstream.h) the caller may call are ranked
 * with them, in one BM25 index over both (search_index.h: the same
 * ranking, IDF included, orders them), each marked kind "upstream".
 * Listed when the registry is not empty or there are upstreams.
 */
#include "autoconf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "log.h"
#include "pool.h"
#include "tooldef.h"
#include "toolreg.h"
#include "toolreg_azure.h"
#include "session.h"
#include "tools.h"
#include "search_index.h"
#include "upstream_tooldef.h"
#include "xmalloc.h"

#define TOP_DEFAULT 5
#define QUERY_MAX 1000

static int
search_listed(const struct config *cfg)
{
	return cfg->tools.n > 0 || cfg->upstreams.n > 0;
}

static void
search_describe(const struct config *cfg, struct json_object *tool)
{
	static const char input_schema[] =
		"{\"type\":\"object\",\"properties\":{"
		"\"query\":{\"type\":\"string\",\"description\":"
		"\"What the tool should do, in a few words (e.g. 'molecular weight from "
		"SMILES').\"},"
		"\"top\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50,\"default\":5,"
		"\"description\":\"How many tools to return, best first.\"},"
		"\"category\":{\"type\":\"string\",\"description\":"
		"\"Only tools of this category.\"}},"
		"\"required\":[\"query\"]}";
	static const char output_schema[] =
		"{\"type\":\"object\",\"properties\":{"
		"\"query\":{\"type\":\"string\"},"
		"\"total_tools\":{\"type\":\"integer\"},"
		"\"backend\":{\"type\":\"string\",\"enum\":[\"bm25\",\"azure_ai_search\"]},"
		"\"backend_error\":{\"type\":\"string\"},"
		"\"upstream_errors\":{\"type\":\"object\",\"additionalProperties\":"
		"{\"type\":\"string\"}},"
		"\"results\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
		"\"name\":{\"type\":\"string\"},\"module\":{\"type\":\"string\"},"
		"\"kind\":{\"type\":\"string\",\"enum\":[\"domain\",\"upstream\"]},"
		"\"upstream\":{\"type\":\"string\"},"
		"\"import\":{\"type\":\"string\"},\"signature\":{\"type\":\"string\"},"
		"\"description\":{\"type\":\"string\"},\"category\":{\"type\":\"string\"},"
		"\"parameters\":{\"type\":\"array\"},\"returns\":{\"type\":\"object\"},"
		"\"examples\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
		"\"score\":{\"type\":\"number\"},"
		"\"matched\":{\"type\":\"object\",\"additionalProperties\":"
		"{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}},"
		"\"required\":[\"name\",\"module\",\"import\",\"signature\"]}}},"
		"\"required\":[\"query\",\"results\",\"total_tools\"]}";
	char *text = xasprintf(
		"Search the %zu domain tools registered in this server's Python environment. "
		"Returns the best matches with their signature, parameters, return value, an "
		"example and the line that imports them. Call a tool found here from "
		"execute_%s_code: `from MODULE import NAME`, then `NAME(...)`.%s",
		cfg->tools.n, cfg->name,
		cfg->upstreams.n == 0 ? ""
				      : " The tools of the upstream MCP servers you may call (code "
					"mode) are searched with them, marked kind \"upstream\": "
					"`from codeexec_upstreams import UPSTREAM`, then "
					"`UPSTREAM.TOOL(arg=...)`.");
	json_object_object_add(tool, "description", json_object_new_string(text));
	free(text);
	json_object_object_add(tool, "inputSchema", tool_schema(input_schema));
	json_object_object_add(tool, "outputSchema", tool_schema(output_schema));
}

/*
 * The line that imports d: a domain tool itself, an upstream tool's module
 * (called as UPSTREAM.TOOL). Caller owns.
 */
static char *
import_line(const struct tool_def *d)
{
	if (upstream_tooldef_is(d))
		return xasprintf("from %s import %s", UPSTREAM_PACKAGE, upstream_tooldef_upstream(d));
	return xasprintf("from %s import %s", d->module, d->name);
}

/*
 * One result as structuredContent gives it, with the words it matched when
 * m is not NULL (BM25 answered). Caller owns.
 */
static struct json_object *
hit_json(const struct tool_def *d, double score, const struct toolreg_match *m)
{
	struct json_object *o = json_object_new_object(), *params = json_object_new_array();
	struct json_object *ret = json_object_new_object(), *ex = json_object_new_array();
	int up = upstream_tooldef_is(d);
	char *sig = up ? upstream_tooldef_signature(d) : tooldef_signature(d);
	char *imp = import_line(d);

	json_object_object_add(o, "name", json_object_new_string(d->name));
	json_object_object_add(o, "module", json_object_new_string(d->module));
	json_object_object_add(o, "kind", json_object_new_string(up ? "upstream" : "domain"));
	if (up)
		json_object_object_add(o, "upstream",
				       json_object_new_string(upstream_tooldef_upstream(d)));
	json_object_object_add(o, "import", json_object_new_string(imp));
	json_object_object_add(o, "signature", json_object_new_string(sig));
	json_object_object_add(o, "description", json_object_new_string(d->description));
	json_object_object_add(o, "category", json_object_new_string(d->category));
	for (size_t i = 0; i < d->n_params; i++) {
		const struct tool_param *p = &d->params[i];
		struct json_object *po = json_object_new_object();
		json_object_object_add(po, "name", json_object_new_string(p->name));
		json_object_object_add(po, "type", json_object_new_string(p->type));
		json_object_object_add(po, "description", json_object_new_string(p->description));
		json_object_object_add(po, "required", json_object_new_boolean(p->def == NULL));
		if (p->def)
			json_object_object_add(po, "default", json_object_new_string(p->def));
		json_object_array_add(params, po);
	}
	json_object_object_add(o, "parameters", params);
	json_object_object_add(ret, "type", json_object_new_string(d->return_type));
	json_object_object_add(ret, "description",
			       json_object_new_string(d->return_description));
	json_object_object_add(o, "returns", ret);
	for (size_t i = 0; i < d->n_examples; i++)
		json_object_array_add(ex, json_object_new_string(d->examples[i]));
	json_object_object_add(o, "examples", ex);
	json_object_object_add(o, "score", json_object_new_double(round(score * 1000) / 1000));
	if (m != NULL) {
		struct json_object *mo = json_object_new_object();
		for (int f = 0; f < TOOLREG_FIELDS; f++) {
			if (m->n[f] == 0)
				continue;
			struct json_object *a = json_object_new_array();
			for (size_t i = 0; i < m->n[f]; i++)
				json_object_array_add(a, json_object_new_string(m->word[f][i]));
			json_object_object_add(mo, toolreg_field_names[f], a);
		}
		json_object_object_add(o, "matched", mo);
	}
	free(sig);
	free(imp);
	return o;
}

/* Append `text` to b with every line indented by `indent`. */
static void
add_indented(struct buf *b, const char *text, const char *indent)
{
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		buf_printf(b, "%s%.*s\n", indent, (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* One result as the text an agent reads (m as for hit_json). */
static void
hit_text(struct buf *b, size_t rank, const struct tool_def *d, const struct toolreg_match *m)
{
	int up = upstream_tooldef_is(d);
	char *sig = up ? upstream_tooldef_signature(d) : tooldef_signature(d);
	char *imp = import_line(d);

	buf_printf(b, "%zu. %s\n", rank, sig);
	buf_printf(b, "   %s\n", imp);
	if (up)
		buf_printf(b, "   Upstream tool: of MCP server %s, called through the daemon\n",
			   upstream_tooldef_upstream(d));
	free(imp);
	if (m != NULL) {
		const char *sep = "   Matched: ";
		for (int f = 0; f < TOOLREG_FIELDS; f++) {
			if (m->n[f] == 0)
				continue;
			buf_printf(b, "%s%s (", sep, toolreg_field_names[f]);
			for (size_t i = 0; i < m->n[f]; i++)
				buf_printf(b, "%s%s", i ? ", " : "", m->word[f][i]);
			buf_adds(b, ")");
			sep = "; ";
		}
		if (sep[0] == ';')
			buf_adds(b, "\n");
	}
	if (d->category[0] && !up)
		buf_printf(b, "   Category: %s\n", d->category);
	add_indented(b, d->description, "   ");
	if (d->n_params > 0)
		buf_adds(b, "   Parameters:\n");
	for (size_t i = 0; i < d->n_params; i++) {
		const struct tool_param *p = &d->params[i];
		buf_printf(b, "     %s (%s%s%s): %s\n", p->name, p->type, p->def ? ", default " : "",
			   p->def ? p->def : "", p->description);
	}
	buf_printf(b, "   Returns (%s)%s%s\n", d->return_type, d->return_description[0] ? ": " : "",
		   d->return_description);
	if (d->n_examples > 0) {
		buf_adds(b, "   Example:\n");
		add_indented(b, d->examples[0], "     ");
	}
	buf_adds(b, "\n");
	free(sig);
}

/* The `top` argument: TOP_DEFAULT when absent; -1 after tool_bad_params. */
static int
arg_top(struct tool_call *tc)
{
	struct json_object *v;

	if (!json_object_object_get_ex(tc->args, "top", &v))
		return TOP_DEFAULT;
	if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);
		if (d == floor(d) && d >= 1 && d <= TOOLREG_TOP_MAX)
			return (int)d;
	} else if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);
		if (i >= 1 && i <= TOOLREG_TOP_MAX)
			return (int)i;
	}
	tool_bad_params(tc, "argument 'top' must be an integer from 1 to 50");
	return -1;
}

/*
 * Ask Azure AI Search (the registry's backend), without pool_lock while it
 * answers; the hits it names that the registry (maybe reloaded meanwhile)
 * holds into hits. Returns how many, or -1 with the reason in why.
 */
static long
remote_search(const struct azure_search *backend, const char *query, const char *category,
	      int top, struct toolreg_hit *hits, char *why, size_t why_len)
{
	struct azure_search *a = azure_search_dup(backend);
	char **names;
	double *scores;
	size_t n, kept = 0;

	pool_unlock();
	int rc = azure_search_run(a, query, category, top, &names, &scores, &n, why, why_len);
	pool_lock();
	azure_search_free(a);
	if (rc < 0)
		return -1;
	struct toolreg *reg = toolreg_live();
	for (size_t i = 0; i < n && kept < (size_t)top; i++) {
		long t = toolreg_find(reg, names[i]);
		if (t >= 0)
			hits[kept++] = (struct toolreg_hit){(size_t)t, scores[i]};
	}
	strv_free(names);
	free(scores);
	return (long)kept;
}

static struct json_object *
search_call(struct tool_call *tc)
{
	const struct toolreg *reg = toolreg_live();
	struct toolreg_hit hits[TOOLREG_TOP_MAX];
	char remote_error[512] = "";
	const char *query = tool_arg_string(tc, "query");
	const char *category = NULL;
	struct buf text;
	int top;

	if (query == NULL || query[0] == '\0')
		return tool_bad_params(tc, "argument 'query' must be a non-empty string");
	if (strlen(query) > QUERY_MAX)
		return tool_bad_params(tc, "argument 'query' is longer than 1000 bytes");
	if (json_object_object_get_ex(tc->args, "category", NULL) &&
	    (category = tool_arg_string(tc, "category")) == NULL)
		return tool_bad_params(tc, "argument 'category' must be a string");
	if ((top = arg_top(tc)) < 0)
		return NULL;
	char words[1][TOOLREG_WORD_MAX + 1];
	if (toolreg_tokens(query, words, 1) == 0)
		return tool_bad_params(tc, "argument 'query' has no word to search for (words of "
					   "one letter and stop words such as 'the', 'of', 'to' "
					   "are ignored)");
	long got = -1;
	const struct azure_search *backend = toolreg_backend(reg);
	if (backend != NULL) {
		got = remote_search(backend, query, category, top, hits, remote_error,
				    sizeof(remote_error));
		if (got < 0)
			log_warnx("search_%s_tools: %s; the local BM25 index answers",
				  tc->cfg->name, remote_error);
		reg = toolreg_live(); /* a reload may have come while it was unlocked */
	}
	/* Azure AI Search indexes the domain tools only: its answer is theirs. */
	struct json_object *up_errors = NULL;
	if (got < 0)
		reg = search_index(tc->session ? tc->session->identity : "anonymous",
				   &up_errors);
	size_t n = got >= 0 ? (size_t)got
		   : reg    ? toolreg_search(reg, query, category, hits, (size_t)top)
			    : 0;

	struct json_object *o = json_object_new_object(), *results = json_object_new_array();
	json_object_object_add(o, "backend", json_object_new_string(got >= 0 ? "azure_ai_search"
										 : "bm25"));
	if (remote_error[0] != '\0')
		json_object_object_add(o, "backend_error", json_object_new_string(remote_error));
	if (up_errors != NULL)
		json_object_object_add(o, "upstream_errors", up_errors);
	json_object_object_add(o, "query", json_object_new_string(query));
	json_object_object_add(o, "total_tools", json_object_new_int64((int64_t)toolreg_size(reg)));
	buf_init(&text);
	if (remote_error[0] != '\0')
		buf_printf(&text, "(Azure AI Search failed (%s); these are the local BM25 results.)\n\n",
			   remote_error);
	if (up_errors != NULL) {
		json_object_object_foreach(up_errors, uname, uwhy)
			buf_printf(&text, "(The tools of upstream %s are not searched: %s.)\n\n", uname,
				   json_object_get_string(uwhy));
	}
	struct toolreg_match *m = got >= 0 ? NULL : xcalloc(1, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		const struct tool_def *d = toolreg_tool(reg, hits[i].tool);
		if (m != NULL)
			toolreg_explain(reg, hits[i].tool, query, m);
		json_object_array_add(results, hit_json(d, hits[i].score, m));
		hit_text(&text, i + 1, d, m);
	}
	free(m);
	json_object_object_add(o, "results", results);
	if (n == 0)
		buf_printf(&text, "No tool matches \"%s\"%s%s%s. Try other words%s.\n", query,
			   category ? " in category \"" : "", category ? category : "",
			   category ? "\"" : "", category ? " or no category" : "");
	else
		buf_printf(&text, "Call these from execute_%s_code after the import line shown.\n",
			   tc->cfg->name);
	buf_add(&text, "", 1);
	struct json_object *r = tool_result(o, text.data, 0);
	buf_free(&text);
	return r;
}

const struct tool tool_search_tools = {
	.name_format = "search_{name}_tools",
	.describe = search_describe,
	.listed = search_listed,
	.call = search_call,
};
