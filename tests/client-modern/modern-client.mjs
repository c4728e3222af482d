// modern-client.mjs - drive codeexecd with the official MCP TypeScript
// client 2.x, pinned to protocol 2026-07-28 or on the legacy setting.
//
// Usage: node modern-client.mjs URL NAME modern|legacy
// modern: versionNegotiation pinned to 2026-07-28; the first call starts
// an execution session, a second call passing its execution_session_id
// sees the first's variable, no response carries Mcp-Session-Id, and
// close_session ends it. legacy: initialize, an MCP session, and two
// calls that share its kernel. Exits non-zero on any mismatch.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { check, text } from './common.mjs';

const [url, name = 'py', mode = 'modern'] = process.argv.slice(2);
if (!url || (mode !== 'modern' && mode !== 'legacy')) {
	console.error('usage: node modern-client.mjs URL NAME modern|legacy');
	process.exit(2);
}
const tool = `execute_${name}_code`;

// Every response's Mcp-Session-Id and MCP-Protocol-Version sent, as seen on the wire.
const seen = [];
async function recordingFetch(input, init) {
	const res = await fetch(input, init);
	const h = new Headers(init?.headers ?? {});
	seen.push({ sent: h.get('mcp-protocol-version'), method: h.get('mcp-method'),
		    session: res.headers.get('mcp-session-id'), status: res.status });
	return res;
}

const options = mode === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
const client = new Client({ name: `codeexecd-${mode}-test`, version: '0.0.0' }, options);
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
await client.connect(transport);

const { tools } = await client.listTools();
check(tools.some((t) => t.name === tool), `tools/list has ${tool}`, tools.map((t) => t.name));

const r1 = await client.callTool({ name: tool, arguments: { code: 'x = 21' } });
check(r1.isError !== true, 'x = 21 ran', r1);
const sid = r1.structuredContent?.execution_session_id;
check(typeof sid === 'string' && sid.length === 32, `execution_session_id ${sid}`, r1);
const args2 = { code: 'x * 2' };
if (mode === 'modern')
	args2.execution_session_id = sid;
const r2 = await client.callTool({ name: tool, arguments: args2 });
check(r2.isError !== true && text(r2).includes('42'), 'the second call saw x: 42', r2);
check(r2.structuredContent?.execution_session_id === sid, 'both calls ran in one session', r2);

if (mode === 'modern') {
	const r3 = await client.callTool({ name: tool, arguments: { code: 'x' } });
	check(r3.structuredContent?.execution_session_id !== sid && r3.isError === true,
	      'a call without execution_session_id gets a new session, without x', r3);
	const c = await client.callTool({ name: `${name}_close_session`,
					  arguments: { session_id: sid } });
	check(c.structuredContent?.closed === true, 'close_session ended it', c);
	const r4 = await client.callTool({ name: tool,
					   arguments: { code: 'x', execution_session_id: sid } });
	check(r4.isError === true && text(r4).includes('unknown execution_session_id'),
	      'the closed session is unknown', r4);
	const bad = seen.filter((s) => s.session !== null || s.sent !== '2026-07-28');
	check(bad.length === 0 && seen.length >= 5,
	      `${seen.length} requests all sent 2026-07-28 and no response had Mcp-Session-Id`,
	      seen);
} else {
	check(typeof transport.sessionId === 'string' && transport.sessionId.length >= 32,
	      `legacy: MCP session ${transport.sessionId}`);
	check(seen.some((s) => s.session === transport.sessionId), 'legacy: Mcp-Session-Id minted',
	      seen);
	await transport.terminateSession();
}
await client.close();
console.log(`${mode} client: all checks passed`);
