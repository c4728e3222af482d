/* toolreg_words.c - see toolreg_words.h. */
#include "autoconf.h"

#include <ctype.h>
#include <libstemmer.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "toolreg_words.h"

/* Words that say nothing about which tool is meant (toolreg_words.h), sorted. */
static const char *const stopwords[] = {
	"a", "about", "after", "again", "also", "am", "an", "and", "any", "are",
	"as", "at", "be", "been", "before", "being", "between", "both", "but", "by",
	"can", "could", "did", "do", "does", "each", "few", "for", "from", "get",
	"give", "had", "has", "have", "he", "her", "here", "him", "his", "how",
	"i", "if", "in", "into", "is", "it", "its", "just", "me", "more",
	"most", "my", "no", "nor", "not", "now", "of", "off", "on", "once",
	"only", "or", "other", "our", "out", "over", "own", "per", "same", "she",
	"should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
	"there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
	"up", "use", "using", "very", "via", "want", "was", "we", "were", "what",
	"when", "where", "which", "while", "who", "why", "will", "with", "would", "you",
	"your", NULL,
};

/* sb_stemmer keeps state between calls: one for all threads, under a lock. */
static pthread_mutex_t stem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sb_stemmer *stemmer;

static int
cmp_word(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

int
toolreg_stopword(const char *w)
{
	/* The list is sorted (strcmp's order), NULL-terminated. */
	size_t n = sizeof(stopwords) / sizeof(stopwords[0]) - 1;

	return bsearch(w, stopwords, n, sizeof(stopwords[0]), cmp_word) != NULL;
}

void
toolreg_stem(const char *w, char out[TOOLREG_WORD_MAX + 1])
{
	pthread_mutex_lock(&stem_lock);
	if (stemmer == NULL && (stemmer = sb_stemmer_new("english", NULL)) == NULL)
		fatalx("libstemmer has no English stemmer");
	const sb_symbol *s = sb_stemmer_stem(stemmer, (const sb_symbol *)w, (int)strlen(w));
	int n = sb_stemmer_length(stemmer);
	if (s == NULL || n < 0 || n > TOOLREG_WORD_MAX) {
		/* Out of memory in the stemmer, or longer: the word is its own stem. */
		s = (const sb_symbol *)w;
		n = (int)strlen(w);
	}
	memcpy(out, s, (size_t)n);
	out[n] = '\0';
	pthread_mutex_unlock(&stem_lock);
}

uint64_t
toolreg_word_hash(const char *w)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *w; w++)
		h = (h ^ (unsigned char)*w) * 1099511628211ULL;
	return h;
}

static int
is_word_byte(unsigned char c)
{
	return isalnum(c) || c >= 0x80 || c == '_' || c == '-';
}

static int
is_sep(unsigned char c)
{
	return c == '_' || c == '-';
}

/*
 * Whether a part starts at s[i] (within one '_'/'-' segment): before an
 * upper-case letter that follows a lower-case one ("molWeight"), before
 * the last of several upper-case letters when a lower-case one follows
 * ("XMLParser" -> XML Parser), and where letters and digits meet; case
 * is ASCII's here (so "CAFÉ" stays whole).
 */
static int
part_break(const unsigned char *s, size_t i)
{
	unsigned char prev = s[i - 1], c = s[i], next = s[i + 1];

	if (isdigit(prev) != isdigit(c))
		return 1;
	if (!isupper(c))
		return 0;
	return islower(prev) || (isupper(prev) && islower(next));
}

/*
 * Add s[0..len), lower case and without '_' and '-', to out[*n] unless
 * full, one character or a stop word.
 */
static void
emit(const unsigned char *s, size_t len, char (*out)[TOOLREG_WORD_MAX + 1], size_t *n,
     size_t max)
{
	char w[TOOLREG_WORD_MAX + 1];
	size_t i, k = 0;

	if (*n >= max)
		return;
	for (i = 0; i < len && k < TOOLREG_WORD_MAX; i++) {
		unsigned char c = s[i];
		if (is_sep(c))
			continue;
		/* Latin-1 capitals, U+00C0..U+00DE but U+00D7: C3 80..9E. */
		if (i > 0 && s[i - 1] == 0xc3 && c >= 0x80 && c <= 0x9e && c != 0x97)
			c += 0x20;
		w[k++] = (char)tolower(c);
	}
	/* Cut at a character, not inside one: drop a sequence left unfinished. */
	if (i < len && (s[i] & 0xc0) == 0x80) {
		while (k > 0 && ((unsigned char)w[k - 1] & 0xc0) == 0x80)
			k--;
		if (k > 0)
			k--;
	}
	w[k] = '\0';
	/* One character: one byte, or one UTF-8 sequence. */
	size_t chars = 0;
	for (size_t j = 0; j < k; j++)
		chars += ((unsigned char)w[j] & 0xc0) != 0x80;
	if (chars < 2 || toolreg_stopword(w))
		return;
	memcpy(out[(*n)++], w, k + 1);
}

/* The parts of word s[0..len) into out. Returns how many there are. */
static size_t
emit_parts(const unsigned char *s, size_t len, char (*out)[TOOLREG_WORD_MAX + 1], size_t *n,
	   size_t max, int dry)
{
	size_t parts = 0, start = 0;

	for (size_t i = 0; i <= len; i++) {
		int end = i == len || is_sep(s[i]);
		if (!end && (i == start || !part_break(s, i)))
			continue;
		if (i > start) {
			if (!dry)
				emit(s + start, i - start, out, n, max);
			parts++;
		}
		start = end ? i + 1 : i;
	}
	return parts;
}

size_t
toolreg_tokens(const char *text, char (*out)[TOOLREG_WORD_MAX + 1], size_t max)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t n = 0;

	while (*p != '\0') {
		if (!is_word_byte(*p) || is_sep(*p)) {
			p++;
			continue;
		}
		size_t run = 0;
		while (is_word_byte(p[run]))
			run++;
		while (is_sep(p[run - 1]))
			run--;
		emit(p, run, out, &n, max);
		if (emit_parts(p, run, out, &n, max, 1) > 1)
			emit_parts(p, run, out, &n, max, 0);
		p += run;
	}
	return n;
}
