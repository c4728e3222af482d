// mastra.mjs - Mastra's MCPClient (@mastra/mcp 2.0.0) against codeexecd:
// listToolsWithErrors() (the tools an Agent gets, named SERVER_TOOL),
// tool.execute(args), and what the model gets from the result: the tool's
// toModelOutput, which an Agent applies. For a tool with an outputSchema,
// such as execute_NAME_code, that is the content's text items joined, and
// no images: those stay in the content Mastra keeps beside the structured
// result (getMcpCallToolContent), where the figure is looked for. Never
// structuredContent itself. A result with isError is thrown (onToolError
// 'throw', the default): the agent reports a failed tool call with the
// error's text to the model.
// Usage: node mastra.mjs URL NAME run | CODEEXECD_TOKEN=T node mastra.mjs URL NAME auth
import { MCPClient, getMcpCallToolContent } from '@mastra/mcp';
import { main } from './common.mjs';

const SERVER = 'codeexecd';
let n = 0;

await main({
	label: '@mastra/mcp 2.0.0',
	headers: true,
	imagesNotToModel: 'for a tool with an outputSchema its toModelOutput hands the model the ' +
		'content\'s text items joined, so an image stays in the content kept beside the ' +
		'result (getMcpCallToolContent) and never reaches the model',
	async connect(url, { headers }) {
		const mcp = new MCPClient({
			id: `codeexecd-454-${process.pid}-${++n}`,
			servers: {
				[SERVER]: {
					url: new URL(url),
					...(headers ? { requestInit: { headers } } : {}),
					// Its default, 3 s to connect, is short on a loaded test machine.
					connectTimeout: 30000,
				},
			},
			timeout: 60000,
		});
		// listToolsWithErrors: a server that fails says why, where listTools
		// would only log it and hand the agent no tools.
		const listed = await mcp.listToolsWithErrors();
		if (listed.errors[SERVER] !== undefined) {
			await mcp.disconnect().catch(() => {});
			throw new Error(listed.errors[SERVER]);
		}
		const tools = listed.tools;
		return {
			async tools() {
				return Object.keys(tools).map((k) => k.slice(SERVER.length + 1));
			},
			async call(name, args) {
				const t = tools[`${SERVER}_${name}`];
				let output;
				try {
					output = await t.execute(args, { toolCallId: `call-${++n}` });
				} catch (e) {
					// onToolError 'throw' (the default): a result with isError is
					// a failed tool call whose error text the model sees.
					if (e?.id !== 'MCP_CLIENT_TOOL_EXECUTION_FAILED')
						throw e;
					return { texts: [e.message], images: [], isError: true, raw: e.message };
				}
				const content = getMcpCallToolContent(output) ?? output?.content ?? [];
				const model = t.toModelOutput ? t.toModelOutput(output) : undefined;
				const texts = model?.type === 'text' ? [model.value]
					: content.filter((c) => c.type === 'text').map((c) => c.text);
				return {
					texts,
					// toModelOutput hands the model text only (see imagesNotToModel).
					images: model === undefined
						? content.filter((c) => c.type === 'image').map((c) => c.mimeType) : [],
					kept: content.filter((c) => c.type === 'image').map((c) => c.mimeType),
					isError: false,
					raw: { model, content },
				};
			},
			version: () => mcp.getServerProtocolVersions()[SERVER],
			close: () => mcp.disconnect(),
		};
	},
});
