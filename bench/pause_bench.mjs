// Pause extension benchmark (bench/RESULTS-pause.md). Run by hand, never by `make test`:
//
//   cmake --build --preset release -j2 --target a2ad && node bench/pause_bench.mjs
//
// Against the real a2ad binary (A2AD_BIN, else build/release) on 127.0.0.1, port 0, a fresh
// temp data directory per part, the repository's workflows/:
//
//  (a) latency: RUNNING long-delay runs (default 1,000, delayMs one hour) are started first; then
//      a closed loop on one keep-alive connection, round after round over those tasks:
//      tasks/get, tasks/pause (finish_step), tasks/resume, tasks/pause (interrupt_immediate),
//      tasks/resume, and tasks/cancel of a fresh long-delay task started (untimed) just before,
//      so ~RUNNING runs stay live the whole time. Client-observed round trip of each call, from
//      the request's first byte to the response's last; p50/p99 per method, and the ratios to
//      tasks/get and tasks/cancel measured in the same rounds.
//  (b) bulk: BULK (default 10,000) long-delay tasks sent with message/send (non-blocking) in one
//      contextId; when all are working, one tasks/pause {contextId} and then one tasks/resume
//      {contextId}, CYCLES times (default 3); the time of each call and tasks per second. Every
//      answer is checked: BULK distinct tasks, no error entries, truncated false. Then one more
//      cycle while a second connection runs tasks/get in a closed loop (its latency meanwhile).
//
// Environment: A2AD_BIN, RUNNING, ROUNDS (default 2000; the first WARMUP=200 are not counted),
// BULK, CYCLES, SENDERS (connections that create tasks, default 16), PARTS ("a b", default both).
// Prints a Markdown summary and one `RESULT {json}` line per measurement.

import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { resolveBinary, startServer } from '../tests/interop/server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const env = (k, d) => (process.env[k] !== undefined && process.env[k] !== '' ? Number(process.env[k]) : d);
const RUNNING = env('RUNNING', 1000);
const ROUNDS = env('ROUNDS', 2000);
const WARMUP = env('WARMUP', 200);
const BULK = env('BULK', 10000);
const CYCLES = env('CYCLES', 3);
const SENDERS = env('SENDERS', 16);
const PARTS = (process.env.PARTS ?? 'a b').split(/\s+/).filter(Boolean);
const HOUR_MS = 3_600_000;

// ---- a minimal keep-alive JSON-RPC client (node:http, one socket per Client) -----------------

class Client {
  constructor(rpcUrl) {
    const u = new URL(rpcUrl);
    this.opts = {
      host: u.hostname, port: u.port, path: u.pathname, method: 'POST',
      agent: new http.Agent({ keepAlive: true, maxSockets: 1 }),
    };
    this.ids = 0;
  }

  /** One call; resolves to {body, ms} (ms: round trip as the client sees it). */
  call(method, params, headers = {}) {
    const payload = JSON.stringify({ jsonrpc: '2.0', id: ++this.ids, method, params });
    return new Promise((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const req = http.request({
        ...this.opts,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...headers },
      }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          const text = Buffer.concat(chunks).toString('utf8');
          let body;
          try { body = JSON.parse(text); } catch { return reject(new Error(`${method}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`)); }
          if (res.statusCode !== 200 || body.error) {
            return reject(new Error(`${method}: HTTP ${res.statusCode}: ${JSON.stringify(body.error ?? body).slice(0, 300)}`));
          }
          resolve({ body, ms, bytes: text.length });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  close() { this.opts.agent.destroy(); }
}

const longDelay = (contextId) => ({
  message: {
    kind: 'message', messageId: randomUUID(), role: 'user', ...(contextId ? { contextId } : {}),
    parts: [{ kind: 'data', data: { delayMs: HOUR_MS } }], metadata: { skillId: 'long-delay' },
  },
  configuration: { blocking: false },
});

/** Starts n long-delay tasks over `conns` connections; returns their ids and the rate. */
async function startMany(rpcUrl, n, conns, contextId) {
  const clients = Array.from({ length: conns }, () => new Client(rpcUrl));
  const ids = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(clients.map(async (c) => {
    while (next < n) {
      next++;
      const { body } = await c.call('message/send', longDelay(contextId));
      ids.push(body.result.id);
    }
  }));
  const s = (performance.now() - t0) / 1000;
  for (const c of clients) c.close();
  return { ids, seconds: s };
}

/** Polls until every task of `ids` is working (checks a sample of 50, then the last one). */
async function waitWorking(client, ids) {
  const sample = [...ids.filter((_, i) => i % Math.max(1, Math.floor(ids.length / 50)) === 0), ids.at(-1)];
  const deadline = Date.now() + 120_000;
  for (const id of sample) {
    for (;;) {
      const { body } = await client.call('tasks/get', { id, historyLength: 0 });
      if (body.result.status.state === 'working') break;
      if (Date.now() > deadline) throw new Error(`task ${id} not working: ${JSON.stringify(body.result.status)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, p50: pct(s, 50), p99: pct(s, 99), mean, max: s.at(-1) };
}

function serverCpuMs(pid) {
  // utime + stime of the server process (all threads), in ms.
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // fields 14, 15; USER_HZ = 100
}

function serverPid(server) {
  // startServer does not expose the child; find it by its data directory (unique temp path).
  const out = execFileSync('pgrep', ['-f', '--', `--data-dir ${server.dataDir}`], { encoding: 'utf8' }).trim();
  return Number(out.split('\n')[0]);
}

const f2 = (x) => x.toFixed(2);
const f3 = (x) => x.toFixed(3);

// ---- (a) latency with RUNNING live runs ----------------------------------------------------------

async function partA() {
  const server = await startServer({ workflowsDir: path.join(root, 'workflows') });
  const pid = serverPid(server);
  try {
    const started = await startMany(server.rpcUrl, RUNNING, SENDERS);
    const c = new Client(server.rpcUrl);
    await waitWorking(c, started.ids);
    const names = ['tasks/get', 'tasks/pause finish_step', 'tasks/resume (after finish_step)',
      'tasks/pause interrupt_immediate', 'tasks/resume (after interrupt_immediate)', 'tasks/cancel'];
    const samples = Object.fromEntries(names.map((n) => [n, []]));
    const cpu0 = { ms: 0 };
    for (let r = 0; r < ROUNDS + WARMUP; r++) {
      if (r === WARMUP) cpu0.ms = serverCpuMs(pid);
      const keep = r >= WARMUP;
      const id = started.ids[r % started.ids.length];
      const rec = (name, ms) => { if (keep) samples[name].push(ms); };
      const got = await c.call('tasks/get', { id, historyLength: 0 });
      rec('tasks/get', got.ms);
      if (got.body.result.status.state !== 'working') throw new Error(`task ${id}: ${JSON.stringify(got.body.result.status)}`);
      const p1 = await c.call('tasks/pause', { taskId: id, mode: 'finish_step' });
      rec('tasks/pause finish_step', p1.ms);
      const r1 = await c.call('tasks/resume', { taskId: id, handle: p1.body.result.handle });
      rec('tasks/resume (after finish_step)', r1.ms);
      const p2 = await c.call('tasks/pause', { taskId: id, mode: 'interrupt_immediate' });
      rec('tasks/pause interrupt_immediate', p2.ms);
      const r2 = await c.call('tasks/resume', { taskId: id, handle: p2.body.result.handle });
      rec('tasks/resume (after interrupt_immediate)', r2.ms);
      if (r1.body.result.cause !== 'explicit_resume' || r2.body.result.cause !== 'explicit_resume') {
        throw new Error(`unexpected resume answers: ${JSON.stringify([r1.body, r2.body])}`);
      }
      const victim = await c.call('message/send', longDelay());
      const cancel = await c.call('tasks/cancel', { id: victim.body.result.id });
      if (cancel.body.result.status.state !== 'canceled') throw new Error(`cancel: ${JSON.stringify(cancel.body.result.status)}`);
      rec('tasks/cancel', cancel.ms);
    }
    const cpuMs = serverCpuMs(pid) - cpu0.ms;
    // Every pause/resume round must leave the tasks running (and not paused).
    const check = await c.call('tasks/get', { id: started.ids[0], historyLength: 0 });
    if (check.body.result.status.state !== 'working' || check.body.result.metadata?.pause) {
      throw new Error(`after the rounds: ${JSON.stringify(check.body.result)}`);
    }
    c.close();
    const st = Object.fromEntries(names.map((n) => [n, stats(samples[n])]));
    const timedCalls = names.reduce((a, n) => a + st[n].n, 0);
    return { started, st, names, cpuPerCallMs: cpuMs / timedCalls };
  } finally {
    const how = await server.stop();
    if (how.code !== 0) console.error(`a2ad exit: ${JSON.stringify({ code: how.code, signal: how.signal })}\n${how.stderr.slice(-2000)}`);
  }
}

// ---- (b) one bulk pause / resume over BULK tasks of one context ----------------------------------

function checkBulk(body, what, expectIds, field) {
  const r = body.result;
  const ids = new Set(r.tasks.map((t) => t.taskId));
  const errors = r.tasks.filter((t) => t.error);
  const problems = [];
  if (r.truncated !== false) problems.push(`truncated=${r.truncated}`);
  if (r.tasks.length !== expectIds.size) problems.push(`${r.tasks.length} entries for ${expectIds.size} tasks`);
  if (ids.size !== r.tasks.length) problems.push(`${r.tasks.length - ids.size} duplicate entries`);
  const missing = [...expectIds].filter((id) => !ids.has(id));
  if (missing.length) problems.push(`${missing.length} tasks missing (e.g. ${missing[0]})`);
  if (errors.length) problems.push(`${errors.length} errors (e.g. ${JSON.stringify(errors[0])})`);
  const bad = r.tasks.filter((t) => !t.error && t.state !== field);
  if (bad.length) problems.push(`${bad.length} entries with state != ${field} (e.g. ${JSON.stringify(bad[0])})`);
  if (problems.length) throw new Error(`${what}: ${problems.join('; ')}`);
}

async function partB() {
  const server = await startServer({ workflowsDir: path.join(root, 'workflows') });
  const pid = serverPid(server);
  try {
    const contextId = randomUUID();
    const started = await startMany(server.rpcUrl, BULK, SENDERS, contextId);
    const c = new Client(server.rpcUrl);
    await waitWorking(c, started.ids);
    const expect = new Set(started.ids);
    const cycles = [];
    // One more cycle after the CYCLES measured alone: a second connection reads one task in a
    // closed loop while it runs (what a bulk call costs everyone else).
    const probe = new Client(server.rpcUrl);
    const probeMs = [];
    let probing = false;
    let prober = Promise.resolve();
    for (let i = 0; i <= CYCLES; i++) {
      if (i === CYCLES) {
        probing = true;
        prober = (async () => {
          while (probing) probeMs.push((await probe.call('tasks/get', { id: started.ids[0], historyLength: 0 })).ms);
        })();
      }
      const cpuA = serverCpuMs(pid);
      const pause = await c.call('tasks/pause', { contextId, reason: 'bulk bench' });
      const cpuB = serverCpuMs(pid);
      checkBulk(pause.body, `bulk pause ${i + 1}`, expect, 'paused-by-client');
      const one = await c.call('tasks/get', { id: started.ids[BULK >> 1], historyLength: 0 });
      if (one.body.result.metadata?.pause?.state !== 'paused-by-client') {
        throw new Error(`after the bulk pause: ${JSON.stringify(one.body.result)}`);
      }
      const resume = await c.call('tasks/resume', { contextId });
      const cpuC = serverCpuMs(pid);
      checkBulk(resume.body, `bulk resume ${i + 1}`, expect, 'working');
      const two = await c.call('tasks/get', { id: started.ids[BULK >> 1], historyLength: 0 });
      if (two.body.result.metadata?.pause) throw new Error(`after the bulk resume: ${JSON.stringify(two.body.result)}`);
      cycles.push({ probed: i === CYCLES, pauseMs: pause.ms, resumeMs: resume.ms, pauseBytes: pause.bytes, resumeBytes: resume.bytes,
        pauseCpuMs: cpuB - cpuA, resumeCpuMs: cpuC - cpuB });
    }
    probing = false;
    await prober;
    probe.close();
    c.close();
    return { started, cycles, probe: stats(probeMs) };
  } finally {
    const how = await server.stop();
    if (how.code !== 0) console.error(`a2ad exit: ${JSON.stringify({ code: how.code, signal: how.signal })}\n${how.stderr.slice(-2000)}`);
  }
}

// ---- report ------------------------------------------------------------------------------------

function machine() {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  let commit = 'unknown';
  try { commit = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(); } catch { /* not a checkout */ }
  return `${os.cpus().length} x ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}, node ${process.version}, a2ad ${resolveBinary()} at ${commit}`;
}

const say = (s = '') => console.log(s);
const raw = []; // RESULT lines, printed after the tables
say(`# pause bench: ${machine()}`);

if (PARTS.includes('a')) {
  const a = await partA();
  say();
  say(`## (a) one connection, ${RUNNING} long-delay runs live (started in ${f2(a.started.seconds)} s over ${SENDERS} connections, ${Math.round(RUNNING / a.started.seconds)}/s); ${ROUNDS} rounds after ${WARMUP} warm-up`);
  say();
  say('| call | n | p50 ms | p99 ms | mean ms | p50 / get | p50 / cancel | p99 / get | p99 / cancel |');
  say('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const get = a.st['tasks/get'];
  const cancel = a.st['tasks/cancel'];
  for (const n of a.names) {
    const s = a.st[n];
    say(`| ${n} | ${s.n} | ${f3(s.p50)} | ${f3(s.p99)} | ${f3(s.mean)} | ${f2(s.p50 / get.p50)} | ${f2(s.p50 / cancel.p50)} | ${f2(s.p99 / get.p99)} | ${f2(s.p99 / cancel.p99)} |`);
    raw.push(`RESULT ${JSON.stringify({ part: 'a', call: n, running: RUNNING, ...s })}`);
  }
  say();
  say(`server CPU per timed call (all six kinds, averaged): ${f3(a.cpuPerCallMs)} ms`);
}

if (PARTS.includes('b')) {
  const b = await partB();
  say();
  say(`## (b) bulk over ${BULK} working tasks of one context (created in ${f2(b.started.seconds)} s over ${SENDERS} connections, ${Math.round(BULK / b.started.seconds)}/s)`);
  say();
  say('| cycle | pause ms | tasks/s | server CPU ms | answer KiB | resume ms | tasks/s | server CPU ms | answer KiB |');
  say('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [i, c] of b.cycles.entries()) {
    say(`| ${c.probed ? `${i + 1} (with the probe)` : i + 1} | ${c.pauseMs.toFixed(0)} | ${Math.round(BULK / (c.pauseMs / 1000))} | ${c.pauseCpuMs.toFixed(0)} | ${(c.pauseBytes / 1024).toFixed(0)} | ` +
      `${c.resumeMs.toFixed(0)} | ${Math.round(BULK / (c.resumeMs / 1000))} | ${c.resumeCpuMs.toFixed(0)} | ${(c.resumeBytes / 1024).toFixed(0)} |`);
    raw.push(`RESULT ${JSON.stringify({ part: 'b', cycle: i + 1, tasks: BULK, ...c })}`);
  }
  const p = b.probe;
  say();
  say(`tasks/get on a second connection during cycle ${CYCLES + 1}: n ${p.n}, p50 ${f3(p.p50)} ms, p99 ${f3(p.p99)} ms, max ${f3(p.max)} ms`);
  raw.push(`RESULT ${JSON.stringify({ part: 'b', call: 'tasks/get during bulk', ...p })}`);
}

say();
for (const line of raw) say(line);
