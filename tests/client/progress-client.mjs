// progress-client.mjs - one long call through the official MCP TypeScript
// SDK, kept alive by progress notifications (issue 3 item 3).
//
// Usage: node progress-client.mjs URL [NAME]
// Runs ~32 s of code that prints every 4 s with execute_{NAME}_code, with
// an onprogress callback, a 10 s request timeout and resetTimeoutOnProgress:
// the call must succeed past 30 s with progress notifications carrying the
// output as it is printed. Then the control: the same kind of call without
// resetTimeoutOnProgress times out (the SDK then sends
// notifications/cancelled), and the session's next call runs at once
// because the kernel was interrupted. Exits non-zero on any mismatch.
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { args, check, connect, text } from './common.mjs';

const [url, tool] = args('progress-client.mjs');
const { client, transport } = await connect(url, 'codeexecd-progress-test');
check(typeof transport.sessionId === 'string', `connected, session ${transport.sessionId}`);

await client.callTool({ name: tool, arguments: { code: 'import time' } });

const BEATS = 8;
const code = `for i in range(${BEATS}):\n    print(f"beat {i}", flush=True)\n    time.sleep(4)\n"finished"`;
const progress = [];
const t0 = Date.now();
let result;
try {
	result = await client.callTool({ name: tool, arguments: { code, timeout: 90 } },
		CallToolResultSchema, {
			timeout: 10000,
			resetTimeoutOnProgress: true,
			onprogress: (p) => progress.push({ t: (Date.now() - t0) / 1000, ...p }),
		});
} catch (e) {
	check(false, `the long call succeeds (it threw after ${(Date.now() - t0) / 1000} s: ${e})`,
		progress);
}
const took = (Date.now() - t0) / 1000;
check(took > 30, `the call lasted past 30 s with a 10 s request timeout (${took.toFixed(1)} s)`);
check(result.isError !== true && text(result).includes('finished'), 'the long call returned its value',
	result);
const want = Array.from({ length: BEATS }, (_, i) => `beat ${i}\n`).join('');
check(result.structuredContent?.stdout === want, 'the result holds the whole output',
	result.structuredContent);
check(progress.length >= BEATS - 1, `onprogress was called ${progress.length} times`, progress);
const said = progress.map((p) => p.message ?? '').join('');
check(Array.from({ length: BEATS }, (_, i) => `beat ${i}`).every((b) => said.includes(b)),
	'the progress messages carry every line of output', progress);
const beat3 = progress.find((p) => (p.message ?? '').includes('beat 3'));
check(beat3 !== undefined && beat3.t < 20, `beat 3 arrived while the code ran (${beat3?.t} s)`,
	progress);
const times = [0, ...progress.map((p) => p.t), took];
const gap = Math.max(...times.slice(1).map((t, i) => t - times[i]));
check(gap < 10, `no gap of 10 s without progress (largest ${gap.toFixed(1)} s)`, progress);
check(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress),
	'progress values increase', progress);
console.log(`long call: ${took.toFixed(1)} s, ${progress.length} progress notifications`);

// The control: without resetTimeoutOnProgress the same kind of call times out.
const t1 = Date.now();
let threw = null;
try {
	await client.callTool({ name: tool, arguments: { code: 'for i in range(10):\n    print(i, flush=True)\n    time.sleep(0.5)\nopen("too-late.txt", "w")' } },
		CallToolResultSchema, { timeout: 3000, onprogress: () => {} });
} catch (e) {
	threw = e;
}
const t1took = (Date.now() - t1) / 1000;
check(threw !== null && t1took < 6,
	`without resetTimeoutOnProgress the call times out (${t1took.toFixed(1)} s: ${threw})`);
// The SDK sent notifications/cancelled: the kernel stops, the next call runs at once.
const t2 = Date.now();
const r = await client.callTool({ name: tool, arguments: { code: 'import os\nos.path.exists("too-late.txt")' } },
	CallToolResultSchema, { timeout: 5000 });
const t2took = (Date.now() - t2) / 1000;
check(text(r).includes('False') && t2took < 3,
	`after the SDK's cancel the next call ran at once (${t2took.toFixed(1)} s)`, r);
await new Promise((res) => setTimeout(res, Math.max(0, 6500 - (Date.now() - t1))));
const r2 = await client.callTool({ name: tool, arguments: { code: 'os.path.exists("too-late.txt")' } });
check(text(r2).includes('False'), 'the cancelled code never finished (no too-late.txt)', r2);

await transport.terminateSession();
await client.close();
console.log('progress client: all checks passed');
