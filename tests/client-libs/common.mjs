// common.mjs - what every driver of tests/client-libs shares: a recording
// proxy (which MCP revision a client really speaks, seen on the wire), the
// scenario a model would run through a client library, and the token checks.
//
// A driver is `node DRIVER.mjs URL NAME run`, or `CODEEXECD_TOKEN=T node
// DRIVER.mjs URL NAME auth` (NAME: the config's `name`); it calls
// main(adapter) with its adapter:
//
//   label          'name version' of the library, for the output
//   headers        true when the library can send an Authorization header
//   oneShot        true when every call is a new process (a CLI): on
//                  2025-11-25 nothing can carry state from one to the next
//   unavailable()  optional: a reason to skip, or undefined
//   imagesNotToModel  optional: why the library hands the model no images
//                  (then call()'s `kept` lists the image items it keeps)
//   oauthOnAny401  optional: why the library answers every 401 with OAuth
//                  (then a refusal that tried client registration is noted,
//                  not failed: no challenge of the server's can change it)
//   connect(url, {headers}) -> a connection:
//     tools()      the tool names the library hands to the model
//     call(tool, args) -> {texts: [str], images: [mime], isError: bool or
//                  undefined (the library does not say), raw}: what the
//                  library hands to the model, text and images only (never
//                  structuredContent)
//     version()    the revision the library says it negotiated, or undefined
//     close()
//
// Output: `ok - CLIENT: ...` lines, `revision: CLIENT: ...`, `note: CLIENT:
// ...`, `autherror: CLIENT: ...` (the error text a wrong or missing token
// gives), and on a mismatch `FAIL: CLIENT: ...` with the evidence, exit 1;
// `SKIP: CLIENT: reason` and exit 77 when the library cannot run here.
import http from 'node:http';

export const ID_RE = /execution_session_id: ([0-9a-f]{32})/;
export const MODERN = '2026-07-28';
// The end of the line on the 2026-07-28 path that names the execution session.
const CONTINUE = 'pass it as execution_session_id to continue in this kernel';
// 42 on a line of its own, also where a library hands the model the result
// as a JSON string (the line then sits between quotes or escaped newlines).
const PRINTED_42 = /(^|\n|"|\\n)42(\n|\\n|"|$)/;

let clientLabel = '?';

export function ok(what) {
	console.log(`ok - ${clientLabel}: ${what}`);
}

export function fail(what, evidence) {
	console.error(`FAIL: ${clientLabel}: ${what}`);
	if (evidence !== undefined)
		console.error(typeof evidence === 'string' ? evidence : JSON.stringify(evidence, trimmer, 1));
	process.exit(1);
}

export function skip(why) {
	console.log(`SKIP: ${clientLabel}: ${why}`);
	process.exit(77);
}

export function note(what) {
	console.log(`note: ${clientLabel}: ${what}`);
}

export function check(cond, what, evidence) {
	if (!cond)
		fail(what, evidence);
	ok(what);
}

// JSON.stringify replacer: base64 images shortened, so evidence stays readable.
function trimmer(key, value) {
	if (typeof value === 'string' && value.length > 400)
		return `${value.slice(0, 200)}...(${value.length} chars)`;
	return value;
}

export function errorText(e) {
	if (e === undefined || e === null)
		return String(e);
	let s = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
	// Libraries wrap: the cause often holds the HTTP status and body.
	for (let c = e.cause, n = 0; c && n < 4; c = c.cause, n++)
		s += ` [cause: ${c instanceof Error ? `${c.name}: ${c.message}` : String(c)}]`;
	// Stack frames a library put into its message are no part of what it says.
	return s.replace(/\n\s+at [^\n]*/g, '').replace(/\\n\s+at .*?(?=\\n|"|$)/g, '')
		.replace(/\s+/g, ' ').slice(0, 600);
}

// --- the recording proxy ---------------------------------------------------

// A reverse proxy on 127.0.0.1 in front of `target` (the daemon's /mcp URL):
// every request's JSON-RPC method, MCP-Protocol-Version and Mcp-Session-Id
// (sent and answered) go to `seen`. Streams (SSE) pass through unbuffered.
export async function recordingProxy(target) {
	const t = new URL(target);
	const seen = [];
	const server = http.createServer((req, res) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => {
			const body = Buffer.concat(chunks);
			const entry = { http: req.method, method: null,
					version: req.headers['mcp-protocol-version'] ?? null,
					sentSession: req.headers['mcp-session-id'] ?? null,
					metaVersion: null, status: null, session: null };
			try {
				const m = JSON.parse(body.toString());
				entry.method = m.method ?? (m.result || m.error ? 'response' : null);
				entry.metaVersion = m.params?._meta?.['io.modelcontextprotocol/protocolVersion'] ?? null;
			} catch {
				// GET/DELETE, or not JSON: method stays null
			}
			seen.push(entry);
			const headers = { ...req.headers, host: t.host };
			const up = http.request({ host: t.hostname, port: t.port, method: req.method,
						  path: t.pathname + new URL(req.url, 'http://x').search, headers },
						(ur) => {
				entry.status = ur.statusCode;
				entry.session = ur.headers['mcp-session-id'] ?? null;
				res.writeHead(ur.statusCode, ur.headers);
				ur.pipe(res);
			});
			up.on('error', (e) => {
				entry.status = `proxy error ${e.message}`;
				res.destroy();
			});
			res.on('close', () => up.destroy());
			up.end(body);
		});
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${server.address().port}${t.pathname}`,
		seen,
		close: () => new Promise((resolve) => {
			server.closeAllConnections?.();
			server.close(() => resolve());
		}),
	};
}

// What the wire says of the revision: the versions the tools/call requests
// sent, and whether an MCP session carried them.
export function wireRevision(seen) {
	const calls = seen.filter((s) => s.method === 'tools/call');
	const versions = [...new Set(calls.map((s) => s.metaVersion ?? s.version ?? '(none)'))];
	const sessions = [...new Set(calls.map((s) => s.sentSession).filter(Boolean))];
	const first = seen.filter((s) => s.method && s.method !== 'response').map((s) => s.method)[0];
	return { versions, sessions, first, calls: calls.length };
}

// --- the scenario --------------------------------------------------------

function joined(r) {
	return r.texts.join('\n');
}

// The model's view of one call, for the evidence.
function shown(r) {
	return { texts: r.texts, images: r.images, isError: r.isError };
}

// step(what, fn): fn's value; a throw fails the run naming the step.
async function step(what, fn) {
	try {
		return await fn();
	} catch (e) {
		return fail(`${what}: ${errorText(e)}`);
	}
}

async function scenario(adapter, url, name) {
	const tool = `execute_${name}_code`;
	const proxy = await recordingProxy(url);
	const conn = await step('connect', () => adapter.connect(proxy.url, {}));
	ok(`connected (first request on the wire: ${wireRevision(proxy.seen).first ?? proxy.seen[0]?.http})`);
	const names = await step('tools/list', () => conn.tools());
	check(names.includes(tool), `tools/list hands the model ${tool} (${names.length} tools)`, names);
	const call = (what, args) => step(what, () => conn.call(tool, args));

	const r1 = await call('x = 41', { code: 'x = 41' });
	check(r1.isError !== true, 'x = 41 ran', shown(r1));
	const m = ID_RE.exec(joined(r1));
	const wire = wireRevision(proxy.seen);
	const said = conn.version?.();
	const revision = wire.versions.includes(MODERN) || said === MODERN ? MODERN
		: wire.versions.find((v) => v !== '(none)') ?? said ?? 'unknown';
	console.log(`revision: ${clientLabel}: ${revision}` +
		    ` (library says ${said ?? 'nothing'}; tools/call sent ${wire.versions.join(', ')};` +
		    ` MCP session ${wire.sessions.length ? wire.sessions.join(', ') : 'none'};` +
		    ` id in the text: ${m ? 'yes' : 'no'})`);
	const args2 = { code: 'print(x + 1)' };
	let sid;
	let stateless = false;
	if (m !== null) {
		// What a model does: copy the id from the text into the next call.
		sid = m[1];
		check(joined(r1).includes(`[new execution session; execution_session_id: ${sid}; ${CONTINUE}]`),
		      'the first result\'s text says a new execution session began, and its id', shown(r1));
		ok(`${revision} path: the model copies execution_session_id ${sid} from the text`);
		args2.execution_session_id = sid;
	} else if (revision === MODERN) {
		fail('on the 2026-07-28 path the id is not in the text: the model cannot keep its kernel',
		     shown(r1));
	} else if (adapter.oneShot) {
		ok(`${revision} path: each invocation is its own MCP session, and the text names no ` +
		   'execution session: no state across calls (not checked)');
		stateless = true;
	} else {
		check(wire.sessions.length === 1,
		      `${revision} path: one MCP session (${wire.sessions[0]}) carries the calls`, wire);
	}
	if (sid && revision === MODERN && adapter.noParamHeaders) {
		// It sends no Mcp-Param-Session although the schema marks the
		// argument (x-mcp-header "Session"): refused, as SEP-2243 asks.
		const e = await conn.call(tool, args2).then(() => null, (x) => errorText(x));
		check(e !== null && e.includes('-32020') && e.includes('Mcp-Param-Session'),
		      `${clientLabel} names the session without Mcp-Param-Session: refused with ` +
		      '-32020 naming the header', e);
		ok(`${revision} path: ${adapter.noParamHeaders}; the call naming the session is ` +
		   'refused with -32020 naming Mcp-Param-Session (SEP-2243)');
		await step('close', () => conn.close());
		await proxy.close();
		return;
	}
	if (!stateless) {
		const r2 = await call('print(x + 1)', args2);
		check(r2.isError !== true && PRINTED_42.test(joined(r2)),
		      'print(x + 1) printed 42: the second call ran in the first call\'s kernel', shown(r2));
		if (joined(r2).includes('"structuredContent"'))
			note('the model\'s text is the result as JSON, structuredContent included');
		if (sid)
			check(joined(r2).includes(`[execution_session_id: ${sid}; ${CONTINUE}]`),
			      'its text names the same execution session', shown(r2));
	}

	const more = sid ? { execution_session_id: sid } : {};
	const r3 = await call('a matplotlib figure',
			      { code: 'import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()', ...more });
	if (r3.isError !== true && !r3.images.includes('image/png') && adapter.imagesNotToModel &&
	    r3.kept?.includes('image/png')) {
		note(`images do not reach the model: ${adapter.imagesNotToModel}`);
		ok('a matplotlib figure: an image/png item in the content the library keeps (not the model\'s)');
	} else {
		check(r3.isError !== true && r3.images.includes('image/png'),
		      'a matplotlib figure reaches the model as an image/png item', shown(r3));
	}

	const r4 = await call('1/0', { code: '1/0', ...more });
	check(joined(r4).includes('ZeroDivisionError'), 'an error: ZeroDivisionError in the text', shown(r4));
	if (r4.isError === undefined)
		ok('an error: the library does not hand the model isError (not checked)');
	else
		check(r4.isError === true, 'an error: isError is true', shown(r4));
	await step('close', () => conn.close());
	const inits = proxy.seen.filter((s) => s.method === 'initialize').length;
	if (inits > 1)
		note(`it sent initialize ${inits} times`);
	const deletes = proxy.seen.filter((s) => s.http === 'DELETE').length;
	ok(`closed (${deletes ? `DELETE /mcp sent ${deletes}x` : 'no DELETE /mcp: an MCP session, if any, waits for session_idle_timeout'})`);
	await proxy.close();
}

// A connection that must fail: connect and, when that succeeded, a call.
async function mustFail(adapter, url, tool, headers, what) {
	let conn;
	try {
		conn = await adapter.connect(url, { headers });
		const r = await conn.call(tool, { code: '1' });
		await conn.close().catch(() => {});
		if (r.isError === true)
			return joined(r);
		fail(`${what}: the call succeeded`, shown(r));
	} catch (e) {
		await conn?.close().catch(() => {});
		return errorText(e);
	}
	return undefined;
}

async function authChecks(adapter, url, name, token) {
	if (!adapter.headers)
		skip('the library cannot set an Authorization header: token checks not run');
	const tool = `execute_${name}_code`;
	const conn = await step('the right token: connect',
				() => adapter.connect(url, { headers: { Authorization: `Bearer ${token}` } }));
	const names = await step('the right token: tools/list', () => conn.tools());
	const r = await step('the right token: a call', () => conn.call(tool, { code: 'print(6 * 7)' }));
	check(names.includes(tool) && PRINTED_42.test(joined(r)), 'the right token: tools/list and a call work',
	      shown(r));
	await step('the right token: close', () => conn.close());
	const bad = [];
	for (const [what, headers] of [['a wrong token', { Authorization: `Bearer ${token}x` }],
				       ['no token', {}]]) {
		const err = await mustFail(adapter, url, tool, headers, what);
		console.log(`autherror: ${clientLabel}: ${what}: ${err}`);
		ok(`${what}: refused`);
		if (/Registration|JSON parsing failed/i.test(err))
			bad.push(`${what}: the error speaks of OAuth (dynamic client registration): ${err}`);
	}
	if (bad.length && adapter.oauthOnAny401) {
		note(`it starts OAuth on any 401, whatever the challenge says: ${adapter.oauthOnAny401}`);
		ok('both refusals surfaced (as a failed OAuth client registration: the library\'s choice)');
		return;
	}
	if (bad.length)
		fail('a refused token should end in a plain 401, not an OAuth attempt', bad.join('\n'));
	ok('neither refusal tried OAuth client registration');
}

export async function main(adapter) {
	clientLabel = adapter.label;
	const [url, name = 'py', mode = 'run'] = process.argv.slice(2);
	const token = process.env.CODEEXECD_TOKEN;
	// Not for the library's children (mcp-remote, the Inspector): they get what the driver passes.
	delete process.env.CODEEXECD_TOKEN;
	if (!url || (mode !== 'run' && mode !== 'auth') || (mode === 'auth' && !token)) {
		console.error('usage: node DRIVER.mjs URL NAME run | CODEEXECD_TOKEN=T node DRIVER.mjs URL NAME auth');
		process.exit(2);
	}
	if (adapter.unavailable)
		skip(await adapter.unavailable());
	// A library's stray promise or throw must fail the run, not hang it.
	process.on('unhandledRejection', (e) => fail(`unhandled rejection: ${errorText(e)}`));
	process.on('uncaughtException', (e) => fail(`uncaught exception: ${errorText(e)}`));
	if (mode === 'run')
		await scenario(adapter, url, name);
	else
		await authChecks(adapter, url, name, token);
	// Some libraries keep timers or sockets: exit once done.
	process.exit(0);
}
