/* toolreg.c - see toolreg.h. */
#include "autoconf.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tooldef.h"
#include "toolreg.h"
#include "toolreg_words.h"
#include "xmalloc.h"

#define BM25_K1 1.2
#define BM25_B 0.75

/* Field weights (toolreg.h); -D overrides them for bench/README.md's comparison. */
#ifndef W_NAME
#define W_NAME 3.0
#endif
#ifndef W_PARAM_NAME
#define W_PARAM_NAME 1.5
#endif
#ifndef W_DESCRIPTION
#define W_DESCRIPTION 1.0
#endif
#ifndef W_CATEGORY
#define W_CATEGORY 0.5
#endif
#ifndef W_PARAM_DESCRIPTION
#define W_PARAM_DESCRIPTION 0.5
#endif
#ifndef W_RETURN
#define W_RETURN 0.5
#endif

/* Words of a query, at most (the rest is ignored). */
#define QUERY_WORDS 64
/* Words of one field, at most (the rest of a long description is ignored). */
#define FIELD_WORDS 512

/*
 * A stem match counts this much of a whole-word match: a query word adds
 * the score of its word and of its stem, each a term of the index, so a
 * tool with the word itself ranks above one with another word of its stem.
 */
#ifndef W_STEM
#define W_STEM 0.5
#endif

/* Stem terms are the stem after this byte, apart from the words. */
#define STEM_MARK '\x01'

struct posting {
	uint32_t doc;
	float tf; /* weighted */
};

struct term {
	char word[TOOLREG_WORD_MAX + 2]; /* a word, or STEM_MARK and a stem */
	struct posting *p;
	size_t n;
};

struct toolreg {
	struct tooldefs defs; /* a shallow copy: the array is borrowed */
	struct term *terms; /* open addressing, `cap` slots, power of two */
	size_t cap, nterms;
	double *len;	    /* weighted length of each tool */
	double avglen;
	void *backend;	    /* toolreg_set_backend's */
	void (*backend_free)(void *);
};

static struct toolreg *live;

/* FNV-1a. */
static uint64_t
hash_word(const char *w)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *w; w++)
		h = (h ^ (unsigned char)*w) * 1099511628211ULL;
	return h;
}

/* The slot of `w`: its term, or the empty slot where it would go. */
static struct term *
slot(const struct toolreg *r, const char *w)
{
	size_t i = (size_t)hash_word(w) & (r->cap - 1);

	while (r->terms[i].word[0] != '\0' && strcmp(r->terms[i].word, w) != 0)
		i = (i + 1) & (r->cap - 1);
	return &r->terms[i];
}

static void
grow(struct toolreg *r)
{
	struct term *old = r->terms;
	size_t oldcap = r->cap;

	r->cap = oldcap ? oldcap * 2 : 1024;
	r->terms = xcalloc(r->cap, sizeof(*r->terms));
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].word[0] != '\0')
			*slot(r, old[i].word) = old[i];
	free(old);
}

/* Count term `w` of tool `doc` with `weight`. */
static void
add_term(struct toolreg *r, uint32_t doc, const char *w, double weight)
{
	if ((r->nterms + 1) * 2 > r->cap)
		grow(r);
	struct term *t = slot(r, w);
	if (t->word[0] == '\0') {
		memcpy(t->word, w, sizeof(t->word));
		r->nterms++;
	}
	if (t->n == 0 || t->p[t->n - 1].doc != doc) {
		t->p = xreallocarray(t->p, t->n + 1, sizeof(*t->p));
		t->p[t->n++] = (struct posting){doc, 0};
	}
	t->p[t->n - 1].tf += (float)weight;
}

/* The stem term of word `w` into out. */
static void
stem_term(const char *w, char out[TOOLREG_WORD_MAX + 2])
{
	out[0] = STEM_MARK;
	toolreg_stem(w, out + 1);
}

/* Count word `w` of tool `doc` with `weight`: the word and its stem. */
static void
add_word(struct toolreg *r, uint32_t doc, const char *w, double weight)
{
	char st[TOOLREG_WORD_MAX + 2];

	add_term(r, doc, w, weight);
	stem_term(w, st);
	add_term(r, doc, st, weight);
	r->len[doc] += weight;
}

static void
add_field(struct toolreg *r, uint32_t doc, const char *text, double weight,
	  char (*words)[TOOLREG_WORD_MAX + 1])
{
	size_t n = toolreg_tokens(text, words, FIELD_WORDS);
	for (size_t i = 0; i < n; i++)
		add_word(r, doc, words[i], weight);
}

struct toolreg *
toolreg_build(const struct tooldefs *defs)
{
	struct toolreg *r = xcalloc(1, sizeof(*r));
	char(*words)[TOOLREG_WORD_MAX + 1] = xcalloc(FIELD_WORDS, sizeof(*words));
	double total = 0;

	r->defs = *defs;
	r->len = xcalloc(defs->n + 1, sizeof(*r->len));
	grow(r);
	for (uint32_t i = 0; i < defs->n; i++) {
		const struct tool_def *d = &defs->v[i];
		add_field(r, i, d->name, W_NAME, words);
		add_field(r, i, d->description, W_DESCRIPTION, words);
		add_field(r, i, d->category, W_CATEGORY, words);
		add_field(r, i, d->return_description, W_RETURN, words);
		for (size_t k = 0; k < d->n_params; k++) {
			add_field(r, i, d->params[k].name, W_PARAM_NAME, words);
			add_field(r, i, d->params[k].description, W_PARAM_DESCRIPTION, words);
		}
		total += r->len[i];
	}
	r->avglen = defs->n ? total / (double)defs->n : 1;
	if (r->avglen <= 0)
		r->avglen = 1;
	free(words);
	return r;
}

void
toolreg_free(struct toolreg *r)
{
	if (r == NULL)
		return;
	if (r->backend_free)
		r->backend_free(r->backend);
	for (size_t i = 0; i < r->cap; i++)
		free(r->terms[i].p);
	free(r->terms);
	free(r->len);
	free(r);
}

size_t
toolreg_size(const struct toolreg *r)
{
	return r ? r->defs.n : 0;
}

const struct tool_def *
toolreg_tool(const struct toolreg *r, size_t i)
{
	return &r->defs.v[i];
}

/* Insert hit (doc, score) into the best-first list out[*n], at most top long. */
static void
keep_best(struct toolreg_hit *out, size_t *n, size_t top, size_t doc, double score)
{
	size_t i = *n < top ? (*n)++ : top;

	if (i == top && (top == 0 || score <= out[top - 1].score))
		return;
	if (i == top)
		i = top - 1;
	/* Ties keep the order of definition: a later one goes after. */
	while (i > 0 && out[i - 1].score < score) {
		out[i] = out[i - 1];
		i--;
	}
	out[i] = (struct toolreg_hit){doc, score};
}

size_t
toolreg_search(const struct toolreg *r, const char *query, const char *category,
	       struct toolreg_hit *out, size_t top)
{
	char words[QUERY_WORDS][TOOLREG_WORD_MAX + 1];
	char terms[2 * QUERY_WORDS][TOOLREG_WORD_MAX + 2];
	size_t nw, nt = 0, n = 0, ndocs = toolreg_size(r);

	if (ndocs == 0 || top == 0)
		return 0;
	if (top > TOOLREG_TOP_MAX)
		top = TOOLREG_TOP_MAX;
	nw = toolreg_tokens(query, words, QUERY_WORDS);
	for (size_t i = 0; i < nw; i++) {
		memcpy(terms[nt++], words[i], sizeof(words[i]));
		stem_term(words[i], terms[nt++]);
	}
	double *score = xcalloc(ndocs, sizeof(*score));
	for (size_t i = 0; i < nt; i++) {
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			seen |= strcmp(terms[i], terms[j]) == 0;
		const struct term *t = slot(r, terms[i]);
		if (seen || t->word[0] == '\0')
			continue;
		double df = (double)t->n;
		double idf = log(1 + ((double)ndocs - df + 0.5) / (df + 0.5));
		double w = terms[i][0] == STEM_MARK ? W_STEM : 1;
		for (size_t k = 0; k < t->n; k++) {
			double tf = t->p[k].tf, dl = r->len[t->p[k].doc];
			score[t->p[k].doc] += w * idf * tf * (BM25_K1 + 1) /
					      (tf + BM25_K1 * (1 - BM25_B + BM25_B * dl / r->avglen));
		}
	}
	for (size_t d = 0; d < ndocs; d++) {
		if (score[d] <= 0)
			continue;
		if (category && strcasecmp(r->defs.v[d].category, category) != 0)
			continue;
		keep_best(out, &n, top, d, score[d]);
	}
	free(score);
	return n;
}

const char *const toolreg_field_names[TOOLREG_FIELDS] = {
	[TOOLREG_NAME] = "name",
	[TOOLREG_DESCRIPTION] = "description",
	[TOOLREG_CATEGORY] = "category",
	[TOOLREG_PARAMETERS] = "parameters",
	[TOOLREG_RETURNS] = "returns",
};

/* The words a query matches: its words and their stems. */
struct query_words {
	char word[QUERY_WORDS][TOOLREG_WORD_MAX + 1];
	char stem[QUERY_WORDS][TOOLREG_WORD_MAX + 1];
	size_t n;
};

/* Add the words of `text` that q matches to field f of m. */
static void
explain_field(const struct query_words *q, const char *text, enum toolreg_field f,
	      struct toolreg_match *m, char (*words)[TOOLREG_WORD_MAX + 1])
{
	size_t n = toolreg_tokens(text, words, FIELD_WORDS);

	for (size_t i = 0; i < n && m->n[f] < TOOLREG_MATCH_WORDS; i++) {
		char st[TOOLREG_WORD_MAX + 1];
		int hit = 0, seen = 0;
		toolreg_stem(words[i], st);
		for (size_t j = 0; j < q->n && !hit; j++)
			hit = strcmp(q->word[j], words[i]) == 0 || strcmp(q->stem[j], st) == 0;
		for (size_t j = 0; j < m->n[f] && !seen; j++)
			seen = strcmp(m->word[f][j], words[i]) == 0;
		if (hit && !seen)
			memcpy(m->word[f][m->n[f]++], words[i], sizeof(words[i]));
	}
}

void
toolreg_explain(const struct toolreg *r, size_t i, const char *query, struct toolreg_match *m)
{
	const struct tool_def *d = &r->defs.v[i];
	struct query_words *q = xcalloc(1, sizeof(*q));
	char(*words)[TOOLREG_WORD_MAX + 1] = xcalloc(FIELD_WORDS, sizeof(*words));

	memset(m, 0, sizeof(*m));
	q->n = toolreg_tokens(query, q->word, QUERY_WORDS);
	for (size_t k = 0; k < q->n; k++)
		toolreg_stem(q->word[k], q->stem[k]);
	explain_field(q, d->name, TOOLREG_NAME, m, words);
	explain_field(q, d->description, TOOLREG_DESCRIPTION, m, words);
	explain_field(q, d->category, TOOLREG_CATEGORY, m, words);
	for (size_t k = 0; k < d->n_params; k++) {
		explain_field(q, d->params[k].name, TOOLREG_PARAMETERS, m, words);
		explain_field(q, d->params[k].description, TOOLREG_PARAMETERS, m, words);
	}
	explain_field(q, d->return_description, TOOLREG_RETURNS, m, words);
	free(words);
	free(q);
}

void
toolreg_set_backend(struct toolreg *r, void *backend, void (*backend_free)(void *))
{
	r->backend = backend;
	r->backend_free = backend_free;
}

void *
toolreg_backend(const struct toolreg *r)
{
	return r ? r->backend : NULL;
}

long
toolreg_find(const struct toolreg *r, const char *name)
{
	for (size_t i = 0; r && i < r->defs.n; i++)
		if (strcmp(r->defs.v[i].name, name) == 0)
			return (long)i;
	return -1;
}

struct toolreg *
toolreg_live(void)
{
	return live;
}

struct toolreg *
toolreg_replace(struct toolreg *r)
{
	struct toolreg *old = live;
	live = r;
	return old;
}
