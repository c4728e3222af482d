/*
 * ipc_schema.h - what the pieces of the message codec share, and nothing
 * for its users (they include ipc_msg.h): each message is a struct described
 * by a table of fields (ipc_schema.c); one decoder (ipc_decode.c), one
 * encoder (ipc_encode.c) and one free walk (ipc_schema.c) read the tables.
 * The tables are static and constant; nothing here allocates or owns.
 */
#ifndef COMMON_IPC_SCHEMA_H
#define COMMON_IPC_SCHEMA_H

#include <stddef.h>

#include "ipc_msg.h"

/* Bounds of what no field may exceed, whatever its table says. */
#define IPC_STR_MAX (1u << 20) /* one path, name or environment value */
#define IPC_VEC_MAX 4096       /* items of an argv, env or allow_mime */
#define IPC_TEXT_MAX IPC_MAX_PAYLOAD

enum ipc_kind {
	IPC_K_BOOL,   /* int, 0 or 1 */
	IPC_K_INT,    /* int */
	IPC_K_U32,    /* uint32_t */
	IPC_K_U64,    /* uint64_t (bounds below 2^53) */
	IPC_K_DOUBLE, /* double, finite */
	IPC_K_STR,    /* char *, no NUL, at most hi bytes */
	IPC_K_TEXT,   /* struct ipc_text, at most hi bytes */
	IPC_K_STRV,   /* char **, NULL-terminated; an array of IPC_K_STR on the wire */
	IPC_K_ENV,    /* char ** of "NAME=value"; an object of strings on the wire */
	IPC_K_ENUM,   /* an enum; one of `choices` on the wire */
	IPC_K_OBJ,    /* pointer to a struct of `sub`; NULL when absent (or null) */
	IPC_K_LIST,   /* array of structs of `sub`, count at count_off */
	IPC_K_JSON,   /* struct json_object *: any JSON value but null */
};

/* Field flags. */
#define IPC_REQ 0x01	  /* must be present */
#define IPC_OPT 0x00	  /* may be absent: zero then, and left out when zero */
#define IPC_NONEMPTY 0x02 /* a string or list with at least one item */
#define IPC_ABS 0x04	  /* a string starting with '/' */
#define IPC_NAME 0x08	  /* one path component of [A-Za-z0-9._-] */
#define IPC_NULL 0x10	  /* IPC_K_OBJ: null on the wire is NULL */

struct ipc_schema;

struct ipc_field {
	const char *name;
	enum ipc_kind kind;
	size_t off;
	unsigned flags;
	double lo, hi; /* numbers: bounds; strings and lists: hi is the maximum length */
	const char *const *choices;   /* IPC_K_ENUM, NULL-terminated */
	const struct ipc_schema *sub; /* IPC_K_OBJ, IPC_K_LIST */
	size_t count_off;	      /* IPC_K_LIST */
};

struct ipc_schema {
	const char *name; /* for errors: "START", "START.limits" */
	size_t size;
	const struct ipc_field *fields;
	size_t nfields;
	/* A rule between fields, once each is valid; 0, or -1 with what is wrong in why. */
	int (*check)(const void *msg, char *why, size_t why_len);
};

/* The schema of message type `type`; NULL for the types without fields. */
const struct ipc_schema *ipc_schema_of(unsigned type);
/* Free what the fields of msg (a struct of s) own, and zero it; msg itself stays.
 * `view`: msg is a view (ipc_msg_view), whose strings and JSON values are borrowed. */
void ipc_schema_free(const struct ipc_schema *s, void *msg, int view);

#endif
