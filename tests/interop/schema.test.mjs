// Validates what a2ad puts on the wire against the official A2A JSON Schemas:
//   a2a-v0.3.schema.json  (normative v0.3 JSON shapes, draft-07, `#/definitions/<Name>`)
//   a2a-v1.0.schema.json  (non-normative bundle generated from the v1.0 proto, draft 2020-12;
//                          definitions are keyed by title, e.g. "Agent Card", and reference each
//                          other by file name, e.g. "lf.a2a.v1.AgentCard.jsonschema.json")
// The schemas are copies kept in tests/interop/schemas/a2a (README there); set A2A_SCHEMA_DIR
// to use another copy.
//
// The v1.0 bundle has no `required` lists (proto3 presence), so REQUIRED fields from the proto
// (WIRE.md §2.3, §10, §11.2) are checked by hand below.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectStream, loadDep, rpc, startServer } from './server.mjs';

const { default: Ajv07 } = await loadDep('ajv');
const { default: Ajv2020 } = await loadDep('ajv/dist/2020.js');
const { default: addFormats } = await loadDep('ajv-formats');

const here = path.dirname(fileURLToPath(import.meta.url));
const schemaDir = process.env.A2A_SCHEMA_DIR
  ?? path.resolve(here, 'schemas', 'a2a');

function readSchema(file) {
  const p = path.join(schemaDir, file);
  if (!existsSync(p)) {
    throw new Error(`interop: ${p} not found; set A2A_SCHEMA_DIR to the folder holding the A2A schemas`);
  }
  return JSON.parse(readFileSync(p, 'utf8'));
}

// ---- v0.3: one draft-07 document; validate against #/definitions/<Name> ---------------------
const v03 = new Ajv07({ strict: false, allErrors: true });
addFormats(v03);
v03.addSchema(readSchema('a2a-v0.3.schema.json'), 'a2a-v0.3');
const validator03 = (name) => {
  const v = v03.getSchema(`a2a-v0.3#/definitions/${name}`);
  assert.ok(v, `a2a-v0.3.schema.json has no definition ${name}`);
  return v;
};

// ---- v1.0: register each definition under the file name the others use to refer to it --------
const v10 = new Ajv2020({ strict: false, allErrors: true });
addFormats(v10);
const bundle10 = readSchema('a2a-v1.0.schema.json');
const GOOGLE_TYPES = new Set(['Struct', 'Timestamp', 'Value']);
for (const [title, schema] of Object.entries(bundle10.definitions)) {
  const name = title.replaceAll(' ', ''); // "Authorization CodeO Auth Flow" -> AuthorizationCodeOAuthFlow
  const id = GOOGLE_TYPES.has(name) ? `google.protobuf.${name}.jsonschema.json` : `lf.a2a.v1.${name}.jsonschema.json`;
  v10.addSchema({ ...schema, $id: id });
}
const validator10 = (name) => {
  const v = v10.getSchema(`lf.a2a.v1.${name}.jsonschema.json`);
  assert.ok(v, `a2a-v1.0.schema.json has no definition for ${name}`);
  return v;
};

function assertValid(validate, value, what) {
  const ok = validate(value);
  assert.ok(ok, `${what} does not match the schema:\n${JSON.stringify(validate.errors, null, 2)}\n` +
    `value: ${JSON.stringify(value, null, 2)}`);
}

// Top-level v0.3 compatibility keys of a hybrid card (WIRE.md §2.4) and v0.3-only capability keys.
// The v1.0 AgentCard / AgentCapabilities schemas set additionalProperties: false, so they reject
// these keys although v1 clients ignore them; we validate the card with them removed.
const V03_ONLY_CARD_KEYS = ['url', 'preferredTransport', 'protocolVersion', 'additionalInterfaces',
  'supportsAuthenticatedExtendedCard', 'security'];
const V03_ONLY_CAPABILITY_KEYS = ['stateTransitionHistory'];

function v10View(card) {
  const view = structuredClone(card);
  for (const k of V03_ONLY_CARD_KEYS) delete view[k];
  for (const k of V03_ONLY_CAPABILITY_KEYS) delete view.capabilities?.[k];
  for (const skill of view.skills ?? []) delete skill.security;
  // Each scheme's 0.3 spelling sits beside its 1.0 oneof member in the same entry (the hybrid
  // card, as a2a-python's compatibility writer merges it): a 1.0 reader sees the member only.
  for (const [name, scheme] of Object.entries(view.securitySchemes ?? {})) {
    const member = Object.keys(scheme).find((k) => k.endsWith('SecurityScheme'));
    assert.ok(member, `securitySchemes.${name} has no 1.0 oneof member: ${JSON.stringify(scheme)}`);
    view.securitySchemes[name] = { [member]: scheme[member] };
  }
  return view;
}

function assertRequired(obj, keys, what) {
  for (const k of keys) {
    assert.ok(obj?.[k] !== undefined && obj?.[k] !== null, `${what}.${k} is REQUIRED: ${JSON.stringify(obj)}`);
  }
}

function assertV10CardRequired(card) {
  assertRequired(card, ['name', 'description', 'supportedInterfaces', 'version', 'capabilities',
    'defaultInputModes', 'defaultOutputModes', 'skills'], 'AgentCard');
  assert.ok(card.supportedInterfaces.length > 0, 'supportedInterfaces must not be empty');
  for (const i of card.supportedInterfaces) {
    assertRequired(i, ['url', 'protocolBinding', 'protocolVersion'], 'AgentInterface');
  }
  for (const s of card.skills) assertRequired(s, ['id', 'name', 'description', 'tags'], 'AgentSkill');
}

function assertV10TaskRequired(task) {
  assertRequired(task, ['id', 'status'], 'Task');
  assertRequired(task.status, ['state'], 'TaskStatus');
  for (const a of task.artifacts ?? []) {
    assertRequired(a, ['artifactId', 'parts'], 'Artifact');
    assert.ok(a.parts.length > 0, 'Artifact.parts must not be empty');
  }
  for (const m of task.history ?? []) {
    assertRequired(m, ['messageId', 'role', 'parts'], 'Message');
    assert.ok(m.parts.length > 0, 'Message.parts must not be empty');
  }
}

async function getJson(url, headers = {}) {
  const res = await fetch(url, { headers: { Accept: 'application/json', ...headers } });
  assert.equal(res.status, 200, `GET ${url}: HTTP ${res.status}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  return res.json();
}

describe('a2ad output against the official A2A JSON Schemas', () => {
  let server;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.stop(); });

  it('the agent card (as a v0.3 client fetches it) is a valid v0.3 AgentCard', async () => {
    const card = await getJson(server.cardUrl);
    assertValid(validator03('AgentCard'), card, 'agent card (v0.3 view)');
    assert.equal(card.protocolVersion, '0.3.0');
    assert.equal(card.url, server.rpcUrl);
    assert.equal(card.preferredTransport, 'JSONRPC');
  });

  it('the agent card a v0.3 client fetches (no A2A-Version) is the 0.3 card alone', async () => {
    // RFC 0152's receiver rule (openwop#1028): "a card with both shapes is neither".
    const card = await getJson(server.cardUrl);
    assert.equal(card.supportedInterfaces, undefined, JSON.stringify(card));
    assert.equal(typeof card.url, 'string');
  });

  it('the 1.0 card lists the JSON-RPC interface of each version at the one endpoint', async () => {
    const card = await getJson(server.cardUrl, { 'A2A-Version': '1.0' });
    const jsonrpc = card.supportedInterfaces.filter((i) => i.protocolBinding === 'JSONRPC');
    assert.deepEqual(jsonrpc.map((i) => i.protocolVersion).sort(), ['0.3', '1.0'],
      `interface versions must be exactly "0.3" and "1.0": ${JSON.stringify(card.supportedInterfaces)}`);
    for (const i of jsonrpc) assert.equal(i.url, server.rpcUrl);
  });

  it('the agent card fetched with A2A-Version: 1.0 (as the 1.x SDK does) is a valid v1.0 AgentCard', async () => {
    const card = await getJson(server.cardUrl, { 'A2A-Version': '1.0' });
    assertValid(validator10('AgentCard'), v10View(card), 'agent card for A2A-Version 1.0');
    assertV10CardRequired(card);
  });

  it('/.well-known/agent.json (v0.2 location) serves the same valid card', async () => {
    const card = await getJson(`${server.baseUrl}/.well-known/agent.json`);
    assertValid(validator03('AgentCard'), card, 'agent.json card');
    assert.deepEqual(card, await getJson(server.cardUrl));
  });

  it('v0.3 message/send, tasks/get and errors match the v0.3 response schemas', async () => {
    const id = `send-${randomUUID()}`; // string ids must come back as strings
    const send = await rpc(server.rpcUrl, 'message/send', {
      message: { kind: 'message', messageId: randomUUID(), role: 'user',
        parts: [{ kind: 'text', text: 'schema check v0.3' }] },
      configuration: { blocking: true },
    }, { id });
    assert.equal(send.http, 200);
    assertValid(validator03('SendMessageSuccessResponse'), send.body, 'message/send response');
    assert.equal(send.body.id, id);
    const task = send.body.result;
    assertValid(validator03('Task'), task, 'message/send result');
    assert.equal(task.status.state, 'completed');

    const get = await rpc(server.rpcUrl, 'tasks/get', { id: task.id }, { id: 7 });
    assertValid(validator03('GetTaskSuccessResponse'), get.body, 'tasks/get response');
    assert.equal(get.body.id, 7);
    assertValid(validator03('Task'), get.body.result, 'tasks/get result');

    const missing = await rpc(server.rpcUrl, 'tasks/get', { id: `no-such-task-${randomUUID()}` });
    assert.equal(missing.http, 200, 'JSON-RPC errors are HTTP 200 (WIRE.md §6)');
    assertValid(validator03('JSONRPCErrorResponse'), missing.body, 'tasks/get error response');
    assertValid(validator03('TaskNotFoundError'), missing.body.error, 'tasks/get error');

    const cancel = await rpc(server.rpcUrl, 'tasks/cancel', { id: task.id });
    assertValid(validator03('JSONRPCErrorResponse'), cancel.body, 'tasks/cancel error response');
    assertValid(validator03('TaskNotCancelableError'), cancel.body.error, 'tasks/cancel error');
  });

  it('v1.0 SendMessage, GetTask and ListTasks match the v1.0 schemas', async () => {
    const send = await rpc(server.rpcUrl, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'schema check v1.0' }] },
    }, { version: '1.0' });
    assert.equal(send.http, 200);
    assert.ok(send.body.result, JSON.stringify(send.body));
    assertValid(validator10('SendMessageResponse'), send.body.result, 'SendMessage result');
    const task = send.body.result.task;
    assert.ok(task, `SendMessage result must be {task: ...}: ${JSON.stringify(send.body.result)}`);
    assertValid(validator10('Task'), task, 'SendMessage result.task');
    assertV10TaskRequired(task);
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');

    const get = await rpc(server.rpcUrl, 'GetTask', { id: task.id }, { version: '1.0' });
    assert.ok(get.body.result, JSON.stringify(get.body));
    assertValid(validator10('Task'), get.body.result, 'GetTask result');
    assertV10TaskRequired(get.body.result);

    const list = await rpc(server.rpcUrl, 'ListTasks', { contextId: task.contextId, includeArtifacts: true },
      { version: '1.0' });
    assert.ok(list.body.result, JSON.stringify(list.body));
    assertValid(validator10('ListTasksResponse'), list.body.result, 'ListTasks result');
    assert.equal(list.body.result.tasks.length, 1);
    assertV10TaskRequired(list.body.result.tasks[0]);
  });

  it('every v0.3 message/stream and tasks/resubscribe event matches SendStreamingMessageSuccessResponse', { timeout: 15_000 }, async () => {
    const KIND_DEFINITION = { task: 'Task', 'status-update': 'TaskStatusUpdateEvent', 'artifact-update': 'TaskArtifactUpdateEvent' };
    const id = `stream-${randomUUID()}`;
    const stream = await collectStream(server.rpcUrl, 'message/stream', {
      message: { kind: 'message', messageId: randomUUID(), role: 'user',
        parts: [{ kind: 'text', text: 'schema check v0.3 stream' }] },
    }, { id });
    assert.equal(stream.http, 200);
    assert.match(stream.contentType, /^text\/event-stream/);
    assert.equal(stream.events.length, 4, JSON.stringify(stream.events));
    const resub = await collectStream(server.rpcUrl, 'tasks/resubscribe', { id: stream.events[0].json.result.id },
      { id: 11 });
    assert.equal(resub.events.length, 1, JSON.stringify(resub.events));
    for (const [what, s, rid] of [['message/stream', stream, id], ['tasks/resubscribe', resub, 11]]) {
      for (const [i, e] of s.events.entries()) {
        assert.ok(e.json, `${what} event ${i} is not JSON: ${e.data}`);
        assert.equal(e.json.id, rid, 'every event carries the request id, same JSON type');
        assertValid(validator03('SendStreamingMessageSuccessResponse'), e.json, `${what} event ${i}`);
        const def = KIND_DEFINITION[e.json.result.kind];
        assert.ok(def, `${what} event ${i}: unexpected kind ${e.json.result.kind}`);
        assertValid(validator03(def), e.json.result, `${what} event ${i} result (${def})`);
      }
    }
    assert.equal(stream.events.at(-1).json.result.final, true);
  });

  it('every v1.0 SendStreamingMessage result is a valid StreamResponse with exactly one payload', { timeout: 15_000 }, async () => {
    const stream = await collectStream(server.rpcUrl, 'SendStreamingMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'schema check v1.0 stream' }] },
    }, { version: '1.0', id: 12 });
    assert.equal(stream.http, 200, JSON.stringify(stream.body));
    assert.match(stream.contentType, /^text\/event-stream/);
    assert.equal(stream.events.length, 4, JSON.stringify(stream.events));
    for (const [i, e] of stream.events.entries()) {
      assert.ok(e.json, `event ${i} is not JSON: ${e.data}`);
      assert.equal(e.json.jsonrpc, '2.0');
      assert.equal(e.json.id, 12);
      assertValid(validator10('StreamResponse'), e.json.result, `SendStreamingMessage event ${i}`);
      const keys = Object.keys(e.json.result);
      assert.equal(keys.length, 1, `StreamResponse is a oneof: ${JSON.stringify(e.json.result)}`);
      const [key] = keys;
      const value = e.json.result[key];
      if (key === 'task') assertV10TaskRequired(value);
      if (key === 'statusUpdate') {
        assertRequired(value, ['taskId', 'contextId', 'status'], 'TaskStatusUpdateEvent');
        assertRequired(value.status, ['state'], 'TaskStatus');
      }
      if (key === 'artifactUpdate') {
        assertRequired(value, ['taskId', 'contextId', 'artifact'], 'TaskArtifactUpdateEvent');
        assertRequired(value.artifact, ['artifactId', 'parts'], 'Artifact');
      }
    }
    assert.deepEqual(stream.events.map((e) => Object.keys(e.json.result)[0]),
      ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
  });
});
