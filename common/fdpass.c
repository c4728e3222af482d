/* fdpass.c - see fdpass.h. */
#include "autoconf.h"

#include <string.h>
#include <unistd.h>

#include "fdpass.h"

void
fdpass_attach(struct msghdr *mh, union fdpass_one *ctl, int fd)
{
	memset(ctl, 0, sizeof(*ctl));
	mh->msg_control = ctl->buf;
	mh->msg_controllen = sizeof(ctl->buf);
	struct cmsghdr *c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

int
fdpass_take(struct msghdr *mh, int *first)
{
	int count = 0;

	*first = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (count++ == 0)
				*first = fd;
			else
				close(fd);
		}
	}
	return count;
}
