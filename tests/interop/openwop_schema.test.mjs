// Validates the OpenWOP surface of a2ad against the official OpenWOP JSON Schemas (draft 2020-12,
// referencing each other by $id): the discovery document, the RFC 0100 A2ATaskState of a run
// parked at an approval gate and after it was accepted, every RunEventDoc of that run, its
// RunSnapshot, and an error body. The server serves the repository's bundled workflows/.
// The schemas are copies kept in tests/interop/schemas/openwop (README there); set
// OPENWOP_SCHEMA_DIR to use another copy.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDep, startServer, uncleanExit, waitFor } from './server.mjs';

const { default: Ajv2020 } = await loadDep('ajv/dist/2020.js');
const { default: addFormats } = await loadDep('ajv-formats');

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const schemaDir = process.env.OPENWOP_SCHEMA_DIR
  ?? path.resolve(here, 'schemas', 'openwop');
const BASE = 'https://openwop.dev/spec/v1/';

if (!existsSync(path.join(schemaDir, 'run-event.schema.json'))) {
  throw new Error(`interop: no OpenWOP schemas in ${schemaDir}; set OPENWOP_SCHEMA_DIR`);
}

// Every schema of the folder, registered under its $id, so cross-references resolve; each is
// compiled only when first used.
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
for (const file of readdirSync(schemaDir).filter((f) => f.endsWith('.schema.json')).sort()) {
  const schema = JSON.parse(readFileSync(path.join(schemaDir, file), 'utf8'));
  ajv.addSchema(schema, schema.$id ? undefined : BASE + file);
}

function validator(file) {
  const v = ajv.getSchema(BASE + file);
  assert.ok(v, `no schema ${file} in ${schemaDir}`);
  return v;
}

function assertValid(file, value, what) {
  const validate = validator(file);
  const ok = validate(value);
  assert.ok(ok, `${what} does not match ${file}:\n${JSON.stringify(validate.errors, null, 2)}\n` +
    `value: ${JSON.stringify(value, null, 2)}`);
}

async function getJson(url, init = {}) {
  const res = await fetch(url, init);
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${init.method ?? 'GET'} ${url}: HTTP ${res.status}, body is not JSON: ${text.slice(0, 500)}`);
  }
  return { http: res.status, headers: res.headers, body };
}

function postJson(url, body) {
  return getJson(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('OpenWOP surface against the OpenWOP schemas', () => {
  let server;
  let base;

  before(async () => {
    server = await startServer({ workflowsDir: path.join(repoRoot, 'workflows'), args: ['--conformance-fixtures'] });
    base = server.baseUrl;
  });

  after(async () => {
    const result = await server?.stop();
    if (result) assert.equal(uncleanExit(result), '', 'a2ad did not shut down cleanly');
  });

  it('GET /.well-known/openwop matches capabilities.schema.json', async () => {
    const { http, body } = await getJson(`${base}/.well-known/openwop`);
    assert.equal(http, 200);
    // The a2a block's RFC 0152 keys (protocolVersions, preferredVersion, profiles) are newer
    // than the closed RFC 0100-era a2a schema kept here (DIGEST §1.3): the rest is validated
    // against it, and they are checked below as RFC 0152 has them.
    const { protocolVersions, preferredVersion, profiles, ...rfc0100 } = body.a2a;
    assertValid('capabilities.schema.json', { ...body, a2a: rfc0100 }, 'the discovery document');
    assert.ok(Array.isArray(protocolVersions) && protocolVersions.length > 0);
    assert.equal(new Set(protocolVersions).size, protocolVersions.length, 'unique');
    for (const v of protocolVersions) assert.match(v, /^\d+\.\d+$/);
    assert.ok(protocolVersions.includes(preferredVersion));
    assert.deepEqual(profiles, protocolVersions.map((v) => (v === '0.3' ? 'a2a-0.3-legacy' : `a2a-${v}`)));
    // The card says the same (RFC 0152 §C): its interfaces' versions, preferred first.
    const card = await getJson(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } });
    const versions = card.body.supportedInterfaces.map((i) => i.protocolVersion);
    assert.deepEqual([...new Set(versions)], protocolVersions);
    assert.equal(versions[0], preferredVersion);
    assert.equal(card.body.capabilities.streaming, body.a2a.streaming);
    assert.equal(card.body.capabilities.pushNotifications, body.a2a.pushNotifications);
  });

  it('a server of A2A 1.0 only says so in discovery and in its card', async () => {
    const only = await startServer({ args: ['--a2a-versions', '1.0'] });
    try {
      const { body } = await getJson(`${only.baseUrl}/.well-known/openwop`);
      assert.deepEqual(body.a2a.protocolVersions, ['1.0']);
      assert.equal(body.a2a.preferredVersion, '1.0');
      assert.deepEqual(body.a2a.profiles, ['a2a-1.0']);
      const card = await getJson(`${only.baseUrl}/.well-known/agent-card.json`);
      assert.deepEqual([...new Set(card.body.supportedInterfaces.map((i) => i.protocolVersion))], ['1.0']);
    } finally {
      await only.stop();
    }
  });

  it('an approval run: A2ATaskState, RunSnapshot and every RunEventDoc match their schemas', async () => {
    const created = await postJson(`${base}/v1/runs`, { workflowId: 'conformance-approval' });
    assert.equal(created.http, 201, JSON.stringify(created.body));
    const runId = created.body.runId;
    assert.ok(runId, JSON.stringify(created.body));

    const run = (id) => getJson(`${base}/v1/runs/${id}`);
    const parked = await waitFor(() => run(runId), (r) => r.body.status !== 'pending' && r.body.status !== 'running');
    assert.equal(parked.http, 200);
    assert.equal(parked.body.status, 'waiting-approval', JSON.stringify(parked.body));
    assertValid('run-snapshot.schema.json', parked.body, 'the RunSnapshot of the parked run');

    for (const prefix of ['/v1/a2a/tasks', '/v1/host/sample/a2a/tasks']) {
      const { http, body } = await getJson(`${base}${prefix}/${runId}`);
      assert.equal(http, 200, `${prefix}: ${JSON.stringify(body)}`);
      assertValid('a2a-task-state.schema.json', body, `GET ${prefix}/{id} while parked`);
      assert.equal(body.taskId, runId);
      assert.equal(body.runId, runId);
      assert.equal(body.state, 'input-required');
      assert.equal(body.interruptKind, 'approval');
    }

    const resolved = await postJson(`${base}/v1/runs/${runId}/interrupts/gate`, { resumeValue: { action: 'accept' } });
    assert.ok(resolved.http >= 200 && resolved.http < 300, `resolve: HTTP ${resolved.http} ${JSON.stringify(resolved.body)}`);

    const done = await waitFor(() => run(runId), (r) => ['completed', 'failed', 'cancelled'].includes(r.body.status));
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assertValid('run-snapshot.schema.json', done.body, 'the RunSnapshot of the completed run');

    for (const prefix of ['/v1/a2a/tasks', '/v1/host/sample/a2a/tasks']) {
      const { http, body } = await getJson(`${base}${prefix}/${runId}`);
      assert.equal(http, 200, `${prefix}: ${JSON.stringify(body)}`);
      assertValid('a2a-task-state.schema.json', body, `GET ${prefix}/{id} after accepting`);
      assert.equal(body.state, 'completed');
      assert.equal(body.interruptKind, undefined);
    }

    const polled = await getJson(`${base}/v1/runs/${runId}/events/poll?lastSequence=0&timeout=1`);
    assert.equal(polled.http, 200, JSON.stringify(polled.body));
    const events = polled.body.events;
    assert.ok(Array.isArray(events) && events.length > 0, JSON.stringify(polled.body));
    for (const e of events) {
      assertValid('run-event.schema.json', e, `RunEventDoc #${e.sequence} (${e.type})`);
      assert.equal(e.runId, runId);
    }
    assert.deepEqual(events.map((e) => e.sequence), events.map((_, i) => i), 'sequences are 0.. without gaps');
    const types = events.map((e) => e.type);
    for (const t of ['run.started', 'interrupt.requested', 'node.suspended', 'interrupt.resolved', 'node.completed', 'run.completed']) {
      assert.ok(types.includes(t), `no ${t} among ${types.join(', ')}`);
    }
  });

  it('a 404 body matches error-envelope.schema.json', async () => {
    for (const p of ['/v1/runs/no-such-run', '/v1/a2a/tasks/no-such-task', '/v1/workflows/no-such-workflow']) {
      const { http, body } = await getJson(`${base}${p}`);
      assert.equal(http, 404, `${p}: ${JSON.stringify(body)}`);
      assertValid('error-envelope.schema.json', body, `the 404 body of GET ${p}`);
    }
  });
});
