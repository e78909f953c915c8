// The OpenAPI 3.1 description a2ad serves (GET /v1/openapi.json, compiled in from
// src/a2ad/transport/openwop/openapi.json), checked against @redocly/cli and against the server itself:
//
//  - lint: @redocly/cli's recommended ruleset (redocly.yaml here says which rule is off and why)
//    finds no error and no warning in the served document;
//  - every operation of the document is a route the server serves: a request with placeholder
//    path parameters is answered neither 405 nor the router's "no route" 404 (a 404 naming a
//    missing task or run is fine: the route exists);
//  - every route the server serves is in the document: ROUTES below (kept by hand: add a route
//    there and to the document together), the A2A HTTP+JSON routes of the operation tables (read
//    from the sources, so a new A2A operation is caught without touching this file), and the
//    JSON-RPC methods (the document's enum, ROUTES' METHODS and the sources' names agree, and the
//    server knows every one of them);
//  - servers[0].url is the server's base URL, info.version the agent card's version, and the
//    rest of the served document is the file in the repository (a stale binary is caught).
//
// OPENAPI_FILE=<path> reads the document from that file instead of the server (to iterate on
// the file before rebuilding the binary): the routes are still probed on the server, and the
// check of servers, version and sameness is skipped.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, uncleanExit } from './server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const documentFile = path.join(repoRoot, 'src', 'a2ad', 'transport', 'openwop', 'openapi.json');
const redoclyCli = path.join(here, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
const redoclyConfig = path.join(here, 'redocly.yaml');
const overrideFile = process.env.OPENAPI_FILE ? path.resolve(process.env.OPENAPI_FILE) : null;

// Every HTTP route a2ad serves, as "METHOD /path/{param}" (the router, openwop_api.cpp,
// push_routes.cpp, the A2A REST bindings over the operation table and its extensions). A route
// added to the server belongs here and in the document.
const ROUTES = [
  // Discovery (open) and operations.
  'GET /.well-known/agent-card.json', 'HEAD /.well-known/agent-card.json',
  'GET /.well-known/agent.json', 'HEAD /.well-known/agent.json',
  'GET /v1/a2a/agent.json', 'HEAD /v1/a2a/agent.json',
  'GET /.well-known/jwks.json', 'HEAD /.well-known/jwks.json',
  'GET /.well-known/openwop', 'HEAD /.well-known/openwop',
  'GET /v1/openapi.json',
  'GET /healthz', 'GET /readyz', 'GET /metrics',
  // A2A JSON-RPC, and the receiver of peers' pushes.
  'POST /v1/a2a',
  'POST /v1/a2a/peer-push',
  // OpenWOP REST.
  'GET /v1/workflows', 'GET /v1/workflows/{workflowId}',
  'POST /v1/runs', 'GET /v1/runs', 'GET /v1/runs/{runId}',
  'POST /v1/runs/{runId}/cancel',
  'GET /v1/runs/{runId}/events', 'GET /v1/runs/{runId}/events/poll',
  'POST /v1/runs/{runId}/interrupts/{nodeId}', 'POST /v1/runs/{runId}/approvals/{nodeId}',
  'POST /v1/events',
  'GET /v1/inbox', 'GET /v1/me',
  // The operator console (console_routes.cpp).
  'GET /console', 'GET /console/{path}', 'HEAD /console/{path}',
  'GET /v1/interrupts/{token}', 'POST /v1/interrupts/{token}',
  'GET /v1/interrupts/{token}/resolve', 'POST /v1/interrupts/{token}/resolve',
  'GET /v1/a2a/tasks/{taskId}', 'GET /v1/host/sample/a2a/tasks/{taskId}',
  'POST /v1/host/sample/a2a/tasks/start', 'POST /v1/host/sample/a2a/tasks/push-config',
  'POST /v1/host/sample/test/surface', 'POST /v1/host/sample/test/idempotency/concurrent-claim',
  // Push routes.
  'POST /v1/webhooks', 'DELETE /v1/webhooks/{webhookId}',
  'GET /v1/push/deliveries', 'HEAD /v1/push/deliveries', 'POST /v1/push/deliveries/retry',
  'GET /v1/push/dead-letters', 'HEAD /v1/push/dead-letters',
  // A2A HTTP+JSON 1.0.
  ...a2aRestRoutes('/a2a/rest', true),
  // A2A HTTP+JSON 0.3.
  ...a2aRestRoutes('/a2a/rest03/v1', false),
];

function a2aRestRoutes(base, v10) {
  return [
    'POST /message:send', 'POST /message:stream',
    'GET /tasks/{id}', ...(v10 ? ['GET /tasks'] : []),
    'POST /tasks/{id}:cancel', 'GET /tasks/{id}:subscribe', 'POST /tasks/{id}:subscribe',
    'POST /tasks/{id}/pushNotificationConfigs', 'GET /tasks/{id}/pushNotificationConfigs',
    'GET /tasks/{id}/pushNotificationConfigs/{configId}',
    'DELETE /tasks/{id}/pushNotificationConfigs/{configId}',
    v10 ? 'GET /extendedAgentCard' : 'GET /card',
    // The pause extension.
    'POST /tasks/{id}:pause', 'POST /tasks/{id}:resume', 'POST /tasks/{id}:awaitResumption',
    // The Objective-Plan-Task extension.
    'POST /objectives', 'GET /objectives', 'GET /objectives/{id}', 'PATCH /objectives/{id}',
    'GET /objectives/{id}:subscribe', 'POST /objectives/{objectiveId}/plans',
    'GET /plans/{id}', 'PATCH /plans/{id}',
    'POST /planTasks/{planTaskId}:link', 'POST /planTasks/{planTaskId}:updateStatus',
  ].map((route) => route.replace(' /', ` ${base}/`));
}

// Every JSON-RPC method of POST /v1/a2a.
const METHODS = [
  'SendMessage', 'SendStreamingMessage', 'GetTask', 'ListTasks', 'CancelTask', 'SubscribeToTask',
  'CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig', 'GetExtendedAgentCard',
  'message/send', 'message/stream', 'tasks/get', 'tasks/cancel', 'tasks/resubscribe',
  'tasks/pushNotificationConfig/set', 'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list', 'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
  'PauseTask', 'ResumeTask', 'AwaitTaskResumption', 'tasks/pause', 'tasks/resume',
  'tasks/await_resumption',
  'objectives/create', 'objectives/get', 'objectives/list', 'objectives/update',
  'objectives/subscribe', 'plans/create', 'plans/get', 'plans/update', 'tasks/link',
  'tasks/updateStatus',
];

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The document's operations as "METHOD /path" strings. */
function documentedRoutes(doc) {
  const out = [];
  for (const [p, item] of Object.entries(doc.paths ?? {}))
    for (const m of HTTP_METHODS) if (item[m]) out.push(`${m.toUpperCase()} ${p}`);
  return out;
}

/** "/tasks/{id}" and "/tasks/{taskId}" are the same route. */
const normalize = (route) => route.replace(/\{[^}]*\}/g, '{}');

/**
 * The A2A HTTP+JSON routes of the operation tables, read from the sources: every entry of the
 * form `"METHOD", "<1.0 route>", "<0.3 route>"` (a2a_operations.cpp's table and push configs,
 * the pause extension's Operation{...}) or `"METHOD", "<1.0 route>", <bool>` (the OPT
 * extension's add(), whose 0.3 route is the 1.0 one under /v1). "" as the 0.3 route: none.
 * 0.3 routes are google.api.http templates ("/v1/{name=tasks/*}:cancel"): their captures
 * become one path parameter per '*'. SubscribeToTask is served with GET as well as its POST
 * (a2a_rest.cpp Allows()).
 */
function sourceRestRoutes() {
  const files = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.cpp')) files.push(p);
    }
  };
  walk(path.join(repoRoot, 'src', 'a2ad'));
  const routes = new Set();
  const names = new Set();
  const entry = /"(GET|POST|PUT|PATCH|DELETE)"\s*,\s*"(\/[^"]*)"\s*,\s*("[^"]*"|true|false)/g;
  const named = /\{\s*"([A-Za-z]+)"\s*,\s*"([a-z][\w/]*|)"\s*,\s*"(?:GET|POST|PUT|PATCH|DELETE)"/g;
  const optNamed = /\badd\(\s*"([a-z][\w/]*)"\s*,\s*[\w:]+\s*,\s*ParamsRule::/g;
  const template = (t) => t.replace(/\{\w+=([^}]*)\}/g, (_, pattern) => pattern.replace(/\*/g, '{}'));
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const [, method, route, third] of text.matchAll(entry)) {
      const v03 = third === 'true' || third === 'false' ? `/v1${route}` : third.slice(1, -1);
      const add = (base, r) => {
        routes.add(normalize(`${method} ${base}${template(r)}`));
        if (method === 'POST' && r.endsWith(':subscribe')) routes.add(normalize(`GET ${base}${template(r)}`));
      };
      add('/a2a/rest', route);
      if (v03) add('/a2a/rest03', v03);
    }
    for (const [, v10, v03] of text.matchAll(named)) {
      names.add(v10);
      if (v03) names.add(v03);
    }
    for (const [, name] of text.matchAll(optNamed)) names.add(name);
  }
  return { routes, names };
}

/** One request on a connection of its own (HEAD answers must not confuse a kept-alive one). */
function probe(method, url, { body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const h = { Connection: 'close', Accept: 'application/json, text/event-stream', ...headers };
    if (body !== undefined) {
      h['Content-Type'] = 'application/json';
      h['Content-Length'] = Buffer.byteLength(body);
    }
    let settled = false;
    const done = (v) => { if (!settled) { settled = true; resolve(v); } };
    const req = http.request(
      { method, hostname: u.hostname, port: u.port, path: u.pathname + u.search, agent: false, headers: h },
      (res) => {
        const contentType = res.headers['content-type'] ?? '';
        const answer = (text) => ({ status: res.statusCode, contentType, text });
        if (method === 'HEAD') {
          res.resume();
          done(answer(''));
          return;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
          // A stream: its first event is enough.
          if (contentType.startsWith('text/event-stream') && text.includes('\n\n')) {
            done(answer(text));
            res.destroy();
          }
        });
        res.on('end', () => done(answer(text)));
        res.on('close', () => done(answer(text)));
      });
    req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${url}: no answer within 15 s`)));
    req.on('error', (err) => { if (!settled) { settled = true; reject(err); } });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** The JSON of an answer: its body, or the data of its first SSE event. */
function jsonOf(answer) {
  let text = answer.text;
  if (answer.contentType.startsWith('text/event-stream')) {
    const data = text.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
    text = data.join('\n');
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The router's answer to a path no route serves (OpenWOP "no route for", REST "no A2A route for"). */
function isNoRoute(answer) {
  if (answer.status !== 404) return false;
  const body = jsonOf(answer);
  const message = body?.message ?? body?.error?.message ?? '';
  return /^no (A2A )?route for /.test(message) || body === undefined;
}

function runRedocly(file) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [redoclyCli, 'lint', '--config', redoclyConfig, '--format=json', file],
      {
        cwd: here,
        maxBuffer: 64 * 1024 * 1024,
        timeout: 90_000,
        env: {
          ...process.env,
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        },
      },
      (err, stdout, stderr) => {
        let report;
        try {
          report = JSON.parse(stdout);
        } catch {
          reject(new Error(`redocly lint gave no JSON report (${err?.message ?? 'exit 0'})\n` +
            `--- stdout ---\n${stdout.slice(0, 4000)}\n--- stderr ---\n${stderr.slice(-4000)}`));
          return;
        }
        resolve(report);
      },
    );
  });
}

describe('OpenAPI description', () => {
  let server;
  let base;
  let doc;
  let served;
  let card;
  let tmp;

  before(async () => {
    if (!existsSync(redoclyCli)) {
      throw new Error('interop: @redocly/cli is missing from tests/interop/node_modules. ' +
        'Run scripts/bootstrap.sh (it runs `npm ci` in tests/interop).');
    }
    tmp = await mkdtemp(path.join(os.tmpdir(), 'a2ad-openapi-'));
    server = await startServer({ args: ['--conformance-fixtures'] });  // the seams too
    base = server.baseUrl;
    const res = await fetch(`${base}/v1/openapi.json`);
    assert.equal(res.status, 200, 'GET /v1/openapi.json');
    served = await res.json();
    doc = overrideFile ? JSON.parse(readFileSync(overrideFile, 'utf8')) : served;
    card = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
  });

  after(async () => {
    const result = await server?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (result) assert.equal(uncleanExit(result), '');
  });

  it('is lint-clean under @redocly/cli (no error, no warning)', async () => {
    const file = path.join(tmp, 'openapi.json');
    await writeFile(file, JSON.stringify(doc, null, 2));
    const report = await runRedocly(file);
    const problems = (report.problems ?? []).map((p) =>
      `${p.severity} ${p.ruleId}: ${p.message} at ${(p.location ?? []).map((l) => l.pointer).join(', ')}`);
    assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 },
      `redocly lint:\n${problems.join('\n')}`);
  });

  it('names an OpenAPI 3.1 document with unique operationIds, each with a summary and tags', () => {
    assert.match(doc.openapi, /^3\.1\./);
    const ids = new Map();
    for (const route of documentedRoutes(doc)) {
      const [method, p] = route.split(' ');
      const o = doc.paths[p][method.toLowerCase()];
      assert.ok(o.operationId && /^[a-z][A-Za-z0-9]*$/.test(o.operationId), `${route}: operationId '${o.operationId}' is not camelCase`);
      assert.ok(!ids.has(o.operationId), `${route}: operationId ${o.operationId} is also ${ids.get(o.operationId)}'s`);
      ids.set(o.operationId, route);
      assert.ok(o.summary, `${route}: no summary`);
      assert.ok(o.tags?.length, `${route}: no tags`);
    }
  });

  it('is a file the build can embed (openapi_doc.cpp.in) and a person can edit', () => {
    const text = readFileSync(documentFile, 'utf8');
    assert.ok(!text.includes(')a2ad_openapi"'), 'the file must not contain the raw string delimiter )a2ad_openapi"');
    assert.doesNotMatch(text, /@[A-Za-z_][A-Za-z0-9_]*@/, 'configure_file would replace @NAME@ patterns');
    JSON.parse(text);
    const badIndent = text.split('\n').findIndex((l) => /^\t/.test(l) || (l.match(/^ */)[0].length % 2) !== 0);
    assert.equal(badIndent, -1, `line ${badIndent + 1}: indent with 2 spaces`);
  });

  it('documents only routes the server serves', async () => {
    const failures = [];
    for (const route of documentedRoutes(doc)) {
      const [method, p] = route.split(' ');
      const o = doc.paths[p][method.toLowerCase()];
      const params = [...(doc.paths[p].parameters ?? []), ...(o.parameters ?? [])]
        .map((x) => (x.$ref ? doc.components.parameters[x.$ref.split('/').pop()] : x));
      let target = p.replace(/\{([^}]+)\}/g, (_, name) => `probe-${name}`);
      // Required query parameters get a placeholder too (not on HEAD, whose 404 has no body to
      // tell a missing route from a missing task).
      const q = params.filter((x) => x.in === 'query' && x.required && method !== 'HEAD')
        .map((x) => `${encodeURIComponent(x.name)}=probe`);
      if (q.length) target += `?${q.join('&')}`;
      const body = ['POST', 'PUT', 'PATCH'].includes(method) ? '{}' : undefined;
      const answer = await probe(method, base + target, { body });
      if (answer.status === 405 || isNoRoute(answer) || (method === 'HEAD' && answer.status === 404))
        failures.push(`${route} (${method} ${target}): ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    assert.deepEqual(failures, [], 'documented routes the server does not serve');
  });

  it('documents every route the server serves (ROUTES)', () => {
    const documented = new Set(documentedRoutes(doc).map(normalize));
    const listed = new Set(ROUTES.map(normalize));
    assert.equal(listed.size, ROUTES.length, 'ROUTES lists a route twice');
    const missing = [...listed].filter((r) => !documented.has(r));
    const unlisted = [...documented].filter((r) => !listed.has(r));
    assert.deepEqual(missing, [], 'routes the server serves that the document lacks');
    assert.deepEqual(unlisted, [], 'documented routes missing from ROUTES in this test (add them)');
  });

  it('documents every A2A HTTP+JSON route of the operation tables (from the sources)', () => {
    const { routes } = sourceRestRoutes();
    assert.ok(routes.size >= 40, `only ${routes.size} A2A REST routes found in src/a2ad: has the ` +
      'operation table\'s form changed? (update sourceRestRoutes)');
    const documented = new Set(documentedRoutes(doc).map(normalize));
    const missing = [...routes].filter((r) => !documented.has(r));
    assert.deepEqual(missing, [], 'A2A REST routes of the operation tables the document lacks');
  });

  it('lists every JSON-RPC method, each one the server knows', async () => {
    const methods = doc.components?.schemas?.JsonRpcMethod?.enum ?? [];
    assert.deepEqual([...methods].sort(), [...METHODS].sort(), 'the document\'s JsonRpcMethod enum and METHODS differ');
    const { names } = sourceRestRoutes();
    const unknown = [...names].filter((n) => !methods.includes(n));
    assert.deepEqual(unknown, [], 'JSON-RPC methods of the operation tables the document lacks');
    const unserved = [];
    let id = 0;
    for (const method of methods) {
      const answer = await probe('POST', `${base}/v1/a2a`, {
        body: JSON.stringify({ jsonrpc: '2.0', id: `openapi-${++id}`, method, params: {} }),
        headers: method.includes('/') ? {} : { 'A2A-Version': '1.0' },
      });
      const body = jsonOf(answer);
      if (answer.status !== 200 || !body || body.error?.code === -32601)
        unserved.push(`${method}: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    assert.deepEqual(unserved, [], 'documented JSON-RPC methods the server does not know');
  });

  it('names the extensions of the agent card', () => {
    const text = JSON.stringify(doc);
    const uris = (card.capabilities?.extensions ?? []).map((e) => e.uri);
    assert.ok(uris.length > 0, 'the card lists no extension');
    for (const uri of uris) assert.ok(text.includes(uri), `the document does not mention the extension ${uri}`);
  });

  it('is served with this server\'s base URL and version, and is the repository\'s file', (t) => {
    if (overrideFile) {
      t.skip('OPENAPI_FILE is set: the served document is not the one under test');
      return;
    }
    assert.equal(served.servers?.[0]?.url, base, 'servers[0].url');
    assert.equal(served.info?.version, card.version, 'info.version is not the agent card\'s version');
    const strip = (d) => {
      const c = structuredClone(d);
      delete c.servers;
      delete c.info.version;
      return c;
    };
    assert.deepEqual(strip(served), strip(JSON.parse(readFileSync(documentFile, 'utf8'))),
      'the served document is not src/a2ad/transport/openwop/openapi.json (rebuild the binary)');
  });
});
