// API keys and OIDC bearer JWTs (issue 14) through the A2A v1.0 JavaScript SDK (@a2a-js/sdk
// 1.3.0): the credential goes with every request through the SDK's own authentication hook
// (createAuthenticatingFetchWithRetry on the JSON-RPC and REST transports, a @grpc/grpc-js
// interceptor adding `authorization` metadata on gRPC). The card is read without a credential;
// without it the same calls are refused (401 / UNAUTHENTICATED), and the server's stderr never
// holds a key's secret or a token. The JWTs come from an issuer this file runs on 127.0.0.1
// (node:http serving discovery and the JWKS; keys and signatures from node:crypto).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
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
const sdk03 = await loadDep('sdk03/client');

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
    assert.equal((await raw.json()).error.code, -32014);
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

// A server that starts with a key declares the authenticated extended card; the SDKs' own
// calls fetch it with the key, and it lists the workflow kept off the public card.
describe('the authenticated extended card with @a2a-js/sdk 1.3.0 and 0.3.14', () => {
  let server;
  let key;
  let tmp;
  const withKey = (f) => (url, init = {}) =>
    f(url, { ...init, headers: { ...(init.headers ?? {}), 'X-API-Key': key } });

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'a2ad-extended-'));
    const dataDir = path.join(tmp, 'data');
    const workflowsDir = path.join(tmp, 'workflows');
    await run('mkdir', ['-p', dataDir, workflowsDir]);
    await writeFile(path.join(workflowsDir, 'inner-flow.json'), JSON.stringify({
      id: 'inner-flow', name: 'Inner flow', version: '1',
      nodes: [{ id: 'n', typeId: 'core.noop', config: {} }], edges: [], triggers: [], variables: [],
      metadata: { customProperties: { a2a: { public: false } } }, settings: {},
    }));
    const made = await run(resolveBinary(), ['keys', 'create', '--data-dir', dataDir,
      '--tenant', 'acme', '--scopes', 'tasks:read']);
    key = made.stdout.trim();
    const port = await freePort();
    server = await startServer({ dataDir, workflowsDir, args: ['--grpc-listen', `127.0.0.1:${port}`] });
  });
  after(async () => {
    await server?.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('the public card declares it and its schemes, and leaves the workflow out', async () => {
    const card = await (await fetch(server.cardUrl, { headers: { 'A2A-Version': '1.0' } })).json();
    assert.equal(card.capabilities.extendedAgentCard, true);
    assert.deepEqual(Object.keys(card.securitySchemes).sort(), ['apiKey', 'bearer']);
    assert.ok(!card.skills.some((s) => s.id === 'inner-flow'));
    const card03 = await (await fetch(server.cardUrl)).json();
    assert.equal(card03.supportsAuthenticatedExtendedCard, true);
    assert.ok(!card03.skills.some((s) => s.id === 'inner-flow'));
  });

  for (const [name, factory] of [
    ['JSON-RPC', () => new JsonRpcTransportFactory({ fetchImpl: withKey(fetch) })],
    ['REST', () => new RestTransportFactory({ fetchImpl: withKey(fetch) })],
    ['gRPC', () => new GrpcTransportFactory({ grpcCallOptions: { interceptors: [
      (options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
        start(metadata, listener, next) { metadata.set('x-api-key', key); next(metadata, listener); },
      })] } })],
  ]) {
    it(`1.3.0 ${name}: client.getAgentCard() follows the card to the extended one`, async () => {
      const client = await clientOf(server, [factory()]);
      const card = await client.getAgentCard();
      assert.ok(card.skills.some((s) => s.id === 'inner-flow'), JSON.stringify(card.skills));
      assert.ok(card.securitySchemes.apiKey, JSON.stringify(card.securitySchemes));
    });
  }

  it('1.3.0 without the key: refused', async () => {
    const client = await clientOf(server, [new JsonRpcTransportFactory()]);
    await assert.rejects(client.getAgentCard());
  });

  for (const [name, factory] of [
    ['JSON-RPC', () => new sdk03.JsonRpcTransportFactory({ fetchImpl: withKey(fetch) })],
    ['HTTP+JSON', () => new sdk03.RestTransportFactory({ fetchImpl: withKey(fetch) })],
  ]) {
    it(`0.3.14 ${name}: getAgentCard() follows supportsAuthenticatedExtendedCard`, async () => {
      const client = await new sdk03.ClientFactory({ transports: [factory()] })
        .createFromUrl(server.baseUrl);
      const card = await client.getAgentCard();
      assert.ok(card.skills.some((s) => s.id === 'inner-flow'), JSON.stringify(card.skills));
      assert.equal(card.securitySchemes.apiKey.type, 'apiKey');
      assert.equal(card.securitySchemes.apiKey.in, 'header');
      // Any of the two schemes with any of the three scopes an A2A method needs.
      assert.deepEqual(card.security, ['bearer', 'apiKey'].flatMap(
        (s) => ['tasks:read', 'tasks:write', 'push:manage'].map((scope) => ({ [s]: [scope] }))));
    });
  }
});

// ---- OIDC bearer JWTs ----------------------------------------------------------------------

const b64url = (data) => Buffer.from(data).toString('base64url');

/** An OpenID Connect issuer on 127.0.0.1: an RSA and an EC key, discovery and JWKS. */
async function startIssuer() {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwks = {
    keys: [
      { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'rsa-1', use: 'sig', alg: 'RS256' },
      { ...ec.publicKey.export({ format: 'jwk' }), kid: 'ec-1', use: 'sig', alg: 'ES256' },
    ],
  };
  const fetches = { discovery: 0, jwks: 0 };
  const server = http.createServer((req, res) => {
    let body;
    if (req.url === '/.well-known/openid-configuration') {
      fetches.discovery += 1;
      body = { issuer: issuer.url, jwks_uri: `${issuer.url}/jwks` };
    } else if (req.url === '/jwks') {
      fetches.jwks += 1;
      body = jwks;
    }
    res.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body ?? {}));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = {
    url: `http://127.0.0.1:${server.address().port}`,
    fetches,
    /** A token for `claims` (iss, iat, exp added), signed RS256 by rsa-1 or ES256 by ec-1. */
    token(claims, { alg = 'RS256', ageS = 0 } = {}) {
      const now = Math.floor(Date.now() / 1000) - ageS;
      const header = { alg, typ: 'JWT', kid: alg === 'RS256' ? 'rsa-1' : 'ec-1' };
      const payload = { iss: issuer.url, iat: now, exp: now + 600, ...claims };
      const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
      const signature = alg === 'RS256'
        ? sign('sha256', Buffer.from(input), rsa.privateKey)
        : sign('sha256', Buffer.from(input), { key: ec.privateKey, dsaEncoding: 'ieee-p1363' });
      return `${input}.${b64url(signature)}`;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
  return issuer;
}

describe('a2ad OIDC bearer JWTs with @a2a-js/sdk 1.3.0', () => {
  const audience = 'a2ad-interop';
  let issuer;
  let server;
  let acme;
  let globex;

  const bearer = (token) => createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({ Authorization: `Bearer ${token}` }),
    shouldRetryWithHeaders: async () => undefined,
  });

  before(async () => {
    issuer = await startIssuer();
    const port = await freePort();
    server = await startServer({
      args: ['--grpc-listen', `127.0.0.1:${port}`, '--oidc-issuer', issuer.url,
        '--oidc-audience', audience, '--egress-allow-http', '--egress-allowlist', '127.0.0.1/32'],
    });
    acme = issuer.token({ aud: audience, sub: 'alice', tenant: 'acme',
      scope: 'tasks:read tasks:write' });
    globex = issuer.token({ aud: [audience, 'other'], sub: 'bob', tenant: 'globex',
      scp: ['tasks:read'] }, { alg: 'ES256' });
  });
  after(async () => {
    const { stderr } = await server.stop();
    await issuer.close();
    for (const token of [acme, globex]) {
      assert.ok(!stderr.includes(token.split('.')[2]), 'a token is in the log');
    }
  });

  it('JSON-RPC: the token authenticates; another tenant does not see the task', async () => {
    const client = await clientOf(server, [new JsonRpcTransportFactory({ fetchImpl: bearer(acme) })]);
    const task = await client.sendMessage({ tenant: '', message: userMessage('jsonrpc with a JWT') });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    assert.equal((await client.getTask({ tenant: '', id: task.id })).id, task.id);
    const other = await clientOf(server, [new JsonRpcTransportFactory({ fetchImpl: bearer(globex) })]);
    await assert.rejects(other.getTask({ tenant: '', id: task.id }), /not found|-32001/i);
    const anonymous = await clientOf(server, [new JsonRpcTransportFactory()]);
    await assert.rejects(anonymous.getTask({ tenant: '', id: task.id }));
    // An expired token: 401 with error="invalid_token".
    const expired = issuer.token({ aud: audience, sub: 'alice', tenant: 'acme', scope: 'tasks:read' },
      { ageS: 3600 });
    const raw = await fetch(server.rpcUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0',
        Authorization: `Bearer ${expired}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: task.id } }),
    });
    assert.equal(raw.status, 401);
    assert.match(raw.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    assert.equal((await raw.json()).error.code, -32014);
  });

  it('REST: the token authenticates; a token without the scope is refused', async () => {
    const client = await clientOf(server, [new RestTransportFactory({ fetchImpl: bearer(acme) })]);
    const task = await client.sendMessage({ tenant: '', message: userMessage('rest with a JWT') });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    assert.equal((await client.getTask({ tenant: '', id: task.id })).id, task.id);
    const readOnly = await clientOf(server, [new RestTransportFactory({ fetchImpl: bearer(globex) })]);
    await assert.rejects(readOnly.sendMessage({ tenant: '', message: userMessage('no scope') }));
  });

  it('gRPC: the token in the call metadata', async () => {
    const withToken = (options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set('authorization', `Bearer ${acme}`);
        next(metadata, listener);
      },
    });
    const client = await clientOf(server, [
      new GrpcTransportFactory({ grpcCallOptions: { interceptors: [withToken] } })]);
    const task = await client.sendMessage({ tenant: '', message: userMessage('grpc with a JWT') });
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
    assert.equal((await client.getTask({ tenant: '', id: task.id })).id, task.id);
    const anonymous = await clientOf(server, [new GrpcTransportFactory()]);
    await assert.rejects(anonymous.getTask({ tenant: '', id: task.id }), (err) => {
      assert.match(String(err?.message ?? err), /UNAUTHENTICATED|authentication|16/i);
      return true;
    });
    assert.equal(issuer.fetches.discovery, 1);
    assert.equal(issuer.fetches.jwks, 1);
  });
});
