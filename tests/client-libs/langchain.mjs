// langchain.mjs - LangChain's MCP adapters (@langchain/mcp-adapters 1.1.4)
// against codeexecd: MultiServerMCPClient.getTools(), run by LangGraph's
// ToolNode as an agent's tool step runs them; the ToolMessage it makes is
// what the model gets (its text blocks, image blocks; status "error" when
// the tool said isError, which the adapters raise as a ToolException).
// Usage: node langchain.mjs URL NAME run | CODEEXECD_TOKEN=T node langchain.mjs URL NAME auth
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { AIMessage } from '@langchain/core/messages';
import { main } from './common.mjs';

let n = 0;

function blocks(content) {
	return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

// An image block's MIME type: {type: 'image_url', image_url: {url: 'data:...'}}
// by default, {type: 'image', mimeType} with useStandardContentBlocks.
function mime(b) {
	if (b.type === 'image')
		return b.mimeType ?? b.mime_type;
	const m = /^data:([^;,]+)/.exec(b.image_url?.url ?? b.image_url ?? '');
	return m?.[1];
}

await main({
	label: '@langchain/mcp-adapters 1.1.4',
	headers: true,
	async connect(url, { headers }) {
		const client = new MultiServerMCPClient({
			mcpServers: {
				codeexecd: {
					transport: 'http',
					url,
					...(headers ? { headers } : {}),
				},
			},
		});
		const tools = await client.getTools();
		const node = new ToolNode(tools);
		return {
			async tools() {
				return tools.map((t) => t.name);
			},
			async call(name, args) {
				const ai = new AIMessage({ content: '',
							   tool_calls: [{ name, args, id: `call-${++n}`, type: 'tool_call' }] });
				const { messages } = await node.invoke({ messages: [ai] });
				const msg = messages[0];
				const b = blocks(msg.content);
				return {
					texts: b.filter((x) => x.type === 'text').map((x) => x.text),
					images: b.filter((x) => x.type === 'image' || x.type === 'image_url').map(mime),
					isError: msg.status === 'error',
					raw: msg.content,
				};
			},
			version: () => undefined,
			close: () => client.close(),
		};
	},
});
