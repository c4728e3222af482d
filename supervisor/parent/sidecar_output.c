/*
 * sidecar_output.c - what a sidecar writes (sidecar_int.h): logged line by
 * line, its last lines kept for the message when it fails.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "sidecar_int.h"

/* Keep `line` as the newest of the tail, dropping the oldest bytes. */
static void
tail_add(struct sidecar *s, const char *line)
{
	size_t have = strlen(s->tail), add = strlen(line) + 1;

	if (add >= TAIL_LEN) {
		snprintf(s->tail, TAIL_LEN, "%s", line + (add - TAIL_LEN / 2));
		return;
	}
	if (have + add + 1 > TAIL_LEN) {
		const char *cut = s->tail + (have + add + 1 - TAIL_LEN);
		const char *nl = strchr(cut, '\n');
		memmove(s->tail, nl ? nl + 1 : cut, strlen(nl ? nl + 1 : cut) + 1);
		have = strlen(s->tail);
	}
	snprintf(s->tail + have, TAIL_LEN - have, "%s%s", have ? "\n" : "", line);
}

static void
emit_line(struct sidecar *s)
{
	s->partial[s->partial_len] = '\0';
	log_info("sidecar %s: %s", s->sc->name, s->partial);
	tail_add(s, s->partial);
	s->partial_len = 0;
}

/* Log what the sidecar wrote, line by line; at EOF, close the pipe. */
void
sidecar_drain(struct sidecar *s)
{
	char buf[4096];
	ssize_t n;

	while (s->out != -1 && (n = read(s->out, buf, sizeof(buf))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				log_warn("read the output of sidecar %s", s->sc->name);
			if (errno == EAGAIN)
				return;
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n' || s->partial_len == sizeof(s->partial) - 1)
				emit_line(s);
			if (buf[i] != '\n')
				s->partial[s->partial_len++] = buf[i];
		}
	}
	if (s->partial_len)
		emit_line(s);
	close(s->out);
	s->out = -1;
}
