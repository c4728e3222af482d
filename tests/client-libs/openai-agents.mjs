// openai-agents.mjs - the OpenAI Agents SDK (@openai/agents 0.20.0) against
// codeexecd through its MCPServerStreamableHttp: connect(), listTools(), and
// callTool(name, args), whose content items are what the Agents runner
// hands the model (useStructuredContent is off by default, so never
// structuredContent); isError rides on the returned array.
// Usage: node openai-agents.mjs URL NAME run | CODEEXECD_TOKEN=T node openai-agents.mjs URL NAME auth
import { MCPServerStreamableHttp } from '@openai/agents';
import { main } from './common.mjs';

await main({
	label: '@openai/agents 0.20.0',
	headers: true,
	async connect(url, { headers }) {
		const server = new MCPServerStreamableHttp({
			url,
			name: 'codeexecd',
			cacheToolsList: true,
			// Its default, 5 s for connect, is short on a loaded test machine.
			clientSessionTimeoutSeconds: 30,
			...(headers ? { requestInit: { headers } } : {}),
		});
		await server.connect();
		return {
			async tools() {
				return (await server.listTools()).map((t) => t.name);
			},
			async call(name, args) {
				const content = await server.callTool(name, args);
				return {
					texts: content.filter((c) => c.type === 'text').map((c) => c.text),
					images: content.filter((c) => c.type === 'image').map((c) => c.mimeType),
					isError: content.isError === true,
					raw: content,
				};
			},
			version: () => undefined,
			close: () => server.close(),
		};
	},
});
