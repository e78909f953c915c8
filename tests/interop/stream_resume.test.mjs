// Stream resumption and fan-out, with raw fetch and a hand-written SSE parser (no SDK).
// a2ad tags every SSE event with `id: <the task's event-log sequence>` (an echo task has events
// 0 = Task submitted, 1 = working, 2 = artifact, 3 = completed; a resubscribe snapshot carries the
// sequence of the last event it includes). A client that lost a stream reconnects with
// `tasks/resubscribe` / `SubscribeToTask` and the standard `Last-Event-ID: N` header (or
// `params.metadata.lastEventId`) and gets exactly the events after N, then the live ones.
// Without a cursor a resubscriber gets the current Task snapshot first, then live events.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { collectStream, openStream, rpc, startServer, uncleanExit, waitFor } from './server.mjs';

const DELAY_MS = 1500;

function message03(text) {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] };
}

function message10(text) {
  return { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] };
}

/** Reads SSE items from an open stream until `count` events arrived; returns those events. */
async function takeEvents(stream, count) {
  const events = [];
  while (events.length < count) {
    const { value, done } = await stream.items.next();
    assert.ok(!done, `stream ended after ${events.length} of ${count} events`);
    if (value.type === 'event') events.push(value);
  }
  return events;
}

/** Human-readable label of a v0.3 stream result. */
function label03(result) {
  return result.kind === 'status-update' ? `status:${result.status.state}` : result.kind;
}

/** The numeric SSE ids of a list of events; each must be a non-negative integer. */
function ids(events) {
  return events.map((e) => {
    assert.match(e.id ?? '', /^\d+$/, `event without a numeric id: ${JSON.stringify(e)}`);
    return Number(e.id);
  });
}

/** Starts a delayed echo task without streaming and waits until it is `working`. */
async function startWorkingTask(server, text) {
  const sent = await rpc(server.rpcUrl, 'message/send',
    { message: message03(text), configuration: { blocking: false } });
  assert.ok(sent.body.result, JSON.stringify(sent.body));
  const taskId = sent.body.result.id;
  await waitFor(async () => (await rpc(server.rpcUrl, 'tasks/get', { id: taskId })).body.result?.status?.state,
    (state) => state === 'working', { timeoutMs: 1000, intervalMs: 20 });
  return taskId;
}

describe('a2ad SSE resumption (Last-Event-ID) and fan-out, raw fetch', () => {
  let server;
  before(async () => {
    server = await startServer({ args: ['--echo-delay-ms', String(DELAY_MS)] });
  });
  after(async () => { await server?.stop(); });

  it('message/stream events carry ids 0..3 in order', { timeout: 15_000 }, async () => {
    const text = `ids ${randomUUID()}`;
    const res = await collectStream(server.rpcUrl, 'message/stream', { message: message03(text) });
    assert.equal(res.http, 200);
    assert.match(res.contentType, /^text\/event-stream/);
    assert.deepEqual(ids(res.events), [0, 1, 2, 3]);
    assert.deepEqual(res.events.map((e) => label03(e.json.result)),
      ['task', 'status:working', 'artifact-update', 'status:completed']);
    for (const e of res.events) assert.equal(e.event, undefined, 'normal events carry no event: line');
  });

  it('drop a message/stream after 2 events, resubscribe with Last-Event-ID: every event exactly once', { timeout: 15_000 }, async () => {
    const text = `resume me ${randomUUID()}`;
    const first = await openStream(server.rpcUrl, 'message/stream', { message: message03(text) });
    assert.equal(first.http, 200);
    const seen = await takeEvents(first, 2);
    first.abort(); // drop the connection mid-task
    const taskId = seen[0].json.result.id;
    const lastId = seen.at(-1).id;
    assert.deepEqual(ids(seen), [0, 1]);

    const resumed = await collectStream(server.rpcUrl, 'tasks/resubscribe', { id: taskId },
      { headers: { 'Last-Event-ID': lastId } });
    assert.equal(resumed.http, 200, JSON.stringify(resumed.body));
    assert.match(resumed.contentType, /^text\/event-stream/);

    const all = [...seen, ...resumed.events];
    assert.deepEqual(ids(all), [0, 1, 2, 3], `ids across both streams: ${ids(all)}`);
    const results = all.map((e) => e.json.result);
    assert.deepEqual(results.map(label03), ['task', 'status:working', 'artifact-update', 'status:completed']);
    assert.equal(results[0].status.state, 'submitted');
    for (const r of results.slice(1)) assert.equal(r.taskId, taskId);
    assert.ok(results[2].artifact.parts.some((p) => p.text?.includes(text)), JSON.stringify(results[2]));
    assert.equal(results[3].final, true);
    // Each stream answers with its own request's JSON-RPC id.
    for (const e of resumed.events) assert.equal(e.json.id, resumed.events[0].json.id);
    assert.notEqual(resumed.events[0].json.id, seen[0].json.id);

    // Dropping the first stream did not cancel the task.
    const got = await rpc(server.rpcUrl, 'tasks/get', { id: taskId });
    assert.equal(got.body.result.status.state, 'completed');
  });

  it('params.metadata.lastEventId works like the Last-Event-ID header (v0.3 tasks/resubscribe)', { timeout: 15_000 }, async () => {
    const first = await openStream(server.rpcUrl, 'message/stream', { message: message03('metadata cursor') });
    const seen = await takeEvents(first, 1);
    first.abort();
    const taskId = seen[0].json.result.id;
    const resumed = await collectStream(server.rpcUrl, 'tasks/resubscribe',
      { id: taskId, metadata: { lastEventId: seen[0].id } });
    assert.deepEqual(ids(resumed.events), [1, 2, 3]);
    assert.deepEqual(resumed.events.map((e) => label03(e.json.result)),
      ['status:working', 'artifact-update', 'status:completed']);
  });

  it('v1.0 SendStreamingMessage dropped and resumed with SubscribeToTask + Last-Event-ID', { timeout: 15_000 }, async () => {
    const text = `resume v1 ${randomUUID()}`;
    const first = await openStream(server.rpcUrl, 'SendStreamingMessage', { message: message10(text) },
      { version: '1.0' });
    assert.equal(first.http, 200);
    const seen = await takeEvents(first, 2);
    first.abort();
    const taskId = seen[0].json.result.task.id;

    const resumed = await collectStream(server.rpcUrl, 'SubscribeToTask', { id: taskId },
      { version: '1.0', headers: { 'Last-Event-ID': seen.at(-1).id } });
    assert.equal(resumed.http, 200, JSON.stringify(resumed.body));
    const all = [...seen, ...resumed.events];
    assert.deepEqual(ids(all), [0, 1, 2, 3]);
    const results = all.map((e) => e.json.result);
    assert.deepEqual(results.map((r) => Object.keys(r)), [['task'], ['statusUpdate'], ['artifactUpdate'], ['statusUpdate']]);
    assert.equal(results[1].statusUpdate.status.state, 'TASK_STATE_WORKING');
    assert.ok(results[2].artifactUpdate.artifact.parts.some((p) => p.text?.includes(text)));
    assert.equal(results[3].statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    assert.ok(!('final' in results[3].statusUpdate), 'v1.0 has no final flag');
  });

  it('Last-Event-ID on a finished task replays the missed events (v0.3 and v1.0), then closes', { timeout: 15_000 }, async () => {
    const full = await collectStream(server.rpcUrl, 'message/stream', { message: message03('finished replay') });
    const taskId = full.events[0].json.result.id;
    const v03 = await collectStream(server.rpcUrl, 'tasks/resubscribe', { id: taskId },
      { headers: { 'Last-Event-ID': '1' } });
    assert.deepEqual(ids(v03.events), [2, 3]);
    assert.deepEqual(v03.events.map((e) => e.json.result), full.events.slice(2).map((e) => e.json.result));
    const v10 = await collectStream(server.rpcUrl, 'SubscribeToTask', { id: taskId },
      { version: '1.0', headers: { 'Last-Event-ID': '1' } });
    assert.equal(v10.http, 200, JSON.stringify(v10.body));
    assert.deepEqual(ids(v10.events), [2, 3]);
    assert.equal(v10.events[1].json.result.statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    // Caught up already: nothing left to send.
    const none = await collectStream(server.rpcUrl, 'tasks/resubscribe', { id: taskId },
      { headers: { 'Last-Event-ID': '3' } });
    assert.deepEqual(ids(none.events), []);
  });

  it('50 concurrent resubscribers (no cursor) of one live task all receive the same events', { timeout: 20_000 }, async () => {
    const N = 50;
    const text = `fan-out ${randomUUID()}`;
    const taskId = await startWorkingTask(server, text);
    const started = Date.now();
    const streams = await Promise.all(Array.from({ length: N }, () =>
      collectStream(server.rpcUrl, 'tasks/resubscribe', { id: taskId }, { id: 'same-id' })));
    assert.ok(Date.now() - started >= DELAY_MS * 0.5, 'the streams ended before the echo could finish');
    const sequences = streams.map((s) => {
      assert.equal(s.http, 200, JSON.stringify(s.body));
      return s.events.map((e) => ({ id: e.id, data: e.json }));
    });
    const [reference] = sequences;
    assert.deepEqual(reference.map((e) => label03(e.data.result)), ['task', 'artifact-update', 'status:completed']);
    assert.deepEqual(reference.map((e) => Number(e.id)), [1, 2, 3]);
    assert.equal(reference[0].data.result.status.state, 'working');
    assert.ok(reference[1].data.result.artifact.parts.some((p) => p.text?.includes(text)));
    for (let i = 1; i < N; i++) assert.deepEqual(sequences[i], reference, `resubscriber ${i} differs`);
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const how = uncleanExit(await server.stop());
    assert.equal(how, '', how);
  });
});

describe('a2ad SSE keep-alive comments (--stream-heartbeat-ms 200)', () => {
  const HEARTBEAT_MS = 200;
  let server;
  before(async () => {
    server = await startServer({
      args: ['--echo-delay-ms', String(DELAY_MS), '--stream-heartbeat-ms', String(HEARTBEAT_MS)],
    });
  });
  after(async () => { await server?.stop(); });

  it('an idle resubscribe to a live task gets `:` comment lines before the next event', { timeout: 15_000 }, async () => {
    const taskId = await startWorkingTask(server, `heartbeat ${randomUUID()}`);
    const res = await collectStream(server.rpcUrl, 'tasks/resubscribe', { id: taskId });
    assert.equal(res.http, 200);
    const shape = res.items.map((i) => (i.type === 'comment' ? ':' : label03(i.json.result)));
    const snapshot = shape.indexOf('task');
    const artifact = shape.indexOf('artifact-update');
    assert.equal(snapshot, 0, `the snapshot must come first: ${shape}`);
    assert.ok(artifact > snapshot, `no artifact: ${shape}`);
    const comments = shape.slice(snapshot + 1, artifact).filter((s) => s === ':').length;
    // ~1.5 s idle at a 200 ms interval: several comments; at least one is required.
    assert.ok(comments >= 1, `no keep-alive comment while idle: ${shape}`);
    assert.deepEqual(shape.filter((s) => s !== ':'), ['task', 'artifact-update', 'status:completed']);
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const how = uncleanExit(await server.stop());
    assert.equal(how, '', how);
  });
});
