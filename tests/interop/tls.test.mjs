// TLS and mutual TLS (issue 14) through the A2A v1.0 JavaScript SDK (@a2a-js/sdk 1.3.0). The
// certificates are made by the test (the `interop.tls_pki` ctest fixture runs a2ad_test_pki,
// OpenSSL, into $A2AD_TLS_PKI); Node trusts their CA through NODE_EXTRA_CA_CERTS, which ctest
// sets, as a deployment would. The server serves HTTPS and gRPC over TLS with client
// certificates verified against the clients' CA (mutual TLS):
// - the SDK resolves the https card and sends, reads and streams over the JSON-RPC and REST
//   transports with an API key (Bearer, the SDK's own authentication hook);
// - its gRPC transport presents the client certificate (@grpc/grpc-js credentials.createSsl):
//   authenticated as the certificate's tenant, it reads the task the key made (same tenant);
//   without a certificate (and no key) it is refused, and a certificate of the same subject
//   from another CA fails the handshake.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
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
const pki = process.env.A2AD_TLS_PKI;

async function freePort() {
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

describe('a2ad over TLS and mutual TLS with @a2a-js/sdk 1.3.0', () => {
  let server;
  let tmp;
  let authFetch;
  let pem;

  before(async () => {
    assert.ok(pki, 'A2AD_TLS_PKI is not set: run through ctest (the interop.tls_pki fixture)');
    assert.equal(process.env.NODE_EXTRA_CA_CERTS, path.join(pki, 'ca.pem'));
    pem = {};
    for (const name of ['ca', 'client', 'client-key', 'rogue-client', 'rogue-client-key'])
      pem[name] = await readFile(path.join(pki, `${name}.pem`));
    tmp = await mkdtemp(path.join(os.tmpdir(), 'a2ad-interop-tls-'));
    const map = path.join(tmp, 'clients.json');
    await writeFile(map, JSON.stringify([
      { subject: 'CN=billing-agent,O=Acme', tenant: 'acme', scopes: ['tasks:read', 'tasks:write'] },
    ]));
    const port = await freePort();
    server = await startServer({
      args: ['--tls-cert', path.join(pki, 'server.pem'), '--tls-key', path.join(pki, 'server-key.pem'),
        '--tls-client-ca', path.join(pki, 'clients-ca.pem'), '--tls-client-map', map,
        '--grpc-listen', `127.0.0.1:${port}`],
    });
    const made = await run(resolveBinary(), ['keys', 'create', '--data-dir', server.dataDir,
      '--tenant', 'acme', '--scopes', 'tasks:read,tasks:write']);
    const key = made.stdout.trim();
    authFetch = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => ({ Authorization: `Bearer ${key}` }),
      shouldRetryWithHeaders: async () => undefined,
    });
  });
  after(async () => {
    await server?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const clientOf = (transports) =>
    new ClientFactory({ transports, cardResolver: new DefaultAgentCardResolver() })
      .createFromUrl(server.baseUrl);

  it('serves an https card whose URLs are https', async () => {
    assert.match(server.baseUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    const card = await (await fetch(server.cardUrl)).json();
    assert.match(card.url, /^https:\/\//);
  });

  it('JSON-RPC over https: send, get and stream', async () => {
    const client = await clientOf([new JsonRpcTransportFactory({ fetchImpl: authFetch })]);
    const task = await client.sendMessage({ tenant: '', message: userMessage('jsonrpc over tls') });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    assert.equal((await client.getTask({ tenant: '', id: task.id })).id, task.id);
    // Stream events are {payload: {$case: 'task' | 'statusUpdate' | ..., value}}.
    const states = [];
    for await (const event of client.sendMessageStream({ tenant: '', message: userMessage('streamed') })) {
      const { $case, value } = event.payload ?? {};
      if ($case === 'task' || $case === 'statusUpdate') states.push(value.status?.state);
    }
    assert.equal(states.at(-1), TaskState.TASK_STATE_COMPLETED, JSON.stringify(states));
  });

  it('REST over https: send and get', async () => {
    const client = await clientOf([new RestTransportFactory({ fetchImpl: authFetch })]);
    const task = await client.sendMessage({ tenant: '', message: userMessage('rest over tls') });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    assert.equal((await client.getTask({ tenant: '', id: task.id })).id, task.id);
  });

  it('gRPC over TLS with a client certificate: the certificate is the caller', async () => {
    const byKey = await clientOf([new JsonRpcTransportFactory({ fetchImpl: authFetch })]);
    const made = await byKey.sendMessage({ tenant: '', message: userMessage('made with the key') });
    const withCert = await clientOf([new GrpcTransportFactory({
      grpcChannelCredentials: grpc.credentials.createSsl(pem.ca, pem['client-key'], pem.client),
    })]);
    const task = await withCert.sendMessage({ tenant: '', message: userMessage('grpc over mtls') });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    // Same tenant (acme) as the key: its task is readable.
    assert.equal((await withCert.getTask({ tenant: '', id: made.id })).id, made.id);

    const anonymous = await clientOf([new GrpcTransportFactory({
      grpcChannelCredentials: grpc.credentials.createSsl(pem.ca),
    })]);
    await assert.rejects(anonymous.getTask({ tenant: '', id: made.id }), (err) => {
      assert.match(String(err?.message ?? err), /UNAUTHENTICATED|authentication|16/i);
      return true;
    });
    const rogue = await clientOf([new GrpcTransportFactory({
      grpcChannelCredentials: grpc.credentials.createSsl(pem.ca, pem['rogue-client-key'], pem['rogue-client']),
    })]);
    await assert.rejects(rogue.getTask({ tenant: '', id: made.id }));
  });
});
