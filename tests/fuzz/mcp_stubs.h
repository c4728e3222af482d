/*
 * mcp_stubs.h - the fixed world fuzz_mcp runs mcp.c in (see mcp_stubs.c).
 */
#ifndef TESTS_FUZZ_MCP_STUBS_H
#define TESTS_FUZZ_MCP_STUBS_H

/* The caller's session, and one of another identity. */
#define STUB_SESSION_ID "0123456789abcdef0123456789abcdef"
#define STUB_OTHER_ID "fedcba9876543210fedcba9876543210"

/* Abort unless every stub session is back to its one standing reference. */
void stub_check_refs(void);

#endif
