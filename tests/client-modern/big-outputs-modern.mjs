// big-outputs-modern.mjs - a rich output by reference through the official
// MCP TypeScript client 2.x pinned to 2026-07-28 (issue 34): the
// resource_link item, structuredContent by uri (valid against the tool's
// outputSchema, which the client holds it to once the tools are listed),
// and resources/read of the uri giving the bytes whose sha256 it names.
//
// Usage: node big-outputs-modern.mjs URL NAME
// The server must run with inline_output_max_bytes under 200000.
import { createHash } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { check } from './common.mjs';

const [url, name = 'py'] = process.argv.slice(2);
if (!url) {
	console.error('usage: node big-outputs-modern.mjs URL NAME');
	process.exit(2);
}
const tool = `execute_${name}_code`;
const client = new Client({ name: 'codeexecd-big-outputs-modern', version: '0.0.0' },
	{ versionNegotiation: { mode: { pin: '2026-07-28' } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const { tools } = await client.listTools();
check(tools.some((t) => t.name === tool && t.outputSchema), 'the tool has an outputSchema', tools);
const code = "import base64, random\nfrom IPython.display import display\n" +
	"b = b'\\x89PNG\\r\\n\\x1a\\n' + random.Random(34).randbytes(200_000)\n" +
	"display({'image/png': base64.b64encode(b).decode()}, raw=True)";
const r = await client.callTool({ name: tool, arguments: { code } });
check(r.isError !== true, 'the code ran, its result valid against the outputSchema', r);
const link = r.content.find((c) => c.type === 'resource_link');
const o = r.structuredContent.rich_outputs.find((x) => x.mime_type === 'image/png');
check(link && link.size === 200008 && !r.content.some((c) => c.type === 'image'),
	'a resource_link for the PNG, no image item', r.content);
check(o && o.data === undefined && o.uri === link.uri && o.sha256 === link._meta.sha256,
	'structuredContent names it by uri and sha256', o);
const { contents } = await client.readResource({ uri: link.uri });
const bytes = Buffer.from(contents[0].blob, 'base64');
check(bytes.length === 200008 && createHash('sha256').update(bytes).digest('hex') === o.sha256,
	'resources/read gives 200008 bytes whose sha256 the result names', bytes.length);
await client.close();
console.log('big outputs modern client: all checks passed');
