// upstream_records.mjs - bench/codemode.py's upstream: a copy of
// tests/client/upstream_server.mjs (the SDK's McpServer, stateless
// streamable HTTP) with one tool more, list_orders, answering a page of 50
// made-up order records (the same for the same page, from a seeded
// generator), as structuredContent and as its JSON text, as SDK servers do.
// Usage: node upstream_records.mjs PORTFILE [TOKEN].
import http from 'node:http';
import fs from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const [portFile, token] = process.argv.slice(2);
let calls = 0;

const REGIONS = ['north', 'south', 'east', 'west', 'centre'];
const STATUSES = ['paid', 'paid', 'paid', 'shipped', 'shipped', 'refunded', 'pending'];

// Page `page`'s 50 orders: a linear congruential generator seeded by the page.
function orders(page) {
	let x = page * 2654435761 % 4294967296;
	const next = (n) => { x = (x * 1664525 + 1013904223) % 4294967296; return x % n; };
	const out = [];
	for (let i = 0; i < 50; i++) {
		const id = (page - 1) * 50 + i + 1;
		out.push({ id, customer: `customer-${next(400)}`, region: REGIONS[next(REGIONS.length)],
			amount: next(100000) / 100, status: STATUSES[next(STATUSES.length)],
			note: `order ${id}: ${next(5) + 1} items, delivery window ${next(12) + 1} days, gift wrap ${next(2) ? 'yes' : 'no'}` });
	}
	return out;
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
	s.registerTool('list_orders', {
		description: 'One page of the order book: 50 orders with customer, region, amount, status and a note.',
		inputSchema: { page: z.number().int().min(1).describe('Page number, from 1') },
		outputSchema: { page: z.number(), orders: z.array(z.object({ id: z.number(), customer: z.string(),
			region: z.string(), amount: z.number(), status: z.string(), note: z.string() })) },
	}, async ({ page }) => {
		calls++;
		const out = { page, orders: orders(page) };
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
	return s;
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
	const s = server();
	const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
	res.on('close', () => { t.close(); s.close(); });
	await s.connect(t);
	await t.handleRequest(req, res, body);
});
web.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(web.address().port)));
