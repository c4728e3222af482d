// ai-sdk.mjs - the Vercel AI SDK's MCP client (@ai-sdk/mcp 2.0.99) against
// codeexecd, as generateText would drive it: createMCPClient with the HTTP
// transport, client.tools(), then tool.execute(args) and the tool's own
// toModelOutput (the content parts the model gets: text, and images as
// file parts).
// Usage: node ai-sdk.mjs URL NAME run | CODEEXECD_TOKEN=T node ai-sdk.mjs URL NAME auth
import { createMCPClient } from '@ai-sdk/mcp';
import { main } from './common.mjs';

let n = 0;

await main({
	label: '@ai-sdk/mcp 2.0.99',
	headers: true,
	async connect(url, { headers }) {
		const client = await createMCPClient({
			transport: { type: 'http', url, ...(headers ? { headers } : {}) },
			clientName: 'codeexecd-454',
		});
		let tools;
		return {
			async tools() {
				tools = await client.tools();
				return Object.keys(tools);
			},
			async call(name, args) {
				tools ??= await client.tools();
				const t = tools[name];
				const toolCallId = `call-${++n}`;
				const output = await t.execute(args, { toolCallId, messages: [] });
				const model = await t.toModelOutput({ toolCallId, input: args, output });
				const parts = model.type === 'content' ? model.value : [];
				return {
					texts: model.type === 'text' ? [model.value]
						: parts.filter((p) => p.type === 'text').map((p) => p.text),
					images: parts.filter((p) => p.type === 'file').map((p) => p.mediaType),
					isError: output?.isError === true,
					raw: model,
				};
			},
			version: () => client.initializeResult?.protocolVersion,
			close: () => client.close(),
		};
	},
});
