/* publish.c - see publish.h. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "buf.h"
#include "err.h"
#include "publish.h"
#include "xmalloc.h"

const struct config_publisher *
publish_find(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->publishers.n; i++) {
		const struct config_publisher *p = config_publisher_at(cfg, i);
		if (name == NULL || strcmp(p->name, name) == 0)
			return p;
	}
	return NULL;
}

/* Add `v` as one safe path component: what is not [A-Za-z0-9._@-] becomes _. */
static void
add_component(struct buf *b, const char *v)
{
	if (v[0] == '\0' || strcmp(v, ".") == 0 || strcmp(v, "..") == 0) {
		buf_adds(b, "_");
		return;
	}
	for (; *v; v++) {
		char ch = *v;
		buf_add(b, isalnum((unsigned char)ch) || strchr("._@-", ch) ? &ch : "_", 1);
	}
}

char *
publish_path(const struct config_publisher *p, const struct publish_src *src)
{
	struct buf b;
	char date[16];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	buf_init(&b);
	for (const char *s = p->prefix; *s;) {
		if (strncmp(s, "{identity}", 10) == 0) {
			add_component(&b, src->identity);
			s += 10;
		} else if (strncmp(s, "{session}", 9) == 0) {
			add_component(&b, src->session);
			s += 9;
		} else if (strncmp(s, "{date}", 6) == 0) {
			buf_adds(&b, date);
			s += 6;
		} else {
			buf_add(&b, s++, 1);
		}
	}
	while (b.len > 0 && b.data[b.len - 1] == '/')
		b.len--;
	if (b.len > 0)
		buf_adds(&b, "/");
	buf_adds(&b, src->name);
	return buf_release(&b);
}

int
publish_check(const struct config_publisher *p, const struct publish_src *src, uint64_t *size,
	      char *why, size_t why_len)
{
	struct stat st;

	if (fstat(src->fd, &st) == -1)
		return err_set(why, why_len, "%s: fstat: %s", src->name, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return err_set(why, why_len, "%s: not a regular file", src->name);
	if ((uint64_t)st.st_size > (uint64_t)p->max_bytes)
		return err_set(why, why_len, "%s: %lld bytes is over publisher %s's max_bytes "
					     "(%d)", src->name, (long long)st.st_size, p->name,
			       p->max_bytes);
	*size = (uint64_t)st.st_size;
	return 0;
}

const struct publish_backend *
publish_backend_for(const struct config_publisher *p)
{
	static const struct publish_backend *const backends[] = {&publish_backend_local,
								  &publish_backend_azure};

	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (strcmp(p->type, backends[i]->type) == 0)
			return backends[i];
	return &publish_backend_azure;
}

int
publishers_check(const struct config *cfg, char *why, size_t why_len)
{
	char err[ERR_LEN];

	for (size_t i = 0; i < cfg->publishers.n; i++) {
		const struct config_publisher *p = config_publisher_at(cfg, i);
		if (publish_backend_for(p)->check(p, err, sizeof(err)) == -1)
			return err_set(why, why_len, "publisher %s: %s", p->name, err);
	}
	return 0;
}

int
publish(const struct config_publisher *p, const struct publish_src *src,
	struct publish_out *out, char *why, size_t why_len)
{
	memset(out, 0, sizeof(*out));
	return publish_backend_for(p)->publish(p, src, out, why, why_len);
}

struct json_object *
publish_json(const struct config_publisher *p, const struct publish_src *src,
	     const struct publish_out *out)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "publisher", json_object_new_string(p->name));
	json_object_object_add(o, "uri", json_object_new_string(out->uri));
	json_object_object_add(o, "name", json_object_new_string(src->name));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)out->size));
	json_object_object_add(o, "sha256", json_object_new_string(out->sha256));
	json_object_object_add(o, "mime_type", json_object_new_string(src->mime_type));
	return o;
}
