// API keys (issue 14) through the A2A v1.0 JavaScript SDK (@a2a-js/sdk 1.3.0): the key goes
// with every request through the SDK's own authentication hook (createAuthenticatingFetchWithRetry
// on the JSON-RPC and REST transports, a @grpc/grpc-js interceptor adding `authorization`
// metadata on gRPC). The card is read without a credential; without the key the same calls are
// refused (401 / UNAUTHENTICATED), and the server's stderr never holds the key's secret.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { promisify } from 'node:util';
import { loadDep, resolveBinary, startServer } from './server.mjs';

const {
  ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory,
  RestTransportFactory, createAuthenticatingFetchWithRetry,
} = await loadDep('sdk1/client');
const { GrpcTransportFactory } = await loadDep('sdk1/client/grpc');
const grpc = await loadDep('@grpc/grpc-js');
const { Role, TaskState } = await loadDep('sdk1');

const run = promisify(execFile);

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// Every field: the gRPC transport serializes with ts-proto, which wants each repeated and
// string field (sdk1_grpc.test.mjs).
function userMessage(text) {
  return {
    messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, filename: '', mediaType: '' }],
    extensions: [], referenceTaskIds: [],
  };
}

function clientOf(server, transports) {
  return new ClientFactory({ transports, cardResolver: new DefaultAgentCardResolver() })
    .createFromUrl(server.baseUrl);
}

describe('a2ad API keys with @a2a-js/sdk 1.3.0', () => {
  let server;
  let key;
  let authFetch;

  before(async () => {
    const port = await freePort();
    server = await startServer({ args: ['--grpc-listen', `127.0.0.1:${port}`] });
    // Made while the server runs: authentication is on from the next request.
    const made = await run(resolveBinary(), ['keys', 'create', '--data-dir', server.dataDir,
      '--tenant', 'acme', '--scopes', 'tasks:read,tasks:write', '--name', 'sdk']);
    key = made.stdout.trim();
    assert.match(key, /^a2ad_k_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    authFetch = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => ({ Authorization: `Bearer ${key}` }),
      shouldRetryWithHeaders: async () => undefined,
    });
  });
  after(async () => {
    const { stderr } = await server.stop();
    assert.ok(!stderr.includes(key.split('_').slice(3).join('_')), 'the key secret is in the log');
  });

  it('JSON-RPC: sendMessage and getTask with the key; refused without it', async () => {
    const client = await clientOf(server, [new JsonRpcTransportFactory({ fetchImpl: authFetch })]);
    const task = await client.sendMessage({ tenant: '', message: userMessage('jsonrpc with a key') });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    assert.equal((await client.getTask({ tenant: '', id: task.id })).id, task.id);
    const anonymous = await clientOf(server, [new JsonRpcTransportFactory()]);
    await assert.rejects(anonymous.getTask({ tenant: '', id: task.id }));
    const raw = await fetch(server.rpcUrl, {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: task.id } }),
    });
    assert.equal(raw.status, 401);
    assert.match(raw.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal((await raw.json()).error.code, -32011);
  });

  it('REST: sendMessage and getTask with the key; refused without it', async () => {
    const client = await clientOf(server, [new RestTransportFactory({ fetchImpl: authFetch })]);
    const task = await client.sendMessage({ tenant: '', message: userMessage('rest with a key') });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    assert.equal((await client.getTask({ tenant: '', id: task.id })).id, task.id);
    const anonymous = await clientOf(server, [new RestTransportFactory()]);
    await assert.rejects(anonymous.getTask({ tenant: '', id: task.id }));
  });

  it('gRPC: the key in the call metadata', async () => {
    const withKey = (options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set('authorization', `Bearer ${key}`);
        next(metadata, listener);
      },
    });
    const client = await clientOf(server, [
      new GrpcTransportFactory({ grpcCallOptions: { interceptors: [withKey] } })]);
    const task = await client.sendMessage({ tenant: '', message: userMessage('grpc with a key') });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    const anonymous = await clientOf(server, [new GrpcTransportFactory()]);
    await assert.rejects(anonymous.getTask({ tenant: '', id: task.id }), (err) => {
      assert.match(String(err?.message ?? err), /UNAUTHENTICATED|authentication|16/i);
      return true;
    });
  });
});
