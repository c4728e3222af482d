// common.mjs - what the SDK-driven test clients share: arguments, checks,
// the text of a result, and a connected client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// [url, tool] from the command line of `script`, or exit 2 with its usage.
export function args(script) {
	const [url, name = 'py'] = process.argv.slice(2);
	if (!url) {
		console.error(`usage: node ${script} URL [NAME]`);
		process.exit(2);
	}
	return [url, `execute_${name}_code`];
}

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

// A client named `name`, connected to url over streamable HTTP.
export async function connect(url, name) {
	const client = new Client({ name, version: '0.0.0' });
	const transport = new StreamableHTTPClientTransport(new URL(url));
	await client.connect(transport);
	return { client, transport };
}
