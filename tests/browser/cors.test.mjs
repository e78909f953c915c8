// CORS in a real browser (issue 18): Debian's chromium, driven by playwright-core, loads a page
// from one origin and calls a2ad (another origin: another port) as a browser tool would: a
// JSON-RPC call with an API key (the browser's preflight first), a refusal whose headers it
// must read, an SSE stream read through fetch. A page of an origin not configured is blocked
// by the browser. (The headers themselves: tests/integration/cors_e2e_test.cpp.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { resolveBinary, startServer } from '../interop/server.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

let browser;
let server;
let key;
let dataDir;
const pages = [];

// A page server on a port of its own: its origin is http://127.0.0.1:<port>.
async function pageServer(host) {
  const s = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>a2ad cors</title><p>tool</p>');
  });
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  pages.push(s);
  return `http://${host}:${s.address().port}`;
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM} (scripts/bootstrap.sh installs chromium)`);
  let playwright;
  try {
    playwright = await import('playwright-core');
  } catch (err) {
    throw new Error('tests/browser/node_modules is missing: run scripts/bootstrap.sh', { cause: err });
  }
  browser = await playwright.chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'a2ad-cors-browser-'));
  key = execFileSync(resolveBinary(), ['keys', 'create', '--data-dir', dataDir, '--tenant', 'web',
    '--scopes', 'tasks:read,tasks:write', '--name', 'browser'],
  { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  for (const s of pages) s.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

// What a page of `origin` sees calling a2ad at `base`: each call's outcome, or the error the
// browser gave it ("TypeError: Failed to fetch" when CORS blocks it).
async function fromPage(origin, fn, arg) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    return await page.evaluate(fn, arg);
  } finally {
    await context.close();
  }
}

async function calls({ base, key: apiKey }) {
  const out = {};
  const send = (headers) => fetch(`${base}/v1/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'message/send',
      params: { message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(),
        parts: [{ kind: 'text', text: 'from a browser' }] } },
    }),
  });
  try {
    const ok = await send({ authorization: `Bearer ${apiKey}` });
    out.sent = { status: ok.status, body: await ok.json() };
    const refused = await send({});
    out.refused = { status: refused.status, challenge: refused.headers.get('www-authenticate') };
    // A stream, read as it comes (SSE through fetch, as browser A2A clients do).
    const stream = await fetch(`${base}/v1/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({
        jsonrpc: '2.0', id: 2, method: 'message/stream',
        params: { message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(),
          parts: [{ kind: 'text', text: 'stream me' }] } },
      }),
    });
    const text = await stream.text();
    out.events = text.split('\n').filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)).result);
  } catch (err) {
    out.error = String(err);
  }
  return out;
}

test('a page of a configured origin calls a2ad, reads its refusals and streams', async () => {
  const app = await pageServer('127.0.0.1');
  server = await startServer({ args: ['--cors-origin', app], dataDir });
  const seen = await fromPage(app, calls, { base: server.baseUrl, key });
  assert.equal(seen.error, undefined, JSON.stringify(seen));
  assert.equal(seen.sent.status, 200);
  assert.equal(seen.sent.body.result.status.state, 'completed', JSON.stringify(seen.sent));
  // The browser lets the page read the 401's challenge only because it is exposed.
  assert.equal(seen.refused.status, 401);
  assert.match(seen.refused.challenge ?? '', /^Bearer realm="a2ad"/);
  assert.ok(seen.events.length >= 2, JSON.stringify(seen.events));
  assert.equal(seen.events.at(-1).status.state, 'completed');
  assert.equal(seen.events.at(-1).final, true);

  // A page of another origin (localhost is not 127.0.0.1) is blocked by the browser.
  const other = await pageServer('localhost');
  const blocked = await fromPage(other, calls, { base: server.baseUrl, key });
  assert.match(blocked.error ?? '', /TypeError/, JSON.stringify(blocked));
  assert.equal(blocked.sent, undefined);
  await server.stop();
  server = undefined;
});
