/*
 * pylit.h - values as Python literals, for the Python source the daemon
 * writes (warm-up, identities, installs, batches).
 *
 * A string becomes a single-quoted str literal of printable ASCII only:
 * quote and backslash escaped, control characters as \n \r \t or \xNN,
 * valid UTF-8 as \uXXXX or \UXXXXXXXX (never a surrogate pair, which
 * Python reads as two characters, unlike JSON), and a byte that is not
 * valid UTF-8 (also an encoded surrogate) as \udcNN: the surrogateescape
 * form Python itself gives undecodable bytes, so os.environ and open()
 * turn it back into the same byte. A NUL is \x00. Nothing in the value
 * can end the literal.
 */
#ifndef COMMON_PYLIT_H
#define COMMON_PYLIT_H

#include <stddef.h>

#include <json-c/json.h>

#include "buf.h"

/* Append s[len] to b as a Python str literal. */
void pylit_str(struct buf *b, const char *s, size_t len);
/* The literal of NUL-terminated s. Caller owns. */
char *pylit(const char *s);
/*
 * Append JSON value o to b as the Python literal of the value json.loads
 * would give: None, True, False, int, float, str, list and dict.
 */
void pylit_json(struct buf *b, struct json_object *o);

#endif
