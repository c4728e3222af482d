// mcp-remote.mjs - mcp-remote 0.15.1, the stdio <-> HTTP proxy desktop
// hosts run for a remote server, against codeexecd. This driver is the
// host: it starts `mcp-remote URL` as a child process and speaks newline
// JSON-RPC on its stdin and stdout (initialize at 2025-11-25, as a
// 2025-era host does, then tools/list and tools/call); the result's content
// items are what the host hands its model. Headers go in a --header-file; its
// OAuth state goes to a temporary MCP_REMOTE_CONFIG_DIR, and it finds no
// browser to open (PATH is empty for it). MCP_REMOTE_PROTOCOL=auto|legacy
// passes --protocol (its default: legacy).
// Usage: node mcp-remote.mjs URL NAME run | CODEEXECD_TOKEN=T node mcp-remote.mjs URL NAME auth
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { main } from './common.mjs';

const require = createRequire(import.meta.url);
const PROXY = join(dirname(require.resolve('mcp-remote/package.json')), 'dist', 'proxy.js');
const TIMEOUT_MS = 90000;
const PROTOCOL = process.env.MCP_REMOTE_PROTOCOL;

function start(url, headers) {
	const conf = mkdtempSync(join(tmpdir(), 'cxd-mcp-remote-'));
	const empty = join(conf, 'no-browser');
	mkdirSync(empty);
	const args = [PROXY, url, '--auth-timeout', '5', ...(PROTOCOL ? ['--protocol', PROTOCOL] : [])];
	// Headers from a file, as its README advises for credentials: not in the process list.
	if (Object.keys(headers ?? {}).length) {
		const file = join(conf, 'headers.txt');
		writeFileSync(file, Object.entries(headers).map(([k, v]) => `${k}: ${v}\n`).join(''),
			      { mode: 0o600 });
		args.push('--header-file', file);
	}
	const child = spawn(process.execPath, args, {
		stdio: ['pipe', 'pipe', 'pipe'],
		env: { ...process.env, MCP_REMOTE_CONFIG_DIR: conf, PATH: empty, BROWSER: 'none' },
	});
	const pending = new Map();
	let stderr = '';
	let buf = '';
	let exited = null;
	child.stderr.on('data', (d) => {
		stderr += d;
	});
	child.stdout.on('data', (d) => {
		buf += d;
		let i;
		while ((i = buf.indexOf('\n')) >= 0) {
			const line = buf.slice(0, i).trim();
			buf = buf.slice(i + 1);
			if (!line)
				continue;
			let msg;
			try {
				msg = JSON.parse(line);
			} catch {
				continue;
			}
			const p = msg.id !== undefined && msg.method === undefined ? pending.get(msg.id) : undefined;
			if (p) {
				pending.delete(msg.id);
				p.resolve(msg);
			}
		}
	});
	// What it said last: its "Fatal error:" line when it gave up, else its last lines.
	const lastWords = () => {
		const lines = stderr.trim().split('\n');
		const fatal = lines.filter((l) => /Fatal error|Connection error/.test(l)).pop();
		return fatal ?? lines.slice(-4).join(' | ');
	};
	child.on('exit', (code, signal) => {
		exited = signal ?? code;
		for (const p of pending.values())
			p.reject(new Error(`mcp-remote exited (${exited}): ${lastWords()}`));
		pending.clear();
	});
	let next = 0;
	function request(method, params) {
		if (exited !== null)
			return Promise.reject(new Error(`mcp-remote exited (${exited}): ${lastWords()}`));
		const id = ++next;
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				pending.delete(id);
				reject(new Error(`no answer to ${method} in ${TIMEOUT_MS} ms: ${lastWords()}`));
			}, TIMEOUT_MS);
			pending.set(id, {
				resolve: (m) => {
					clearTimeout(timer);
					if (m.error)
						reject(new Error(`${method}: JSON-RPC error ${m.error.code}: ${m.error.message}`));
					else
						resolve(m.result);
				},
				reject: (e) => {
					clearTimeout(timer);
					reject(e);
				},
			});
			child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
		});
	}
	function notify(method, params) {
		child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}) })}\n`);
	}
	async function stop() {
		if (exited === null) {
			child.stdin.end();
			const gone = new Promise((resolve) => child.once('exit', resolve));
			child.kill('SIGTERM');
			await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 5000))]);
			if (exited === null)
				child.kill('SIGKILL');
		}
		rmSync(conf, { recursive: true, force: true });
	}
	return { request, notify, stop };
}

await main({
	label: `mcp-remote 0.15.1${PROTOCOL ? ` --protocol ${PROTOCOL}` : ''}`,
	headers: true,
	// With --protocol auto its upstream calls carry no Mcp-Param-Session.
	noParamHeaders: PROTOCOL === 'auto' &&
		'mcp-remote 0.15.1 --protocol auto forwards tools/call without the Mcp-Param-Session ' +
		'header the tool\'s inputSchema asks for',
	// runProxy: serverIssuesAuthChallenge() is `status === 401` (a GET /mcp),
	// then the SDK's auth() runs whatever the WWW-Authenticate header says;
	// with no metadata it takes the server's origin as the authorization
	// server and POSTs /register. No flag turns that off.
	oauthOnAny401: 'mcp-remote 0.15.1 registers an OAuth client (POST /register) on every 401, ' +
		'with a plain Bearer challenge and no RFC 9728 metadata too',
	async connect(url, { headers }) {
		const p = start(url, headers);
		let init;
		try {
			init = await p.request('initialize', {
				protocolVersion: '2025-11-25', capabilities: {},
				clientInfo: { name: 'codeexecd-454-host', version: '0.0.0' },
			});
			p.notify('notifications/initialized');
		} catch (e) {
			await p.stop();
			throw e;
		}
		return {
			async tools() {
				return (await p.request('tools/list', {})).tools.map((t) => t.name);
			},
			async call(name, args) {
				const r = await p.request('tools/call', { name, arguments: args });
				const content = r.content ?? [];
				return {
					texts: content.filter((c) => c.type === 'text').map((c) => c.text),
					images: content.filter((c) => c.type === 'image').map((c) => c.mimeType),
					isError: r.isError === true,
					raw: content,
				};
			},
			version: () => init.protocolVersion,
			close: () => p.stop(),
		};
	},
});
