#!/bin/sh
# 001-config-check: `codeexecd -n -f FILE` accepts good configurations and
# rejects bad ones with "FILE:LINE:COLUMN: message" and exit status 1.
. "$(dirname "$0")/lib.sh"

require_binaries
setup_tmp
PORT=$(free_port)

# check_ok FILE: -n must exit 0.
check_ok() {
	"$CODEEXECD" -n -f "$1" >"$TMPD/out" 2>&1 && rc=0 || rc=$?
	if [ $rc -ne 0 ]; then
		cat "$TMPD/out" >&2
		fail "codeexecd -n rejected $1 (exit status $rc)"
	fi
	ok "accepted $(basename "$1")"
}

# check_bad FILE LINE PATTERN: -n must exit 1 with FILE:LINE:COL: on stderr
# and PATTERN (extended regex, case-insensitive) in the message.
check_bad() {
	"$CODEEXECD" -n -f "$1" >"$TMPD/out" 2>"$TMPD/err" && rc=0 || rc=$?
	if [ $rc -ne 1 ]; then
		cat "$TMPD/out" "$TMPD/err" >&2
		fail "$(basename "$1"): codeexecd -n exited $rc, want 1"
	fi
	grep -qE "$1:$2:[0-9]+: " "$TMPD/err" || {
		cat "$TMPD/err" >&2
		fail "$(basename "$1"): no '$1:$2:COL: ' on stderr"
	}
	grep -qiE "$3" "$TMPD/err" || {
		cat "$TMPD/err" >&2
		fail "$(basename "$1"): message does not match /$3/"
	}
	ok "rejected $(basename "$1"): $(head -n 1 "$TMPD/err")"
}

# A good test config, and the sample shipped in etc/.
write_config "$TMPD/good.yaml"
check_ok "$TMPD/good.yaml"
check_ok "$top_srcdir/etc/codeexecd.yaml"

# A minimal file: every key has a default.
printf 'name: tiny\n' >"$TMPD/minimal.yaml"
check_ok "$TMPD/minimal.yaml"

# Bad files: the base config plus one bad line, whose number we know.
n=$(wc -l <"$TMPD/good.yaml")
bad=$((n + 1))
bad_file() {
	cp "$TMPD/good.yaml" "$TMPD/$1.yaml"
	printf '%s\n' "$2" >>"$TMPD/$1.yaml"
}

bad_file unknown-key 'no_such_key: 1'
check_bad "$TMPD/unknown-key.yaml" $bad 'no_such_key|unknown'

bad_file duplicate 'name: again'
check_bad "$TMPD/duplicate.yaml" $bad 'duplicate'

# Replace a key in place, so the line number is that key's.
line_of() { grep -n "^$1:" "$TMPD/good.yaml" | cut -d: -f1; }
sed 's/^type: pip$/type: docker/' "$TMPD/good.yaml" >"$TMPD/type-docker.yaml"
check_bad "$TMPD/type-docker.yaml" "$(line_of type)" 'type.*(docker|pip)'

sed 's/^system_site_packages: .*/system_site_packages: [1, 2]/' "$TMPD/good.yaml" >"$TMPD/wrong-type.yaml"
check_bad "$TMPD/wrong-type.yaml" "$(line_of system_site_packages)" 'system_site_packages.*(bool|true|expected)'

sed 's/^default_timeout: .*/default_timeout: soon/' "$TMPD/good.yaml" >"$TMPD/timeout-text.yaml"
check_bad "$TMPD/timeout-text.yaml" "$(line_of default_timeout)" 'default_timeout|number'

sed 's/^listen: .*/listen: "127.0.0.1:99999"/' "$TMPD/good.yaml" >"$TMPD/bad-port.yaml"
check_bad "$TMPD/bad-port.yaml" "$(line_of listen)" 'listen|port'

sed 's/^  warm: .*/  warm: many/' "$TMPD/good.yaml" >"$TMPD/warm-text.yaml"
check_bad "$TMPD/warm-text.yaml" "$(grep -n '^  warm:' "$TMPD/good.yaml" | cut -d: -f1)" 'warm|integer'

# Broken YAML: an unclosed flow sequence.
bad_file syntax 'allowed_origins: [http://a'
check_bad "$TMPD/syntax.yaml" '[0-9]+' '.'

# A missing file is an error too (any non-zero status, and a message).
if "$CODEEXECD" -n -f "$TMPD/does-not-exist.yaml" 2>"$TMPD/err"; then
	fail "codeexecd -n accepted a missing file"
fi
grep -q "does-not-exist.yaml" "$TMPD/err" || fail "missing file: message does not name it"
ok "rejected a missing file: $(head -n 1 "$TMPD/err")"

# Publishers: -n loads each credential and looks at base_dir, as the first
# upload would, so a typo is found before an agent's file is lost.
pub_file() {
	cp "$TMPD/good.yaml" "$TMPD/$1.yaml"
	printf 'publishers:\n  - name: %s\n' "$1" >>"$TMPD/$1.yaml"
	cat >>"$TMPD/$1.yaml"
}
check_pub() { # file, extended regexp the message must match
	if "$CODEEXECD" -n -f "$TMPD/$1.yaml" 2>"$TMPD/err"; then
		fail "codeexecd -n accepted publisher $1"
	fi
	grep -Eq "publisher $1: .*$2" "$TMPD/err" || fail "publisher $1: wrong message: $(cat "$TMPD/err")"
	ok "publisher $1 refused: $(head -n 1 "$TMPD/err")"
}
: >"$TMPD/a-file"
pub_file local-on-file <<EOF2
    type: local
    base_dir: $TMPD/a-file/out
EOF2
check_pub local-on-file "a-file"
pub_file key-missing <<EOF2
    type: azure_blob
    account_url: https://acct.blob.core.windows.net
    container: c
    account_key_file: $TMPD/no-key
EOF2
check_pub key-missing "no-key.*No such file"
echo 'not a key!' >"$TMPD/bad-key"
chmod 600 "$TMPD/bad-key"
sed -e "s#$TMPD/no-key#$TMPD/bad-key#" -e 's/name: key-missing/name: key-bad/' \
	"$TMPD/key-missing.yaml" >"$TMPD/key-bad.yaml"
check_pub key-bad "bad-key does not hold a base64 account key"
echo 'c2VjcmV0IGtleSBieXRlcw==' >"$TMPD/bad-key"
pub_file good-pubs <<EOF2
    type: azure_blob
    account_url: https://acct.blob.core.windows.net
    container: c
    account_key_file: $TMPD/bad-key
  - name: here
    type: local
    base_dir: $TMPD/not/yet/made
EOF2
"$CODEEXECD" -n -f "$TMPD/good-pubs.yaml" 2>"$TMPD/err" ||
	fail "codeexecd -n refused good publishers: $(cat "$TMPD/err")"
ok "publishers with a valid key and a base_dir still to make pass -n"
