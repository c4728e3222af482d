// common.mjs - what the scripts of tests/client-modern share: a check and
// the text of a result.

// Print "ok - what", or print the evidence and exit 1.
export function check(cond, what, evidence) {
	if (cond) {
		console.log(`ok - ${what}`);
		return;
	}
	console.error(`FAIL: ${what}`);
	if (evidence !== undefined)
		console.error(JSON.stringify(evidence, null, 1));
	process.exit(1);
}

// The text items of a tools/call result, joined.
export function text(result) {
	return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}
