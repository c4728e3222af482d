// inspector.mjs - the MCP Inspector's CLI (@modelcontextprotocol/inspector
// 2.12.0, `mcp-inspector --cli`) against codeexecd, as an agent that shells
// out to it would use it: one process per request, `--method tools/list
// --strict` (exit 6 on an error-severity schema problem) and `--method
// tools/call --tool-name ... --tool-args-json ... --format json`, whose
// result's content items are read (its isError, and exit status 5, say a
// tool failed). Each invocation is its own connection: on the CLI's default
// era (legacy, 2025-11-25) its own MCP session, so only an id in the text
// can carry a kernel from one call to the next.
// INSPECTOR_PROTOCOL_ERA=auto|modern|legacy passes --protocol-era.
// Usage: node inspector.mjs URL NAME run | CODEEXECD_TOKEN=T node inspector.mjs URL NAME auth
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { main, note } from './common.mjs';

const require = createRequire(import.meta.url);
const CLI = join(dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
		 'clients', 'launcher', 'build', 'index.js');
const ERA = process.env.INSPECTOR_PROTOCOL_ERA;
const TIMEOUT_MS = 90000;

// One CLI run: its exit status, stdout's JSON (or null) and stderr.
function run(home, url, headers, args) {
	// --connect-timeout: its default, 15 s, is short on a loaded test machine.
	const argv = [CLI, '--cli', url, ...(ERA ? ['--protocol-era', ERA] : []), '--format', 'json',
		      '--connect-timeout', '60000', ...args];
	for (const [k, v] of Object.entries(headers ?? {}))
		argv.push('--header', `${k}: ${v}`);
	return new Promise((resolve, reject) => {
		// Its catalog and OAuth state stay in a temporary home.
		const child = spawn(process.execPath, argv, {
			stdio: ['ignore', 'pipe', 'pipe'],
			// No OS keychain in a test: secrets (none here) in memory, without the warnings.
			env: { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, 'mcp.json'),
			       MCP_CLIENT_CONFIG_PATH: join(home, 'client.json'),
			       MCP_INSPECTOR_SECRET_STORE: 'memory' },
		});
		let out = '';
		let err = '';
		child.stdout.on('data', (d) => {
			out += d;
		});
		child.stderr.on('data', (d) => {
			err += d;
		});
		const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
		child.on('error', reject);
		child.on('close', (code, signal) => {
			clearTimeout(timer);
			let json = null;
			try {
				json = JSON.parse(out);
			} catch {
				// not JSON: left null, the caller reports stdout
			}
			resolve({ code: signal ?? code, json, out, err: err.trim() });
		});
	});
}

function failure(r) {
	return new Error(`mcp-inspector --cli exited ${r.code}: ${r.err.replace(/\s+/g, ' ') || r.out}`);
}

await main({
	label: `@modelcontextprotocol/inspector 2.12.0 --cli${ERA ? ` --protocol-era ${ERA}` : ''}`,
	headers: true,
	oneShot: true,
	async connect(url, { headers }) {
		const home = mkdtempSync(join(tmpdir(), 'cxd-inspector-'));
		// The connection is the first tools/list; --strict checks the schemas.
		const list = await run(home, url, headers, ['--method', 'tools/list', '--strict']);
		if (list.code !== 0 || !list.json?.result) {
			rmSync(home, { recursive: true, force: true });
			throw failure(list);
		}
		const strictNote = list.err.split('\n').filter((l) => /error|warning/i.test(l)).pop();
		if (strictNote)
			note(`--strict on tools/list: ${strictNote}`);
		return {
			async tools() {
				return list.json.result.tools.map((t) => t.name);
			},
			async call(name, args) {
				const r = await run(home, url, headers, ['--method', 'tools/call', '--tool-name', name,
									 '--tool-args-json', JSON.stringify(args)]);
				if (!r.json?.result)
					throw failure(r);
				const content = r.json.result.content ?? [];
				const isError = r.json.result.isError === true;
				if ((r.code === 5) !== isError)
					throw new Error(`exit status ${r.code} with isError ${isError}: ${r.err}`);
				return {
					texts: content.filter((c) => c.type === 'text').map((c) => c.text),
					images: content.filter((c) => c.type === 'image').map((c) => c.mimeType),
					isError,
					raw: content,
				};
			},
			version: () => undefined,
			async close() {
				rmSync(home, { recursive: true, force: true });
			},
		};
	},
});
