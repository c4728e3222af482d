// stdin-modern.mjs - a kernel's input() on MCP 2026-07-28 (issue 34 item
// 1): the call answers an InputRequiredResult, the official TypeScript
// client 2.x fulfils it with its elicitation handler and retries with
// inputResponses and requestState while the kernel waits.
//
// Usage: node stdin-modern.mjs URL [NAME]
// The handler declines "decline?", cancels "cancel?", and accepts any other
// prompt with "<prompt> answered" ("slow?" after 6 s). Checks: an answered
// prompt, two prompts in one call (two rounds), decline (EOFError), cancel
// (KeyboardInterrupt), an answer after the call's timeout (TimeoutError),
// getpass() never asked (EOFError), and a client without the capability
// (StdinNotImplementedError).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { check, text } from './common.mjs';

const [url, name = 'py'] = process.argv.slice(2);
if (!url) {
	console.error('usage: node stdin-modern.mjs URL [NAME]');
	process.exit(2);
}
const tool = `execute_${name}_code`;
const pin = { versionNegotiation: { mode: { pin: '2026-07-28' } } };
const asked = [];

const client = new Client({ name: 'codeexecd-stdin-modern', version: '0.0.0' },
	{ ...pin, capabilities: { elicitation: { form: {} } } });
client.setRequestHandler('elicitation/create', async (req) => {
	const p = req.params;
	asked.push(p);
	if (p.message === 'decline?')
		return { action: 'decline' };
	if (p.message === 'cancel?')
		return { action: 'cancel' };
	if (p.message === 'slow?')
		await new Promise((res) => setTimeout(res, 6000));
	return { action: 'accept', content: { value: `${p.message} answered` } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const first = await client.callTool({ name: tool, arguments: { code: 'name = input("Name? ")\nname' } });
check(first.isError !== true && text(first).includes("'Name?  answered'"),
	'2026-07-28: an answered input() returns the line', first);
check(asked.length === 1 && asked[0].requestedSchema.properties.value.type === 'string',
	'2026-07-28: one InputRequiredResult with a string field', asked);
check(first.structuredContent.timings.stdin_wait_ms > 0, 'timings.stdin_wait_ms', first);
const sid = first.structuredContent.execution_session_id;
const run = (code) => client.callTool({ name: tool, arguments: { code, execution_session_id: sid } });

let r = await run('a = input("first?")\nb = input("second?")\nname + "|" + a + "|" + b');
check(text(r).includes("'Name?  answered|first? answered|second? answered'") && asked.length === 3,
	'2026-07-28: two prompts in one call, two rounds, in the same session', r);
r = await run('try:\n    input("decline?")\nexcept EOFError:\n    print("got EOFError")');
check(text(r).includes('got EOFError'), '2026-07-28: a decline raises EOFError', r);
r = await run('try:\n    input("cancel?")\nexcept KeyboardInterrupt:\n    print("got KeyboardInterrupt")');
check(text(r).includes('got KeyboardInterrupt'), '2026-07-28: a cancel raises KeyboardInterrupt', r);
r = await client.callTool({ name: tool, arguments: { code: 'input("slow?")', timeout: 3,
	execution_session_id: sid } });
check(r.isError === true && r.structuredContent.error.type === 'TimeoutError',
	'2026-07-28: a prompt answered after the timeout: the retry gets TimeoutError', r);
const before = asked.length;
r = await run('import getpass\ngetpass.getpass("pw? ")');
check(r.isError === true && r.structuredContent.error.type === 'EOFError' && asked.length === before,
	'2026-07-28: a getpass() prompt is never asked: EOFError', r);
await client.close();

const plain = new Client({ name: 'codeexecd-stdin-modern-plain', version: '0.0.0' }, pin);
await plain.connect(new StreamableHTTPClientTransport(new URL(url)));
r = await plain.callTool({ name: tool, arguments: { code: 'input("x? ")' } });
check(r.isError === true && r.structuredContent.error.type === 'StdinNotImplementedError',
	'2026-07-28 without the capability: StdinNotImplementedError', r);
await plain.close();
console.log('stdin modern client: all checks passed');
