// restart-client.mjs - the official MCP TypeScript SDK (2025-11-25) keeps
// its session across a restart of the daemon (persist_sessions).
//
// Usage: node restart-client.mjs URL NAME before|after STATEFILE
// before: connect, run `x = 41`, write the session id to STATEFILE.
// after: connect a new transport with that session id (the SDK then skips
// initialize, as a client that reconnects does) and check that x is 41
// and that the result says a checkpoint was restored.
import { readFileSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { check, text } from './common.mjs';

const [url, name, phase, state] = process.argv.slice(2);
if (!state || (phase !== 'before' && phase !== 'after')) {
	console.error('usage: node restart-client.mjs URL NAME before|after STATEFILE');
	process.exit(2);
}
const tool = `execute_${name}_code`;
const client = new Client({ name: 'codeexecd-restart-test', version: '0.0.0' });
if (phase === 'before') {
	const transport = new StreamableHTTPClientTransport(new URL(url));
	await client.connect(transport);
	const r = await client.callTool({ name: tool, arguments: { code: 'x = 41' } });
	check(r.isError !== true, 'x = 41 ran', r);
	writeFileSync(state, transport.sessionId);
	console.log(`sdk: session ${transport.sessionId} before the restart`);
} else {
	const sessionId = readFileSync(state, 'utf8');
	const transport = new StreamableHTTPClientTransport(new URL(url), { sessionId });
	await client.connect(transport);
	const r = await client.callTool({ name: tool, arguments: { code: 'x + 1' } });
	check(r.isError !== true && text(r).includes('42'), 'after the restart x + 1 is 42', r);
	check(r.structuredContent?.restored?.names?.includes('x') === true &&
	      text(r).startsWith('[codeexecd] the kernel was restarted and checkpoint '),
	      'the result says the checkpoint was restored', r);
	check(transport.sessionId === sessionId, 'the same Mcp-Session-Id', transport.sessionId);
}
await client.close();
