// big-outputs-client.mjs - a rich output by reference through the official
// MCP TypeScript SDK (issue 34): the SDK takes the resource_link item and
// holds the by-reference structuredContent to the tool's outputSchema
// (it validates it once the tools are listed); resources/read gives the
// bytes whose sha256 the result names.
//
// Usage: node big-outputs-client.mjs URL [NAME]
// The server must run with inline_output_max_bytes under 200000.
import { createHash } from 'node:crypto';
import { args, check, connect } from './common.mjs';

const [url, tool] = args('big-outputs-client.mjs');
const { client, transport } = await connect(url, 'codeexecd-big-outputs-test');

const { tools } = await client.listTools();
check(tools.some((t) => t.name === tool && t.outputSchema), 'the tool has an outputSchema', tools);
const code = "import base64, random\nfrom IPython.display import display\n" +
	"b = b'\\x89PNG\\r\\n\\x1a\\n' + random.Random(34).randbytes(200_000)\n" +
	"display({'image/png': base64.b64encode(b).decode()}, raw=True)";
const r = await client.callTool({ name: tool, arguments: { code } });
check(r.isError !== true, 'the code ran, its result valid against the outputSchema', r);
const link = r.content.find((c) => c.type === 'resource_link');
const o = r.structuredContent.rich_outputs.find((x) => x.mime_type === 'image/png');
check(link && link.mimeType === 'image/png' && link.size === 200008 &&
	!r.content.some((c) => c.type === 'image'),
	'a resource_link for the PNG, no image item', r.content);
check(o && o.data === undefined && o.uri === link.uri && o.sha256 === link._meta.sha256,
	'structuredContent names it by uri and sha256', o);
const { contents } = await client.readResource({ uri: link.uri });
const bytes = Buffer.from(contents[0].blob, 'base64');
check(bytes.length === 200008 && createHash('sha256').update(bytes).digest('hex') === o.sha256,
	'resources/read gives 200008 bytes whose sha256 the result names', bytes.length);

await transport.terminateSession();
await client.close();
console.log('big outputs client: all checks passed');
