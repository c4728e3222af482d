/*
 * codemode_warm.h - code mode's part of a kernel's warm-up (issue 35):
 * the package codeexec_upstreams, one module per upstream the session's
 * identity may call, one function per tool (from codeexec_upstreams
 * import NAME; NAME.TOOL(arg=...)), each call sent on the kernel's code
 * mode line (CODEEXEC_UPSTREAM_FD, the worker's upstream_link.h) to the
 * front, which makes it (upstream.h). A module is built when first
 * imported, from the tool list the front gives for the session then.
 * A tool's structuredContent is returned as it is, else its content (a
 * text as str, an image's data as bytes); a failure raises
 * codeexec_upstreams.UpstreamError, whose type says which.
 */
#ifndef SUPERVISOR_CODEMODE_WARM_H
#define SUPERVISOR_CODEMODE_WARM_H

struct buf;

/* Append the warm-up code that installs codeexec_upstreams to `b`. */
void codemode_warm_code(struct buf *b);

#endif
