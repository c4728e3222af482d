// stdin-client.mjs - a kernel's input() answered through the official MCP
// TypeScript SDK's elicitation handler (issue 34 item 1, 2025-11-25).
//
// Usage: node stdin-client.mjs URL [NAME]
// A client that declares the elicitation capability answers each
// elicitation/create by its message: "decline?" declines, "cancel?"
// cancels, "slow?" answers after 6 s, any other prompt is accepted with
// "<prompt> answered". Checks: an answered prompt returns its line (and
// timings.stdin_wait_ms), two prompts in one call, a decline raises
// EOFError, a cancel KeyboardInterrupt, a prompt outlasting the call's
// timeout ends as TimeoutError, a getpass() prompt is never asked and
// raises EOFError; a client without the capability gets
// StdinNotImplementedError as before.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { args, check, connect, text } from './common.mjs';

const [url, tool] = args('stdin-client.mjs');
const asked = [];
const client = new Client({ name: 'codeexecd-stdin-test', version: '0.0.0' },
	{ capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
	const p = req.params;
	asked.push(p);
	if (p.message === 'decline?')
		return { action: 'decline' };
	if (p.message === 'cancel?')
		return { action: 'cancel' };
	if (p.message === 'slow?')
		await new Promise((r) => setTimeout(r, 6000));
	return { action: 'accept', content: { value: `${p.message} answered` } };
});
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const run = (code, timeout) => client.callTool({ name: tool,
	arguments: timeout ? { code, timeout } : { code } });

let r = await run('name = input("Name? ")\nname');
check(r.isError !== true && text(r).includes("'Name?  answered'"),
	'an answered input() returns the line', r);
const first = asked[0];
check(asked.length === 1 && first.message === 'Name? ' &&
	first.requestedSchema.type === 'object' &&
	first.requestedSchema.properties.value.type === 'string' &&
	first.requestedSchema.properties.value.title === 'Name? ' &&
	first.requestedSchema.required[0] === 'value',
	'elicitation/create: the prompt as the message, one required string', asked);
check(r.structuredContent.timings.stdin_wait_ms > 0,
	`timings.stdin_wait_ms says the wait (${r.structuredContent.timings.stdin_wait_ms})`, r);

r = await run('a = input("first?")\nb = input("second?")\na + "|" + b');
check(text(r).includes("'first? answered|second? answered'") && asked.length === 3,
	'two prompts in one call, asked in order', r);

r = await run('try:\n    input("decline?")\nexcept EOFError:\n    print("got EOFError")');
check(r.isError !== true && text(r).includes('got EOFError'), 'a decline raises EOFError', r);

r = await run('try:\n    input("cancel?")\nexcept KeyboardInterrupt:\n    print("got KeyboardInterrupt")');
check(r.isError !== true && text(r).includes('got KeyboardInterrupt'),
	'a cancel raises KeyboardInterrupt, which the code may catch', r);

const before = asked.length;
r = await run('import getpass\ngetpass.getpass("pw? ")');
check(r.isError === true && r.structuredContent.error.type === 'EOFError' &&
	r.structuredContent.error.message.includes('password prompt') && asked.length === before,
	'a getpass() prompt is never asked: EOFError', r);

r = await run('input("slow?")', 3);
check(r.isError === true && r.structuredContent.error.type === 'TimeoutError',
	'a prompt left unanswered past the timeout ends as TimeoutError', r);
await new Promise((res) => setTimeout(res, 4000)); // the late answer comes and is ignored
r = await run('"still here"');
check(text(r).includes('still here'), 'the session goes on after a late answer', r);

await transport.terminateSession();
await client.close();

const plain = await connect(url, 'codeexecd-stdin-plain');
r = await plain.client.callTool({ name: tool, arguments: { code: 'input("x? ")' } });
check(r.isError === true && r.structuredContent.error.type === 'StdinNotImplementedError',
	'a client without the capability: StdinNotImplementedError, as before', r);
await plain.transport.terminateSession();
await plain.client.close();
console.log('stdin client: all checks passed');
