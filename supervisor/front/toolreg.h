/*
 * toolreg.h - the tool registry: the configured tool definitions
 * (common/tooldef.h) and a BM25 index over them, for search_{name}_tools.
 *
 * Ranking is Okapi BM25 (k1 = 1.2, b = 0.75) over one bag of words per
 * tool, in which each field's words count with the field's weight:
 *
 *	name				3.0
 *	parameter names			1.5
 *	description			1.0
 *	category			0.5
 *	parameter descriptions		0.5
 *	return description		0.5
 *
 * (a prior, that a word of the name says more than one of a description;
 * bench/README.md compares it with other weights on the labelled set of
 * tests/unit/data/tools, where all come within two queries of each other).
 * Words are what toolreg_tokens makes of the text (toolreg_words.h: each
 * word whole and by its camelCase, snake_case and letter/digit parts, stop
 * words dropped), each indexed twice: as itself and, as a separate term,
 * by its English Snowball stem. Each distinct word of the query is one
 * BM25 term: its frequency in a tool is the sum of the frequencies of the
 * index terms it meets, each times the weight of that kind of match, and
 * its IDF is that of the tools it meets in any way, so that a word
 * matched in several ways is still saturated once. A query word meets:
 *  - its word's term, at 1;
 *  - its stem's term, at W_STEM (0.5): "projected" finds "projection",
 *    but a tool with "projected" itself ranks first (it has both);
 *  - the stem terms equal to the word itself, at W_STEM: "embed", which
 *    Snowball stems "emb", meets "embeddings" (stem "embed");
 *  - derived words: an index word with an English prefix (re-, un-, de-,
 *    pre-) before 4 or more letters is also a term of the stem without it,
 *    which a query word's stem meets at W_DERIV (0.3), and a query word
 *    with such a prefix meets the index's stem of the rest at W_DERIV:
 *    "projection" and "Reproject" meet;
 *  - compounds: a query word of 4 letters or more that is no word of the
 *    index meets, at W_PREFIX (0.3), the index words it begins and those
 *    of 4 letters or more that begin it (16 at most): "elastic" meets
 *    "elasticsearch", "onnxruntime" meets "onnx".
 * Coverage then reorders: a tool's score is multiplied by 1 - W_COVER +
 * W_COVER * the share of the query's words it matches, each word counted
 * by its IDF (W_COVER 0.5), so that matching most of the query, and its
 * rarer words, beats matching one word often.
 */
#ifndef SUPERVISOR_TOOLREG_H
#define SUPERVISOR_TOOLREG_H

#include <stddef.h>

#include "toolreg_words.h"

struct tool_def;
struct tooldefs;
struct toolreg;

/* Most results one search returns. */
#define TOOLREG_TOP_MAX 50

struct toolreg_hit {
	size_t tool;	/* index in the definitions */
	double score;
};

/*
 * An index of the definitions `defs` holds (their array is borrowed: it
 * must outlive the index and not change; `defs` itself may be moved, as
 * reload.c does). Caller owns (toolreg_free).
 */
struct toolreg *toolreg_build(const struct tooldefs *defs);
void toolreg_free(struct toolreg *r);
size_t toolreg_size(const struct toolreg *r);
/* Definition `i` (borrowed). */
const struct tool_def *toolreg_tool(const struct toolreg *r, size_t i);
/*
 * The best `top` (at most TOOLREG_TOP_MAX) tools for `query`, best first,
 * into out; only tools of `category` (case ignored) when it is not NULL,
 * and only tools sharing a word with the query. Returns how many.
 */
size_t toolreg_search(const struct toolreg *r, const char *query, const char *category,
		      struct toolreg_hit *out, size_t top);

/* The fields toolreg_explain reports, as search_{name}_tools names them. */
enum toolreg_field {
	TOOLREG_NAME,
	TOOLREG_DESCRIPTION,
	TOOLREG_CATEGORY,
	TOOLREG_PARAMETERS, /* their names and descriptions */
	TOOLREG_RETURNS,
	TOOLREG_FIELDS
};
extern const char *const toolreg_field_names[TOOLREG_FIELDS];

/* Most words toolreg_explain reports per field. */
#define TOOLREG_MATCH_WORDS 8

/* The tool's words that a query matched, per field, each once. */
struct toolreg_match {
	char word[TOOLREG_FIELDS][TOOLREG_MATCH_WORDS][TOOLREG_WORD_MAX + 1];
	size_t n[TOOLREG_FIELDS];
};

/*
 * Which words of tool `i` (toolreg_tokens words) `query` matched, whole or
 * by stem, field by field, into m: why toolreg_search found it.
 */
void toolreg_explain(const struct toolreg *r, size_t i, const char *query,
		     struct toolreg_match *m);

/*
 * A remote backend that answers searches instead of BM25 (toolreg_azure.h),
 * owned by `r` from now on and freed with backend_free; NULL: none.
 */
void toolreg_set_backend(struct toolreg *r, void *backend, void (*backend_free)(void *));
void *toolreg_backend(const struct toolreg *r);
/* The index of the tool called `name`, or -1. */
long toolreg_find(const struct toolreg *r, const char *name);

/*
 * The registry in service (NULL: none configured). Read and replaced under
 * pool_lock (tool calls hold it; reload.c replaces it holding it).
 */
struct toolreg *toolreg_live(void);
/* Put `r` (consumed) in service; returns the one it replaces (caller owns). */
struct toolreg *toolreg_replace(struct toolreg *r);
/*
 * How many times toolreg_replace ran: an index that borrows the live
 * registry's definitions (search_index.h) is stale once it changed.
 */
unsigned long toolreg_generation(void);

#endif
