// core.a2a.invoke benchmark (bench/RESULTS-invoke.md). Run by hand, never by `make test`:
//
//   cmake --build --preset release -j2 --target a2ad && node bench/invoke_bench.mjs
//
// Two real a2ad processes on 127.0.0.1 (port 0, fresh temp data directories, SQLite with the
// default synchronous=normal): a peer serving the built-in `echo` skill, and a caller whose one
// workflow `call-echo` is a single core.a2a.invoke node handing the message to that peer
// (pollMs POLL_MS, default 10). For CONC (default "1 16") concurrent keep-alive connections,
// each a closed loop for SECONDS (default 10) after a 1 s warm-up:
//   direct   a blocking message/send of `echo` straight to the peer (what a client of the peer
//            does itself: one peer task per call)
//   invoke   a blocking message/send of `call-echo` to the caller: a run whose node sends the
//            message to the peer (non-blocking), logs the peer task, polls it to completed and
//            logs that, then completes: two tasks, at least five commits, one poll interval
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
await writeFile(path.join(wfDir, 'call-echo.json'), JSON.stringify({
  id: 'call-echo', name: 'call-echo', version: '1.0.0', description: 'bench', metadata: { tags: ['bench'] },
  triggers: [], variables: [], settings: { timeout: 0 },
  nodes: [{ id: 'call', typeId: 'core.a2a.invoke', name: 'call', position: { x: 0, y: 0 },
    config: { skill: 'echo', text: 'hello', pollMs: POLL_MS }, inputs: {} }],
  edges: [] }));
const peer = await startServer();
const caller = await startServer({ workflowsDir: wfDir,
  args: ['--a2a-peer', `default=${peer.baseUrl}`, '--egress-allowlist', '127.0.0.1', '--egress-allow-http'] });
const rows = [];
try {
  for (const conc of CONC) {
    const direct = await loop(peer.rpcUrl, 'echo', conc);
    const invoke = await loop(caller.rpcUrl, 'call-echo', conc);
    const row = { conc, pollMs: POLL_MS, direct, invoke, ratio: invoke.perSecond / direct.perSecond,
      overheadP50Ms: invoke.p50 - direct.p50 };
    rows.push(row);
    console.log(`RESULT ${JSON.stringify(row)}`);
  }
} finally {
  await caller.stop();
  await peer.stop();
  await rm(wfDir, { recursive: true, force: true });
}
const f = (x) => x.toFixed(1);
console.log(`\n| connections | direct send/s | direct p50 ms | via core.a2a.invoke/s | invoke p50 ms | ratio | node overhead p50 ms |`);
console.log('|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.conc} | ${f(r.direct.perSecond)} | ${f(r.direct.p50)} | ${f(r.invoke.perSecond)} | ${f(r.invoke.p50)} | ${r.ratio.toFixed(2)}x | ${f(r.overheadP50Ms)} |`);
