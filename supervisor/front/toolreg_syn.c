/* toolreg_syn.c - see toolreg_syn.h. */
#include "autoconf.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wn.h>

#include "log.h"
#include "toolreg_syn.h"
#include "xmalloc.h"

/*
 * Words whose synonyms are kept, open addressing; when 3/4 are taken the
 * table starts again empty, so that it stays bounded (about 4 MB).
 */
#define CACHE_SLOTS 8192

struct cached {
	char word[TOOLREG_WORD_MAX + 1];
	unsigned char n;
	char syn[TOOLREG_SYN_MAX][TOOLREG_WORD_MAX + 1];
};

/* WordNet's library keeps its open files and buffers in globals: one lock. */
static pthread_mutex_t wn_lock = PTHREAD_MUTEX_INITIALIZER;
static int wn_state; /* 0 not opened yet, 1 open, -1 its files cannot be read */
static struct cached *cache[CACHE_SLOTS];
static size_t ncached;

/* Add lemma to c unless it is w, has several words, is too long or is there. */
static void
add_lemma(struct cached *c, const char *lemma)
{
	char low[TOOLREG_WORD_MAX + 1];
	size_t k = 0;

	if (c->n == TOOLREG_SYN_MAX || strpbrk(lemma, "_- ") != NULL)
		return;
	for (; lemma[k] != '\0'; k++) {
		if (k == TOOLREG_WORD_MAX)
			return;
		low[k] = (char)tolower((unsigned char)lemma[k]);
	}
	low[k] = '\0';
	if (strcmp(low, c->word) == 0)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->syn[i], low) == 0)
			return;
	memcpy(c->syn[c->n++], low, k + 1);
}

/* The lemmas of the first sense of `base` as part of speech pos into c. */
static void
first_sense(struct cached *c, char *base, int pos)
{
	IndexPtr idx = index_lookup(base, pos);

	if (idx == NULL)
		return;
	if (idx->off_cnt > 0) {
		SynsetPtr ss = read_synset(pos, (long)idx->offset[0], base);
		for (int i = 0; ss != NULL && i < ss->wcount; i++)
			add_lemma(c, ss->words[i]);
		if (ss != NULL)
			free_synset(ss);
	}
	free_index(idx);
}

/* Look c->word up in WordNet (under wn_lock, opened). */
static void
look_up(struct cached *c)
{
	char buf[TOOLREG_WORD_MAX + 1];

	for (int pos = NOUN; pos <= ADV; pos++) {
		memcpy(buf, c->word, sizeof(buf));
		/* morphstr gives each base form ("smaller": "small"), NULL when none. */
		char *base = morphstr(buf, pos);
		if (base == NULL)
			first_sense(c, buf, pos);
		for (; base != NULL; base = morphstr(NULL, pos)) {
			char b[TOOLREG_WORD_MAX + 1];
			if (strlen(base) > TOOLREG_WORD_MAX)
				continue;
			strcpy(b, base);
			first_sense(c, b, pos);
		}
	}
}

/* Forget every word looked up (under wn_lock). */
static void
cache_clear(void)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		free(cache[i]);
		cache[i] = NULL;
	}
	ncached = 0;
}

/* The synonyms of w, looked up now unless kept (under wn_lock, opened). */
static const struct cached *
cache_get(const char *w)
{
	size_t i = (size_t)toolreg_word_hash(w) % CACHE_SLOTS;

	for (; cache[i] != NULL; i = (i + 1) % CACHE_SLOTS)
		if (strcmp(cache[i]->word, w) == 0)
			return cache[i];
	if (ncached >= CACHE_SLOTS / 4 * 3) {
		cache_clear();
		i = (size_t)toolreg_word_hash(w) % CACHE_SLOTS;
	}
	struct cached *c = xcalloc(1, sizeof(*c));
	snprintf(c->word, sizeof(c->word), "%s", w);
	look_up(c);
	cache[i] = c;
	ncached++;
	return c;
}

size_t
toolreg_synonyms(const char *w, char (*out)[TOOLREG_WORD_MAX + 1])
{
	size_t n = 0;

	pthread_mutex_lock(&wn_lock);
	if (wn_state == 0) {
		wn_state = wninit() == 0 ? 1 : -1;
		if (wn_state < 0)
			log_warnx("WordNet's files cannot be read (wninit failed; apt-get install "
				  "wordnet-base): tool search goes without synonyms");
	}
	if (wn_state > 0) {
		const struct cached *c = cache_get(w);
		n = c->n;
		memcpy(out, c->syn, n * sizeof(c->syn[0]));
	}
	pthread_mutex_unlock(&wn_lock);
	return n;
}
