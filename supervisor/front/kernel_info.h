/*
 * kernel_info.h - what the kernels said of their language in
 * kernel_info_reply (READY's language and language_version), for the
 * execute tool's description. Owns the last values heard; any thread may
 * read them.
 */
#ifndef SUPERVISOR_KERNEL_INFO_H
#define SUPERVISOR_KERNEL_INFO_H

/* Note a READY's language and version (either may be NULL); borrowed. */
void kernel_info_set(const char *language, const char *version);
/* "R 4.2.2", "R", or NULL before any kernel was ready. Caller frees. */
char *kernel_info_text(void);

#endif
