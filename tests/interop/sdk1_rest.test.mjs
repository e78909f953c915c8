// a2ad's HTTP+JSON (REST) binding of A2A 1.0 driven by @a2a-js/sdk 1.3.0's RestTransport:
// ClientFactory with only the REST transport picks the card's HTTP+JSON 1.0 interface
// (`<base>/a2a/rest`) and calls `/message:send`, `/tasks/{id}`, `/tasks`, `/tasks/{id}:cancel`,
// `/message:stream`, `/tasks/{id}:subscribe` and the push-config routes, decoding ProtoJSON
// bodies and google.rpc.Status errors. Raw fetches pin what the SDK hides (status codes,
// error bodies, 405/415, the version header).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { loadDep, startServer } from './server.mjs';

const { ClientFactory, DefaultAgentCardResolver, RestTransportFactory } =
  await loadDep('sdk1/client');
const { Role, TaskState } = await loadDep('sdk1');

function userMessage(text) {
  return {
    messageId: randomUUID(), role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
  };
}

function artifactText(task) {
  return task.artifacts.flatMap((a) => a.parts)
    .filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
}

async function drain(gen) {
  const out = [];
  for await (const ev of gen) out.push(ev);
  return out;
}

describe('a2ad REST binding with @a2a-js/sdk 1.3.0 RestTransport', () => {
  let server;
  let client;
  let restUrl;
  const requests = [];

  before(async () => {
    server = await startServer({ args: ['--push-allow-http', '--push-allowlist', '127.0.0.1/32'] });
    const fetchImpl = async (input, init = {}) => {
      requests.push({ url: String(input), method: init.method ?? 'GET' });
      return fetch(input, init);
    };
    // Only the REST transport (ClientFactoryOptions.createFrom would add the default JSON-RPC
    // one, which the factory prefers).
    const factory = new ClientFactory({
      transports: [new RestTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    });
    client = await factory.createFromUrl(server.baseUrl);
    restUrl = `${server.baseUrl}/a2a/rest`;
  });
  after(async () => { await server?.stop(); });

  it('selects the HTTP+JSON 1.0 interface from the card', async () => {
    assert.equal(client.protocolVersion, '1.0');
    const card = await client.getAgentCard();
    const rest = card.supportedInterfaces.find((i) => i.protocolBinding === 'HTTP+JSON');
    assert.ok(rest, JSON.stringify(card.supportedInterfaces));
    assert.equal(rest.url, restUrl);
    assert.equal(rest.protocolVersion, '1.0');
  });

  it('sendMessage, getTask, listTasks and cancelTask go over REST routes', async () => {
    const text = `rest hello ${randomUUID()}`;
    const before = requests.length;
    const result = await client.sendMessage({ message: userMessage(text) });
    assert.equal(result.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(result));
    assert.ok(artifactText(result).includes(text));
    const got = await client.getTask({ tenant: '', id: result.id, historyLength: 1 });
    assert.equal(got.id, result.id);
    assert.ok(got.history.length <= 1, `historyLength=1 gave ${got.history.length}`);
    const page = await client.listTasks({
      tenant: '', contextId: result.contextId, status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '', pageSize: 10, includeArtifacts: true,
    });
    assert.deepEqual(page.tasks.map((t) => t.id), [result.id]);
    assert.ok(artifactText(page.tasks[0]).includes(text));
    await assert.rejects(client.cancelTask({ tenant: '', id: result.id }),
      (err) => { assert.match(err.name, /TaskNotCancelable/, `${err.name}: ${err.message}`); return true; });
    const urls = requests.slice(before).map((r) => `${r.method} ${r.url.replace(restUrl, '')}`);
    assert.ok(urls.includes('POST /message:send'), urls.join('\n'));
    assert.ok(urls.includes(`GET /tasks/${result.id}?historyLength=1`), urls.join('\n'));
    assert.ok(urls.includes(`POST /tasks/${result.id}:cancel`), urls.join('\n'));
  });

  it('getTask of an unknown id is TaskNotFoundError', async () => {
    await assert.rejects(client.getTask({ tenant: '', id: `none-${randomUUID()}` }),
      (err) => { assert.match(err.name, /TaskNotFound/, `${err.name}: ${err.message}`); return true; });
  });

  it('sendMessageStream yields task, working, artifact, completed as bare StreamResponses', async () => {
    const text = `rest stream ${randomUUID()}`;
    const before = requests.length;
    const events = await drain(client.sendMessageStream({ message: userMessage(text) }));
    const kinds = events.map(({ payload }) => (payload?.$case === 'statusUpdate'
      ? `statusUpdate:${TaskState[payload.value.status?.state]}` : payload?.$case));
    assert.deepEqual(kinds, ['task', 'statusUpdate:TASK_STATE_WORKING', 'artifactUpdate',
      'statusUpdate:TASK_STATE_COMPLETED'], JSON.stringify(events));
    const artifact = events[2].payload.value.artifact;
    assert.equal(artifact.parts[0].content.value, text);
    const urls = requests.slice(before).map((r) => `${r.method} ${r.url.replace(restUrl, '')}`);
    assert.deepEqual(urls, ['POST /message:stream']);
  });

  it('a raw REST stream is SSE whose data are bare StreamResponses with ids', async () => {
    const res = await fetch(`${restUrl}/message:stream`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'raw' }] } }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/event-stream/);
    const frames = (await res.text()).split('\n\n').filter((f) => f.trim());
    const data = frames.map((f) => {
      const id = /^id: (\d+)$/m.exec(f);
      assert.ok(id, `frame without id: ${f}`);
      return JSON.parse(/^data: (.*)$/m.exec(f)[1]);
    });
    assert.ok(!('jsonrpc' in data[0]), 'no JSON-RPC envelope on REST');
    assert.deepEqual(data.map((d) => Object.keys(d)[0]),
      ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    // Subscribing to the finished task without a cursor: UnsupportedOperation, as on JSON-RPC.
    const sub = await fetch(`${restUrl}/tasks/${data[0].task.id}:subscribe`, { method: 'POST' });
    assert.equal(sub.status, 400);
    assert.equal((await sub.json()).error.details[0].reason, 'UNSUPPORTED_OPERATION');
  });

  it('push configs: create, get, list, delete', async () => {
    const task = await client.sendMessage({ message: userMessage('push target') });
    const created = await client.createTaskPushNotificationConfig({
      tenant: '', taskId: task.id, id: 'cfg-1', url: 'http://127.0.0.1:9/hook', token: 'tok',
    });
    assert.equal(created.taskId, task.id);
    assert.equal(created.id, 'cfg-1');
    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
    assert.equal(got.url, 'http://127.0.0.1:9/hook');
    const list = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
    assert.deepEqual(list.configs.map((c) => c.id), ['cfg-1']);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
    const empty = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
    assert.equal(empty.configs.length, 0);
  });

  it('errors are google.rpc.Status with the specification\'s HTTP status', async () => {
    let res = await fetch(`${restUrl}/tasks/none-${randomUUID()}`);
    assert.equal(res.status, 404);
    let body = await res.json();
    assert.equal(body.error.code, 404);
    assert.equal(body.error.status, 'NOT_FOUND');
    const info = body.error.details.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
    assert.equal(info.reason, 'TASK_NOT_FOUND');
    assert.equal(info.domain, 'a2a-protocol.org');

    res = await fetch(`${restUrl}/message:send`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    assert.equal(res.status, 415);
    res = await fetch(`${restUrl}/message:send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    assert.equal(res.status, 400);
    res = await fetch(`${restUrl}/message:send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 400);
    body = await res.json();
    assert.equal(body.error.status, 'INVALID_ARGUMENT');
    res = await fetch(`${restUrl}/message:send`, { method: 'GET' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
    assert.equal((await res.json()).error.code, 405, 'error.code is the HTTP status');
    res = await fetch(`${restUrl}/no-such-route`);
    assert.equal(res.status, 404);
    res = await fetch(`${restUrl}/tasks`, { headers: { 'A2A-Version': '99.0' } });
    assert.equal(res.status, 400);
    body = await res.json();
    assert.equal(body.error.details[0].reason, 'VERSION_NOT_SUPPORTED');
  });
});
