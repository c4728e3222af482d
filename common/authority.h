/*
 * authority.h - the one strict parser of URL authorities (host[:port]) and
 * browser origins (scheme://host[:port]), and the loopback test.
 *
 * Everything that reads an authority uses it: the Origin and Host checks
 * against DNS rebinding, allowed_origins, the listen address and the asset
 * sources of the configuration. It accepts only what a browser or a sane
 * client sends, in canonical form:
 *
 *   host   a name of letters, digits, '-' and '_' in dot-separated labels
 *          (1-63 bytes each, 253 in all, one trailing dot allowed, any case),
 *          or a dotted-quad IPv4 address in canonical form (four decimal
 *          parts 0-255 without leading zeros), or an IPv6 address in
 *          brackets without a zone.
 *   port   1 to 5 digits, at most 65535.
 *
 * Anything else is refused, not guessed at: userinfo ('@'), percent
 * encoding, spaces and control bytes, empty labels, and the IPv4 forms
 * that some resolvers accept and others do not (127.1, 2130706433,
 * 0x7f.1, 0177.0.0.1, 127.0.0.1.): a name whose last label is numeric or
 * starts with 0x is read as an IPv4 address, as browsers read it, and
 * must then be a canonical dotted quad.
 *
 * Loopback is exactly: an IPv4 address in 127.0.0.0/8, the IPv6 address
 * ::1 (in any spelling inet_pton reads, as [0:0:0:0:0:0:0:1]), and the
 * name "localhost" (any case, with or without its trailing dot). Names
 * merely resembling those (localhost.evil.com, 127.0.0.1.nip.io) are
 * names like any other; IPv4-mapped IPv6 ([::ffff:127.0.0.1]) is not
 * loopback.
 */
#ifndef COMMON_AUTHORITY_H
#define COMMON_AUTHORITY_H

#include <stddef.h>

#include "err.h"

#define AUTHORITY_HOST_MAX 254 /* a 253-byte name and its trailing dot */

enum authority_kind {
	AUTHORITY_NAME,
	AUTHORITY_IPV4,
	AUTHORITY_IPV6,
};

/* A parsed authority; every field is filled by authority_parse(). */
struct authority {
	enum authority_kind kind;
	/* Lower case, without a trailing dot, IPv6 without brackets. */
	char host[AUTHORITY_HOST_MAX + 1];
	int port; /* -1 when the authority has none */
};

/* A parsed origin: scheme ("http" or "https", lower case) and authority. */
struct origin {
	char scheme[8];
	struct authority auth;
};

/*
 * Parse `s` ("host", "host:port", "[v6]", "[v6]:port") as a Host header
 * carries it. Returns 0, or -1 with the reason in why[why_len] (may be NULL).
 */
int authority_parse(const char *s, struct authority *a, char *why, size_t why_len);
/* Parse a bare host, as the listen address gives it: no port, no brackets. */
int authority_parse_host(const char *host, struct authority *a, char *why, size_t why_len);
/*
 * Parse an Origin header or an allowed_origins entry: "http://" or
 * "https://" and an authority, nothing after it ("null" and "" are not
 * origins). Returns 0, or -1 with the reason in why[why_len] (may be NULL).
 */
int origin_parse(const char *s, struct origin *o, char *why, size_t why_len);
/* Nonzero if `a` names this host's loopback interface (see above). */
int authority_is_loopback(const struct authority *a);
/* Nonzero if the bare host `host` parses and names loopback. */
int authority_host_is_loopback(const char *host);
/* Nonzero if two origins are the same: scheme, host and port (80/443 filled in). */
int origin_equal(const struct origin *a, const struct origin *b);
/*
 * Nonzero if the Host header authority `a` addresses origin `o`: the same
 * host, and the same port once a missing one is taken as o's scheme's.
 */
int origin_serves(const struct origin *o, const struct authority *a);

#endif
