/*
 * toolreg_syn.h - the WordNet synonyms of a query word of the built-in
 * tool search (toolreg.h): "picture" -> "image", "shrink" -> "reduce",
 * so that a query that shares no word or stem with a tool's text can
 * still find it, at a weight below that of its own words.
 */
#ifndef SUPERVISOR_TOOLREG_SYN_H
#define SUPERVISOR_TOOLREG_SYN_H

#include <stddef.h>

#include "toolreg_words.h"

/* Synonyms of one word, at most. */
#define TOOLREG_SYN_MAX 16

/*
 * The synonyms of word `w` (a toolreg_tokens word) into out[TOOLREG_SYN_MAX]:
 * the one-word lemmas of the synset of its most frequent sense as a noun,
 * a verb, an adjective and an adverb (WordNet 3.0, base form by morphstr),
 * lower case, each once, without w. Returns how many; 0 when WordNet's
 * files cannot be read (said once in the log). Looked up once per word
 * and kept; safe from any thread (WordNet's library is not: locked).
 */
size_t toolreg_synonyms(const char *w, char (*out)[TOOLREG_WORD_MAX + 1]);

#endif
