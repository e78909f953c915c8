// The pause extension (https://a2ad.dev/ext/pause/v1) seen by the official SDK clients, which
// know nothing of it: @a2a-js/sdk 0.3.14 (A2AClient, JSON-RPC 0.3) and 1.3.0 (Client over
// JSON-RPC 1.0 and over its RestTransport). The pause and resume calls are raw fetches (no SDK
// has them); everything else goes through the SDKs, which must parse what a2ad sends for a
// paused task without throwing: `working` with metadata.pause, since they do not activate the
// extension.
//
// Also: every task and event a2ad emits for a paused task, to a caller without the extension
// header, validates against the official schemas (tests/interop/schemas/a2a); with the header
// the literal states (paused-by-client, TASK_STATE_PAUSED + status.pause) are not in the
// official enums, so there only the states are asserted (and that the schema errors are about
// the status alone). And the agent pause: `await-event` parks as paused-by-agent until
// POST /v1/events resumes it (cause external_event), then completes.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDep, openStream, parseSse, rpc, startServer, uncleanExit, waitFor } from './server.mjs';

const { A2AClient } = await loadDep('sdk03/client');
const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } =
  await loadDep('sdk1/client');
const { Role, TaskState } = await loadDep('sdk1');
const { default: Ajv07 } = await loadDep('ajv');
const { default: Ajv2020 } = await loadDep('ajv/dist/2020.js');
const { default: addFormats } = await loadDep('ajv-formats');

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKFLOWS = path.resolve(here, '..', '..', 'workflows');
const EXT = 'https://a2ad.dev/ext/pause/v1';
const STEP_MS = 5_000; // one awaited stream item; the whole file runs in a few seconds

// ---- the official schemas (as schema.test.mjs loads them) ------------------------------------
const schemaDir = process.env.A2A_SCHEMA_DIR ?? path.join(here, 'schemas', 'a2a');
const readSchema = (f) => JSON.parse(readFileSync(path.join(schemaDir, f), 'utf8'));
const ajv03 = new Ajv07({ strict: false, allErrors: true });
addFormats(ajv03);
ajv03.addSchema(readSchema('a2a-v0.3.schema.json'), 'a2a-v0.3');
const schema03 = (name) => ajv03.getSchema(`a2a-v0.3#/definitions/${name}`);
const ajv10 = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv10);
for (const [title, s] of Object.entries(readSchema('a2a-v1.0.schema.json').definitions)) {
  const name = title.replaceAll(' ', '');
  const google = ['Struct', 'Timestamp', 'Value'].includes(name);
  ajv10.addSchema({ ...s, $id: google ? `google.protobuf.${name}.jsonschema.json` : `lf.a2a.v1.${name}.jsonschema.json` });
}
const schema10 = (name) => ajv10.getSchema(`lf.a2a.v1.${name}.jsonschema.json`);

function assertValid(validate, value, what) {
  assert.ok(validate, `no schema for ${what}`);
  assert.ok(validate(value), `${what} does not match the official schema:\n` +
    `${JSON.stringify(validate.errors, null, 1)}\nvalue: ${JSON.stringify(value)}`);
}

/** Invalid, and only because of the status at `statusPath` (the literal paused state). */
function assertInvalidOnlyAtStatus(validate, value, statusPath, what) {
  assert.equal(validate(value), false, `${what} unexpectedly matches the official schema: ${JSON.stringify(value)}`);
  const paths = [...new Set(validate.errors.map((e) => e.instancePath))];
  for (const p of paths) {
    assert.ok(p === statusPath || p.startsWith(`${statusPath}/`),
      `${what}: a schema error outside ${statusPath}: ${JSON.stringify(validate.errors)}`);
  }
  assert.ok(paths.includes(`${statusPath}/state`), `${what}: the state should be the error: ${JSON.stringify(validate.errors)}`);
}

// ---- helpers -----------------------------------------------------------------------------------

/** The next item of an async iterator, failing after STEP_MS. */
async function next(iter, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${STEP_MS} ms`)), STEP_MS);
  });
  try {
    return await Promise.race([iter.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads events from `iter` until `pred(event)`; returns that event. */
async function nextMatching(iter, pred, what) {
  const seen = [];
  for (;;) {
    const r = await next(iter, what);
    assert.ok(!r.done, `${what}: the stream ended first; saw ${JSON.stringify(seen)}`);
    if (pred(r.value)) return r.value;
    seen.push(r.value);
  }
}

const stateName10 = (s) => (TaskState[s] ?? String(s)).replace(/^TASK_STATE_/, '').toLowerCase();

/** Raw pause/resume through the binding a flavour speaks; returns {handle, answer}. */
const RAW = {
  v03: {
    async pause(server, id) {
      const { body } = await rpc(server.rpcUrl, 'tasks/pause', { taskId: id, reason: 'interop' });
      assert.ok(body.result, `tasks/pause: ${JSON.stringify(body)}`);
      assert.equal(body.result.state, 'paused-by-client');
      return body.result.handle;
    },
    async resume(server, id, handle) {
      const { body } = await rpc(server.rpcUrl, 'tasks/resume', { taskId: id, handle });
      assert.ok(body.result, `tasks/resume: ${JSON.stringify(body)}`);
      assert.equal(body.result.cause, 'explicit_resume');
    },
  },
  v10: {
    async pause(server, id) {
      const { body } = await rpc(server.rpcUrl, 'PauseTask', { id, reason: 'interop' }, { version: '1.0' });
      assert.ok(body.result, `PauseTask: ${JSON.stringify(body)}`);
      // The pause methods answer in the extension's shape, header or not.
      assert.equal(body.result.status.state, 'TASK_STATE_PAUSED');
      return body.result.status.pause.resumeToken;
    },
    async resume(server, id, handle) {
      const { body } = await rpc(server.rpcUrl, 'ResumeTask', { id, handle }, { version: '1.0' });
      assert.ok(body.result, `ResumeTask: ${JSON.stringify(body)}`);
      assert.equal(body.result.status.state, 'TASK_STATE_WORKING');
    },
  },
  rest: {
    async pause(server, id) {
      const body = await restPost(server, `/tasks/${id}:pause`, { reason: 'interop' });
      assert.equal(body.status.state, 'TASK_STATE_PAUSED');
      return body.status.pause.resumeToken;
    },
    async resume(server, id, handle) {
      const body = await restPost(server, `/tasks/${id}:resume`, { handle });
      assert.equal(body.status.state, 'TASK_STATE_WORKING');
    },
  },
};

async function restPost(server, route, body) {
  const res = await fetch(`${server.baseUrl}/a2a/rest${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  assert.equal(res.status, 200, `POST ${route}: ${JSON.stringify(json)}`);
  return json;
}

/**
 * One SDK client behind a common face: start(skill, data) -> task id; get(id) and the events of
 * subscribe(id) as {kind: 'task'|'status'|'artifact', state ('working', 'canceled', ...),
 * metadata, final}; cancel(id) -> state.
 */
function sdk03Face(client) {
  const norm = (e) => ({
    kind: e.kind === 'status-update' ? 'status' : e.kind === 'artifact-update' ? 'artifact' : e.kind,
    state: e.status?.state, metadata: e.metadata ?? {}, final: e.final === true,
  });
  const ok = (r, what) => {
    assert.ok(!('error' in r), `${what}: ${JSON.stringify(r.error)}`);
    return r.result;
  };
  return {
    async start(skillId, data) {
      const task = ok(await client.sendMessage({
        message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'data', data }], metadata: { skillId } },
        configuration: { blocking: false },
      }), 'message/send');
      return task.id;
    },
    get: async (id) => norm(ok(await client.getTask({ id }), 'tasks/get')),
    subscribe: (id) => (async function* () {
      for await (const e of client.resubscribeTask({ id })) yield norm(e);
    })(),
    cancel: async (id) => ok(await client.cancelTask({ id }), 'tasks/cancel').status.state,
  };
}

function sdk1Face(client) {
  const norm = ({ payload }) => {
    const v = payload.value;
    const kind = { task: 'task', statusUpdate: 'status', artifactUpdate: 'artifact' }[payload.$case] ?? payload.$case;
    const state = v.status ? stateName10(v.status.state) : undefined;
    return { kind, state, metadata: v.metadata ?? {}, final: kind === 'status' && ['completed', 'canceled', 'failed', 'rejected'].includes(state) };
  };
  return {
    async start(skillId, data) {
      const task = await client.sendMessage({
        message: {
          messageId: randomUUID(), role: Role.ROLE_USER,
          parts: [{ content: { $case: 'data', value: data } }], metadata: { skillId },
        },
        configuration: { returnImmediately: true, acceptedOutputModes: [] },
      });
      assert.ok(task.id, `expected a Task: ${JSON.stringify(task)}`);
      return task.id;
    },
    async get(id) {
      const t = await client.getTask({ tenant: '', id });
      return { kind: 'task', state: stateName10(t.status.state), metadata: t.metadata ?? {} };
    },
    subscribe: (id) => (async function* () {
      for await (const e of client.resubscribeTask({ tenant: '', id })) yield norm(e);
    })(),
    cancel: async (id) => stateName10((await client.cancelTask({ tenant: '', id })).status.state),
  };
}

const isPause = (e) => e.kind === 'status' && e.metadata.pause !== undefined;
const isResume = (e) => e.kind === 'status' && e.metadata.cause !== undefined;

describe('pause extension with the official A2A SDK clients', () => {
  let server;
  const faces = {};

  const urls = { v03: [], v10: [], rest: [] }; // what each SDK client requested
  const recording = (into, headers = {}) => (input, init = {}) => {
    into.push(String(input));
    const h = new Headers(init.headers);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    return fetch(input, { ...init, headers: h });
  };
  const over = async (Factory, fetchImpl) => new ClientFactory({
    transports: [new Factory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }).createFromUrl(server.baseUrl);

  before(async () => {
    server = await startServer({ workflowsDir: WORKFLOWS });
    faces.v03 = sdk03Face(await A2AClient.fromCardUrl(server.cardUrl, { fetchImpl: recording(urls.v03) }));
    faces.v10 = sdk1Face(await over(JsonRpcTransportFactory, recording(urls.v10)));
    faces.rest = sdk1Face(await over(RestTransportFactory, recording(urls.rest)));
  });
  after(async () => {
    const how = await server?.stop();
    if (how) assert.equal(uncleanExit(how), '');
  });

  const FLAVOURS = [
    ['v03', '@a2a-js/sdk 0.3.14 A2AClient, JSON-RPC 0.3'],
    ['v10', '@a2a-js/sdk 1.3.0 Client, JSON-RPC 1.0'],
    ['rest', '@a2a-js/sdk 1.3.0 Client, RestTransport (HTTP+JSON 1.0)'],
  ];

  for (const [key, label] of FLAVOURS) {
    it(`${label}: a paused long-delay task reads as working with metadata.pause; resume and cancel arrive on its stream`, { timeout: 20_000 }, async () => {
      const sdk = faces[key];
      const raw = RAW[key];
      const id = await sdk.start('long-delay', { delayMs: 60_000 });
      await waitFor(() => sdk.get(id), (t) => t.state === 'working');

      const handle = await raw.pause(server, id);
      assert.match(handle, /\S/);
      const got = await sdk.get(id);
      assert.equal(got.state, 'working', 'a caller without the extension sees working');
      assert.equal(got.metadata.pause?.state, 'paused-by-client', JSON.stringify(got.metadata));
      assert.equal(got.metadata.pause.resumeToken, handle);
      assert.equal(got.metadata.pause.initiatedBy, 'client');

      const stream = sdk.subscribe(id);
      try {
        const first = await next(stream, 'resubscribe snapshot');
        assert.equal(first.done, false);
        assert.equal(first.value.kind, 'task');
        assert.equal(first.value.state, 'working');
        assert.equal(first.value.metadata.pause?.state, 'paused-by-client', JSON.stringify(first.value));

        await raw.resume(server, id, handle);
        const resumed = await nextMatching(stream, isResume, 'the resume status update');
        assert.equal(resumed.state, 'working');
        assert.equal(resumed.metadata.cause, 'explicit_resume');
        assert.equal(resumed.metadata.previousState, 'paused-by-client');
        assert.equal(resumed.metadata.hadResumeInput, false);
        assert.equal(resumed.metadata.pause, undefined, 'a resumed task carries no metadata.pause');

        // A second pause, now while the SDK follows the task: its status update carries the new pause.
        const handle2 = await raw.pause(server, id);
        assert.notEqual(handle2, handle, 'every pause has its own handle');
        const paused = await nextMatching(stream, isPause, 'the pause status update');
        assert.equal(paused.state, 'working');
        assert.equal(paused.metadata.pause.state, 'paused-by-client');
        assert.equal(paused.metadata.pause.resumeToken, handle2);
        assert.equal(paused.final, false);
        await raw.resume(server, id, handle2);
        await nextMatching(stream, isResume, 'the second resume');

        assert.equal(await sdk.cancel(id), 'canceled');
        const end = await nextMatching(stream, (e) => e.kind === 'status' && e.state !== 'working', 'the cancel');
        assert.equal(end.state, 'canceled');
        const after = await next(stream, 'the end of the stream');
        assert.equal(after.done, true, `the stream goes on after canceled: ${JSON.stringify(after.value)}`);
      } finally {
        await stream.return?.();
      }
    });
  }

  it('each SDK client went over its own binding', () => {
    assert.ok(urls.v03.some((u) => u === server.rpcUrl), JSON.stringify(urls.v03));
    assert.ok(urls.v10.some((u) => u === server.rpcUrl), JSON.stringify(urls.v10));
    const rest = urls.rest.filter((u) => !u.includes('/.well-known/'));
    assert.ok(rest.length > 0 && rest.every((u) => u.startsWith(`${server.baseUrl}/a2a/rest/`)), JSON.stringify(rest));
  });

  it('SDK clients that do activate the extension (the header through fetchImpl) parse the literal states without throwing', async () => {
    const id = await faces.v03.start('long-delay', { delayMs: 60_000 });
    await waitFor(() => faces.v03.get(id), (t) => t.state === 'working');
    await RAW.v03.pause(server, id);
    const c03 = await A2AClient.fromCardUrl(server.cardUrl, { fetchImpl: recording([], { 'X-A2A-Extensions': EXT }) });
    const t03 = await c03.getTask({ id });
    assert.equal(t03.result?.status.state, 'paused-by-client', JSON.stringify(t03));
    // The 1.x SDK decodes TaskState with ts-proto: a name it does not know becomes UNRECOGNIZED
    // (-1), and status.pause, a member TaskStatus lacks, is dropped; metadata.pause still tells.
    const c10 = await over(JsonRpcTransportFactory, recording([], { 'A2A-Extensions': EXT }));
    const t10 = await c10.getTask({ tenant: '', id });
    assert.equal(t10.status.state, TaskState.UNRECOGNIZED);
    assert.equal(t10.metadata.pause.state, 'paused-by-client');
    assert.equal(await faces.v03.cancel(id), 'canceled');
  });

  for (const [key, label] of FLAVOURS) {
    it(`${label}: await-event parks as paused-by-agent; POST /v1/events resumes it (external_event) and it completes`, { timeout: 20_000 }, async () => {
      const sdk = faces[key];
      const id = await sdk.start('await-event', {});
      const parked = await waitFor(() => sdk.get(id), (t) => t.metadata.pause !== undefined);
      assert.equal(parked.state, 'working');
      assert.equal(parked.metadata.pause.state, 'paused-by-agent');
      assert.equal(parked.metadata.pause.initiatedBy, 'agent');
      assert.equal(parked.metadata.pause.conditions?.onEvent, 'build.done');

      const stream = sdk.subscribe(id);
      try {
        const first = await next(stream, 'resubscribe snapshot');
        assert.equal(first.value?.metadata.pause?.state, 'paused-by-agent', JSON.stringify(first.value));

        // Every task this server parks on build.done resumes; the other flavours' have finished.
        const res = await fetch(`${server.baseUrl}/v1/events`, {
          method: 'POST', headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'build.done', payload: { ok: true } }),
        });
        const posted = await res.json();
        assert.equal(res.status, 200, JSON.stringify(posted));
        assert.deepEqual(posted.resumed, [id]);

        const resumed = await nextMatching(stream, isResume, 'the resume status update');
        assert.equal(resumed.metadata.cause, 'external_event');
        assert.equal(resumed.metadata.previousState, 'paused-by-agent');
        assert.equal(resumed.metadata.hadResumeInput, true);
        const end = await nextMatching(stream, (e) => e.kind === 'status' && e.state !== 'working', 'the completion');
        assert.equal(end.state, 'completed');
        assert.equal((await next(stream, 'the end of the stream')).done, true);
      } finally {
        await stream.return?.();
      }
      assert.equal((await sdk.get(id)).state, 'completed');
    });
  }
});

// ---- what a2ad emits for a paused task, against the official schemas ---------------------------

/** Collects the data of every SSE event of `response` into `into` until the stream closes. */
function collect(response, into) {
  return (async () => {
    for await (const item of parseSse(response)) if (item.type === 'event') into.push(item.json ?? item.data);
  })();
}

async function startLongDelay03(server, contextId) {
  const { body } = await rpc(server.rpcUrl, 'message/send', {
    message: { kind: 'message', messageId: randomUUID(), role: 'user', contextId,
      parts: [{ kind: 'data', data: { delayMs: 60_000 } }], metadata: { skillId: 'long-delay' } },
    configuration: { blocking: false },
  });
  assert.ok(body.result?.id, JSON.stringify(body));
  return body.result.id;
}

/** Waits until `events` holds the pause, the resume and the terminal update of a task. */
async function waitEvents(events, isTerminal) {
  await waitFor(() => events, (evs) => evs.some(isTerminal), { timeoutMs: STEP_MS });
}

describe('a paused task on the wire against the official A2A schemas', () => {
  let server;
  before(async () => { server = await startServer({ workflowsDir: WORKFLOWS }); });
  after(async () => { await server?.stop(); });

  it('0.3 JSON-RPC: tasks/get and every tasks/resubscribe event validate without the extension; with it the state is paused-by-client', { timeout: 20_000 }, async () => {
    const id = await startLongDelay03(server, undefined);
    await waitFor(async () => (await rpc(server.rpcUrl, 'tasks/get', { id })).body.result,
      (t) => t?.status?.state === 'working');
    const plain = await openStream(server.rpcUrl, 'tasks/resubscribe', { id });
    const ext = await openStream(server.rpcUrl, 'tasks/resubscribe', { id }, { headers: { 'X-A2A-Extensions': EXT } });
    const plainEvents = [];
    const extEvents = [];
    const done = [collect(plain.response, plainEvents), collect(ext.response, extEvents)];
    await waitFor(() => [plainEvents, extEvents], ([a, b]) => a.length > 0 && b.length > 0, { timeoutMs: STEP_MS });

    const handle = await RAW.v03.pause(server, id);
    const got = await rpc(server.rpcUrl, 'tasks/get', { id });
    assertValid(schema03('GetTaskSuccessResponse'), got.body, 'tasks/get response (paused, no extension)');
    assertValid(schema03('Task'), got.body.result, 'tasks/get result (paused, no extension)');
    assert.equal(got.body.result.status.state, 'working');
    assert.equal(got.body.result.metadata.pause.state, 'paused-by-client');

    // With X-A2A-Extensions the literal state: not in the official TaskState enum.
    const lit = await rpc(server.rpcUrl, 'tasks/get', { id }, { headers: { 'X-A2A-Extensions': EXT } });
    assert.equal(lit.body.result.status.state, 'paused-by-client');
    assertInvalidOnlyAtStatus(schema03('Task'), lit.body.result, '/status', 'tasks/get result with the extension');

    await RAW.v03.resume(server, id, handle);
    await rpc(server.rpcUrl, 'tasks/cancel', { id });
    const terminal = (e) => e?.result?.final === true;
    await waitEvents(plainEvents, terminal);
    await waitEvents(extEvents, terminal);
    await Promise.all(done);

    const KIND = { task: 'Task', 'status-update': 'TaskStatusUpdateEvent', 'artifact-update': 'TaskArtifactUpdateEvent' };
    for (const [i, e] of plainEvents.entries()) {
      assertValid(schema03('SendStreamingMessageSuccessResponse'), e, `resubscribe event ${i}`);
      assertValid(schema03(KIND[e.result.kind]), e.result, `resubscribe event ${i} result`);
    }
    const pauseEv = plainEvents.find((e) => e.result.metadata?.pause);
    assert.ok(pauseEv, `no status update with metadata.pause: ${JSON.stringify(plainEvents)}`);
    assert.equal(pauseEv.result.status.state, 'working');
    assert.ok(plainEvents.some((e) => e.result.metadata?.cause === 'explicit_resume'), 'no resume status update');

    const extPause = extEvents.find((e) => e.result.metadata?.pause);
    assert.equal(extPause?.result.status.state, 'paused-by-client', JSON.stringify(extEvents));
    assertInvalidOnlyAtStatus(schema03('TaskStatusUpdateEvent'), extPause.result, '/status', 'the pause event with the extension');
    assert.deepEqual(extEvents.map((e) => e.result.kind), plainEvents.map((e) => e.result.kind),
      'the extension changes states, not which events are sent');
  });

  it('1.0 JSON-RPC and REST: GetTask and every SubscribeToTask event validate without the extension; with it TASK_STATE_PAUSED + status.pause', { timeout: 20_000 }, async () => {
    const id = await startLongDelay03(server, undefined);
    const v10 = { version: '1.0' };
    await waitFor(async () => (await rpc(server.rpcUrl, 'GetTask', { id }, v10)).body.result,
      (t) => t?.status?.state === 'TASK_STATE_WORKING');
    const plain = await openStream(server.rpcUrl, 'SubscribeToTask', { id }, v10);
    const ext = await openStream(server.rpcUrl, 'SubscribeToTask', { id }, { ...v10, headers: { 'A2A-Extensions': EXT } });
    const rest = await fetch(`${server.baseUrl}/a2a/rest/tasks/${id}:subscribe`, {
      method: 'POST', headers: { 'A2A-Version': '1.0', Accept: 'text/event-stream' },
    });
    assert.equal(rest.status, 200);
    const streams = { plain: [], ext: [], rest: [] };
    const done = [collect(plain.response, streams.plain), collect(ext.response, streams.ext),
      collect(rest, streams.rest)];
    await waitFor(() => Object.values(streams), (all) => all.every((s) => s.length > 0), { timeoutMs: STEP_MS });

    const handle = await RAW.v10.pause(server, id);
    const get = await rpc(server.rpcUrl, 'GetTask', { id }, v10);
    assertValid(schema10('Task'), get.body.result, 'GetTask result (paused, no extension)');
    assert.equal(get.body.result.status.state, 'TASK_STATE_WORKING');
    assert.equal(get.body.result.metadata.pause.state, 'paused-by-client');
    const restGet = await (await fetch(`${server.baseUrl}/a2a/rest/tasks/${id}`, { headers: { 'A2A-Version': '1.0' } })).json();
    assertValid(schema10('Task'), restGet, 'REST GET /tasks/{id} (paused, no extension)');
    assert.equal(restGet.metadata.pause.state, 'paused-by-client');

    // With A2A-Extensions: TASK_STATE_PAUSED is not in the official enum, and status.pause is a
    // member the official TaskStatus (additionalProperties: false) does not have.
    const lit = await rpc(server.rpcUrl, 'GetTask', { id }, { ...v10, headers: { 'A2A-Extensions': EXT } });
    assert.equal(lit.body.result.status.state, 'TASK_STATE_PAUSED');
    assert.equal(lit.body.result.status.pause.resumeToken, handle);
    assert.equal(lit.body.result.status.pause.initiatedBy, 'client');
    assertInvalidOnlyAtStatus(schema10('Task'), lit.body.result, '/status', 'GetTask result with the extension');
    // PauseTask answers in that shape with or without the header (RAW.v10.pause asserts it).

    await RAW.v10.resume(server, id, handle);
    await rpc(server.rpcUrl, 'CancelTask', { id }, v10);
    const terminal = (e) => e?.result?.statusUpdate?.status?.state === 'TASK_STATE_CANCELED'
      || e?.statusUpdate?.status?.state === 'TASK_STATE_CANCELED';
    for (const s of Object.values(streams)) await waitEvents(s, terminal);
    await Promise.all(done);

    for (const [name, events] of [['JSON-RPC', streams.plain.map((e) => e.result)], ['REST', streams.rest]]) {
      for (const [i, r] of events.entries()) assertValid(schema10('StreamResponse'), r, `${name} SubscribeToTask event ${i}`);
      const pauseEv = events.find((r) => r.statusUpdate?.metadata?.pause);
      assert.equal(pauseEv?.statusUpdate.status.state, 'TASK_STATE_WORKING', `${name}: ${JSON.stringify(events)}`);
      assert.equal(pauseEv.statusUpdate.metadata.pause.resumeToken, handle);
      const resumeEv = events.find((r) => r.statusUpdate?.metadata?.cause);
      assert.equal(resumeEv?.statusUpdate.metadata.cause, 'explicit_resume', `${name}: ${JSON.stringify(events)}`);
      assert.equal(resumeEv.statusUpdate.metadata.previousState, 'paused-by-client');
    }
    const extPause = streams.ext.map((e) => e.result).find((r) => r.statusUpdate?.metadata?.pause);
    assert.equal(extPause?.statusUpdate.status.state, 'TASK_STATE_PAUSED', JSON.stringify(streams.ext));
    assert.equal(extPause.statusUpdate.status.pause.resumeToken, handle);
    assertInvalidOnlyAtStatus(schema10('StreamResponse'), extPause, '/statusUpdate/status', 'the pause event with the extension');
  });
});
