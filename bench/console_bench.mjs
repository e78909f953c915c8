// The operator console in headless chromium (issue 33; bench/RESULTS-console.md). Run by hand,
// never by `make test`:
//
//   cmake --build --preset release -j2 --target a2ad && node bench/console_bench.mjs
//
// Against the real a2ad binary (A2AD_BIN, else build/release) on 127.0.0.1, port 0, a fresh
// temp data directory, the repository's workflows/, no authentication:
//   1. TASKS (default 100,000) tasks are made with message/send (echo, non-blocking) over
//      SENDERS (16) keep-alive connections, and one long-delay run is paused and resumed until
//      its log holds EVENTS (default 10,000) events.
//   2. Each of ROUNDS (5) rounds, in a new browser context (a cold cache each time):
//      - /console/tasks: first contentful paint, and the time until the table "Tasks" shows
//        its first 50 rows of the TASKS (from navigation start);
//      - /console/tasks/<run>: the time until the timeline holds every event (its count says
//        so), then the time of scrolling it to the start and back to the end (two animation
//        frames after each scroll);
//      - the bytes the console's files took on the wire (gzip), from the resource timings.
// Prints the medians as a Markdown table and one `RESULT {json}` line per round.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startServer } from '../tests/interop/server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const env = (k, d) => (process.env[k] ? Number(process.env[k]) : d);
const TASKS = env('TASKS', 100_000);
const EVENTS = env('EVENTS', 10_000);
const SENDERS = env('SENDERS', 16);
const ROUNDS = env('ROUNDS', 5);
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

const agent = new http.Agent({ keepAlive: true, maxSockets: SENDERS });
function call(base, method, target, body, headers = {}) {
  const url = new URL(target, base);
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method, agent,
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => (res.statusCode < 300 ? resolve(text ? JSON.parse(text) : {}) : reject(new Error(`${target}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function makeTasks(base) {
  let next = 0;
  const started = Date.now();
  const sender = async () => {
    while (next < TASKS) {
      next++;
      await call(base, 'POST', '/a2a/rest/message:send', {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }], metadata: { skillId: 'echo' } },
        configuration: { blocking: false },
      });
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
  return (Date.now() - started) / 1000;
}

async function makeLongTimeline(base) {
  const run = await call(base, 'POST', '/v1/runs', { workflowId: 'long-delay', inputs: {} });
  const id = run.runId;
  // Whether the log holds EVENTS events: one after sequence EVENTS - 2 (the first is 0).
  const enough = async () => {
    const after = await call(base, 'GET', `/v1/runs/${id}/events/poll?lastSequence=${EVENTS - 2}&timeout=0`);
    return after.events.length > 0;
  };
  for (let i = 0; ; i++) {
    if (i % 100 === 0 && (await enough())) break;
    const paused = await call(base, 'POST', `/a2a/rest/tasks/${id}:pause`, { mode: 'finish_step' });
    const handle = paused.status?.pause?.resumeToken ?? paused.metadata?.pause?.resumeToken;
    await call(base, 'POST', `/a2a/rest/tasks/${id}:resume`, { handle });
  }
  return id;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const server = await startServer({ workflowsDir: path.join(root, 'workflows') });
  try {
    const base = server.baseUrl;
    const makeS = await makeTasks(base);
    const runId = await makeLongTimeline(base);
    const { chromium } = await import('../tests/browser/node_modules/playwright-core/index.mjs');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
    });
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${base}/console/tasks`);
      await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Tasks"] tbody tr').length >= 50, null, { timeout: 60_000 });
      const list = await page.evaluate(() => ({
        usable: performance.now(),
        fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1,
        bytes: performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))
          .filter((e) => new URL(e.name).pathname.startsWith('/console/'))
          .reduce((n, e) => n + e.transferSize, 0),
        total: document.querySelector('p.pager')?.textContent ?? '',
      }));
      await page.goto(`${base}/console/tasks/${runId}`);
      await page.waitForFunction((n) => parseInt(document.querySelector('.timeline .count')?.textContent ?? '0', 10) >= n,
        EVENTS, { timeout: 120_000, polling: 'raf' });
      const timeline = await page.evaluate(async () => {
        const loaded = performance.now();
        const ol = document.querySelector('.timeline .rows');
        const frames = () => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
        const t0 = performance.now();
        ol.scrollTop = 0;
        await frames();
        ol.scrollTop = ol.scrollHeight;
        await frames();
        return { loaded, scroll: performance.now() - t0, rows: parseInt(document.querySelector('.timeline .count').textContent, 10) };
      });
      rounds.push({ fcp: list.fcp, usable: list.usable, bytes: list.bytes, timeline: timeline.loaded, scroll: timeline.scroll, rows: timeline.rows, total: list.total });
      console.log(`RESULT ${JSON.stringify(rounds.at(-1))}`);
      await context.close();
    }
    await browser.close();
    const m = (k) => median(rounds.map((x) => x[k])).toFixed(0);
    console.log(`\n${TASKS} tasks made in ${makeS.toFixed(1)} s; a timeline of ${rounds[0].rows} events; ${ROUNDS} rounds, medians:\n`);
    console.log('| measure | ms |\n|---|---|');
    console.log(`| first contentful paint of /console/tasks | ${m('fcp')} |`);
    console.log(`| the first 50 of ${TASKS} tasks shown | ${m('usable')} |`);
    console.log(`| a timeline of ${rounds[0].rows} events shown (navigation to last row) | ${m('timeline')} |`);
    console.log(`| that timeline scrolled to the start and back to the end | ${m('scroll')} |`);
    console.log(`\nthe console's files on the wire (gzip, cold cache): ${m('bytes')} bytes`);
  } finally {
    await server.stop();
  }
}

await main();
