// core.a2a.invoke benchmark (bench/RESULTS-invoke.md). Run by hand, never by `make test`:
//
//   cmake --build --preset release -j2 --target a2ad && node bench/invoke_bench.mjs
//
// Two real a2ad processes on 127.0.0.1 (port 0, fresh temp data directories, SQLite with the
// default synchronous=normal): a peer serving the built-in `echo` skill, and a caller whose one
// workflow `call-echo-<binding>` is a single core.a2a.invoke node handing the message to that
// peer over its JSON-RPC or its REST interface (BINDINGS, default "jsonrpc rest"; pollMs
// POLL_MS, default 10). For CONC (default "1 16") concurrent keep-alive connections,
// each a closed loop for SECONDS (default 10) after a 1 s warm-up:
//   direct   a blocking message/send of `echo` straight to the peer (what a client of the peer
//            does itself: one peer task per call)
//   invoke   a blocking message/send of `call-echo-<binding>` to the caller: a run whose node sends the
//            message to the peer (non-blocking), logs the peer task, polls it to completed and
//            logs that, then completes: two tasks, at least five commits, one poll interval
// Then the three ways of following a peer's task (MODES, default "poll stream push") against
// a peer skill `slow-echo` that works DELAY_MS (default 50) before completing:
//   direct   a blocking message/send of slow-echo to the peer
//   invoke   call-slow-<mode>: the node follows the peer's task by polling every POLL_MS, by
//            its SubscribeToTask stream, or by the peer's pushes to the caller's receiver
// Prints calls per second and p50/p99 of each, the ratio invoke/direct, and the node's
// overhead (invoke p50 - direct p50), as Markdown and one `RESULT {json}` line each.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { startServer } from '../tests/interop/server.mjs';

const env = (k, d) => (process.env[k] ? Number(process.env[k]) : d);
const SECONDS = env('SECONDS', 10);
const POLL_MS = env('POLL_MS', 10);
const CONC = (process.env.CONC ?? '1 16').split(/\s+/).filter(Boolean).map(Number);
const DELAY_MS = env('DELAY_MS', 50);
const MODES = (process.env.MODES ?? 'poll stream push').split(/\s+/).filter(Boolean);
const BINDINGS = (process.env.BINDINGS ?? 'jsonrpc rest').split(/\s+/).filter(Boolean);

function send(agent, url, skill) {
  const u = new URL(url);
  const payload = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: {
    message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hello' }],
      metadata: { skillId: skill } } } });
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const state = body.result?.status?.state;
        if (state !== 'completed') return reject(new Error(`${skill}: ${JSON.stringify(body).slice(0, 300)}`));
        resolve(Number(process.hrtime.bigint() - t0) / 1e6);
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function loop(url, skill, conc) {
  const lat = [];
  let stop = false;
  let counting = false;
  const workers = Array.from({ length: conc }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    while (!stop) {
      const ms = await send(agent, url, skill);
      if (counting) lat.push(ms);
    }
    agent.destroy();
  });
  await new Promise((r) => setTimeout(r, 1000));
  counting = true;
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  counting = false;
  const secs = (Date.now() - t0) / 1000;
  stop = true;
  await Promise.all(workers);
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
  return { perSecond: lat.length / secs, p50: q(0.5), p99: q(0.99), calls: lat.length };
}

const wfDir = await mkdtemp(path.join(os.tmpdir(), 'a2ad-invoke-bench-'));
const peerWfDir = await mkdtemp(path.join(os.tmpdir(), 'a2ad-invoke-bench-peer-'));
const node = (id, typeId, config) => ({ id, typeId, name: id, position: { x: 0, y: 0 }, config, inputs: {} });
const wf = (id, nodes) => ({ id, name: id, version: '1.0.0', description: 'bench', metadata: { tags: ['bench'] },
  triggers: [], variables: [], settings: { timeout: 0 }, nodes,
  edges: nodes.slice(1).map((n, i) => ({ id: `e${i}`, sourceNodeId: nodes[i].id, targetNodeId: n.id })) });
// The peer's slow skill: DELAY_MS of work, so following its task matters.
await writeFile(path.join(peerWfDir, 'slow-echo.json'), JSON.stringify(
  wf('slow-echo', [node('work', 'core.delay', { delayMs: DELAY_MS }), node('done', 'core.noop', {})])));
for (const binding of BINDINGS)
  await writeFile(path.join(wfDir, `call-echo-${binding}.json`), JSON.stringify(wf(`call-echo-${binding}`,
    [node('call', 'core.a2a.invoke', { skill: 'echo', text: 'hello', pollMs: POLL_MS, binding })])));
for (const mode of MODES)
  await writeFile(path.join(wfDir, `call-slow-${mode}.json`), JSON.stringify(wf(`call-slow-${mode}`,
    [node('call', 'core.a2a.invoke', { skill: 'slow-echo', text: 'hello', mode, pollMs: mode === 'push' ? 30000 : POLL_MS })])));
const egress = ['--egress-allowlist', '127.0.0.1', '--egress-allow-http'];
const peer = await startServer({ workflowsDir: peerWfDir, args: egress });
const caller = await startServer({ workflowsDir: wfDir, args: ['--a2a-peer', `default=${peer.baseUrl}`, ...egress] });
const rows = [];
const slowRows = [];
try {
  for (const conc of CONC) {
    const direct = await loop(peer.rpcUrl, 'echo', conc);
    for (const binding of BINDINGS) {
      const invoke = await loop(caller.rpcUrl, `call-echo-${binding}`, conc);
      const row = { conc, binding, pollMs: POLL_MS, direct, invoke, ratio: invoke.perSecond / direct.perSecond,
        overheadP50Ms: invoke.p50 - direct.p50 };
      rows.push(row);
      console.log(`RESULT ${JSON.stringify(row)}`);
    }
  }
  for (const conc of CONC) {
    const direct = await loop(peer.rpcUrl, 'slow-echo', conc);
    for (const mode of MODES) {
      const invoke = await loop(caller.rpcUrl, `call-slow-${mode}`, conc);
      const row = { conc, mode, delayMs: DELAY_MS, direct, invoke, ratio: invoke.perSecond / direct.perSecond,
        overheadP50Ms: invoke.p50 - direct.p50 };
      slowRows.push(row);
      console.log(`RESULT ${JSON.stringify(row)}`);
    }
  }
} finally {
  await caller.stop();
  await peer.stop();
  await rm(wfDir, { recursive: true, force: true });
  await rm(peerWfDir, { recursive: true, force: true });
}
const f = (x) => x.toFixed(1);
console.log(`\n| connections | node's binding | direct send/s | direct p50 ms | via core.a2a.invoke/s | invoke p50 ms | ratio | node overhead p50 ms |`);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.conc} | ${r.binding} | ${f(r.direct.perSecond)} | ${f(r.direct.p50)} | ${f(r.invoke.perSecond)} | ${f(r.invoke.p50)} | ${r.ratio.toFixed(2)}x | ${f(r.overheadP50Ms)} |`);
console.log(`\n| connections | mode | direct slow-echo/s | direct p50 ms | via core.a2a.invoke/s | invoke p50 ms | ratio | node overhead p50 ms |`);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of slowRows)
  console.log(`| ${r.conc} | ${r.mode} | ${f(r.direct.perSecond)} | ${f(r.direct.p50)} | ${f(r.invoke.perSecond)} | ${f(r.invoke.p50)} | ${r.ratio.toFixed(2)}x | ${f(r.overheadP50Ms)} |`);
