// a2ad driven by the A2A v0.3 JavaScript SDK (@a2a-js/sdk 0.3.14, installed as `sdk03`).
// Its A2AClient speaks JSON-RPC v0.3 (`message/send`, `tasks/get`, `tasks/cancel`) to the card's
// top-level `url`, sends no A2A-Version header, and returns JSON-RPC responses ({result} or
// {error}) instead of throwing for A2A errors. It also throws if a response id differs from the
// request id, so every call here checks id echoing too.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  TERMINAL_STATES_03, loadDep, startServer, uncleanExit, waitFor,
} from './server.mjs';
import { assertEchoStream, assertEchoTask, userMessage } from './sdk03_helpers.mjs';

const { A2AClient, ClientFactory, TaskNotFoundError } = await loadDep('sdk03/client');

function resultOf(response, what) {
  assert.ok(!('error' in response), `${what} failed: ${JSON.stringify(response.error)}`);
  return response.result;
}

describe('a2ad with @a2a-js/sdk 0.3.14 A2AClient (JSON-RPC v0.3)', () => {
  let server;
  let client;

  before(async () => {
    server = await startServer();
    client = await A2AClient.fromCardUrl(server.cardUrl);
  });
  after(async () => { await server?.stop(); });

  it('reads the agent card and targets its v0.3 JSON-RPC url', async () => {
    const card = await client.getAgentCard();
    assert.equal(card.url, server.rpcUrl);
    assert.equal(card.preferredTransport, 'JSONRPC');
    assert.equal(card.protocolVersion, '0.3.0');
    assert.ok(card.skills.some((s) => s.id === 'echo'), `skills: ${JSON.stringify(card.skills)}`);
  });

  it('message/send (blocking) returns the completed echo task', async () => {
    const text = `hello from sdk 0.3 ${randomUUID()}`;
    const task = resultOf(
      await client.sendMessage({ message: userMessage(text), configuration: { blocking: true } }),
      'message/send');
    assertEchoTask(task, text);
  });

  it('message/send without configuration blocks by default', async () => {
    const text = `default blocking ${randomUUID()}`;
    const task = resultOf(await client.sendMessage({ message: userMessage(text) }), 'message/send');
    assertEchoTask(task, text);
  });

  it('message/send keeps the contextId of a follow-up message', async () => {
    const first = resultOf(await client.sendMessage({ message: userMessage('first turn') }), 'first send');
    const text = `second turn ${randomUUID()}`;
    const second = resultOf(
      await client.sendMessage({ message: userMessage(text, { contextId: first.contextId }) }),
      'second send');
    assertEchoTask(second, text);
    assert.equal(second.contextId, first.contextId);
    assert.notEqual(second.id, first.id, 'a message to a context (not a task) starts a new task');
  });

  it('message/send (non-blocking) returns at once; tasks/get later shows it completed', async () => {
    const text = `non-blocking ${randomUUID()}`;
    const task = resultOf(
      await client.sendMessage({ message: userMessage(text), configuration: { blocking: false } }),
      'message/send');
    assert.equal(task.kind, 'task');
    assert.ok(['submitted', 'working', 'completed'].includes(task.status?.state),
      `unexpected state ${JSON.stringify(task.status)}`);

    const done = await waitFor(
      async () => resultOf(await client.getTask({ id: task.id }), 'tasks/get'),
      (t) => TERMINAL_STATES_03.includes(t.status?.state));
    assert.equal(done.id, task.id);
    assert.equal(done.contextId, task.contextId);
    assertEchoTask(done, text);
  });

  it('tasks/get returns the stored task', async () => {
    const text = `get me ${randomUUID()}`;
    const sent = resultOf(await client.sendMessage({ message: userMessage(text) }), 'message/send');
    const got = resultOf(await client.getTask({ id: sent.id }), 'tasks/get');
    assert.equal(got.id, sent.id);
    assert.equal(got.contextId, sent.contextId);
    assertEchoTask(got, text);
  });

  it('tasks/get of an unknown id fails with -32001 TaskNotFound', async () => {
    const res = await client.getTask({ id: `no-such-task-${randomUUID()}` });
    assert.ok('error' in res, `expected an error, got ${JSON.stringify(res)}`);
    assert.equal(res.error.code, -32001, JSON.stringify(res.error));
  });

  it('tasks/cancel of an unknown id fails with -32001 TaskNotFound', async () => {
    const res = await client.cancelTask({ id: `no-such-task-${randomUUID()}` });
    assert.ok('error' in res, `expected an error, got ${JSON.stringify(res)}`);
    assert.equal(res.error.code, -32001, JSON.stringify(res.error));
  });

  it('tasks/cancel of a completed task fails with -32002 TaskNotCancelable', async () => {
    const task = resultOf(await client.sendMessage({ message: userMessage('finish first') }), 'message/send');
    assert.equal(task.status.state, 'completed');
    const res = await client.cancelTask({ id: task.id });
    assert.ok('error' in res, `expected an error, got ${JSON.stringify(res)}`);
    assert.equal(res.error.code, -32002, JSON.stringify(res.error));
    const after = resultOf(await client.getTask({ id: task.id }), 'tasks/get');
    assert.equal(after.status.state, 'completed', 'a refused cancel must not change the task');
  });

  it('tasks/cancel right after a non-blocking send cancels, or reports the task already finished', async (t) => {
    const task = resultOf(
      await client.sendMessage({ message: userMessage('cancel me'), configuration: { blocking: false } }),
      'message/send');
    const res = await client.cancelTask({ id: task.id });
    const final = await waitFor(
      async () => resultOf(await client.getTask({ id: task.id }), 'tasks/get'),
      (t) => TERMINAL_STATES_03.includes(t.status?.state));
    if ('error' in res) {
      // Lost the race: the echo finished before the cancel arrived.
      t.diagnostic('cancel arrived after the task completed');
      assert.equal(res.error.code, -32002, JSON.stringify(res.error));
      assert.equal(final.status.state, 'completed');
    } else {
      t.diagnostic('cancel arrived before the task completed');
      assert.equal(res.result.kind, 'task');
      assert.equal(res.result.id, task.id);
      assert.equal(res.result.status.state, 'canceled', JSON.stringify(res.result.status));
      assert.equal(final.status.state, 'canceled', 'the cancel must be durable');
    }
  });

  it('message/send to a completed task is refused', async () => {
    const task = resultOf(await client.sendMessage({ message: userMessage('done') }), 'message/send');
    const res = await client.sendMessage({ message: userMessage('more', { taskId: task.id }) });
    assert.ok('error' in res, `expected an error, got ${JSON.stringify(res)}`);
    // v0.3 leaves the code open; -32004 (v1.0's choice), -32602 (a2a-python) and -32600
    // (a2a-js) are all in use (WIRE.md §3.3).
    assert.ok([-32004, -32602, -32600].includes(res.error.code), JSON.stringify(res.error));
  });

  it('message/send naming an unknown taskId fails with -32001 TaskNotFound', async () => {
    const res = await client.sendMessage({ message: userMessage('hi', { taskId: `no-such-task-${randomUUID()}` }) });
    assert.ok('error' in res, `expected an error, got ${JSON.stringify(res)}`);
    assert.equal(res.error.code, -32001, JSON.stringify(res.error));
  });

  it('the 0.3.x ClientFactory/Client (card url + preferredTransport) works too', async () => {
    // The newer 0.3.x API picks the transport from `preferredTransport`/`url` and
    // `additionalInterfaces`, returns results directly and throws typed errors.
    const factoryClient = await new ClientFactory().createFromUrl(server.baseUrl);
    const text = `factory client ${randomUUID()}`;
    const task = await factoryClient.sendMessage({ message: userMessage(text) });
    assertEchoTask(task, text);
    assert.equal((await factoryClient.getTask({ id: task.id })).id, task.id);
    await assert.rejects(factoryClient.getTask({ id: `no-such-task-${randomUUID()}` }), TaskNotFoundError);
  });

  it('message/stream (sendMessageStream) yields task, working, artifact, completed final:true', { timeout: 15_000 }, async () => {
    assert.equal((await client.getAgentCard()).capabilities?.streaming, true);
    const text = `stream me ${randomUUID()}`;
    const events = [];
    for await (const ev of client.sendMessageStream({ message: userMessage(text) })) events.push(ev);
    assertEchoStream(events, text);
    // The stream's events add up to what tasks/get stores.
    const stored = resultOf(await client.getTask({ id: events[0].id }), 'tasks/get');
    assertEchoTask(stored, text);
  });

  it('tasks/resubscribe (resubscribeTask) of a finished task yields the Task and ends', { timeout: 15_000 }, async () => {
    const text = `resubscribe finished ${randomUUID()}`;
    const task = resultOf(await client.sendMessage({ message: userMessage(text) }), 'message/send');
    assert.equal(task.status.state, 'completed');
    const events = [];
    for await (const ev of client.resubscribeTask({ id: task.id })) events.push(ev);
    assert.equal(events.length, 1, `expected only the Task: ${JSON.stringify(events)}`);
    assert.equal(events[0].id, task.id);
    assertEchoTask(events[0], text);
  });

  it('tasks/resubscribe of an unknown task fails with the error: -32001 and the task named', { timeout: 15_000 }, async () => {
    // The error is the one event of an SSE stream (WIRE.md §7), so the 0.3 client reports
    // it in full (a JSON body would reach it as a generic Content-Type complaint).
    const id = `no-such-task-${randomUUID()}`;
    await assert.rejects(async () => {
      for await (const ev of client.resubscribeTask({ id })) {
        assert.fail(`unexpected event ${JSON.stringify(ev)}`);
      }
    }, (err) => {
      assert.match(String(err.message), /-32001/, err.message);
      assert.ok(String(err.message).includes(id), err.message);
      return true;
    });
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const how = uncleanExit(await server.stop());
    assert.equal(how, '', how);
  });
});

describe('a2ad with a slow echo (--echo-delay-ms) and the 0.3.14 A2AClient: cancel', () => {
  const DELAY_MS = 1000;
  let server;
  let client;

  before(async () => {
    server = await startServer({ args: ['--echo-delay-ms', String(DELAY_MS)] });
    client = await A2AClient.fromCardUrl(server.cardUrl);
  });
  after(async () => { await server?.stop(); });

  it('a blocking message/send waits until the task is completed', async () => {
    const text = `slow ${randomUUID()}`;
    const started = Date.now();
    const task = resultOf(await client.sendMessage({ message: userMessage(text) }), 'message/send');
    assert.ok(Date.now() - started >= DELAY_MS * 0.9, 'returned before the echo could have finished');
    assertEchoTask(task, text);
  });

  it('tasks/cancel of a working task cancels it for good; a second cancel is TaskNotCancelable', async () => {
    const task = resultOf(
      await client.sendMessage({ message: userMessage('cancel me'), configuration: { blocking: false } }),
      'message/send');
    assert.ok(['submitted', 'working'].includes(task.status?.state), JSON.stringify(task.status));

    const canceled = resultOf(await client.cancelTask({ id: task.id }), 'tasks/cancel');
    assert.equal(canceled.kind, 'task');
    assert.equal(canceled.id, task.id);
    assert.equal(canceled.status.state, 'canceled');

    await new Promise((r) => setTimeout(r, DELAY_MS + 300)); // past the moment the echo would finish
    const later = resultOf(await client.getTask({ id: task.id }), 'tasks/get');
    assert.equal(later.status.state, 'canceled', 'the canceled task must not complete later');
    assert.equal(later.artifacts?.length ?? 0, 0, `a canceled echo has no artifact: ${JSON.stringify(later.artifacts)}`);

    // v0.3 SDKs differ: a2a-python answers -32002, a2a-js returns the canceled task (WIRE.md §3.7);
    // the v0.3 TCK wants -32002, and so does a2ad on v0.3 (v1.0 returns the task: idempotent).
    const again = await client.cancelTask({ id: task.id });
    assert.ok('error' in again, `expected TaskNotCancelable, got ${JSON.stringify(again)}`);
    assert.equal(again.error.code, -32002, JSON.stringify(again.error));
  });

  it('message/send to a canceled task is refused', async () => {
    const task = resultOf(
      await client.sendMessage({ message: userMessage('x'), configuration: { blocking: false } }), 'message/send');
    resultOf(await client.cancelTask({ id: task.id }), 'tasks/cancel');
    const res = await client.sendMessage({ message: userMessage('more', { taskId: task.id }) });
    assert.ok('error' in res, `expected an error, got ${JSON.stringify(res)}`);
    assert.ok([-32004, -32602, -32600].includes(res.error.code), JSON.stringify(res.error));
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const how = uncleanExit(await server.stop());
    assert.equal(how, '', how);
  });
});

describe('a2ad with a slow echo (--echo-delay-ms 1500) and the 0.3.14 A2AClient: streaming', () => {
  const DELAY_MS = 1500;
  let server;
  let client;

  before(async () => {
    server = await startServer({ args: ['--echo-delay-ms', String(DELAY_MS)] });
    client = await A2AClient.fromCardUrl(server.cardUrl);
  });
  after(async () => { await server?.stop(); });

  it('sendMessageStream spaces the events by the echo delay', { timeout: 15_000 }, async () => {
    const text = `slow stream ${randomUUID()}`;
    const started = Date.now();
    const events = [];
    const at = [];
    for await (const ev of client.sendMessageStream({ message: userMessage(text) })) {
      events.push(ev);
      at.push(Date.now() - started);
    }
    assertEchoStream(events, text);
    assert.ok(at[1] < DELAY_MS * 0.8, `working arrived only after ${at[1]} ms: events must be streamed, not batched`);
    assert.ok(at[2] >= DELAY_MS * 0.9, `artifact after ${at[2]} ms, before the echo delay`);
  });

  it('resubscribeTask on a live task yields the Task snapshot, then the remaining events up to completed', { timeout: 15_000 }, async () => {
    const text = `resubscribe live ${randomUUID()}`;
    const task = resultOf(
      await client.sendMessage({ message: userMessage(text), configuration: { blocking: false } }), 'message/send');
    assert.ok(['submitted', 'working'].includes(task.status.state), JSON.stringify(task.status));

    const events = [];
    for await (const ev of client.resubscribeTask({ id: task.id })) events.push(ev);
    assert.ok(events.length >= 3, `events: ${JSON.stringify(events)}`);
    const [snapshot, ...rest] = events;
    assert.equal(snapshot.kind, 'task', `the first event must be the Task: ${JSON.stringify(snapshot)}`);
    assert.equal(snapshot.id, task.id);
    assert.ok(['submitted', 'working'].includes(snapshot.status.state), JSON.stringify(snapshot.status));
    const kinds = rest.map((e) => e.kind === 'status-update' ? `status:${e.status?.state}` : e.kind);
    // 'status:working' shows up only if the snapshot was taken before the echo started working.
    const expected = snapshot.status.state === 'submitted'
      ? ['status:working', 'artifact-update', 'status:completed']
      : ['artifact-update', 'status:completed'];
    assert.deepEqual(kinds, expected, `events after the snapshot: ${JSON.stringify(rest)}`);
    for (const ev of rest) assert.equal(ev.taskId, task.id);
    const artifact = rest.find((e) => e.kind === 'artifact-update');
    assert.ok(artifact.artifact.parts.some((p) => p.kind === 'text' && p.text.includes(text)));
    assert.equal(rest.at(-1).final, true);

    assertEchoTask(resultOf(await client.getTask({ id: task.id }), 'tasks/get'), text);
  });

  it('two resubscribers and the original stream of one task see the same events', { timeout: 15_000 }, async () => {
    const text = `fan out ${randomUUID()}`;
    const drain = async (gen) => { const out = []; for await (const ev of gen) out.push(ev); return out; };
    const stream = client.sendMessageStream({ message: userMessage(text) });
    const first = await stream.next(); // the Task: now its id is known
    assert.equal(first.value?.kind, 'task');
    const taskId = first.value.id;
    const [rest, a, b] = await Promise.all([
      drain(stream),
      drain(client.resubscribeTask({ id: taskId })),
      drain(client.resubscribeTask({ id: taskId })),
    ]);
    assertEchoStream([first.value, ...rest], text);
    for (const sub of [a, b]) {
      assert.equal(sub[0].kind, 'task');
      assert.deepEqual(sub.slice(1), rest.slice(rest.length - (sub.length - 1)),
        'a resubscriber must get the tail of the original stream, event for event');
      assert.equal(sub.at(-1).status?.state, 'completed');
    }
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const how = uncleanExit(await server.stop());
    assert.equal(how, '', how);
  });
});
