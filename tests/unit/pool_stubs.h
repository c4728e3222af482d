/*
 * pool_stubs.h - a pool without workers, for test_session and test_job:
 * session.c and job.c run as they are, and pool_execute answers from the
 * code it is given (see pool_stubs.c).
 */
#ifndef TESTS_UNIT_POOL_STUBS_H
#define TESTS_UNIT_POOL_STUBS_H

#include "pool.h"

/*
 * Code the stand-in pool_execute understands: "ok" succeeds, "fail" raises
 * ValueError, "timeout" ends as TimeoutError, "block" runs until
 * stub_unblock() or pool_interrupt(). Anything else succeeds.
 */
struct pool_stub {
	int no_worker;		/* pool_take fails with NoKernel's reason */
	int takes;		/* pool_take calls that gave a worker */
	int releases;		/* pool_release calls */
	int interrupts;		/* pool_interrupt calls */
	int revivals;		/* pool_revive_join calls */
	uint32_t revived_dir;	/* the directory of the last */
	int revivals_left;	/* pool_revive_leave calls */
	int removed_dirs;	/* parent_link_remove_dir calls */
	int blocked;		/* executions waiting in "block" now */
	char order[256];	/* the code of each execution, in the order run, ";"-joined */
};
extern struct pool_stub pool_stub;

/* Let every "block" execution finish. Lock held. */
void stub_unblock(void);
/* Wait (lock held) until `n` executions are blocked, at most 10 s; 0 if they were. */
int stub_wait_blocked(int n);

#endif
