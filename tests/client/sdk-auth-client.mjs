// sdk-auth-client.mjs - the official MCP TypeScript SDK against codeexecd
// with auth.mode oauth (tests/system/436-auth-oauth.sh).
//
// Usage: node sdk-auth-client.mjs URL TOKEN ISSUER [NAME]
// With a pre-issued bearer token, given once through an OAuthClientProvider
// and once through requestInit headers, the client runs code and sees its
// identity in USER_IDENTITY. Without a token it gets the 401, follows the
// resource_metadata address of WWW-Authenticate to the RFC 9728 document
// and from there to ISSUER, whose authorization URL it would send the user
// to, naming this server as the resource. Exits non-zero on any mismatch.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
	StreamableHTTPClientTransport,
	StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { check, text } from './common.mjs';

const [url, token, issuer, name = 'py'] = process.argv.slice(2);
if (!url || !token || !issuer) {
	console.error('usage: node sdk-auth-client.mjs URL TOKEN ISSUER [NAME]');
	process.exit(2);
}
const tool = `execute_${name}_code`;

// An OAuth client provider holding `tok` (or none), recording the redirect.
function provider(tok) {
	return {
		redirected: null,
		get redirectUrl() { return 'http://127.0.0.1:1/callback'; },
		get clientMetadata() {
			return { redirect_uris: ['http://127.0.0.1:1/callback'], client_name: 'codeexecd-test' };
		},
		clientInformation() { return { client_id: 'codeexecd-test' }; },
		tokens() { return tok ? { access_token: tok, token_type: 'Bearer' } : undefined; },
		saveTokens() {},
		redirectToAuthorization(u) { this.redirected = u; },
		saveCodeVerifier() {},
		codeVerifier() { return 'verifier'; },
	};
}

// Connect with transport options `opts`, run code, check the answer.
async function runs(opts, what) {
	const client = new Client({ name: 'codeexecd-sdk-auth-test', version: '0.0.0' });
	const transport = new StreamableHTTPClientTransport(new URL(url), opts);
	await client.connect(transport);
	const { tools } = await client.listTools();
	check(tools.some((t) => t.name === tool), `${what}: tools/list has ${tool}`);
	const r = await client.callTool({
		name: tool,
		arguments: { code: 'import os\n(6 * 7, os.environ["USER_IDENTITY"])' },
	});
	check(r.isError !== true && text(r).includes("(42, 'alice')"),
		`${what}: code ran as alice`, r);
	await transport.terminateSession();
	await client.close();
}

await runs({ authProvider: provider(token) }, 'auth provider with a pre-issued token');
await runs({ requestInit: { headers: { Authorization: `Bearer ${token}` } } },
	'requestInit headers');

// No token and no provider: the 401 itself.
{
	const client = new Client({ name: 'codeexecd-sdk-auth-test', version: '0.0.0' });
	const transport = new StreamableHTTPClientTransport(new URL(url));
	const err = await client.connect(transport).then(() => null, (e) => e);
	check(err instanceof StreamableHTTPError && err.code === 401, 'no token: HTTP 401',
		String(err));
}

// No token, a provider: the SDK follows the metadata to the issuer.
{
	const p = provider(undefined);
	const client = new Client({ name: 'codeexecd-sdk-auth-test', version: '0.0.0' });
	const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: p });
	const err = await client.connect(transport).then(() => null, (e) => e);
	check(err instanceof UnauthorizedError, 'no token: UnauthorizedError', String(err));
	check(p.redirected !== null && p.redirected.href.startsWith(`${issuer}/authorize?`),
		'the SDK found the issuer through resource_metadata', p.redirected?.href);
	check(p.redirected.searchParams.get('resource') === url,
		'the authorization request names this server as the resource', p.redirected.href);
}
console.log('sdk auth client: all checks passed');
