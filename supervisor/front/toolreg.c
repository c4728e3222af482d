/* toolreg.c - see toolreg.h. */
#include "autoconf.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tooldef.h"
#include "toolreg.h"
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

/* Words of one field, at most (the rest of a long description is ignored). */
#define FIELD_WORDS 512

/* Words that say nothing about which tool is meant. */
static const char *const stopwords[] = {
	"a",	"an",	"and",	"are",	 "as",	 "at",	 "be",	 "by",	  "can",  "do",
	"does", "for",	"from", "get",	 "give", "how",	 "i",	 "in",	  "into", "is",
	"it",	"its",	"me",	"my",	 "of",	 "on",	 "or",	 "some",  "that", "the",
	"this", "to",	"use",	"using", "want", "what", "which", "with", "you",  NULL,
};

struct posting {
	uint32_t doc;
	float tf; /* weighted */
};

struct term {
	char word[TOOLREG_WORD_MAX + 1];
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

/* Fold a plural or an -ing/-ed ending, then a final e: "computes" -> "comput". */
static void
stem(char *w)
{
	size_t n = strlen(w);

	if (n > 4 && strcmp(w + n - 3, "ies") == 0) {
		strcpy(w + n - 3, "y");
		n -= 2;
	} else if (n > 4 && strcmp(w + n - 4, "sses") == 0) {
		w[n -= 2] = '\0';
	} else if (n > 3 && w[n - 1] == 's' && w[n - 2] != 's' && w[n - 2] != 'u' &&
		   w[n - 2] != 'i') {
		w[--n] = '\0';
	}
	if (n > 5 && strcmp(w + n - 3, "ing") == 0)
		w[n -= 3] = '\0';
	else if (n > 4 && strcmp(w + n - 2, "ed") == 0)
		w[n -= 2] = '\0';
	if (n > 3 && w[n - 1] == 'e')
		w[--n] = '\0';
}

static int
is_stopword(const char *w)
{
	for (size_t i = 0; stopwords[i]; i++)
		if (strcmp(stopwords[i], w) == 0)
			return 1;
	return 0;
}

/* Add word text[0..len) to out unless full, a stopword or one letter. */
static size_t
emit(const char *text, size_t len, char (*out)[TOOLREG_WORD_MAX + 1], size_t n, size_t max)
{
	char w[TOOLREG_WORD_MAX + 1];

	if (n >= max || len < 2)
		return n;
	if (len > TOOLREG_WORD_MAX)
		len = TOOLREG_WORD_MAX;
	for (size_t i = 0; i < len; i++)
		w[i] = (char)tolower((unsigned char)text[i]);
	w[len] = '\0';
	if (is_stopword(w))
		return n;
	stem(w);
	memcpy(out[n], w, sizeof(w));
	return n + 1;
}

/*
 * Where a camelCase run splits: before an upper-case letter that follows a
 * lower-case one ("molWeight"), and before the last of several upper-case
 * letters when a lower-case one follows ("XMLParser" -> XML Parser).
 */
static int
camel_break(const char *s, size_t i)
{
	unsigned char prev = (unsigned char)s[i - 1], c = (unsigned char)s[i],
		      next = (unsigned char)s[i + 1];

	if (!isupper(c))
		return 0;
	return islower(prev) || (isupper(prev) && islower(next));
}

size_t
toolreg_tokens(const char *text, char (*out)[TOOLREG_WORD_MAX + 1], size_t max)
{
	size_t n = 0;

	for (const char *p = text; *p != '\0';) {
		if (!isalnum((unsigned char)*p)) {
			p++;
			continue;
		}
		size_t run = 0;
		while (isalnum((unsigned char)p[run]))
			run++;
		size_t start = 0;
		for (size_t i = 1; i < run; i++)
			if (camel_break(p, i)) {
				n = emit(p + start, i - start, out, n, max);
				start = i;
			}
		n = emit(p + start, run - start, out, n, max);
		p += run;
	}
	return n;
}

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

/* Count word `w` of tool `doc` with `weight`. */
static void
add_word(struct toolreg *r, uint32_t doc, const char *w, double weight)
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
	char words[64][TOOLREG_WORD_MAX + 1];
	size_t nw, n = 0, ndocs = toolreg_size(r);

	if (ndocs == 0 || top == 0)
		return 0;
	if (top > TOOLREG_TOP_MAX)
		top = TOOLREG_TOP_MAX;
	nw = toolreg_tokens(query, words, 64);
	double *score = xcalloc(ndocs, sizeof(*score));
	for (size_t i = 0; i < nw; i++) {
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			seen |= strcmp(words[i], words[j]) == 0;
		const struct term *t = slot(r, words[i]);
		if (seen || t->word[0] == '\0')
			continue;
		double df = (double)t->n;
		double idf = log(1 + ((double)ndocs - df + 0.5) / (df + 0.5));
		for (size_t k = 0; k < t->n; k++) {
			double tf = t->p[k].tf, dl = r->len[t->p[k].doc];
			score[t->p[k].doc] += idf * tf * (BM25_K1 + 1) /
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
