// core.a2a.invoke against peers written with the official SDKs (issue 16): an a2ad caller
// hands steps to an @a2a-js/sdk 1.3.0 peer (A2A 1.0 card, JSON-RPC 1.0) and a 0.3.14 peer
// (0.3 card, JSON-RPC 0.3), whose executors (sdk_peer.mjs) complete, ask for input, ask for
// auth, reject and fail. Every row of the reverse projection that an SDK peer can produce, in
// both wire versions: the caller's run completes with the peer's artifact, waits for input
// (auth: subkind "auth") and passes the answer on, or fails with the seed's code. The 1.3.0
// peer's REST interface too (binding "rest": send, get, subscribe, the reply), as "sdk1-rest",
// and its gRPC interface (binding "grpc"), as "sdk1-grpc".

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rpc, startServer, uncleanExit, waitFor } from './server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SDKS = ['sdk1', 'sdk03'];
// The peers' interfaces the tests call: each SDK's JSON-RPC, and the 1.3.0 peer's REST and gRPC.
const INTERFACES = [...SDKS, 'sdk1-rest', 'sdk1-grpc'];
const peerOf = (iface) => iface.split('-')[0];
const bindingOf = (iface) => (iface.endsWith('-rest') ? { binding: 'rest' }
  : iface.endsWith('-grpc') ? { binding: 'grpc' } : {});
const BEHAVIOURS = ['complete', 'input', 'auth', 'reject', 'fail'];

function startPeer(which) {
  const child = spawn(process.execPath, [path.join(here, 'sdk_peer.mjs'), which], { stdio: ['ignore', 'pipe', 'inherit'] });
  process.once('exit', () => child.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/serving (http:\/\/\S+)\//);
      if (m) resolve({ url: m[1], stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`peer ${which} exited (${code}) before serving`)));
  });
}

function workflow(id, peer, text, extra = {}) {
  return {
    id, name: id, version: '1.0.0', description: 'invoke interop',
    metadata: { tags: ['test'] }, triggers: [], variables: [], settings: { timeout: 0 },
    nodes: [{ id: 'call', typeId: 'core.a2a.invoke', name: 'call', position: { x: 0, y: 0 },
      config: { peer, text, pollMs: 50, ...extra }, inputs: {} }],
    edges: [],
  };
}

describe('core.a2a.invoke against @a2a-js/sdk peers', () => {
  const peers = {};
  let a2ad;
  let wfDir;

  before(async () => {
    for (const sdk of SDKS) peers[sdk] = await startPeer(sdk);
    wfDir = await mkdtemp(path.join(os.tmpdir(), 'a2ad-invoke-wf-'));
    for (const sdk of INTERFACES)
      for (const b of BEHAVIOURS)
        await writeFile(path.join(wfDir, `${sdk}-${b}.json`),
          JSON.stringify(workflow(`${sdk}-${b}`, peerOf(sdk), `${b} please`, bindingOf(sdk))));
    for (const sdk of INTERFACES)
      for (const mode of ['stream', 'push'])
        await writeFile(path.join(wfDir, `${sdk}-${mode}.json`),
          JSON.stringify(workflow(`${sdk}-${mode}`, peerOf(sdk), 'slow please', { mode, pollMs: 60000, ...bindingOf(sdk) })));
    await writeFile(path.join(wfDir, 'sdk1-signed-only.json'),
      JSON.stringify(workflow('sdk1-signed-only', 'sdk1', 'complete please', { requireSignedCard: true })));
    a2ad = await startServer({
      workflowsDir: wfDir,
      args: ['--a2a-peer', `sdk1=${peers.sdk1.url}`, '--a2a-peer', `sdk03=${peers.sdk03.url}`,
        '--egress-allowlist', '127.0.0.1', '--egress-allow-http'],
    });
  });

  after(async () => {
    for (const p of Object.values(peers)) p.stop();
    if (a2ad) {
      const res = await a2ad.stop();
      assert.equal(uncleanExit(res), '');
    }
    if (wfDir) await rm(wfDir, { recursive: true, force: true });
  });

  const run = async (id) => (await fetch(`${a2ad.baseUrl}/v1/runs/${id}`)).json();
  const start = async (workflowId) => {
    const res = await fetch(`${a2ad.baseUrl}/v1/runs`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ workflowId, inputs: {} }),
    });
    const body = await res.json();
    assert.ok(body.runId, JSON.stringify(body));
    return body.runId;
  };
  const until = (id, status) => waitFor(() => run(id), (r) => r.status === status || ['completed', 'failed', 'cancelled'].includes(r.status));
  const answer = async (id, text) => {
    const reply = await rpc(a2ad.rpcUrl, 'message/send', {
      message: { kind: 'message', messageId: randomUUID(), role: 'user', taskId: id, parts: [{ kind: 'text', text }] },
      configuration: { blocking: false },
    });
    assert.ok(reply.body.result, JSON.stringify(reply.body));
  };

  it('a node that requires a verified card refuses an unsigned SDK peer, calling nothing', async () => {
    const id = await start('sdk1-signed-only');
    const r = await until(id, 'failed');
    assert.equal(r.status, 'failed', JSON.stringify(r));
    assert.equal(r.nodeStates.call.error.code, 'card_unverified');
    assert.equal(r.nodeStates.call.effect.taskId, undefined, 'no task at the peer');
  });

  for (const sdk of INTERFACES) {
    const version = sdk.startsWith('sdk1') ? '1.0' : '0.3';
    const binding = sdk.endsWith('-rest') ? 'HTTP+JSON' : sdk.endsWith('-grpc') ? 'GRPC' : 'JSONRPC';

    it(`${sdk}: completed completes the node with the peer's artifact (A2A ${version})`, async () => {
      const id = await start(`${sdk}-complete`);
      const r = await until(id, 'completed');
      assert.equal(r.status, 'completed', JSON.stringify(r));
      const out = r.nodeStates.call.outputs;
      assert.equal(out.text, 'done: complete please');
      assert.equal(out.contentTrust, 'untrusted');
      assert.equal(out.peer.version, version);
      assert.equal(out.peer.binding, binding);
      assert.ok(out.peerTaskId);
    });

    for (const [b, subkind, question] of [['input', undefined, 'Which region?'], ['auth', 'auth', 'Sign in first']]) {
      it(`${sdk}: ${b}-required becomes a clarification; the answer completes the peer's task`, async () => {
        const id = await start(`${sdk}-${b}`);
        const waiting = await until(id, 'waiting-input');
        assert.equal(waiting.status, 'waiting-input', JSON.stringify(waiting));
        const data = waiting.interrupt.data;
        assert.match(JSON.stringify(data.questions), new RegExp(question));
        assert.equal(data.subkind, subkind);
        assert.equal(data.contentTrust, 'untrusted');
        await answer(id, 'eu-west');
        const done = await until(id, 'completed');
        assert.equal(done.status, 'completed', JSON.stringify(done));
        assert.equal(done.nodeStates.call.outputs.text, 'region: eu-west');
      });
    }

    // pollMs is 60 s: a node that finishes seconds after its peer heard it by stream or push.
    for (const mode of ['stream', 'push']) {
      it(`${sdk}: mode ${mode} hears the peer's change by ${mode} (A2A ${version})`, async () => {
        const started = Date.now();
        const id = await start(`${sdk}-${mode}`);
        const r = await until(id, 'completed');
        assert.equal(r.status, 'completed', JSON.stringify(r));
        assert.equal(r.nodeStates.call.outputs.text, 'done: slow please');
        assert.equal(r.nodeStates.call.effect.heardVia, mode, JSON.stringify(r.nodeStates.call.effect));
        assert.ok(Date.now() - started < 30000);
      });
    }

    for (const [b, code] of [['reject', 'rejected_by_remote'], ['fail', 'remote_failed']]) {
      it(`${sdk}: ${b === 'reject' ? 'rejected' : 'failed'} fails the run with ${code}`, async () => {
        const id = await start(`${sdk}-${b}`);
        const r = await until(id, 'failed');
        assert.equal(r.status, 'failed', JSON.stringify(r));
        assert.equal(r.nodeStates.call.error.code, code);
        if (b === 'reject') assert.match(JSON.stringify(r), /rejected/);
      });
    }
  }
});
