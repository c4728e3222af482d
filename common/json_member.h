/*
 * json_member.h - reading a member of a json-c object that may be absent.
 */
#ifndef COMMON_JSON_MEMBER_H
#define COMMON_JSON_MEMBER_H

#include <json-c/json.h>

/*
 * The string member `key` of object o (borrowed from o), or "" when o lacks
 * it or it is not a string. Never NULL, for text that is simply empty when
 * missing (tool_arg_string is the reader that says NULL instead).
 */
const char *json_member_str(struct json_object *o, const char *key);
/*
 * Add member `key` of `from` to `to` as `to_key`, shared (a new reference,
 * not a copy), or as null when `from` lacks it.
 */
void json_member_share(struct json_object *to, const char *to_key, struct json_object *from,
		       const char *key);

#endif
