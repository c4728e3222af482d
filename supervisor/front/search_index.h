/*
 * search_index.h - the index search_{name}_tools searches for one caller:
 * the live registry's domain tools and the tools of the upstreams the
 * caller may call (upstream_tooldef.h), in one BM25 index so that one
 * ranking, IDF included, orders both.
 *
 * Building it costs about 25 us a tool (1,000 domain tools: some 25 ms
 * under pool_lock), so the last few are kept, each for one set of
 * upstream lists (the JSON of the lists the caller may call, compared
 * whole) over one registry (toolreg_generation): callers with the same
 * upstreams share one, and a new list or a reload builds anew.
 */
#ifndef SUPERVISOR_SEARCH_INDEX_H
#define SUPERVISOR_SEARCH_INDEX_H

#include <json-c/json.h>

struct toolreg;

/*
 * The index for `identity` (pool_lock held; borrowed until pool_lock is
 * next released): toolreg_live() itself when no upstream tool is there
 * for it (NULL when there is no registry either). Why each upstream it
 * may call is not listed yet goes to *errors (a new object; NULL: none).
 * Never asks an upstream: a missing list is upstream.c's lister's to fetch.
 */
const struct toolreg *search_index(const char *identity, struct json_object **errors);

#endif
