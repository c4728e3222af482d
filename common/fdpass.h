/*
 * fdpass.h - one descriptor passed with a message over an AF_UNIX socket
 * (SCM_RIGHTS): attaching it to a sendmsg, and taking what a recvmsg
 * brought. Shared by the worker protocol (ipc.c) and the parent's
 * (priv_msg.c), which differ only in what they accept.
 */
#ifndef COMMON_FDPASS_H
#define COMMON_FDPASS_H

#include <sys/socket.h>

/* Room for the control data of one descriptor. */
union fdpass_one {
	struct cmsghdr align;
	char buf[CMSG_SPACE(sizeof(int))];
};

/* Attach `fd` (borrowed) to `mh` through `ctl`, which must live until the sendmsg. */
void fdpass_attach(struct msghdr *mh, union fdpass_one *ctl, int fd);

/*
 * The descriptors in the control data of a received `mh`: returns how
 * many there were; *first gets the first (the caller owns it) or -1, and
 * every other is closed, so none leaks whatever the caller decides.
 */
int fdpass_take(struct msghdr *mh, int *first);

#endif
