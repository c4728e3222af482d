#!/bin/sh
# 109-startup-errors: a configuration the front could not serve with is
# refused once, before the fork. Each row of the table is one broken
# configuration (secret files that are loose, missing, a kernel's, or
# malformed; auth.ca_file; publishers; addresses the front cannot listen on): codeexecd
# -n and a real start both exit 1 with the same message, and the start
# never forks a front, so the log holds no restart.
. "$(dirname "$0")/lib.sh"

require_binaries
[ "$(id -u)" = 0 ] || skip "needs root: the secret files' owner checks"
setup_tmp
PORT=$(free_port)
write_config "$TMPD/base.yaml" # sets USER_LINE: kernels run as $TEST_USER

KEY=c2VjcmV0IGtleSBieXRlcw==
secret() { # file mode [owner] [text]
	printf '%s\n' "${4:-$KEY}" >"$TMPD/$1"
	chmod "$2" "$TMPD/$1"
	chown "${3:-root}:root" "$TMPD/$1"
}
tokens() { # extra yaml lines for auth.mode tokens with file $1
	printf 'auth:\n  mode: tokens\n  tokens_file: %s\n' "$TMPD/$1"
}
search() {
	printf 'tool_search_backend: azure_ai_search\nazure_ai_search:\n'
	printf '  endpoint: https://x.search.windows.net\n  index: tools\n  api_key_file: %s\n' "$TMPD/$1"
}
blob() { # key (sas_token_file or account_key_file), file
	printf 'publishers:\n  - name: blob\n    type: azure_blob\n'
	printf '    account_url: https://acct.blob.core.windows.net\n    container: c\n'
	printf '    %s: %s\n' "$1" "$TMPD/$2"
}
oauth_ca() { # extra yaml lines for auth.mode oauth trusting CA file $1
	printf 'auth:\n  mode: oauth\n  issuer: https://issuer.example\n  ca_file: %s\n' "$TMPD/$1"
}
HASH=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
mkdir "$TMPD/adir" && chmod 700 "$TMPD/adir"
: >"$TMPD/a-file"

rows=0
# row NAME EXPECTED-TEXT: $EXTRA is added to the base configuration.
row() {
	rows=$((rows + 1))
	conf=$TMPD/$1.yaml
	{ cat "$TMPD/base.yaml"; printf '%s\n' "$EXTRA"; } >"$conf"
	if "$CODEEXECD" -n -f "$conf" 2>"$TMPD/$1.n"; then
		fail "$1: codeexecd -n accepted it"
	fi
	msg=$(sed -n 's/^codeexecd: //p' "$TMPD/$1.n" | tail -n 1)
	case $msg in
	*"$2"*) ;;
	*) fail "$1: codeexecd -n said: $(cat "$TMPD/$1.n")" ;;
	esac
	rc=0
	timeout 60 "$CODEEXECD" -d -f "$conf" -W "$WORKER" >"$TMPD/$1.log" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || fail "$1: the start exited $rc, not 1: $(cat "$TMPD/$1.log")"
	grep -qF -- "$msg" "$TMPD/$1.log" ||
		fail "$1: the start did not say what -n said ($msg): $(cat "$TMPD/$1.log")"
	[ "$(grep -cF -- "$msg" "$TMPD/$1.log")" -eq 1 ] || fail "$1: the message came more than once"
	if grep -qE 'front [0-9]+ started|starting a new front|front .*exited' "$TMPD/$1.log"; then
		fail "$1: a front was started: $(cat "$TMPD/$1.log")"
	fi
	ok "$1: -n and the start both exit 1 with: $msg"
}

secret tok-0644 644 root "agent: $HASH"
EXTRA=$(tokens tok-0644) row tokens-other-readable "mode 0644 lets its group or others read or write it; chmod 600 $TMPD/tok-0644"
secret tok-0640 640 root "agent: $HASH"
EXTRA=$(tokens tok-0640) row tokens-group-readable "mode 0640 lets its group or others read or write it; chmod 600"
secret tok-user 600 "$TEST_USER" "agent: $HASH"
EXTRA=$(tokens tok-user) row tokens-kernels-own "owned by $TEST_USER (uid $(id -u "$TEST_USER")), an identity kernels run as, so a kernel could read it; chown root $TMPD/tok-user"
EXTRA=$(tokens tok-none) row tokens-missing "auth.tokens_file $TMPD/tok-none: No such file or directory"
EXTRA=$(tokens adir) row tokens-directory "auth.tokens_file $TMPD/adir: not a regular file"
secret tok-bad 600 root "agent b: $HASH"
EXTRA=$(tokens tok-bad) row tokens-malformed "auth.tokens_file $TMPD/tok-bad: entry 1 is not"
secret key-0604 604
EXTRA=$(search key-0604) row search-key-other-readable "azure_ai_search.api_key_file $TMPD/key-0604: mode 0604"
EXTRA=$(search key-none) row search-key-missing "azure_ai_search.api_key_file $TMPD/key-none: No such file"
secret key-bad 600 root 'not a key!'
EXTRA=$(search key-bad) row search-key-malformed "api_key_file $TMPD/key-bad: the first line is not a key"
secret sas-0640 640
EXTRA=$(blob sas_token_file sas-0640) row sas-group-readable "publisher blob: sas_token_file $TMPD/sas-0640: mode 0640"
secret sas-user 600 "$TEST_USER"
EXTRA=$(blob sas_token_file sas-user) row sas-kernels-own "publisher blob: sas_token_file $TMPD/sas-user: owned by $TEST_USER"
secret sas-empty 600 root ' '
EXTRA=$(blob sas_token_file sas-empty) row sas-empty "sas_token_file $TMPD/sas-empty: empty"
secret ak-0644 644
EXTRA=$(blob account_key_file ak-0644) row account-key-other-readable "publisher blob: account_key_file $TMPD/ak-0644: mode 0644"
secret ak-bad 600 root 'not base64!'
EXTRA=$(blob account_key_file ak-bad) row account-key-malformed "$TMPD/ak-bad does not hold a base64 account key"
EXTRA="publishers:
  - name: here
    type: local
    base_dir: $TMPD/a-file/out" row local-base-dir-under-a-file "publisher here: base_dir $TMPD/a-file/out"
CFG_EXTRA="allow_external_network_boundary: true" CFG_LISTEN=192.0.2.1:$PORT \
	write_config "$TMPD/base.yaml"
# auth.ca_file holds no secret, but the front must read it to fetch the JWKS.
secret ca-root-only 600 root "-----BEGIN CERTIFICATE-----"
secret ca-junk 644 root "not a certificate"
EXTRA=$(oauth_ca ca-none) row oauth-ca-missing "auth.ca_file $TMPD/ca-none: No such file or directory"
EXTRA=$(oauth_ca ca-root-only) row oauth-ca-front-cannot-read "auth.ca_file $TMPD/ca-root-only: mode 0600, owner 0: the front (uid $(id -u "$TEST_USER")) cannot read it; it holds no secret: chmod 644"
EXTRA=$(oauth_ca ca-junk) row oauth-ca-not-pem "auth.ca_file $TMPD/ca-junk: holds no PEM certificate"
EXTRA= row listen-not-local "cannot listen on 192.0.2.1:$PORT: Cannot assign requested address"
CFG_EXTRA= CFG_LISTEN= write_config "$TMPD/base.yaml"
EXTRA="metrics_listen: \"192.0.2.1:$(free_port)\"" row metrics-listen-not-local "metrics_listen: cannot listen on 192.0.2.1:"
[ "$rows" -ge 15 ] || fail "only $rows broken configurations"
ok "$rows broken configurations, each refused once before the fork"
