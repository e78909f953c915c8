// Objective-Plan-Task benchmark (bench/RESULTS-opt.md). Run by hand, never by `make test`:
//
//   cmake --build --preset release -j2 --target a2ad a2ad_bench_opt_rollup
//   (cd bench/js && npm ci)      # the @a2a-js/sdk server of the third row
//   node bench/opt_bench.mjs
//
// One DAG of TASKS plan tasks (default 1000) in PLANS plans (default 10), each task depending
// on up to two of the ten tasks before it in its plan (seeded, the same DAG every run), every
// task one run of a workflow that does nothing (`work`: one core.noop node). Run to the end
// three ways, on 127.0.0.1, each server fresh (port 0, temp data directory):
//   a2ad-opt     a2ad executes it: the plans are created with the tasks' skill, then the
//                objective is moved to working; a2ad starts each run when its dependencies are
//                completed (its outbox, durable), every task transition rolled up into the
//                plans and the objective in the task's own commit. Timed from that move to the
//                objective reading completed (polled every 20 ms).
//   a2ad-client  the same DAG driven by a client against a2ad without the extension: a
//                blocking message/send of `work` per task, sent as soon as its dependencies
//                came back completed (up to CONC in flight, default 64). Durable runs, no
//                objective.
//   sdk-client   the same client against an @a2a-js/sdk 1.3.0 server in memory (an echo
//                executor: submitted, working, artifact, completed), no durability, no
//                objective: what the A2A reference SDK offers.
// Prints tasks per second for each and the ratios to a2ad-opt, as Markdown and one
// `RESULT {json}` line each. REPEAT (default 3) rounds, each row once per round; WAYS picks
// rows ("a2ad-opt a2ad-client sdk-client").
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { startServer } from '../tests/interop/server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const env = (k, d) => (process.env[k] ? Number(process.env[k]) : d);
const TASKS = env('TASKS', 1000);
const PLANS = env('PLANS', 10);
const CONC = env('CONC', 64);
const REPEAT = env('REPEAT', 3);
const OPT = 'https://github.com/zeroasterisk/a2a-opt/v1';

// ---- the DAG ----------------------------------------------------------------------------
function mulberry32(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
// plans[p][j] = indices (in plan p) of task j's dependencies
function makeDag() {
  const rand = mulberry32(17);
  const per = Math.ceil(TASKS / PLANS);
  const plans = [];
  for (let p = 0, made = 0; p < PLANS && made < TASKS; ++p) {
    const tasks = [];
    for (let j = 0; j < per && made < TASKS; ++j, ++made) {
      const deps = new Set();
      for (let k = 0; k < 2 && j > 0; ++k) deps.add(j - 1 - Math.floor(rand() * Math.min(10, j)));
      tasks.push([...deps]);
    }
    plans.push(tasks);
  }
  return plans;
}

// ---- HTTP -------------------------------------------------------------------------------
function post(agent, url, body, headers = {}) {
  const u = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...headers } },
    (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try { resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))); } catch (e) { reject(e); }
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

// ---- the three ways -----------------------------------------------------------------------
async function runOpt(dag) {
  const wf = await mkdtemp(path.join(os.tmpdir(), 'a2ad-opt-bench-wf-'));
  await writeFile(path.join(wf, 'work.json'), JSON.stringify(workWorkflow()));
  const server = await startServer({ workflowsDir: wf,
    args: ['--opt-max-tasks-per-plan', String(Math.max(100, Math.ceil(TASKS / PLANS)))] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const url = `${server.baseUrl}/v1/a2a`;
  const rpc = async (method, params) => {
    const r = await post(agent, url, { jsonrpc: '2.0', id: 1, method, params }, { 'A2A-Extensions': OPT });
    if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
    return r.result;
  };
  try {
    const { objective } = await rpc('objectives/create', { name: 'bench' });
    for (let p = 0; p < dag.length; ++p) {
      const tasks = dag[p].map((deps, j) => ({ name: `t${p}.${j}`, skill: 'work',
        dependencies: deps.map((d) => `task-${d}`) }));
      await rpc('plans/create', { objectiveId: objective.id, name: `plan ${p}`, tasks });
    }
    const t0 = process.hrtime.bigint();
    await rpc('objectives/update', { id: objective.id, status: 'working' });
    for (;;) {
      const { objective: o } = await rpc('objectives/get', { id: objective.id, includePlans: false });
      if (o.status === 'completed') break;
      if (o.status === 'failed' || o.status === 'canceled') throw new Error(`objective ${o.status}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return Number(process.hrtime.bigint() - t0) / 1e9;
  } finally {
    agent.destroy();
    await server.stop();
    await rm(wf, { recursive: true, force: true });
  }
}

// Sends every task of `dag` when its dependencies completed; `send(agent)` resolves when one
// task's run completed.
async function driveDag(dag, send) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONC });
  const nodes = [];
  dag.forEach((tasks, p) => tasks.forEach((deps, j) => nodes.push({ p, j, deps, waiting: deps.length, next: [] })));
  const index = new Map(nodes.map((n) => [`${n.p}.${n.j}`, n]));
  for (const n of nodes) for (const d of n.deps) index.get(`${n.p}.${d}`).next.push(n);
  const t0 = process.hrtime.bigint();
  await new Promise((resolve, reject) => {
    let left = nodes.length;
    const start = (n) => send(agent).then(() => {
      if (--left === 0) resolve();
      for (const m of n.next) if (--m.waiting === 0) start(m);
    }, reject);
    for (const n of nodes) if (n.waiting === 0) start(n);
  });
  agent.destroy();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function runA2adClient(dag) {
  const wf = await mkdtemp(path.join(os.tmpdir(), 'a2ad-opt-bench-wf-'));
  await writeFile(path.join(wf, 'work.json'), JSON.stringify(workWorkflow()));
  const server = await startServer({ workflowsDir: wf });
  const url = `${server.baseUrl}/v1/a2a`;
  try {
    return await driveDag(dag, async (agent) => {
      const r = await post(agent, url, { jsonrpc: '2.0', id: 1, method: 'message/send', params: {
        message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data: {} }],
          metadata: { skillId: 'work' } } } });
      if (r.result?.status?.state !== 'completed') throw new Error(JSON.stringify(r).slice(0, 300));
    });
  } finally {
    await server.stop();
    await rm(wf, { recursive: true, force: true });
  }
}

async function runSdkClient(dag) {
  const script = path.join(here, 'js', 'sdk1_server.mjs');
  if (!existsSync(path.join(here, 'js', 'node_modules')))
    throw new Error('bench/js/node_modules is missing: (cd bench/js && npm ci)');
  const child = spawn(process.execPath, [script, '--store', 'memory'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const base = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /sdk1: serving (http:\/\/\S+?)\/?\s/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`sdk1 server exited (${code})`)));
  });
  try {
    return await driveDag(dag, async (agent) => {
      const r = await post(agent, `${base}/v1/a2a`, { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'work' }] } } },
      { 'A2A-Version': '1.0' });
      const state = r.result?.task?.status?.state ?? r.result?.status?.state;
      if (state !== 'TASK_STATE_COMPLETED' && state !== 'completed') throw new Error(JSON.stringify(r).slice(0, 300));
    });
  } finally {
    child.kill('SIGTERM');
  }
}

function workWorkflow() {
  return { id: 'work', name: 'work', version: '1.0.0', description: 'does nothing',
    metadata: { tags: ['bench'] }, triggers: [], variables: [], settings: { timeout: 0 },
    nodes: [{ id: 'n', typeId: 'core.noop', name: 'n', position: { x: 0, y: 0 }, config: {}, inputs: {} }],
    edges: [] };
}

// ---- main -------------------------------------------------------------------------------
const dag = makeDag();
const ways = { 'a2ad-opt': runOpt, 'a2ad-client': runA2adClient, 'sdk-client': runSdkClient };
const only = (process.env.WAYS ?? Object.keys(ways).join(' ')).split(/\s+/).filter(Boolean);
const rows = Object.fromEntries(only.map((k) => [k, []]));
for (let round = 0; round < REPEAT; ++round)
  for (const k of only) rows[k].push(await ways[k](dag));
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const tps = (k) => TASKS / median(rows[k]);
console.log(`\n${TASKS} plan tasks in ${dag.length} plans, ${REPEAT} rounds (median), ${os.cpus().length} cores\n`);
console.log('| way | seconds (median) | tasks/s | ratio to a2ad-opt |\n|---|---|---|---|');
for (const k of Object.keys(rows)) {
  const ratio = rows['a2ad-opt'] ? (tps(k) / tps('a2ad-opt')).toFixed(2) : '-';
  console.log(`| ${k} | ${median(rows[k]).toFixed(2)} | ${tps(k).toFixed(0)} | ${ratio} |`);
  console.log(`RESULT ${JSON.stringify({ bench: 'opt', way: k, tasks: TASKS, seconds: rows[k], tasks_per_s: tps(k) })}`);
}
process.exit(0);
