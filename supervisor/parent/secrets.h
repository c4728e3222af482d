/*
 * secrets.h - the parent's part of the secret files (secret_file.h): which
 * configuration keys name one, opening them before the fork, and handing
 * the copies to the front (PRIV_SECRET, priv_msg.h).
 */
#ifndef SUPERVISOR_SECRETS_H
#define SUPERVISOR_SECRETS_H

#include <stddef.h>
#include <sys/types.h>

struct config;

/*
 * Open every secret file `cfg` names (auth.tokens_file with auth.mode
 * tokens, azure_ai_search.api_key_file, each publisher's sas_token_file
 * and account_key_file, each upstream's token_file, egress.inject's secret_file: the parent's only), refusing those a kernel could read: started as
 * root, those of kernel_uid_range or, without it, of `user`, whose uid is
 * `user` ((uid_t)-1: none). Before the fork, and by `codeexecd -n`. 0, or -1 with why[why_len]
 * naming the first key and file refused and the fix.
 */
int secrets_open(const struct config *cfg, uid_t user, char *why, size_t why_len);
struct monitor;

/* Send the front of `m` a SECRET for each file, then SECRETS_SENT
 * (monitor_send: a front that takes none is taken for gone). */
void secrets_send(struct monitor *m);

#endif
