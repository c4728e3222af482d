/*
 * toolsearch.c - the time of one search_{name}_tools ranking over 1,000
 * tools (issue 15: under a millisecond). Not installed, not in make check.
 *
 * The 1,000 tools are the labelled set's (tests/unit/data/tools) repeated
 * with varied names and descriptions, so that word statistics stay those
 * of real definitions; each query of queries.tsv is run REPEAT times.
 *
 * Build and run from the build tree (bench/README.md):
 *   cc -O2 -Icommon -Isupervisor/front -I. bench/toolsearch.c supervisor/front/toolreg.c \
 *      supervisor/front/toolreg_words.c common/libcommon.a \
 *      $(pkg-config --libs yaml-0.1 json-c) -lstemmer -lm -o bench/toolsearch
 *   bench/toolsearch tests/unit/data/tools
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

#define TOOLS 1000
#define REPEAT 200

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int
main(int argc, char *argv[])
{
	static const char *const extra[] = {"fast", "batch", "robust", "gpu", "sparse",
					    "streaming", "parallel", "approximate"};
	struct tooldefs base = {0}, big = {0};
	char why[4096], line[1024];

	if (argc != 2 || tooldefs_load_dir(&base, argv[1], why, sizeof(why)) < 0) {
		fprintf(stderr, "usage: toolsearch DATADIR (%s)\n", argc == 2 ? why : "");
		return 2;
	}
	big.v = xcalloc(TOOLS, sizeof(*big.v));
	for (size_t i = 0; i < TOOLS; i++) {
		const struct tool_def *b = &base.v[i % base.n];
		struct tool_def *d = &big.v[big.n++];
		*d = *b; /* borrowed strings; only name and description are new */
		d->name = xasprintf("%s_%zu", b->name, i / base.n);
		d->description = xasprintf("%s (%s variant %zu)", b->description,
					   extra[i % (sizeof(extra) / sizeof(extra[0]))], i / base.n);
	}
	struct toolreg *r = toolreg_build(&big);
	char *qpath = xasprintf("%s/queries.tsv", argv[1]);
	FILE *f = fopen(qpath, "r");
	char **q = NULL;
	size_t nq = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strchr(line, '\t'))
			continue;
		line[strcspn(line, "\n")] = '\0';
		q = xreallocarray(q, nq + 1, sizeof(*q));
		q[nq++] = xstrdup(strchr(line, '\t') + 1);
	}
	if (f)
		fclose(f);
	struct toolreg_hit h[5];
	double *t = xcalloc(nq * REPEAT, sizeof(*t)), t0 = clock_mono();
	size_t found = 0, n = 0;
	for (int rep = 0; rep < REPEAT; rep++)
		for (size_t i = 0; i < nq; i++) {
			double s = clock_mono();
			found += toolreg_search(r, q[i], NULL, h, 5);
			t[n++] = clock_mono() - s;
		}
	double total = clock_mono() - t0;
	qsort(t, n, sizeof(*t), cmp);
	printf("%zu tools, %zu queries x %d: mean %.1f us, median %.1f us, p99 %.1f us, "
	       "worst %.1f us per query (%zu hits)\n",
	       big.n, nq, REPEAT, total / (double)n * 1e6, t[n / 2] * 1e6, t[n * 99 / 100] * 1e6,
	       t[n - 1] * 1e6, found);
	return 0;
}
