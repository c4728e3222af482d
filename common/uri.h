/* uri.h - percent-encoding of URI paths (RFC 3986). */
#ifndef COMMON_URI_H
#define COMMON_URI_H

#include "buf.h"

/*
 * Append `path` to b as URI path segments: for each non-empty part
 * between '/'s, a '/' and the part with every byte but the unreserved
 * ones (A-Z a-z 0-9 - . _ ~) percent-encoded in upper case, as
 * curl_easy_escape() does. Empty parts (leading, trailing, doubled '/')
 * are dropped.
 */
void uri_add_path(struct buf *b, const char *path);

/* The scheme and authority of a session's resources (resources.h). */
#define URI_SESSION "codeexecd://session/"
/*
 * The URI of file `name` (relative to outputs/) of session `id`:
 * URI_SESSION ID/outputs/NAME, each part of the name percent-encoded.
 * Caller frees.
 */
char *uri_session_file(const char *id, const char *name);

#endif
