// upload-client.mjs - NAME_upload_file through the official MCP TypeScript
// SDK (issue 34): a file given as a data: URI lands in the session, its
// answer (valid against the tool's outputSchema) has the size and sha256,
// and the session's kernel reads it.
//
// Usage: node upload-client.mjs URL [NAME]
import { createHash } from 'node:crypto';
import { args, check, connect, text } from './common.mjs';

const [url, tool] = args('upload-client.mjs');
const name = tool.replace(/^execute_(.*)_code$/, '$1');
const { client, transport } = await connect(url, 'codeexecd-upload-test');

const { tools } = await client.listTools();
check(tools.some((t) => t.name === `${name}_upload_file` && t.outputSchema),
	`tools/list has ${name}_upload_file`, tools.map((t) => t.name));
const csv = 'a,b\n1,2\n';
const u = await client.callTool({ name: `${name}_upload_file`, arguments: {
	path: 'sdk.csv', data_uri: 'data:text/csv;base64,' + Buffer.from(csv).toString('base64') } });
check(u.isError !== true && u.structuredContent.size_bytes === csv.length &&
	u.structuredContent.sha256 === createHash('sha256').update(csv).digest('hex'),
	'the upload answers with its size and sha256', u);
const r = await client.callTool({ name: tool, arguments: { code: "open('sdk.csv').read()" } });
check(text(r).includes("'a,b\\n1,2\\n'"), 'the kernel reads the uploaded file', r);

await transport.terminateSession();
await client.close();
console.log('upload client: all checks passed');
