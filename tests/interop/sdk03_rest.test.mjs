// a2ad's A2A 0.3 HTTP+JSON binding (`<base>/a2a/rest03`, routes /v1/...) driven by
// @a2a-js/sdk 0.3.14's RestTransport (sdk03_binding_suite.mjs), plus raw fetches that pin what
// the SDK hides: the 0.3 ProtoJSON bodies, the routes' methods, the error bodies and statuses.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { loadDep, startServer } from './server.mjs';
import { describeSdk03Binding } from './sdk03_binding_suite.mjs';

const { RestTransportFactory } = await loadDep('sdk03/client');

describeSdk03Binding({
  binding: 'HTTP+JSON',
  transportFactory: () => new RestTransportFactory(),
  serverArgs: async () => [],
  interfaceUrl: (server) => `${server.baseUrl}/a2a/rest03`,
});

describe('a2ad HTTP+JSON 0.3 on the wire (raw fetch)', () => {
  let server;
  let base;
  const post = (path, body, headers = {}) => fetch(`${base}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

  before(async () => {
    server = await startServer();
    base = `${server.baseUrl}/a2a/rest03`;
  });
  after(async () => { await server?.stop(); });

  it('bodies are the 0.3 proto\'s ProtoJSON: content, ROLE_USER, TASK_STATE_*', async () => {
    const res = await post('/v1/message:send', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ text: 'raw 0.3' }] },
    });
    assert.equal(res.status, 200);
    const { task } = await res.json();
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(task.history[0].content, [{ text: 'raw 0.3' }]);
    assert.equal(task.history[0].role, 'ROLE_USER');
    assert.ok(!('kind' in task), 'no kind in ProtoJSON');
    assert.deepEqual(task.artifacts[0].parts, [{ text: 'raw 0.3' }]);

    // Cancel with a literal null body, as a2a-python's 0.3 client sends it.
    const cancel = await post(`/v1/tasks/${task.id}:cancel`, 'null');
    assert.equal(cancel.status, 409);
    assert.deepEqual(await cancel.json(), {
      code: -32002, message: `task ${task.id} is completed and can no longer be canceled`,
      data: { taskId: task.id },
    });
  });

  it('a stream is SSE of 0.3 StreamResponses with ids; final only on the last', async () => {
    const res = await post('/v1/message:stream', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ text: 'sse' }] },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/event-stream/);
    const frames = (await res.text()).split('\n\n').filter((f) => f.trim());
    const data = frames.map((f) => {
      assert.match(f, /^id: \d+$/m, `frame without id: ${f}`);
      return JSON.parse(/^data: (.*)$/m.exec(f)[1]);
    });
    assert.deepEqual(data.map((d) => Object.keys(d)[0]),
      ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    assert.equal(data[1].statusUpdate.final, undefined, 'final=false is left out (ProtoJSON)');
    assert.equal(data[3].statusUpdate.final, true);
    assert.equal(data[3].statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    // Subscribe takes GET and POST; a finished task is replayed, not refused (0.3).
    for (const method of ['GET', 'POST']) {
      const sub = await fetch(`${base}/v1/tasks/${data[0].task.id}:subscribe`, { method });
      assert.equal(sub.status, 200, method);
      const events = (await sub.text()).split('\n\n').filter((f) => f.trim());
      assert.equal(events.length, 1, method);
    }
  });

  it('errors are {code, message, data?} with an HTTP status per error', async () => {
    let res = await fetch(`${base}/v1/tasks/none-${randomUUID()}`);
    assert.equal(res.status, 404);
    let body = await res.json();
    assert.equal(body.code, -32001);
    assert.equal(typeof body.message, 'string');
    res = await post('/v1/message:send', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } });
    assert.equal(res.status, 400);
    body = await res.json();
    assert.equal(body.code, -32602);
    assert.equal(body.data.field, 'message.content');
    res = await post('/v1/message:send', 'hi', { 'content-type': 'text/plain' });
    assert.equal(res.status, 415);
    assert.equal((await res.json()).code, -32005);
    res = await post('/v1/message:send', '{');
    assert.equal(res.status, 400);
    assert.equal((await res.json()).code, -32700);
    res = await fetch(`${base}/v1/message:send`);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
    res = await fetch(`${base}/v1/tasks`);
    assert.equal(res.status, 404);
    assert.equal((await res.json()).code, -32601);
    res = await fetch(`${base}/v1/card`);
    assert.equal(res.status, 400);
    assert.equal((await res.json()).code, -32004);
    res = await fetch(`${base}/v1/tasks/x`, { headers: { 'A2A-Version': '1.0' } });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).code, -32009);
  });
});
