// mcp-use.mjs - mcp-use 2.5.2 (npm) against codeexecd. mcp-use 2 is a
// server framework: its MCP client, MCPClient, lives in the separate
// package @mcp-use/client (an optional peer of mcp-use, and what
// `mcp-use client ...` and server.proxy() load). When @mcp-use/client
// cannot be imported this driver skips, saying so; the registry this tree
// installs from has no @mcp-use/client (npm view: 404), so it is not pinned
// in package.json. Its API is not guessed here: the driver only probes.
// Usage: node mcp-use.mjs URL NAME run | CODEEXECD_TOKEN=T node mcp-use.mjs URL NAME auth
import { readFileSync } from 'node:fs';
import { main } from './common.mjs';

await main({
	label: 'mcp-use 2.5.2',
	headers: true,
	async unavailable() {
		// mcp-use's exports map hides its package.json: read it beside this file.
		const version = JSON.parse(readFileSync(new URL('node_modules/mcp-use/package.json',
								import.meta.url))).version;
		try {
			await import('@mcp-use/client');
		} catch (e) {
			return `mcp-use ${version} has no MCP client of its own; its client is the package ` +
				`@mcp-use/client, which is not installed (${e.code ?? e.message}); ` +
				'the npm registry answers 404 for it';
		}
		return '@mcp-use/client is installed, but this driver does not drive it yet ' +
			'(write its adapter from the package\'s .d.ts)';
	},
});
