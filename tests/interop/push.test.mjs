// Push notifications with real A2A SDK clients (@a2a-js/sdk 0.3.14 and 1.3.0): their
// push-config calls work against a2ad, and the pushes a2ad sends to a local webhook verify
// with Node's WebCrypto against /.well-known/jwks.json (an implementation we did not write).
// The server runs with the loopback allow-list, the only way it may push to 127.0.0.1.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { loadDep, startServer, waitFor } from './server.mjs';

const { A2AClient } = await loadDep('sdk03/client');
const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } =
  await loadDep('sdk1/client');
const { Role } = await loadDep('sdk1');

/** A webhook on 127.0.0.1:<ephemeral> recording every request. */
async function startReceiver() {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      requests.push({ url: req.url, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { requests, url: (p = '/hook') => `http://127.0.0.1:${port}${p}`, close: () => server.close() };
}

/** Verifies an ES256 compact JWS against the server's JWKS with WebCrypto; returns the claims. */
async function verifyJwt(jwt, jwksUrl) {
  const [h, p, s] = jwt.split('.');
  const header = JSON.parse(Buffer.from(h, 'base64url'));
  assert.equal(header.alg, 'ES256');
  const jwks = await (await fetch(jwksUrl)).json();
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  assert.ok(jwk, `kid ${header.kid} not in the JWKS`);
  const key = await crypto.subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
  const ok = await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key,
    Buffer.from(s, 'base64url'), Buffer.from(`${h}.${p}`));
  assert.ok(ok, 'signature does not verify');
  return JSON.parse(Buffer.from(p, 'base64url'));
}

const userMessage = (text) => ({ kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] });

describe('push notifications with the A2A JavaScript SDKs', () => {
  let server;
  let rx;

  before(async () => {
    server = await startServer({ args: ['--push-allow-http', '--push-allowlist', '127.0.0.1/32'] });
    rx = await startReceiver();
  });
  after(async () => {
    rx?.close();
    await server?.stop();
  });

  it('0.3 A2AClient: inline config, set/get/list/delete, and a signed push', async () => {
    const client = await A2AClient.fromCardUrl(server.cardUrl);
    const card = await client.getAgentCard();
    assert.equal(card.capabilities.pushNotifications, true);
    const sent = await client.sendMessage({
      message: userMessage('push me'),
      configuration: { blocking: true, pushNotificationConfig: { url: rx.url('/v03'), token: 'tok-03' } },
    });
    assert.ok(!('error' in sent), JSON.stringify(sent));
    const task = sent.result;
    assert.equal(task.status.state, 'completed');

    await waitFor(async () => rx.requests.filter((r) => r.url === '/v03').length, (n) => n >= 1);
    const push = rx.requests.find((r) => r.url === '/v03');
    assert.equal(push.headers['x-a2a-notification-token'], 'tok-03');
    const body = JSON.parse(push.body);
    assert.equal(body.kind, 'status-update');
    assert.equal(body.taskId, task.id);
    assert.equal(body.status.state, 'completed');
    assert.ok(!push.body.includes('push me'), 'push bodies carry no content');
    const claims = await verifyJwt(push.headers.authorization.replace(/^Bearer /, ''),
      `${server.baseUrl}/.well-known/jwks.json`);
    assert.equal(claims.taskId, task.id);
    assert.equal(claims.aud, rx.url('/v03'));
    assert.equal(claims.iss, server.baseUrl);

    const set = await client.setTaskPushNotificationConfig({
      taskId: task.id, pushNotificationConfig: { id: 'second', url: rx.url('/second') },
    });
    assert.ok(!('error' in set), JSON.stringify(set));
    assert.equal(set.result.pushNotificationConfig.id, 'second');
    const got = await client.getTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'second' });
    assert.equal(got.result.pushNotificationConfig.url, rx.url('/second'));
    const list = await client.listTaskPushNotificationConfig({ id: task.id });
    assert.deepEqual(list.result.map((c) => c.pushNotificationConfig.id).sort(), [task.id, 'second'].sort());
    const del = await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'second' });
    assert.ok(!('error' in del), JSON.stringify(del));
    const refused = await client.setTaskPushNotificationConfig({
      taskId: task.id, pushNotificationConfig: { url: 'https://10.0.0.5/push' },
    });
    assert.equal(refused.error?.code, -32602);
  });

  it('1.x Client: inline config and Create/Get/List/Delete', async () => {
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({})],
      cardResolver: new DefaultAgentCardResolver({}),
    }));
    const client = await factory.createFromUrl(server.baseUrl);
    assert.equal(client.protocolVersion, '1.0');
    const task = await client.sendMessage({
      message: {
        messageId: randomUUID(), role: Role.ROLE_USER,
        parts: [{ content: { $case: 'text', value: 'v1 push' } }],
      },
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: {
          tenant: '', id: '', taskId: '', url: rx.url('/v10'), token: 'tok-10', authentication: undefined,
        },
      },
    });
    await waitFor(async () => rx.requests.filter((r) => r.url === '/v10').length, (n) => n >= 1);
    const push = rx.requests.find((r) => r.url === '/v10');
    assert.equal(push.headers['content-type'], 'application/a2a+json');
    const body = JSON.parse(push.body);
    assert.equal(body.statusUpdate.taskId, task.id);
    assert.equal(body.statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    await verifyJwt(push.headers.authorization.replace(/^Bearer /, ''), `${server.baseUrl}/.well-known/jwks.json`);

    const created = await client.createTaskPushNotificationConfig({
      tenant: '', taskId: task.id, id: 'c2', url: rx.url('/c2'), token: '', authentication: undefined,
    });
    assert.equal(created.id, 'c2');
    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'c2' });
    assert.equal(got.url, rx.url('/c2'));
    const list = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
    assert.equal(list.configs.length, 2);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'c2' });
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'c2' });  // idempotent
  });
});
