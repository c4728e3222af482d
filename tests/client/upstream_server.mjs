// upstream_server.mjs - a loopback MCP server built on the official SDK's
// McpServer, the upstream of code mode's tests (490): tools with
// structured output, an error, a slow tool, one that answers 10 MB, and
// one that says how many calls it served, and one that says how many
// notifications/cancelled it was sent. Stateless streamable HTTP; with
// UPSTREAM_STATEFUL=1 in the environment, sessions (GET streams too), and
// a tool `grow` that adds a tool `grown_N` to every session's server, which
// the SDK announces with notifications/tools/list_changed.
// Usage: node upstream_server.mjs PORTFILE [TOKEN]; writes its port to
// PORTFILE once listening. With TOKEN, a request without it gets 401.
import http from 'node:http';
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const [portFile, token] = process.argv.slice(2);
const stateful = process.env.UPSTREAM_STATEFUL === '1';
let calls = 0, cancels = 0, grown = 0;
const live = new Set();      // every session's McpServer (stateful)
const sessions = {};         // session id -> transport (stateful)

function grownTool(s, n) {
	s.registerTool(`grown_${n}`, { description: `A tool added at run time (${n}).`, inputSchema: {} },
		async () => ({ content: [{ type: 'text', text: `grown ${n}` }] }));
}

function server() {
	const s = new McpServer({ name: 'codeexec-test-upstream', version: '1.0.0' });
	s.registerTool('search_issues', {
		description: 'Find issues whose title holds the query.',
		inputSchema: { query: z.string().describe('Words to look for'), limit: z.number().int().default(3) },
		outputSchema: { items: z.array(z.object({ id: z.number(), title: z.string() })), total: z.number() },
	}, async ({ query, limit }) => {
		calls++;
		const items = [];
		for (let i = 1; i <= (limit ?? 3); i++) items.push({ id: i, title: `${query} #${i}` });
		const out = { items, total: 100 };
		return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
	});
	s.registerTool('add', { description: 'Add two numbers.', inputSchema: { a: z.number(), b: z.number() } },
		async ({ a, b }) => { calls++; return { content: [{ type: 'text', text: String(a + b) }] }; });
	s.registerTool('fail', { description: 'Always fails.', inputSchema: {} },
		async () => { calls++; return { isError: true, content: [{ type: 'text', text: 'this tool always fails' }] }; });
	s.registerTool('slow', { description: 'Sleeps.', inputSchema: { seconds: z.number() } },
		async ({ seconds }) => { calls++; await new Promise(r => setTimeout(r, seconds * 1000)); return { content: [{ type: 'text', text: 'slept' }] }; });
	s.registerTool('big', { description: 'Answers 10 MB.', inputSchema: {} },
		async () => { calls++; return { content: [{ type: 'text', text: 'x'.repeat(10 * 1024 * 1024) }] }; });
	s.registerTool('calls', { description: 'How many calls it served.', inputSchema: {} },
		async () => ({ content: [{ type: 'text', text: String(calls) }] }));
	s.registerTool('cancels', { description: 'How many notifications/cancelled it was sent.', inputSchema: {} },
		async () => ({ content: [{ type: 'text', text: String(cancels) }] }));
	s.registerTool('grow', { description: 'Adds a tool to every session.', inputSchema: {} },
		async () => { grown++; for (const o of live) grownTool(o, grown); return { content: [{ type: 'text', text: `grown_${grown}` }] }; });
	for (let n = 1; n <= grown; n++) grownTool(s, n);
	return s;
}

async function statefulRequest(req, res, body) {
	const sid = req.headers['mcp-session-id'];
	if (sid && sessions[sid]) {
		await sessions[sid].handleRequest(req, res, body);
		return;
	}
	if (sid || req.method !== 'POST' || body?.method !== 'initialize') {
		res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' });
		res.end('{"jsonrpc":"2.0","error":{"code":-32000,"message":"no such session"},"id":null}');
		return;
	}
	const s = server();
	const t = new StreamableHTTPServerTransport({
		sessionIdGenerator: () => randomUUID(), enableJsonResponse: true,
		onsessioninitialized: (id) => { sessions[id] = t; },
	});
	t.onclose = () => { if (t.sessionId) delete sessions[t.sessionId]; live.delete(s); };
	live.add(s);
	await s.connect(t);
	await t.handleRequest(req, res, body);
}

const web = http.createServer(async (req, res) => {
	if (token && req.headers.authorization !== `Bearer ${token}`) {
		res.writeHead(401, { 'content-type': 'application/json' });
		res.end('{"error":"unauthorized"}');
		return;
	}
	const chunks = [];
	for await (const c of req) chunks.push(c);
	const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
	if (body?.method === 'notifications/cancelled') cancels++;
	if (stateful) {
		await statefulRequest(req, res, body);
		return;
	}
	const s = server();
	const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
	res.on('close', () => { t.close(); s.close(); });
	await s.connect(t);
	await t.handleRequest(req, res, body);
});
web.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(web.address().port)));
