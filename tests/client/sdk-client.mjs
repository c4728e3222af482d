// sdk-client.mjs - drive codeexecd with the official MCP TypeScript SDK.
//
// Usage: node sdk-client.mjs URL [NAME]
// Connects to URL (http://127.0.0.1:PORT/mcp) over streamable HTTP, lists
// the tools, runs `x = 21` then `x * 2` with execute_{NAME}_code and checks
// that the answer holds 42. The SDK validates structuredContent against the
// tool's outputSchema. Exits non-zero on any mismatch.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, name = 'py'] = process.argv.slice(2);
if (!url) {
	console.error('usage: node sdk-client.mjs URL [NAME]');
	process.exit(2);
}
const tool = `execute_${name}_code`;

function check(cond, what, evidence) {
	if (cond) {
		console.log(`ok - ${what}`);
		return;
	}
	console.error(`FAIL: ${what}`);
	if (evidence !== undefined)
		console.error(JSON.stringify(evidence, null, 1));
	process.exit(1);
}

function text(result) {
	return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

const client = new Client({ name: 'codeexecd-sdk-test', version: '0.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
check(typeof transport.sessionId === 'string' && transport.sessionId.length >= 32,
	`connected, session ${transport.sessionId}`);
check(client.getServerCapabilities()?.tools !== undefined, 'server declares tools',
	client.getServerCapabilities());
console.log(`server: ${JSON.stringify(client.getServerVersion())}`);

const { tools } = await client.listTools();
const t = tools.find((x) => x.name === tool);
check(t !== undefined, `tools/list has ${tool}`, tools.map((x) => x.name));
check(t.inputSchema?.required?.includes('code'), `${tool} requires code`, t.inputSchema);

const r1 = await client.callTool({ name: tool, arguments: { code: 'x = 21' } });
check(r1.isError !== true, 'x = 21 ran', r1);
const r2 = await client.callTool({ name: tool, arguments: { code: 'x * 2', timeout: 30 } });
check(r2.isError !== true && text(r2).includes('42'), 'x * 2 gave 42', r2);
check(r2.structuredContent?.success === true, 'structuredContent.success', r2.structuredContent);

const r3 = await client.callTool({ name: tool, arguments: { code: '1 / 0' } });
check(r3.isError === true && r3.structuredContent?.error?.type === 'ZeroDivisionError',
	'1 / 0 is a tool error of type ZeroDivisionError', r3);

await client.callTool({ name: tool, arguments: { code: 'x' } }).then((r) =>
	check(text(r).includes('21'), 'state kept after the error', r));

await transport.terminateSession();
await client.close();
console.log('sdk client: all checks passed');
