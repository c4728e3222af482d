// cluster-client.mjs - many MCP 2026-07-28 execution sessions with
// @modelcontextprotocol/client 2.x, through a load balancer in front of
// several nodes.
//
// Usage: node cluster-client.mjs URL SESSIONS CALLS
// Runs SESSIONS sessions at once; in each, the first call starts an
// execution session and CALLS - 1 more pass its execution_session_id and
// carry a variable from call to call. Checks on the wire that every call
// naming the session sent Mcp-Param-Session equal to it (the tools'
// inputSchema marks it with x-mcp-header "Session"), since the balancer
// routes on that header, and closes it with py_close_session. Prints
// "session ID" per session, then "ok".
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, sessions = '10', calls = '5'] = process.argv.slice(2);
const tool = 'execute_py_code';

function check(cond, what, evidence) {
	if (cond)
		return;
	console.error(`FAIL: ${what}`);
	if (evidence !== undefined)
		console.error(JSON.stringify(evidence, null, 1));
	process.exit(1);
}

async function one(i) {
	// The headers of every tools/call this client sends.
	const sent = [];
	async function recordingFetch(input, init) {
		const h = new Headers(init?.headers ?? {});
		if (h.get('mcp-method') === 'tools/call')
			sent.push({ param: h.get('mcp-param-session'), body: String(init?.body ?? '') });
		return fetch(input, init);
	}
	const client = new Client({ name: `codeexecd-cluster-${i}`, version: '0.0.0' },
		{ versionNegotiation: { mode: { pin: '2026-07-28' } } });
	const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
	await client.connect(transport);
	await client.listTools(); // the schemas that ask for Mcp-Param-Session
	const seed = 1000 * (i + 1);
	const r0 = await client.callTool({ name: tool, arguments: { code: `x = ${seed}` } });
	const sid = r0.structuredContent?.execution_session_id;
	check(r0.isError !== true && typeof sid === 'string', `session ${i}: x = ${seed}`, r0);
	for (let k = 1; k < Number(calls); k++) {
		const r = await client.callTool({ name: tool,
			arguments: { code: 'x = x + 1\nprint(x)', execution_session_id: sid } });
		const out = (r.structuredContent?.stdout ?? '').trim();
		if (r.isError === true || out !== String(seed + k))
			check(false, `session ${i} call ${k + 1}: x is ${seed + k}`, r);
	}
	// close_session names it as session_id, marked the same way.
	const rc = await client.callTool({ name: 'py_close_session', arguments: { session_id: sid } });
	check(rc.isError !== true, `session ${i}: closed`, rc);
	check(sent.length === Number(calls) + 1 && sent[0].param === null &&
		sent.slice(1).every((s) => s.param === sid),
		`session ${i}: Mcp-Param-Session sent with every call naming ${sid}`, sent);
	await client.close();
	return sid;
}

const ids = await Promise.all(Array.from({ length: Number(sessions) }, (_, i) => one(i)));
for (const sid of ids)
	console.log(`session ${sid}`);
console.log(`ok - ${sessions} sessions of ${calls} calls, every answer right, ` +
	'Mcp-Param-Session sent');
