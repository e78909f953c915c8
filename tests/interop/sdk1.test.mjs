// a2ad driven by the A2A v1.0 JavaScript SDK (@a2a-js/sdk 1.3.0, installed as `sdk1`).
// ClientFactory reads the card's `supportedInterfaces`, picks per binding the entry whose
// protocolVersion is exactly "1.0", and its JSON-RPC transport sends PascalCase methods
// (`SendMessage`, `GetTask`, `ListTasks`, `CancelTask`) with `A2A-Version: 1.0` on every
// request, the card GET included. Results are decoded with ts-proto (enums become numbers,
// parts become {content: {$case, value}}); A2A errors are thrown with `name` and `envelopeCode`.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { loadDep, rpc, startServer, uncleanExit, waitFor } from './server.mjs';

const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } =
  await loadDep('sdk1/client');
const { Role, TaskState } = await loadDep('sdk1');

const TERMINAL = [
  TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED,
];

/** fetch that records every request (url, method, headers, parsed JSON body) and response. */
function recordingFetch(log) {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    let body;
    try { body = init.body ? JSON.parse(init.body) : undefined; } catch { body = init.body; }
    const res = await fetch(input, init);
    const entry = { url: String(input), method: init.method ?? 'GET', headers, body, status: res.status };
    if ((res.headers.get('content-type') ?? '').includes('json')) {
      entry.response = await res.clone().json().catch(() => undefined);
    }
    log.push(entry);
    return res;
  };
}

function userMessage(text, extra = {}) {
  return {
    messageId: randomUUID(), role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }], ...extra,
  };
}

function artifactText(task) {
  return task.artifacts.flatMap((a) => a.parts)
    .filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
}

function assertEchoTask(task, text) {
  assert.ok('id' in task && !('messageId' in task), `expected a Task, got ${JSON.stringify(task)}`);
  assert.ok(task.id.length > 0);
  assert.ok(task.contextId.length > 0);
  assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, `status: ${JSON.stringify(task.status)}`);
  assert.equal(task.artifacts.length, 1, `artifacts: ${JSON.stringify(task.artifacts)}`);
  assert.ok(artifactText(task).includes(text), `artifact does not echo '${text}': ${JSON.stringify(task.artifacts)}`);
}

/** `statusUpdate:TASK_STATE_WORKING`-style labels of a list of StreamResponses. */
function streamKinds(events) {
  return events.map(({ payload }) => payload?.$case === 'statusUpdate'
    ? `statusUpdate:${TaskState[payload.value.status?.state]}` : payload?.$case);
}

/** v1.0 stream of an echo task: task, statusUpdate working, artifactUpdate (lastChunk), statusUpdate completed. */
function assertEchoStream(events, text) {
  assert.deepEqual(streamKinds(events),
    ['task', 'statusUpdate:TASK_STATE_WORKING', 'artifactUpdate', 'statusUpdate:TASK_STATE_COMPLETED'],
    `event sequence: ${JSON.stringify(events)}`);
  const [task, working, artifact, completed] = events.map((e) => e.payload.value);
  assert.equal(task.status.state, TaskState.TASK_STATE_SUBMITTED);
  for (const ev of [working, artifact, completed]) {
    assert.equal(ev.taskId, task.id);
    assert.equal(ev.contextId, task.contextId);
  }
  assert.equal(artifact.lastChunk, true);
  assert.equal(artifact.append, false);
  assert.ok(artifact.artifact.artifactId.length > 0);
  const echoed = artifact.artifact.parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
  assert.ok(echoed.includes(text), `artifact does not echo '${text}': ${JSON.stringify(artifact.artifact)}`);
}

async function drain(gen) {
  const out = [];
  for await (const ev of gen) out.push(ev);
  return out;
}

/** The full ListTasksRequest, as the SDK's TypeScript types require. */
function listRequest(fields) {
  return {
    tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '',
    statusTimestampAfter: undefined, ...fields,
  };
}

async function assertRejects(promise, name, code) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.name, name, `${err.name}: ${err.message}`);
    assert.equal(err.envelopeCode, code);
    return true;
  });
}

describe('a2ad with @a2a-js/sdk 1.3.0 ClientFactory/Client (JSON-RPC v1.0)', () => {
  let server;
  let client;
  const wire = [];

  before(async () => {
    server = await startServer();
    const fetchImpl = recordingFetch(wire);
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }));
    client = await factory.createFromUrl(server.baseUrl);
  });
  after(async () => { await server?.stop(); });

  const send = (text, { configuration, ...extra } = {}) =>
    client.sendMessage({ message: userMessage(text, extra), configuration });

  it('selects the v1.0 JSON-RPC interface from the card', async () => {
    assert.equal(client.protocolVersion, '1.0');
    const card = await client.getAgentCard();
    const v10 = card.supportedInterfaces.find(
      (i) => i.protocolBinding === 'JSONRPC' && i.protocolVersion === '1.0');
    assert.ok(v10, `no JSONRPC 1.0 interface: ${JSON.stringify(card.supportedInterfaces)}`);
    assert.equal(v10.url, server.rpcUrl);
    assert.ok(card.skills.some((s) => s.id === 'echo'));
  });

  it('SendMessage (blocking) returns the completed echo task', async () => {
    const text = `hello from sdk 1.x ${randomUUID()}`;
    const before = wire.length;
    assertEchoTask(await send(text), text);

    const call = wire.slice(before).find((e) => e.body?.method === 'SendMessage');
    assert.ok(call, 'the SDK sent no SendMessage request');
    assert.equal(call.url, server.rpcUrl);
    assert.equal(call.headers.get('a2a-version'), '1.0');
    assert.ok(call.response?.result?.task, `result must be wrapped as {task}: ${JSON.stringify(call.response)}`);
    assert.equal(call.response.result.task.status.state, 'TASK_STATE_COMPLETED');
  });

  it('SendMessage with returnImmediately returns at once; GetTask later shows it completed', async () => {
    const text = `return immediately ${randomUUID()}`;
    const task = await send(text, { configuration: { returnImmediately: true, acceptedOutputModes: [] } });
    assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING,
      TaskState.TASK_STATE_COMPLETED].includes(task.status?.state), JSON.stringify(task.status));
    const done = await waitFor(() => client.getTask({ tenant: '', id: task.id }),
      (t) => TERMINAL.includes(t.status?.state));
    assert.equal(done.id, task.id);
    assertEchoTask(done, text);
  });

  it('GetTask returns the stored task', async () => {
    const text = `get me ${randomUUID()}`;
    const sent = await send(text);
    const got = await client.getTask({ tenant: '', id: sent.id });
    assert.equal(got.id, sent.id);
    assert.equal(got.contextId, sent.contextId);
    assertEchoTask(got, text);
  });

  it('GetTask and CancelTask of an unknown id throw TaskNotFoundError (-32001)', async () => {
    await assertRejects(client.getTask({ tenant: '', id: `no-such-task-${randomUUID()}` }),
      'TaskNotFoundError', -32001);
    await assertRejects(client.cancelTask({ tenant: '', id: `no-such-task-${randomUUID()}` }),
      'TaskNotFoundError', -32001);
  });

  it('v1.0 errors carry data: [google.rpc.ErrorInfo] (WIRE.md §12.2)', async () => {
    const { body } = await rpc(server.rpcUrl, 'GetTask', { id: `no-such-task-${randomUUID()}` },
      { version: '1.0' });
    assert.equal(body.error?.code, -32001, JSON.stringify(body));
    assert.ok(Array.isArray(body.error.data), `error.data must be an array: ${JSON.stringify(body.error)}`);
    const info = body.error.data.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
    assert.ok(info, JSON.stringify(body.error.data));
    assert.equal(info.reason, 'TASK_NOT_FOUND');
    assert.equal(info.domain, 'a2a-protocol.org');
  });

  it('CancelTask of a completed task throws TaskNotCancelableError (-32002)', async () => {
    const task = await send('finish first');
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    await assertRejects(client.cancelTask({ tenant: '', id: task.id }), 'TaskNotCancelableError', -32002);
    const after = await client.getTask({ tenant: '', id: task.id });
    assert.equal(after.status.state, TaskState.TASK_STATE_COMPLETED);
  });

  it('CancelTask right after returnImmediately cancels, or reports the task already finished', async (t) => {
    const task = await send('cancel me', { configuration: { returnImmediately: true, acceptedOutputModes: [] } });
    let canceled;
    let refused;
    try {
      canceled = await client.cancelTask({ tenant: '', id: task.id });
    } catch (err) {
      refused = err;
    }
    const final = await waitFor(() => client.getTask({ tenant: '', id: task.id }),
      (t) => TERMINAL.includes(t.status?.state));
    t.diagnostic(`cancel arrived ${refused ? 'after' : 'before'} the task completed`);
    if (refused) {
      assert.equal(refused.name, 'TaskNotCancelableError', `${refused.name}: ${refused.message}`);
      assert.equal(refused.envelopeCode, -32002);
      assert.equal(final.status.state, TaskState.TASK_STATE_COMPLETED);
    } else {
      assert.equal(canceled.id, task.id);
      assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED, JSON.stringify(canceled.status));
      assert.equal(final.status.state, TaskState.TASK_STATE_CANCELED, 'the cancel must be durable');
    }
  });

  it('SendMessage to a completed task throws UnsupportedOperationError (-32004)', async () => {
    const task = await send('done');
    await assertRejects(send('more', { taskId: task.id }), 'UnsupportedOperationError', -32004);
  });

  it('SendMessage naming an unknown taskId throws TaskNotFoundError (-32001)', async () => {
    await assertRejects(send('hi', { taskId: `no-such-task-${randomUUID()}` }), 'TaskNotFoundError', -32001);
  });

  describe('ListTasks', () => {
    let contextId;
    const ids = [];

    before(async () => {
      // One context with three tasks: the first send opens it, the others join it.
      const first = await send('list 1');
      contextId = first.contextId;
      ids.push(first.id);
      for (const text of ['list 2', 'list 3']) {
        const t = await send(text, { contextId });
        assert.equal(t.contextId, contextId);
        ids.push(t.id);
      }
      await send('another context'); // must not show up when filtering by contextId
    });

    it('pageSize 1 walks all tasks of a context, one per page, newest first', async () => {
      const seen = [];
      const timestamps = [];
      let pageToken = '';
      for (let page = 0; page < 10; page++) {
        const res = await client.listTasks(listRequest({ contextId, pageSize: 1, pageToken }));
        assert.equal(res.pageSize, 1);
        assert.equal(res.totalSize, 3);
        assert.ok(res.tasks.length <= 1, `page ${page} has ${res.tasks.length} tasks`);
        for (const t of res.tasks) {
          assert.equal(t.contextId, contextId);
          seen.push(t.id);
          timestamps.push(t.status?.timestamp);
        }
        pageToken = res.nextPageToken;
        if (!pageToken) break;
      }
      assert.equal(pageToken, '', 'the last page must have an empty nextPageToken');
      assert.deepEqual([...seen].sort(), [...ids].sort(), `pages returned ${JSON.stringify(seen)}`);
      if (timestamps.every(Boolean)) {
        const ms = timestamps.map((t) => Date.parse(t));
        for (let i = 1; i < ms.length; i++) {
          assert.ok(ms[i - 1] >= ms[i], `not sorted by status timestamp, newest first: ${timestamps}`);
        }
      }
    });

    it('filters by contextId and status; omits artifacts unless asked (WIRE.md §11.2)', async () => {
      const all = await client.listTasks(listRequest({ contextId }));
      assert.deepEqual(all.tasks.map((t) => t.id).sort(), [...ids].sort());
      assert.equal(all.nextPageToken, '');

      const completed = await client.listTasks(
        listRequest({ contextId, status: TaskState.TASK_STATE_COMPLETED }));
      assert.equal(completed.tasks.length, 3);
      const working = await client.listTasks(
        listRequest({ contextId, status: TaskState.TASK_STATE_WORKING }));
      assert.equal(working.tasks.length, 0);
      assert.equal(working.totalSize, 0);

      const raw = await rpc(server.rpcUrl, 'ListTasks', { contextId }, { version: '1.0' });
      assert.ok(raw.body.result, JSON.stringify(raw.body));
      for (const key of ['tasks', 'nextPageToken', 'pageSize', 'totalSize']) {
        assert.ok(key in raw.body.result, `ListTasksResponse.${key} is REQUIRED: ${JSON.stringify(raw.body.result)}`);
      }
      for (const t of raw.body.result.tasks) {
        assert.ok(!('artifacts' in t), `includeArtifacts=false must omit artifacts: ${JSON.stringify(t)}`);
      }
      const withArtifacts = await client.listTasks(listRequest({ contextId, includeArtifacts: true }));
      for (const t of withArtifacts.tasks) assert.equal(t.artifacts.length, 1);
    });

    it('treats status TASK_STATE_UNSPECIFIED (the proto default) as "no filter"', async () => {
      // ProtoJSON: an enum field set to its default is the same as an absent one (gRPC cannot even
      // tell them apart); the a2a-js 1.3.0 server accepts 0 / TASK_STATE_UNSPECIFIED.
      for (const status of ['TASK_STATE_UNSPECIFIED', 0]) {
        const raw = await rpc(server.rpcUrl, 'ListTasks', { contextId, status }, { version: '1.0' });
        assert.ok(raw.body.result, `status ${JSON.stringify(status)}: ${JSON.stringify(raw.body)}`);
        assert.deepEqual(raw.body.result.tasks.map((t) => t.id).sort(), [...ids].sort());
      }
    });

    it('answers a plain-JS call with status omitted (sent as "UNRECOGNIZED") correctly or with -32602', async () => {
      // ts-proto's ListTasksRequest.toJSON turns a missing `status` into "UNRECOGNIZED". ProtoJSON
      // parsers that ignore unknown values treat it as unset (=> all tasks); the a2a-js 1.3.0
      // server rejects it as RequestMalformedError (-32602). Anything else is wrong.
      const before = wire.length;
      let res;
      let err;
      try {
        res = await client.listTasks({ contextId, pageSize: 10 });
      } catch (e) {
        err = e;
      }
      const call = wire.slice(before).find((e) => e.body?.method === 'ListTasks');
      assert.equal(call?.body?.params?.status, 'UNRECOGNIZED', 'SDK behaviour changed');
      if (err) {
        assert.equal(err.name, 'RequestMalformedError', `${err.name}: ${err.message}`);
        assert.equal(err.envelopeCode, -32602);
      } else {
        assert.deepEqual(res.tasks.map((t) => t.id).sort(), [...ids].sort());
      }
    });
  });

  it('SendStreamingMessage (sendMessageStream) yields task, working, artifact, completed', { timeout: 15_000 }, async () => {
    assert.equal((await client.getAgentCard()).capabilities?.streaming, true,
      'without capabilities.streaming the 1.x Client silently falls back to SendMessage');
    const text = `stream v1 ${randomUUID()}`;
    const before = wire.length;
    const events = await drain(client.sendMessageStream({ message: userMessage(text) }));
    assertEchoStream(events, text);
    const call = wire.slice(before).find((e) => e.body?.method === 'SendStreamingMessage');
    assert.ok(call, `methods sent: ${wire.slice(before).map((e) => e.body?.method)}`);
    assert.equal(call.headers.get('a2a-version'), '1.0');
    assert.equal(call.headers.get('accept'), 'text/event-stream');
    assertEchoTask(await client.getTask({ tenant: '', id: events[0].payload.value.id }), text);
  });

  it('SubscribeToTask (resubscribeTask) of a terminal task throws UnsupportedOperationError (-32004)', { timeout: 15_000 }, async () => {
    const task = await send('finished before subscribing');
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    await assertRejects(drain(client.resubscribeTask({ tenant: '', id: task.id })), 'UnsupportedOperationError', -32004);
  });

  it('resubscribeTask with a Last-Event-ID service parameter replays the missed events, even for a finished task', { timeout: 15_000 }, async () => {
    // SubscribeToTaskRequest has no metadata; RequestOptions.serviceParameters become HTTP headers.
    const text = `replay ${randomUUID()}`;
    const task = await send(text);
    const events = await drain(client.resubscribeTask({ tenant: '', id: task.id },
      { serviceParameters: { 'Last-Event-ID': '1' } }));
    assert.deepEqual(streamKinds(events), ['artifactUpdate', 'statusUpdate:TASK_STATE_COMPLETED']);
    assert.equal(events[0].payload.value.taskId, task.id);
  });

  it('SubscribeToTask of an unknown task throws TaskNotFoundError (-32001)', { timeout: 15_000 }, async () => {
    await assertRejects(drain(client.resubscribeTask({ tenant: '', id: `no-such-task-${randomUUID()}` })),
      'TaskNotFoundError', -32001);
  });

  it('a 1.x client pinned to the card\'s 0.3 interface (legacyCompat) talks v0.3 to the same endpoint', async () => {
    // The v1 SDK's compat transport sends v0.3 method names with `A2A-Version: 0.3`: a v0.3 request
    // can arrive with that header as well as without one (WIRE.md §1.3).
    const log = [];
    const fetchImpl = recordingFetch(log);
    const card = await client.getAgentCard();
    const legacyCard = {
      ...card,
      supportedInterfaces: card.supportedInterfaces.filter(
        (i) => i.protocolBinding === 'JSONRPC' && i.protocolVersion === '0.3'),
    };
    assert.equal(legacyCard.supportedInterfaces.length, 1, 'the card must list a JSONRPC 0.3 interface');
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
    });
    const legacy = await factory.createFromAgentCard(legacyCard);
    assert.equal(legacy.protocolVersion, '0.3');

    const text = `compat ${randomUUID()}`;
    const task = await legacy.sendMessage({ message: userMessage(text) });
    assertEchoTask(task, text);
    const call = log.find((e) => e.body?.method === 'message/send');
    assert.ok(call, `methods sent: ${log.map((e) => e.body?.method)}`);
    assert.equal(call.headers.get('a2a-version'), '0.3');
    assert.equal((await legacy.getTask({ tenant: '', id: task.id })).id, task.id);
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const how = uncleanExit(await server.stop());
    assert.equal(how, '', how);
  });
});

describe('a2ad with a slow echo (--echo-delay-ms) and the 1.3.0 Client: cancel', () => {
  const DELAY_MS = 2000; // long enough for 'still working' to be listed as such
  let server;
  let client;

  before(async () => {
    server = await startServer({ args: ['--echo-delay-ms', String(DELAY_MS)] });
    client = await new ClientFactory().createFromUrl(server.baseUrl);
  });
  after(async () => { await server?.stop(); });

  it('CancelTask of a working task cancels it for good; cancelling again returns it unchanged', async () => {
    const task = await client.sendMessage({
      message: userMessage('cancel me'), configuration: { returnImmediately: true, acceptedOutputModes: [] },
    });
    assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(task.status?.state),
      JSON.stringify(task.status));

    const canceled = await client.cancelTask({ tenant: '', id: task.id });
    assert.equal(canceled.id, task.id);
    assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);

    await new Promise((r) => setTimeout(r, DELAY_MS + 300)); // past the moment the echo would finish
    const later = await client.getTask({ tenant: '', id: task.id });
    assert.equal(later.status.state, TaskState.TASK_STATE_CANCELED, 'the canceled task must not complete later');
    assert.equal(later.artifacts.length, 0);

    // v1.0: cancel is idempotent (spec §3.3.1); a2a-js returns the canceled task unchanged.
    const again = await client.cancelTask({ tenant: '', id: task.id });
    assert.equal(again.status.state, TaskState.TASK_STATE_CANCELED);
  });

  it('SubscribeToTask (resubscribeTask) on a live task yields the Task snapshot, then the rest up to completed', { timeout: 15_000 }, async () => {
    const text = `subscribe live ${randomUUID()}`;
    const task = await client.sendMessage({
      message: userMessage(text), configuration: { returnImmediately: true, acceptedOutputModes: [] },
    });
    const events = await drain(client.resubscribeTask({ tenant: '', id: task.id }));
    const [snapshot, ...rest] = events;
    assert.equal(snapshot?.payload?.$case, 'task', `the first event must be the Task: ${JSON.stringify(events)}`);
    assert.equal(snapshot.payload.value.id, task.id);
    const state = snapshot.payload.value.status.state;
    assert.ok([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING].includes(state), JSON.stringify(snapshot));
    const expected = state === TaskState.TASK_STATE_SUBMITTED
      ? ['statusUpdate:TASK_STATE_WORKING', 'artifactUpdate', 'statusUpdate:TASK_STATE_COMPLETED']
      : ['artifactUpdate', 'statusUpdate:TASK_STATE_COMPLETED'];
    assert.deepEqual(streamKinds(rest), expected, `events after the snapshot: ${JSON.stringify(rest)}`);
    for (const ev of rest) assert.equal(ev.payload.value.taskId, task.id);
    assertEchoTask(await client.getTask({ tenant: '', id: task.id }), text);
  });

  it('sendMessageStream and a concurrent resubscribeTask of the same task end alike', { timeout: 15_000 }, async () => {
    const text = `stream and subscribe ${randomUUID()}`;
    const stream = client.sendMessageStream({ message: userMessage(text) });
    const first = await stream.next();
    assert.equal(first.value?.payload?.$case, 'task');
    const [rest, sub] = await Promise.all([
      drain(stream), drain(client.resubscribeTask({ tenant: '', id: first.value.payload.value.id })),
    ]);
    assertEchoStream([first.value, ...rest], text);
    assert.equal(sub[0].payload.$case, 'task');
    assert.deepEqual(sub.slice(1), rest.slice(rest.length - (sub.length - 1)));
  });

  it('ListTasks filters on TASK_STATE_CANCELED and TASK_STATE_WORKING', async () => {
    const working = await client.sendMessage({
      message: userMessage('still working'), configuration: { returnImmediately: true, acceptedOutputModes: [] },
    });
    const { contextId } = working;
    const canceled = await client.sendMessage({
      message: userMessage('to cancel', { contextId }),
      configuration: { returnImmediately: true, acceptedOutputModes: [] },
    });
    await client.cancelTask({ tenant: '', id: canceled.id });

    const byState = async (status) =>
      (await client.listTasks(listRequest({ contextId, status }))).tasks.map((t) => t.id);
    assert.deepEqual(await byState(TaskState.TASK_STATE_CANCELED), [canceled.id]);
    const active = [...await byState(TaskState.TASK_STATE_SUBMITTED), ...await byState(TaskState.TASK_STATE_WORKING)];
    assert.deepEqual(active, [working.id]);
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const how = uncleanExit(await server.stop());
    assert.equal(how, '', how);
  });
});
