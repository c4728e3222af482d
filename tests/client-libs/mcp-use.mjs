// mcp-use.mjs - mcp-use 1.34.6 (npm; the last line with its own MCP client:
// in 2.x MCPClient moved to @mcp-use/client, which the registry does not
// have) against codeexecd: new MCPClient({mcpServers: {codeexecd: {url,
// headers}}}), createSession() (an HttpConnector: streamable HTTP, with SSE
// as its fallback), session.listTools(), session.callTool(name, args). The
// model's view is the result's content: its text items and image items,
// and isError. Never structuredContent. (mcp-use's own agent, MCPAgent, hands
// the model JSON.stringify(result) instead, structuredContent included:
// see README.md.)
// Usage: node mcp-use.mjs URL NAME run | CODEEXECD_TOKEN=T node mcp-use.mjs URL NAME auth
import { main } from './common.mjs';

// Its anonymized telemetry (PostHog, Scarf) stays off, read when the client
// starts: set before mcp-use is loaded.
process.env.MCP_USE_ANONYMIZED_TELEMETRY = 'false';
const { MCPClient } = await import('mcp-use/client');

const SERVER = 'codeexecd';

await main({
	label: 'mcp-use 1.34.6',
	headers: true,
	async connect(url, { headers }) {
		const client = new MCPClient({
			clientInfo: { name: 'codeexecd-454', version: '1.0.0' },
			mcpServers: {
				[SERVER]: { url, ...(headers ? { headers } : {}) },
			},
		});
		let session;
		try {
			session = await client.createSession(SERVER);
		} catch (e) {
			await client.close().catch(() => {});
			throw e;
		}
		return {
			async tools() {
				return (await session.listTools()).map((t) => t.name);
			},
			async call(name, args) {
				const result = await session.callTool(name, args);
				const content = result.content ?? [];
				return {
					texts: content.filter((c) => c.type === 'text').map((c) => c.text),
					images: content.filter((c) => c.type === 'image').map((c) => c.mimeType),
					isError: result.isError === true,
					raw: content,
				};
			},
			version: () => undefined,
			close: () => client.close(),
		};
	},
});
