// resources-client.mjs - session files as MCP resources through the
// official MCP TypeScript SDK (issue 16).
//
// Usage: node resources-client.mjs URL [NAME]
// Runs code that writes outputs/hello.csv, lists the resources (the file
// is there, with its MIME type), reads it back as text, and reads the
// resource template.
import { args, check, connect } from './common.mjs';

const [url, tool] = args('resources-client.mjs');
const { client, transport } = await connect(url, 'codeexecd-resources-test');

check(client.getServerCapabilities()?.resources !== undefined,
	'the server declares the resources capability', client.getServerCapabilities());
const code = "import os\nopen(os.path.join(os.environ['CODEEXECD_OUTPUT_DIR'], 'hello.csv'), 'w')" +
	".write('a,b\\n1,2\\n')";
const r = await client.callTool({ name: tool, arguments: { code } });
check(r.isError !== true, 'the code wrote outputs/hello.csv', r);
const arts = r.structuredContent?.artifacts ?? [];
check(arts.some((a) => a.name === 'hello.csv' && a.mime_type === 'text/csv'),
	'the result lists hello.csv as an artifact', r.structuredContent);

const { resources } = await client.listResources();
const res = resources.find((x) => x.name === 'hello.csv');
check(res !== undefined && res.mimeType === 'text/csv', 'resources/list has hello.csv', resources);
const { contents } = await client.readResource({ uri: res.uri });
check(contents.length === 1 && contents[0].text === 'a,b\n1,2\n', 'resources/read gives its text',
	contents);
const { resourceTemplates } = await client.listResourceTemplates();
check(resourceTemplates.some((t) => t.uriTemplate.includes('{path}')),
	'resources/templates/list gives the URI template', resourceTemplates);

await transport.terminateSession();
await client.close();
console.log('resources client: all checks passed');
