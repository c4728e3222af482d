// tools-client.mjs - the domain tools through the official MCP TypeScript SDK.
//
// Usage: node tools-client.mjs URL [NAME]
// Lists the tools, finds search_{NAME}_tools, searches for a tool by what
// it does, then imports and calls the tool it found through
// execute_{NAME}_code, with the import line the search returned. The SDK
// validates both structuredContents against the tools' outputSchemas.
import { args, check, connect, text } from './common.mjs';

const [url, tool] = args('tools-client.mjs');
const name = tool.replace(/^execute_/, '').replace(/_code$/, '');
const search = `search_${name}_tools`;
const { client, transport } = await connect(url, 'codeexecd-tools-test');

const { tools } = await client.listTools();
const st = tools.find((x) => x.name === search);
check(st !== undefined, `tools/list has ${search}`, tools.map((x) => x.name));
check(st.inputSchema?.required?.includes('query'), `${search} requires query`, st.inputSchema);
const ex = tools.find((x) => x.name === tool);
check(ex?.description?.includes(search), `${tool}'s description names ${search}`, ex);

const r = await client.callTool({
	name: search,
	arguments: { query: 'molar mass of a molecule from SMILES', top: 3 },
});
check(r.isError !== true, 'the search succeeded', r);
const hits = r.structuredContent?.results ?? [];
check(hits.length >= 1 && hits[0].name === 'mol_weight', 'the best hit is mol_weight', hits);
check(text(r).includes(hits[0].import), 'the text holds the import line', text(r));

const code = `${hits[0].import}\n${hits[0].name}('CCO')`;
const c = await client.callTool({ name: tool, arguments: { code } });
check(c.isError !== true && text(c).includes('46.07'), `${code.replace('\n', '; ')} gives 46.07`, c);

await transport.terminateSession();
await client.close();
console.log('tools client: all checks passed');
