/* json_member.c - see json_member.h. */
#include "autoconf.h"

#include "json_member.h"

const char *
json_member_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

void
json_member_share(struct json_object *to, const char *to_key, struct json_object *from,
		  const char *key)
{
	json_object_object_add(to, to_key, json_object_get(json_object_object_get(from, key)));
}
