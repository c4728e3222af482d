/*
 * toolreg_words.h - the words of the tool registry's index (toolreg.h):
 * what toolreg_tokens makes of a text, and their Snowball stems.
 *
 * A word is a run of letters, digits, '_' and '-' (bytes of UTF-8
 * characters beyond ASCII count as letters). Each word gives, lower case:
 *
 *	the whole word, without its '_' and '-'	 GeoTIFF -> geotiff,
 *						 gc_content -> gccontent
 *	its parts, when it has several: split at '_' and '-', at camelCase
 *	and at letter/digit boundaries		 geo tiff; gc content;
 *						 HDF5 -> hdf5 hdf
 *
 * so that "geotiff", "GeoTIFF", "geo tiff", "gcContent" and "gc_content"
 * meet. Words of one character and the stop words (toolreg_words.c's
 * list of English function words: "a", "the", "of", "to", "between",
 * "up", "where", ...) are dropped. Case folds for ASCII and
 * Latin-1 letters.
 */
#ifndef SUPERVISOR_TOOLREG_WORDS_H
#define SUPERVISOR_TOOLREG_WORDS_H

#include <stddef.h>
#include <stdint.h>

/* Longest word kept, in bytes (longer ones are cut at a character). */
#define TOOLREG_WORD_MAX 32

/*
 * The words of `text`, NUL-terminated, into out[max]: each word whole,
 * then its parts. Returns how many (at most max).
 */
size_t toolreg_tokens(const char *text, char (*out)[TOOLREG_WORD_MAX + 1], size_t max);
/* Whether `w` (lower case) is a stop word. */
int toolreg_stopword(const char *w);
/*
 * The English Snowball stem of word `w` (a toolreg_tokens word) into out:
 * "projections" -> "project". Safe from any thread (one stemmer, locked).
 */
void toolreg_stem(const char *w, char out[TOOLREG_WORD_MAX + 1]);
/* The FNV-1a hash of word `w`, for the tables of words. */
uint64_t toolreg_word_hash(const char *w);

#endif
