// cluster-client.mjs - many MCP 2025-11-25 sessions with the official
// TypeScript SDK, through a load balancer in front of several nodes.
//
// Usage: node cluster-client.mjs URL SESSIONS CALLS
// Opens SESSIONS sessions at once; in each, CALLS calls carry a variable
// from call to call (x = seed, then x = x + 1 and its value), so every
// answer is right only if every request reached the node holding the
// kernel. Prints one line "session ID" per session (its Mcp-Session-Id,
// tagged with its node), then "ok". Exits non-zero on a wrong answer.
import { check, connect } from './common.mjs';

const [url, sessions = '10', calls = '5'] = process.argv.slice(2);
const tool = 'execute_py_code';

async function one(i) {
	const { client, transport } = await connect(url, `codeexecd-cluster-${i}`);
	const seed = 1000 * (i + 1);
	const r0 = await client.callTool({ name: tool, arguments: { code: `x = ${seed}` } });
	check(r0.isError !== true, `session ${i}: x = ${seed}`, r0);
	for (let k = 1; k < Number(calls); k++) {
		const r = await client.callTool({ name: tool, arguments: { code: 'x = x + 1\nprint(x)' } });
		const out = (r.structuredContent?.stdout ?? '').trim();
		if (r.isError === true || out !== String(seed + k))
			check(false, `session ${i} call ${k + 1}: x is ${seed + k}`, r);
	}
	const sid = transport.sessionId;
	await transport.terminateSession();
	await client.close();
	return sid;
}

const ids = await Promise.all(Array.from({ length: Number(sessions) }, (_, i) => one(i)));
for (const sid of ids)
	console.log(`session ${sid}`);
console.log(`ok - ${sessions} sessions of ${calls} calls, every answer right`);
