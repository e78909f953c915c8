// Test harness for the interop tests: starts one a2ad process on an ephemeral port with a fresh
// data directory, and provides small helpers shared by the test files.
//
// The binary comes from $A2AD_BIN (ctest sets it); when unset, build/release or build/debug of
// this checkout is used so `node --test` works by hand after a build.

import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');

const READY_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;
const READY_LINE = /^a2ad: serving (https?:\/\/[^\s/]+)(\/\S*)?\s*$/m;

/** Imports an npm dependency of tests/interop, failing with a useful message if it is missing. */
export async function loadDep(specifier) {
  try {
    return await import(specifier);
  } catch (err) {
    if (err?.code === 'ERR_MODULE_NOT_FOUND' || err?.code === 'MODULE_NOT_FOUND') {
      throw new Error(
        `interop: cannot load '${specifier}': tests/interop/node_modules is missing or stale. ` +
          'Run scripts/bootstrap.sh (it runs `npm ci` in tests/interop).',
        { cause: err },
      );
    }
    throw err;
  }
}

/** The a2ad binary the tests run ($A2AD_BIN, else this checkout's build). */
export function resolveBinary() {
  const fromEnv = process.env.A2AD_BIN;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`interop: A2AD_BIN=${fromEnv} does not exist`);
    return fromEnv;
  }
  for (const preset of ['release', 'debug', 'sanitize']) {
    const candidate = path.join(repoRoot, 'build', preset, 'src', 'a2ad', 'cli', 'a2ad');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('interop: set A2AD_BIN to the a2ad binary (or build it: make build)');
}

/**
 * Starts `a2ad serve --listen 127.0.0.1:0` with fresh temp data and workflows directories and
 * waits (up to 20 s) for its ready line on stdout.
 *
 * Returns {baseUrl, cardUrl, rpcUrl, dataDir, stderr(), stop()}. stop() sends SIGTERM, then
 * SIGKILL after 5 s, removes the temp directory and resolves to {code, signal, killed, stderr}.
 * The process is also killed if the test process exits first.
 * `workflowsDir` (optional) serves that directory instead of the empty temp one. `dataDir`
 * (optional) uses that data directory instead of a fresh one, and leaves it in place on stop()
 * (to start a second server on the same data: a restart).
 */
export async function startServer({
  args = [], env = {}, workflowsDir: servedWorkflowsDir, dataDir: givenDataDir,
} = {}) {
  const bin = resolveBinary();
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'a2ad-interop-'));
  const dataDir = givenDataDir ?? path.join(tmp, 'data');
  const workflowsDir = path.join(tmp, 'workflows');
  if (!givenDataDir) await mkdir(dataDir);
  await mkdir(workflowsDir);

  const child = spawn(
    bin,
    ['serve', '--listen', '127.0.0.1:0', '--data-dir', dataDir,
     '--workflows-dir', servedWorkflowsDir ?? workflowsDir,
     ...args],
    // Unnamed messages run `echo` (the tests' default skill) unless a test says otherwise.
    { env: { A2AD_DEFAULT_SKILL: 'echo', ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  let stdout = '';
  let stderr = '';
  const keepTail = (s) => (s.length > 64_000 ? s.slice(-64_000) : s);
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { stderr = keepTail(stderr + d); });
  // With A2AD_TEST_LOG_DIR (make test sets it) the whole log also goes there, for
  // scripts/scan_test_logs.sh to search for credentials after the run.
  if (process.env.A2AD_TEST_LOG_DIR) {
    const log = createWriteStream(
      path.join(process.env.A2AD_TEST_LOG_DIR, `interop-${process.pid}-${child.pid}.log`));
    child.stderr.on('data', (d) => log.write(d));
    child.once('exit', () => log.end());
  }

  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  let exitInfo = null;
  exited.then((info) => { exitInfo = info; process.removeListener('exit', killOnExit); });

  let baseUrl;
  try {
    baseUrl = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`a2ad did not print its ready line within ${READY_TIMEOUT_MS} ms`)),
        READY_TIMEOUT_MS,
      );
      child.stdout.on('data', (d) => {
        stdout = keepTail(stdout + d);
        const m = READY_LINE.exec(stdout);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.once('error', (err) => { clearTimeout(timer); reject(err); });
      exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`a2ad exited before it was ready (code ${code}, signal ${signal})`));
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    await rm(tmp, { recursive: true, force: true });
    err.message += `\n--- a2ad stdout ---\n${stdout}\n--- a2ad stderr ---\n${stderr}`;
    throw err;
  }

  let stopping = null;
  const stop = () => {
    stopping ??= (async () => {
      let killed = false;
      if (!exitInfo) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => { killed = true; child.kill('SIGKILL'); }, STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      await rm(tmp, { recursive: true, force: true });
      return { ...exitInfo, killed, stderr };
    })();
    return stopping;
  };

  return {
    baseUrl,
    cardUrl: `${baseUrl}/.well-known/agent-card.json`,
    rpcUrl: `${baseUrl}/v1/a2a`,
    dataDir,
    stderr: () => stderr,
    stop,
  };
}

/** Asserts-friendly description of how the server ended; '' when it shut down cleanly. */
export function uncleanExit({ code, signal, killed, stderr }) {
  if (code === 0 && !killed) return '';
  const how = killed ? 'needed SIGKILL after SIGTERM' : `exited with code ${code}, signal ${signal}`;
  return `a2ad ${how}\n--- a2ad stderr (tail) ---\n${stderr.slice(-4000)}`;
}

let rpcIds = 0;

/**
 * Raw JSON-RPC call with fetch (no SDK). Returns {http, headers, body}; body is the parsed JSON
 * response. `version` sets the A2A-Version header (omit for v0.3 clients, which send none).
 */
export async function rpc(url, method, params, { version, id = `raw-${++rpcIds}`, headers = {} } = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      ...(version ? { 'A2A-Version': version } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${method}: HTTP ${res.status}, body is not JSON: ${text.slice(0, 500)}`);
  }
  return { http: res.status, headers: res.headers, body };
}

/** Polls `fetchState()` until `done(value)` holds; returns the last value. */
export async function waitFor(fetchState, done, { timeoutMs = 10_000, intervalMs = 50 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fetchState();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`condition not reached within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Concatenated text of all text parts of all artifacts of a v0.3-shaped task. */
export function artifactText03(task) {
  return (task.artifacts ?? [])
    .flatMap((a) => a.parts ?? [])
    .filter((p) => p.kind === 'text')
    .map((p) => p.text)
    .join('');
}

export const TERMINAL_STATES_03 = ['completed', 'failed', 'canceled', 'rejected'];

/**
 * Parses an SSE response body (WHATWG rules: `field: value` lines, `:` comments, blank line ends an
 * event; multi-line data joined with "\n"). Yields {type: 'comment', text} for each comment line
 * and {type: 'event', id, event, data, json} for each dispatched event (`json` = parsed data, or
 * undefined when data is not JSON). `id` is the event's own `id:` field (undefined if absent).
 */
export async function* parseSse(response) {
  const decoder = new TextDecoder();
  let buffer = '';
  let id;
  let event;
  let data = [];
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        if (buffer[nl] === '\r' && nl + 1 === buffer.length) break; // maybe a CRLF split across reads
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer[nl] === '\r' && buffer[nl + 1] === '\n' ? 2 : 1));
        if (line === '') {
          if (data.length > 0) {
            const text = data.join('\n');
            let json;
            try { json = JSON.parse(text); } catch { json = undefined; }
            yield { type: 'event', id, event, data: text, json };
          }
          id = undefined;
          event = undefined;
          data = [];
          continue;
        }
        if (line.startsWith(':')) {
          yield { type: 'comment', text: line.slice(1) };
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? '' : line.slice(colon + 1);
        if (val.startsWith(' ')) val = val.slice(1);
        if (field === 'data') data.push(val);
        else if (field === 'id') id = val;
        else if (field === 'event') event = val;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Opens a JSON-RPC streaming call with raw fetch. Returns {http, headers, contentType, response,
 * items (async iterator from parseSse), abort()}. The request is aborted after `timeoutMs`
 * (default 15 s) so a stuck stream cannot hang a test.
 */
export async function openStream(url, method, params, {
  version, id = `sse-${++rpcIds}`, headers = {}, timeoutMs = 15_000,
} = {}) {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(new Error(`${method} stream still open after ${timeoutMs} ms`)), timeoutMs);
  timer.unref?.();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
      ...(version ? { 'A2A-Version': version } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    signal: ctrl.signal,
  });
  const contentType = response.headers.get('content-type') ?? '';
  const abort = () => { clearTimeout(timer); ctrl.abort(); };
  async function* items() {
    try {
      yield* parseSse(response);
    } finally {
      clearTimeout(timer);
    }
  }
  return { http: response.status, headers: response.headers, contentType, response, items: items(), abort, id };
}

/**
 * Opens a JSON-RPC stream and collects every SSE item until the server closes it. Returns
 * {http, contentType, items, events (only the events), body (parsed JSON when the answer is not
 * SSE)}.
 */
export async function collectStream(url, method, params, options = {}) {
  const s = await openStream(url, method, params, options);
  if (!s.contentType.startsWith('text/event-stream')) {
    const text = await s.response.text();
    s.abort();
    let body;
    try { body = JSON.parse(text); } catch { body = text; }
    return { http: s.http, contentType: s.contentType, items: [], events: [], body };
  }
  const items = [];
  for await (const item of s.items) items.push(item);
  return { http: s.http, contentType: s.contentType, items, events: items.filter((i) => i.type === 'event') };
}
