/*
 * publish.h - publishers: where NAME_send and on-close publishing put a
 * session's file (seed 000's LocalFilePublisher and BlobPublisher).
 *
 * A publisher reads the file from a descriptor the worker opened
 * (sfiles.h), never from a path: it checks the descriptor is a regular
 * file within max_bytes, then copies it under base_dir (publish_local.c)
 * or uploads it to Azure Blob Storage (publish_azure.c), hashing it with
 * SHA-256 on the way. Called without pool_lock: copies and uploads take
 * long.
 */
#ifndef SUPERVISOR_PUBLISH_H
#define SUPERVISOR_PUBLISH_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "config.h"

/* What to publish: the open file and where it comes from (all borrowed). */
struct publish_src {
	int fd;
	const char *name;	  /* the object's name below the prefix: "plots/a.png" */
	const char *mime_type;
	const char *identity;	  /* for {identity} */
	const char *session;	  /* for {session} */
};

/* What a publish made. */
struct publish_out {
	char *uri;	 /* owned: file:///..., https://ACCOUNT.../CONTAINER/... */
	uint64_t size;
	char sha256[65];
};

/* The publisher called `name` (NULL: the first), or NULL. */
const struct config_publisher *publish_find(const struct config *cfg, const char *name);
/*
 * Publish `src` with publisher `p`. 0 with *out filled (free out->uri),
 * or -1 with why[why_len] saying what failed (a file over max_bytes, an
 * I/O error naming the path, the service's own message).
 */
int publish(const struct config_publisher *p, const struct publish_src *src,
	    struct publish_out *out, char *why, size_t why_len);
/*
 * For `codeexecd -n`: each publisher's credential loads (a SAS token or a
 * base64 account key; a managed identity's token is not fetched) and its
 * base_dir is, or can be made below, a directory. 0, or -1 with why
 * naming the first publisher that fails.
 */
int publishers_check(const struct config *cfg, char *why, size_t why_len);
/* The publish result as {publisher, uri, size_bytes, sha256, mime_type}. Caller owns. */
struct json_object *publish_json(const struct config_publisher *p, const struct publish_src *src,
				 const struct publish_out *out);

/* ---- for the backends ---- */

/* The object's path: prefix expanded, then src->name. Caller frees. */
char *publish_path(const struct config_publisher *p, const struct publish_src *src);
/*
 * Check src->fd is a regular file of at most p->max_bytes; its size in
 * *size. 0, or -1 with why.
 */
int publish_check(const struct config_publisher *p, const struct publish_src *src,
		  uint64_t *size, char *why, size_t why_len);

/* The one interface of the publishers, as builder.h's for the builders. */
struct publish_backend {
	const char *type; /* the publisher's `type` in the configuration */
	/* For `codeexecd -n` (publishers_check): 0, or -1 with why. */
	int (*check)(const struct config_publisher *p, char *why, size_t why_len);
	/* Publish src (out zeroed by the caller): 0 with *out filled, or -1 with why. */
	int (*publish)(const struct config_publisher *p, const struct publish_src *src,
		       struct publish_out *out, char *why, size_t why_len);
};

extern const struct publish_backend publish_backend_local;
extern const struct publish_backend publish_backend_azure;

/* The backend of publisher p (its type, which config.c checked). */
const struct publish_backend *publish_backend_for(const struct config_publisher *p);
/* For tests: the instance metadata endpoint's "http://HOST:PORT" (NULL: Azure's). */
void publish_azure_imds_base(const char *base);

#endif
