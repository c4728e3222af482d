/*
 * toolsearch_recall.c - the relevance and the speed of search_{name}_tools
 * (issue 31, item 4): recall@1, recall@5 and MRR of toolreg_search() on a
 * labelled set (a tools directory holding registry.yaml and queries.tsv,
 * EXPECTED_TOOL<TAB>QUERY a line), and the time per query over the set's
 * own tools and over 10,000 (the set's tools repeated with varied names
 * and descriptions, as bench/toolsearch.c does for 1,000). Not installed,
 * not in make check; bench/toolsearch_recall.sh builds and runs it, beside
 * SQLite FTS5 (bench/toolsearch_fts5.py).
 *
 * Build by hand from the build tree (TOOLREG: the toolreg.c to measure;
 * add -lstemmer when it uses libstemmer):
 *   cc -O2 -Icommon -Isupervisor/front -I. bench/toolsearch_recall.c TOOLREG \
 *      common/libcommon.a $(pkg-config --libs yaml-0.1 json-c) -lm -o bench/toolsearch_recall
 *   bench/toolsearch_recall [-v] bench/toolsearch
 * -v lists every query not ranked first, with its rank and what came first.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "tooldef.h"
#include "toolreg.h"
#include "xmalloc.h"

#define BIG 10000
#define DEPTH 10	   /* ranks looked at; MRR counts 0 below it */
#define TIMED_QUERIES 20000 /* searches timed at each size */
#define SECTIONS 16

/* Counts of a section of queries.tsv ("# == NAME: ..." starts one). */
struct tally {
	char name[64];
	size_t n, at1, at5;
	double rr;
};

static void
tally_print(const char *what, const struct tally *t)
{
	printf("%s: %zu queries: recall@1 %.3f (%zu) recall@5 %.3f (%zu) MRR %.3f\n", what, t->n,
	       (double)t->at1 / (double)t->n, t->at1, (double)t->at5 / (double)t->n, t->at5,
	       t->rr / (double)t->n);
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void
timed(const struct toolreg *r, char **q, size_t nq)
{
	struct toolreg_hit h[5];
	size_t rounds = (TIMED_QUERIES + nq - 1) / nq, n = 0;
	double *t = xcalloc(rounds * nq, sizeof(*t)), t0 = clock_mono();

	for (size_t rep = 0; rep < rounds; rep++)
		for (size_t i = 0; i < nq; i++) {
			double s = clock_mono();
			toolreg_search(r, q[i], NULL, h, 5);
			t[n++] = clock_mono() - s;
		}
	double total = clock_mono() - t0;
	qsort(t, n, sizeof(*t), cmp);
	printf("built-in, %5zu tools, %zu queries x %zu: mean %.1f us, median %.1f us, "
	       "p99 %.1f us, worst %.1f us per query\n",
	       toolreg_size(r), nq, rounds, total / (double)n * 1e6, t[n / 2] * 1e6,
	       t[n * 99 / 100] * 1e6, t[n - 1] * 1e6);
	free(t);
}

int
main(int argc, char *argv[])
{
	static const char *const extra[] = {"fast", "batch", "robust", "gpu", "sparse",
					    "streaming", "parallel", "approximate"};
	struct tooldefs base = {0}, big = {0};
	char why[8192], line[2048];
	int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
	const char *dir = argv[1 + verbose];

	if (argc != 2 + verbose || tooldefs_load_dir(&base, dir, why, sizeof(why)) < 0) {
		fprintf(stderr, "usage: toolsearch_recall [-v] DATADIR\n%s\n",
			argc == 2 + verbose ? why : "");
		return 2;
	}
	struct toolreg *r = toolreg_build(&base);
	char *qpath = xasprintf("%s/queries.tsv", dir);
	FILE *f = fopen(qpath, "r");
	if (!f) {
		perror(qpath);
		return 2;
	}
	char **q = NULL;
	size_t nq = 0, bad = 0, ns = 0;
	struct tally all = {.name = "all"}, sec[SECTIONS] = {0};
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');
		if (strncmp(line, "# == ", 5) == 0 && ns < SECTIONS) {
			snprintf(sec[ns].name, sizeof(sec[ns].name), "%.*s",
				 (int)strcspn(line + 5, ":\n"), line + 5);
			ns++;
			continue;
		}
		if (line[0] == '#' || !tab)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*tab = '\0';
		long want = toolreg_find(r, line);
		if (want < 0) {
			fprintf(stderr, "%s: no tool %s\n", qpath, line);
			bad++;
			continue;
		}
		q = xreallocarray(q, nq + 1, sizeof(*q));
		q[nq++] = xstrdup(tab + 1);
		struct toolreg_hit h[DEPTH];
		size_t n = toolreg_search(r, tab + 1, NULL, h, DEPTH), rank = 0;
		for (size_t i = 0; i < n && !rank; i++)
			if (h[i].tool == (size_t)want)
				rank = i + 1;
		for (struct tally *t = &all; t; t = t == &all && ns ? &sec[ns - 1] : NULL) {
			t->n++;
			t->at1 += rank == 1;
			t->at5 += rank >= 1 && rank <= 5;
			t->rr += rank ? 1.0 / (double)rank : 0;
		}
		if (verbose && rank != 1)
			printf("  miss: \"%s\" wants %s, ranked %zu, first %s\n", tab + 1, line,
			       rank, n ? toolreg_tool(r, h[0].tool)->name : "(nothing)");
	}
	fclose(f);
	if (bad || !nq)
		return 2;
	snprintf(line, sizeof(line), "built-in, %zu tools, all", base.n);
	tally_print(line, &all);
	for (size_t i = 0; i < ns; i++)
		if (sec[i].n) {
			snprintf(line, sizeof(line), "built-in, %zu tools, %s", base.n, sec[i].name);
			tally_print(line, &sec[i]);
		}
	timed(r, q, nq);

	big.v = xcalloc(BIG, sizeof(*big.v));
	for (size_t i = 0; i < BIG; i++) {
		const struct tool_def *b = &base.v[i % base.n];
		struct tool_def *d = &big.v[big.n++];
		*d = *b; /* borrowed strings; only name and description are new */
		d->name = xasprintf("%s_%zu", b->name, i / base.n);
		d->description = xasprintf("%s (%s variant %zu)", b->description,
					   extra[i % (sizeof(extra) / sizeof(extra[0]))], i / base.n);
	}
	struct toolreg *rb = toolreg_build(&big);
	timed(rb, q, nq);
	return 0;
}
