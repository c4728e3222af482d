/* toolreg.c - see toolreg.h. */
#include "autoconf.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tooldef.h"
#include "toolreg.h"
#include "toolreg_syn.h"
#include "toolreg_words.h"
#include "xmalloc.h"

#ifndef BM25_K1
#define BM25_K1 1.2
#endif
#ifndef BM25_B
#define BM25_B 0.75
#endif

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
 * A stem match counts this much of a whole-word match: a query word's
 * frequency in a tool adds that of its word and, times W_STEM, that of its
 * stem, so a tool with the word itself ranks above one with another word
 * of its stem.
 */
#ifndef W_STEM
#define W_STEM 0.5
#endif

/* Stem terms are the stem after this byte, apart from the words. */
#define STEM_MARK '\x01'

/*
 * A derived word: one that starts with an English prefix (re-, un-, de-,
 * pre-) before at least DERIV_MIN letters ("reproject") also meets the
 * stem of what follows ("projection"), at W_DERIV of a whole-word match.
 */
#ifndef W_DERIV
#define W_DERIV 0.3
#endif
#define DERIV_MIN 4
/* Derived terms of the index: the stem without its prefix, after this byte. */
#define DERIV_MARK '\x02'

/* Compounds (toolreg_search): shortest word, weight, most index words per query word. */
#define PREFIX_MIN 4
#ifndef W_PREFIX
#define W_PREFIX 0.3
#endif
#define PREFIX_TERMS 16

/*
 * Coverage: a tool's score is multiplied by (1 - W_COVER + W_COVER * the
 * share of the query's words it matches, each word weighed by its IDF), so
 * that a tool matching several words of the query ranks above one that
 * matches one word often, and matching "aspirin" counts more than "find".
 */
#ifndef W_COVER
#define W_COVER 0.5
#endif

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
	const struct term **sorted; /* the word terms (not stems), by word */
	size_t nsorted;
	struct term *terms; /* open addressing, `cap` slots, power of two */
	size_t cap, nterms;
	double *len;	    /* weighted length of each tool */
	double avglen;
	void *backend;	    /* toolreg_set_backend's */
	void (*backend_free)(void *);
};

static struct toolreg *live;

/* The slot of `w`: its term, or the empty slot where it would go. */
static struct term *
slot(const struct toolreg *r, const char *w)
{
	size_t i = (size_t)toolreg_word_hash(w) & (r->cap - 1);

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

/*
 * The stem of word `w` without its English prefix, into out (with
 * STEM_MARK) and 1, or 0 when w starts with none before DERIV_MIN bytes.
 */
static int
deriv_term(const char *w, char out[TOOLREG_WORD_MAX + 2])
{
	static const char *const prefixes[] = {"re", "un", "de", "pre", NULL};

	for (size_t i = 0; prefixes[i]; i++) {
		size_t n = strlen(prefixes[i]);
		if (strncmp(w, prefixes[i], n) == 0 && strlen(w + n) >= DERIV_MIN) {
			stem_term(w + n, out);
			return 1;
		}
	}
	return 0;
}

/* Count word `w` of tool `doc` with `weight`: the word, its stem, its derived stem. */
static void
add_word(struct toolreg *r, uint32_t doc, const char *w, double weight)
{
	char st[TOOLREG_WORD_MAX + 2];

	add_term(r, doc, w, weight);
	stem_term(w, st);
	add_term(r, doc, st, weight);
	if (deriv_term(w, st)) {
		st[0] = DERIV_MARK;
		add_term(r, doc, st, weight);
	}
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

static int
cmp_term(const void *a, const void *b)
{
	return strcmp((*(const struct term *const *)a)->word, (*(const struct term *const *)b)->word);
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
	r->sorted = xcalloc(r->nterms + 1, sizeof(*r->sorted));
	for (size_t i = 0; i < r->cap; i++)
		if (r->terms[i].word[0] != '\0' && r->terms[i].word[0] != STEM_MARK &&
		    r->terms[i].word[0] != DERIV_MARK)
			r->sorted[r->nsorted++] = &r->terms[i];
	qsort(r->sorted, r->nsorted, sizeof(*r->sorted), cmp_term);
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
	free(r->sorted);
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

/*
 * One query word's matches in the index: the terms it meets, each with the
 * weight of that kind of match, and the tools they reach with the sum of
 * their weighted frequencies (scratch arrays of toolreg_search, `touched`
 * listing the tools whose tf is not 0).
 */
struct qword {
	double *tf;
	uint32_t *touched;
	size_t ntouched;
};

/* Add term t's frequencies, times w, to q. */
static void
qword_add(struct qword *q, const struct term *t, double w)
{
	if (w <= 0)
		return;
	for (size_t k = 0; k < t->n; k++) {
		uint32_t d = t->p[k].doc;
		if (q->tf[d] == 0)
			q->touched[q->ntouched++] = d;
		q->tf[d] += w * t->p[k].tf;
	}
}

/*
 * Score q as one BM25 term into score (its IDF of the tools it reaches
 * in any way, its frequency saturated once), mark query word qi in
 * seen_words, and clear q for the next word.
 */
static double
qword_score(const struct toolreg *r, struct qword *q, size_t qi, double *score,
	    uint64_t *seen_words)
{
	double df = (double)q->ntouched, ndocs = (double)r->defs.n;
	double idf = log(1 + (ndocs - df + 0.5) / (df + 0.5));

	for (size_t k = 0; k < q->ntouched; k++) {
		uint32_t d = q->touched[k];
		double tf = q->tf[d], dl = r->len[d];
		score[d] += idf * tf * (BM25_K1 + 1) /
			    (tf + BM25_K1 * (1 - BM25_B + BM25_B * dl / r->avglen));
		seen_words[d] |= (uint64_t)1 << qi;
		q->tf[d] = 0;
	}
	q->ntouched = 0;
	return idf;
}

/* Add term `w` of the index, if it is one, times weight, to q. */
static void
qword_term(const struct toolreg *r, struct qword *q, const char *w, double weight)
{
	const struct term *t = slot(r, w);

	if (t->word[0] != '\0')
		qword_add(q, t, weight);
}

/*
 * Compounds: query word w, of PREFIX_MIN letters or more and no word of
 * the index, meets the index words it begins ("elastic": "elasticsearch")
 * and those that begin it ("onnxruntime": "onnx"), at W_PREFIX.
 */
static void
qword_compounds(const struct toolreg *r, struct qword *q, const char *w)
{
	size_t len = strlen(w), nc = 0, lo = 0, hi = r->nsorted;

	if (W_PREFIX <= 0 || len < PREFIX_MIN || slot(r, w)->word[0] != '\0')
		return;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(r->sorted[mid]->word, w) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < r->nsorted && nc < PREFIX_TERMS && strncmp(r->sorted[lo]->word, w, len) == 0;
	     lo++, nc++)
		qword_add(q, r->sorted[lo], W_PREFIX);
	for (size_t k = len - 1; k >= PREFIX_MIN && nc < PREFIX_TERMS; k--) {
		char part[TOOLREG_WORD_MAX + 2];
		memcpy(part, w, k);
		part[k] = '\0';
		const struct term *t = slot(r, part);
		if (t->word[0] != '\0') {
			qword_add(q, t, W_PREFIX);
			nc++;
		}
	}
}

/*
 * Synonyms: query word w also meets its WordNet synonyms (toolreg_syn.h)
 * and their stems, at W_SYN of a whole-word match ("picture": "image"),
 * below its own stem, so that a tool with the query's words ranks first.
 * A synonym of w's stem, or one met already, counts once.
 */
#ifndef W_SYN
#define W_SYN 0.2
#endif

static void
qword_synonyms(const struct toolreg *r, struct qword *q, const char *w, const char *wstem)
{
	char syn[TOOLREG_SYN_MAX][TOOLREG_WORD_MAX + 1];
	char st[TOOLREG_SYN_MAX][TOOLREG_WORD_MAX + 2];
	size_t n = W_SYN > 0 ? toolreg_synonyms(w, syn) : 0;

	for (size_t i = 0; i < n; i++) {
		stem_term(syn[i], st[i]);
		int again = strcmp(st[i], wstem) == 0;
		for (size_t j = 0; j < i && !again; j++)
			again = strcmp(st[i], st[j]) == 0;
		if (again)
			continue;
		qword_term(r, q, syn[i], W_SYN);
		qword_term(r, q, st[i], W_SYN * W_STEM);
	}
}

/* Add to q every index term query word w meets, each at its kind's weight
 * (toolreg.h lists them). */
static void
qword_meet(const struct toolreg *r, struct qword *q, const char *w)
{
	char st[TOOLREG_WORD_MAX + 2];

	qword_term(r, q, w, 1);
	stem_term(w, st);
	qword_term(r, q, st, W_STEM);
	/* The word as a stem: "embed" (stem "emb") meets "embeddings" (stem "embed"). */
	if (strcmp(st + 1, w) != 0) {
		char ws[TOOLREG_WORD_MAX + 2] = {STEM_MARK};
		memcpy(ws + 1, w, strlen(w) + 1);
		qword_term(r, q, ws, W_STEM);
	}
	/* "projection" meets the index's "reproject". */
	st[0] = DERIV_MARK;
	qword_term(r, q, st, W_DERIV);
	/* "reproject" meets the index's "projection". */
	if (deriv_term(w, st))
		qword_term(r, q, st, W_DERIV);
	qword_compounds(r, q, w);
	stem_term(w, st);
	qword_synonyms(r, q, w, st);
}

/* Whether words[i] is one of words[0..i). */
static int
repeated(char (*words)[TOOLREG_WORD_MAX + 1], size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(words[i], words[j]) == 0)
			return 1;
	return 0;
}

size_t
toolreg_search(const struct toolreg *r, const char *query, const char *category,
	       struct toolreg_hit *out, size_t top)
{
	char words[QUERY_WORDS][TOOLREG_WORD_MAX + 1];
	double qidf[QUERY_WORDS] = {0}, idfsum = 0;
	size_t nw, n = 0, ndocs = toolreg_size(r);

	if (ndocs == 0 || top == 0)
		return 0;
	if (top > TOOLREG_TOP_MAX)
		top = TOOLREG_TOP_MAX;
	nw = toolreg_tokens(query, words, QUERY_WORDS);
	double *score = xcalloc(ndocs, sizeof(*score));
	uint64_t *seen_words = xcalloc(ndocs, sizeof(*seen_words));
	struct qword q = {xcalloc(ndocs, sizeof(*q.tf)), xcalloc(ndocs, sizeof(*q.touched)), 0};
	for (size_t i = 0; i < nw; i++) {
		if (repeated(words, i))
			continue;
		qword_meet(r, &q, words[i]);
		qidf[i] = qword_score(r, &q, i, score, seen_words);
		idfsum += qidf[i];
	}
	for (size_t d = 0; d < ndocs; d++) {
		if (score[d] <= 0)
			continue;
		if (category && strcasecmp(r->defs.v[d].category, category) != 0)
			continue;
		double cover = 0;
		for (size_t i = 0; i < nw; i++)
			if (seen_words[d] >> i & 1)
				cover += qidf[i] / idfsum;
		keep_best(out, &n, top, d, score[d] * (1 - W_COVER + W_COVER * cover));
	}
	free(q.touched);
	free(q.tf);
	free(seen_words);
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

/* The words a query matches: its words and their stems (toolreg_search's terms). */
struct query_words {
	char word[QUERY_WORDS][TOOLREG_WORD_MAX + 1];
	char stem[QUERY_WORDS][TOOLREG_WORD_MAX + 1];
	int indexed[QUERY_WORDS]; /* the word is a word of the index: no compounds */
	char syn_stem[QUERY_WORDS][TOOLREG_SYN_MAX][TOOLREG_WORD_MAX + 1]; /* its synonyms' */
	size_t nsyn[QUERY_WORDS];
	size_t n;
};

/* Whether one of words q and w begins the other, both PREFIX_MIN long or more. */
static int
compound(const char *q, const char *w)
{
	size_t lq = strlen(q), lw = strlen(w);

	if (W_PREFIX <= 0 || lq < PREFIX_MIN || lw < PREFIX_MIN || lq == lw)
		return 0;
	return strncmp(q, w, lq < lw ? lq : lw) == 0;
}

/* Whether stem st is that of a synonym of query word j of q. */
static int
synonym(const struct query_words *q, size_t j, const char *st)
{
	for (size_t k = 0; k < q->nsyn[j]; k++)
		if (strcmp(q->syn_stem[j][k], st) == 0)
			return 1;
	return 0;
}

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
		char dw[TOOLREG_WORD_MAX + 2], dq[TOOLREG_WORD_MAX + 2];
		int der = deriv_term(words[i], dw);
		for (size_t j = 0; j < q->n && !hit; j++)
			hit = strcmp(q->word[j], words[i]) == 0 || strcmp(q->stem[j], st) == 0 ||
			      strcmp(q->word[j], st) == 0 ||
			      (der && strcmp(q->stem[j], dw + 1) == 0) ||
			      (deriv_term(q->word[j], dq) && strcmp(dq + 1, st) == 0) ||
			      (!q->indexed[j] && compound(q->word[j], words[i])) ||
			      synonym(q, j, st);
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
	for (size_t k = 0; k < q->n; k++) {
		toolreg_stem(q->word[k], q->stem[k]);
		q->indexed[k] = slot(r, q->word[k])->word[0] != '\0';
		q->nsyn[k] = W_SYN > 0 ? toolreg_synonyms(q->word[k], q->syn_stem[k]) : 0;
		for (size_t y = 0; y < q->nsyn[k]; y++) {
			char w[TOOLREG_WORD_MAX + 1];
			memcpy(w, q->syn_stem[k][y], sizeof(w));
			toolreg_stem(w, q->syn_stem[k][y]);
		}
	}
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

/* Bumped by each toolreg_replace: what was built over the old one is stale. */
static unsigned long generation;

struct toolreg *
toolreg_replace(struct toolreg *r)
{
	struct toolreg *old = live;
	live = r;
	generation++;
	return old;
}

unsigned long
toolreg_generation(void)
{
	return generation;
}
