// The task generation (A2A 1.1 §3.2.7) through the official SDK clients: a client that drops
// a stream resumes from the last generation it saw, with nothing lost and nothing twice.
// a2ad carries the generation in metadata.generation (A2A 1.0 has no `generation` member and
// its strict schema refuses unknown ones), which both SDKs keep; the cursor goes back as the
// A2A-Last-Generation header (the 1.x SDK's service parameters, gRPC metadata on gRPC) or
// params.metadata.lastGeneration (the 0.3 SDK). Also: GetTask's currentGeneration long poll
// (A2A-Current-Generation) and ifGenerationMatch (-32010, HTTP 409 ABORTED).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { loadDep, rpc, startServer } from './server.mjs';

const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } =
  await loadDep('sdk1/client');
const { GrpcTransportFactory } = await loadDep('sdk1/client/grpc');
const { Role } = await loadDep('sdk1');
const { A2AClient } = await loadDep('sdk03/client');

const DELAY_MS = 1200;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

function userMessage(text) {
  return {
    messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, filename: '', mediaType: '' }],
    extensions: [], referenceTaskIds: [],
  };
}

/** The generation an SDK 1.x stream event carries (its metadata is a plain object). */
function generation1(ev) {
  const v = ev.payload.value;
  const g = ev.payload.$case === 'task' ? v.metadata?.generation : v.metadata?.generation;
  assert.equal(typeof g, 'number', `no metadata.generation in ${JSON.stringify(ev)}`);
  return g;
}

function kind1(ev) {
  const v = ev.payload.value;
  return ev.payload.$case === 'statusUpdate' ? `status:${v.status.state}` : ev.payload.$case;
}

async function takeThenDrop(gen, count) {
  const seen = [];
  for await (const ev of gen) {
    seen.push(ev);
    if (seen.length === count) break; // return() aborts the request: the stream is dropped
  }
  return seen;
}

async function drain(gen) {
  const out = [];
  for await (const ev of gen) out.push(ev);
  return out;
}

describe('generation: @a2a-js/sdk 1.3.0 on JSON-RPC, HTTP+JSON and gRPC', () => {
  let server;
  const clients = {};

  before(async () => {
    const grpc = `127.0.0.1:${await freePort()}`;
    server = await startServer({ args: ['--echo-delay-ms', String(DELAY_MS), '--grpc-listen', grpc] });
    const make = (factory) => new ClientFactory({ transports: [factory], cardResolver: new DefaultAgentCardResolver() })
      .createFromUrl(server.baseUrl);
    clients.jsonrpc = await make(new JsonRpcTransportFactory());
    clients.rest = await make(new RestTransportFactory());
    clients.grpc = await make(new GrpcTransportFactory());
  });
  after(async () => { await server?.stop(); });

  for (const binding of ['jsonrpc', 'rest', 'grpc']) {
    it(`${binding}: drop a stream after 2 events, resume from the last generation: 1..4 exactly once`, { timeout: 20_000 }, async () => {
      const client = clients[binding];
      const text = `resume by generation ${randomUUID()}`;
      const seen = await takeThenDrop(client.sendMessageStream({ message: userMessage(text) }), 2);
      const taskId = seen[0].payload.value.id;
      assert.deepEqual(seen.map(generation1), [1, 2]);
      const last = generation1(seen.at(-1));
      const rest = await drain(client.resubscribeTask({ tenant: '', id: taskId },
        { serviceParameters: { 'A2A-Last-Generation': String(last) } }));
      const all = [...seen, ...rest];
      assert.deepEqual(all.map(generation1), [1, 2, 3, 4], all.map(kind1).join(' '));
      assert.deepEqual(all.map(kind1).slice(2), ['artifactUpdate', `status:${3}`]); // TASK_STATE_COMPLETED = 3
      assert.ok(JSON.stringify(rest[0].payload.value.artifact).includes(text));
      // The Task read afterwards has the same generation as the last event.
      const task = await client.getTask({ tenant: '', id: taskId });
      assert.equal(task.metadata.generation, 4);
    });
  }

  it('a generation past the task\'s is refused as invalid params, naming it', async () => {
    const task = await clients.jsonrpc.sendMessage({ message: userMessage('done'), configuration: { acceptedOutputModes: [] } });
    await assert.rejects(drain(clients.jsonrpc.resubscribeTask({ tenant: '', id: task.id },
      { serviceParameters: { 'A2A-Last-Generation': '99' } })),
    (e) => /lastGeneration 99 is past the task's generation \(4\)/.test(e.message));
  });

  it('GetTask with A2A-Current-Generation waits until the generation passes it', { timeout: 20_000 }, async () => {
    const client = clients.jsonrpc;
    const task = await client.sendMessage({
      message: userMessage('long poll'), configuration: { returnImmediately: true, acceptedOutputModes: [] },
    });
    const now = await client.getTask({ tenant: '', id: task.id });
    const g = now.metadata.generation;
    const started = Date.now();
    const later = await client.getTask({ tenant: '', id: task.id },
      { serviceParameters: { 'A2A-Current-Generation': String(g) } });
    assert.ok(later.metadata.generation > g, `${later.metadata.generation} after ${g}`);
    // It waited for the echo's next step instead of answering the same state at once.
    assert.ok(Date.now() - started > 200 || later.metadata.generation > g);
  });
});

describe('generation on the wire: ifGenerationMatch and currentGeneration as members', () => {
  let server;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.stop(); });

  async function completedTask() {
    const sent = await rpc(server.rpcUrl, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'x' }] },
    }, { version: '1.0' });
    assert.equal(sent.body.result.task.metadata.generation, 4, JSON.stringify(sent.body));
    return sent.body.result.task;
  }

  it('JSON-RPC: configuration.ifGenerationMatch of another generation is -32010 with the two generations', async () => {
    const task = await completedTask();
    const res = await rpc(server.rpcUrl, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: task.id, parts: [{ text: 'y' }] },
      configuration: { ifGenerationMatch: 2 },
    }, { version: '1.0' });
    assert.equal(res.body.error?.code, -32010, JSON.stringify(res.body));
    assert.equal(res.body.error.message, 'Task generation mismatch: expected 2 but current generation is 4');
    // The same generation passes the check; the finished task then refuses the message.
    const same = await rpc(server.rpcUrl, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: task.id, parts: [{ text: 'y' }] },
      configuration: { ifGenerationMatch: '4' },
    }, { version: '1.0' });
    assert.equal(same.body.error?.code, -32004, JSON.stringify(same.body));
  });

  it('HTTP+JSON: 409 ABORTED with ErrorInfo TASK_GENERATION_MISMATCH', async () => {
    const task = await completedTask();
    const card = await (await fetch(server.cardUrl, { headers: { 'A2A-Version': '1.0' } })).json();
    const rest = card.supportedInterfaces.find((i) => i.protocolBinding === 'HTTP+JSON' && i.protocolVersion === '1.0');
    const res = await fetch(`${rest.url}/message:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'A2A-If-Generation-Match': '3' },
      body: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: task.id, parts: [{ text: 'y' }] } }),
    });
    assert.equal(res.status, 409);
    const body = await res.json();
    assert.equal(body.error.status, 'ABORTED', JSON.stringify(body));
    const info = body.error.details.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
    assert.equal(info.reason, 'TASK_GENERATION_MISMATCH');
    assert.deepEqual({ ...info.metadata },
      { taskId: task.id, expectedGeneration: '3', currentGeneration: '4' });
  });

  it('HTTP+JSON: GET /tasks/{id}?currentGeneration of a finished task answers at once', async () => {
    const task = await completedTask();
    const card = await (await fetch(server.cardUrl, { headers: { 'A2A-Version': '1.0' } })).json();
    const rest = card.supportedInterfaces.find((i) => i.protocolBinding === 'HTTP+JSON' && i.protocolVersion === '1.0');
    const res = await fetch(`${rest.url}/tasks/${task.id}?currentGeneration=4`, { headers: { 'A2A-Version': '1.0' } });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).metadata.generation, 4);
    const bad = await fetch(`${rest.url}/tasks/${task.id}?currentGeneration=-1`, { headers: { 'A2A-Version': '1.0' } });
    assert.equal(bad.status, 400);
  });
});

describe('generation: @a2a-js/sdk 0.3.14 A2AClient resumes with params.metadata.lastGeneration', () => {
  let server;
  let client;
  before(async () => {
    server = await startServer({ args: ['--echo-delay-ms', String(DELAY_MS)] });
    client = await A2AClient.fromCardUrl(server.cardUrl);
  });
  after(async () => { await server?.stop(); });

  it('drop after 2 events, resubscribe from the last generation: every event exactly once', { timeout: 20_000 }, async () => {
    const text = `0.3 resume ${randomUUID()}`;
    const seen = [];
    for await (const ev of client.sendMessageStream({
      message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] },
    })) {
      seen.push(ev);
      if (seen.length === 2) break;
    }
    const g = (ev) => ev.metadata?.generation;
    assert.deepEqual(seen.map(g), [1, 2], JSON.stringify(seen));
    const rest = [];
    for await (const ev of client.resubscribeTask({ id: seen[0].id, metadata: { lastGeneration: 2 } })) rest.push(ev);
    assert.deepEqual([...seen, ...rest].map(g), [1, 2, 3, 4], JSON.stringify(rest));
    assert.deepEqual(rest.map((e) => e.kind), ['artifact-update', 'status-update']);
    assert.equal(rest[1].status.state, 'completed');
  });
});
