// a2ad's gRPC binding of A2A 1.0 driven by @a2a-js/sdk 1.3.0's GrpcTransport (@grpc/grpc-js):
// ClientFactory with only the gRPC transport picks the card's GRPC interface (host:port, from
// `--grpc-listen`) and calls lf.a2a.v1.A2AService over plaintext HTTP/2.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { loadDep, startServer } from './server.mjs';

const { ClientFactory, DefaultAgentCardResolver } = await loadDep('sdk1/client');
const { GrpcTransportFactory } = await loadDep('sdk1/client/grpc');
const { Role, TaskState } = await loadDep('sdk1');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// The gRPC transport serializes with ts-proto, which wants every repeated and string field.
function userMessage(text) {
  return {
    messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, filename: '', mediaType: '' }],
    extensions: [], referenceTaskIds: [],
  };
}

async function drain(gen) {
  const out = [];
  for await (const ev of gen) out.push(ev);
  return out;
}

describe('a2ad gRPC binding with @a2a-js/sdk 1.3.0 GrpcTransport', () => {
  let server;
  let client;
  let grpcAddress;

  before(async () => {
    const port = await freePort();
    grpcAddress = `127.0.0.1:${port}`;
    server = await startServer({ args: ['--grpc-listen', grpcAddress] });
    const factory = new ClientFactory({
      transports: [new GrpcTransportFactory()],
      cardResolver: new DefaultAgentCardResolver(),
    });
    client = await factory.createFromUrl(server.baseUrl);
  });
  after(async () => { await server?.stop(); });

  it('the card lists the GRPC interface at host:port', async () => {
    const card = await client.getAgentCard();
    const grpc = card.supportedInterfaces.find((i) => i.protocolBinding === 'GRPC');
    assert.ok(grpc, JSON.stringify(card.supportedInterfaces));
    assert.equal(grpc.url, grpcAddress);
    assert.equal(grpc.protocolVersion, '1.0');
  });

  it('sendMessage, getTask and listTasks over gRPC', async () => {
    const text = `grpc hello ${randomUUID()}`;
    const task = await client.sendMessage({ tenant: '', message: userMessage(text) });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    const echoed = task.artifacts.flatMap((a) => a.parts).map((p) => p.content?.value).join('');
    assert.ok(echoed.includes(text), JSON.stringify(task.artifacts));
    const got = await client.getTask({ tenant: '', id: task.id });
    assert.equal(got.id, task.id);
    const page = await client.listTasks({
      tenant: '', contextId: task.contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '',
    });
    assert.deepEqual(page.tasks.map((t) => t.id), [task.id]);
  });

  it('errors arrive as the SDK\'s A2A errors', async () => {
    await assert.rejects(client.getTask({ tenant: '', id: `none-${randomUUID()}` }),
      (err) => { assert.match(err.name, /TaskNotFound/, `${err.name}: ${err.message}`); return true; });
    const done = await client.sendMessage({ tenant: '', message: userMessage('finish') });
    await assert.rejects(client.cancelTask({ tenant: '', id: done.id }),
      (err) => { assert.match(err.name, /TaskNotCancelable/, `${err.name}: ${err.message}`); return true; });
  });

  it('sendMessageStream yields task, working, artifact, completed', async () => {
    const text = `grpc stream ${randomUUID()}`;
    const events = await drain(client.sendMessageStream({ tenant: '', message: userMessage(text) }));
    const kinds = events.map(({ payload }) => (payload?.$case === 'statusUpdate'
      ? `statusUpdate:${TaskState[payload.value.status?.state]}` : payload?.$case));
    assert.deepEqual(kinds, ['task', 'statusUpdate:TASK_STATE_WORKING', 'artifactUpdate',
      'statusUpdate:TASK_STATE_COMPLETED'], JSON.stringify(events));
  });
});
