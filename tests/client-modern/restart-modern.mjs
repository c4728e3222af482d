// restart-modern.mjs - the official MCP TypeScript client 2.x pinned to
// 2026-07-28 keeps its execution session across a restart of the daemon.
//
// Usage: node restart-modern.mjs URL NAME before|after STATEFILE
// before: run `y = 'kept'`, write the execution_session_id to STATEFILE.
// after: a new client passes it and sees y, restored from a checkpoint.
import { readFileSync, writeFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { check } from './common.mjs';

const [url, name, phase, state] = process.argv.slice(2);
if (!state || (phase !== 'before' && phase !== 'after')) {
	console.error('usage: node restart-modern.mjs URL NAME before|after STATEFILE');
	process.exit(2);
}

const tool = `execute_${name}_code`;
const client = new Client({ name: 'codeexecd-restart-modern', version: '0.0.0' },
			  { versionNegotiation: { mode: { pin: '2026-07-28' } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
if (phase === 'before') {
	const r = await client.callTool({ name: tool, arguments: { code: "y = 'kept'" } });
	const sid = r.structuredContent?.execution_session_id;
	check(r.isError !== true && typeof sid === 'string', `execution session ${sid}`, r);
	writeFileSync(state, sid);
} else {
	const sid = readFileSync(state, 'utf8');
	const r = await client.callTool({ name: tool,
					   arguments: { code: 'y', execution_session_id: sid } });
	check(r.isError !== true && r.structuredContent?.execution_session_id === sid &&
	      r.structuredContent?.restored?.names?.includes('y') === true,
	      'after the restart the execution session has y back', r);
}
await client.close();
