/*
 * http_linger.h - the lingering close: after an answer sent before the
 * request's body was read (a 413), read and drop what the client still
 * sends, for a bounded time and size, before its socket is closed.
 *
 * Closing a socket that holds unread data makes the kernel send a reset,
 * and a client still uploading then fails on its next write (EPIPE,
 * ECONNRESET) or loses the answer already in its receive queue; most
 * clients read nothing before their body is sent. Reading on until the
 * client has sent it all and closes lets it read the answer; the bounds
 * keep a client that sends forever from holding the thread.
 */
#ifndef SUPERVISOR_HTTP_LINGER_H
#define SUPERVISOR_HTTP_LINGER_H

enum http_linger_end {
	HTTP_LINGER_CLOSED, /* the client closed (or reset) its side */
	HTTP_LINGER_TIME,   /* still sending at the time bound */
	HTTP_LINGER_BYTES,  /* still sending at the size bound */
	HTTP_LINGER_ERROR   /* poll or recv failed: errno in err */
};

struct http_linger_result {
	enum http_linger_end end;
	long long bytes; /* read and dropped */
	double seconds;	 /* spent */
	int err;
};

/*
 * Shut down the write side of socket `fd` (the answer is whole: the FIN
 * tells the client so), then read and drop until the client closes, `max_s`
 * seconds pass or `max_bytes` are read, whichever comes first. The caller
 * still owns and closes `fd`. Fills `r`.
 */
void http_linger(int fd, int max_s, long max_bytes, struct http_linger_result *r);

#endif
