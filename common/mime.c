/* mime.c - see mime.h. */
#include "autoconf.h"

#include <string.h>
#include <strings.h>

#include "mime.h"

static const struct {
	const char *magic;
	size_t len;
	const char *type;
} magics[] = {
	{"\x89PNG\r\n\x1a\n", 8, "image/png"},
	{"\xff\xd8\xff", 3, "image/jpeg"},
	{"GIF87a", 6, "image/gif"},
	{"GIF89a", 6, "image/gif"},
	{"%PDF-", 5, "application/pdf"},
};

static const struct {
	const char *ext;
	const char *type;
} exts[] = {
	{"png", "image/png"},	       {"jpg", "image/jpeg"},	      {"jpeg", "image/jpeg"},
	{"gif", "image/gif"},	       {"svg", "image/svg+xml"},      {"webp", "image/webp"},
	{"pdf", "application/pdf"},   {"csv", "text/csv"},	      {"tsv", "text/tab-separated-values"},
	{"txt", "text/plain"},	       {"log", "text/plain"},	      {"md", "text/markdown"},
	{"html", "text/html"},	       {"htm", "text/html"},	      {"json", "application/json"},
	{"xml", "application/xml"},   {"yaml", "application/yaml"},  {"yml", "application/yaml"},
	{"py", "text/x-python"},       {"parquet", "application/vnd.apache.parquet"},
	{"zip", "application/zip"},   {"gz", "application/gzip"},
	{"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
};

const char *
mime_guess(const char *name, const unsigned char *head, size_t n)
{
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if (n >= magics[i].len && memcmp(head, magics[i].magic, magics[i].len) == 0)
			return magics[i].type;
	const char *slash = strrchr(name, '/');
	const char *dot = strrchr(slash ? slash + 1 : name, '.');
	if (dot && dot[1] != '\0')
		for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
			if (strcasecmp(dot + 1, exts[i].ext) == 0)
				return exts[i].type;
	return "application/octet-stream";
}

int
mime_is_text(const char *type)
{
	return strncmp(type, "text/", 5) == 0 || strcmp(type, "application/json") == 0 ||
	       strcmp(type, "application/xml") == 0 || strcmp(type, "application/yaml") == 0 ||
	       strcmp(type, "image/svg+xml") == 0;
}
