// sdk-client.mjs - drive codeexecd with the official MCP TypeScript SDK.
//
// Usage: node sdk-client.mjs URL [NAME]
// Connects to URL (http://127.0.0.1:PORT/mcp) over streamable HTTP, lists
// the tools, runs `x = 21` then `x * 2` with execute_{NAME}_code and checks
// that the answer holds 42. The SDK validates structuredContent against the
// tool's outputSchema. Exits non-zero on any mismatch.
import { args, check, connect, text } from './common.mjs';

const [url, tool] = args('sdk-client.mjs');
const { client, transport } = await connect(url, 'codeexecd-sdk-test');
check(typeof transport.sessionId === 'string' && transport.sessionId.length >= 32,
	`connected, session ${transport.sessionId}`);
check(client.getServerCapabilities()?.tools !== undefined, 'server declares tools',
	client.getServerCapabilities());
console.log(`server: ${JSON.stringify(client.getServerVersion())}`);

const { tools } = await client.listTools();
const t = tools.find((x) => x.name === tool);
check(t !== undefined, `tools/list has ${tool}`, tools.map((x) => x.name));
// code, or its alias code_str: one of the two is required.
check(JSON.stringify(t.inputSchema?.anyOf) ===
	JSON.stringify([{ required: ['code'] }, { required: ['code_str'] }]),
	`${tool} requires code or code_str`, t.inputSchema);

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
