// The operator console (issue 33) in a real browser: Debian's chromium, driven by
// playwright-core, against a2ad serving /console/ with API keys of two tenants. An operator
// signs in, starts a campaign-brief run from the Workflows page, sees it appear in another
// tab's task list without a reload, opens it, is refused an ill-typed edit next to the field,
// approves it and watches the timeline reach the end; pauses and resumes a long-delay run. A
// key of another tenant sees none of it; a read-only key sees no action. No request leaves
// for another origin, no Content-Security-Policy violation is reported, and axe-core finds no
// violation on any page. A server without keys needs no sign-in. Screenshots of each page
// go to $A2AD_SCREENSHOTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';

import { resolveBinary, startServer } from '../interop/server.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const here = path.dirname(fileURLToPath(import.meta.url));
const WORKFLOWS = path.resolve(here, '..', '..', 'workflows');
const SHOTS = process.env.A2AD_SCREENSHOTS ?? path.join(os.tmpdir(), 'a2ad-console-screens');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WAIT = 20_000;

let browser;
let server;
let receiver;
let accepting = false;
const received = [];
let dataDir;
const keys = {};
const offOrigin = []; // requests to anything but the server
const cspViolations = [];

function makeKey(tenant, scopes, name) {
  return execFileSync(resolveBinary(), ['keys', 'create', '--data-dir', dataDir, '--tenant', tenant,
    '--scopes', scopes, '--name', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM} (scripts/bootstrap.sh installs chromium)`);
  const playwright = await import('playwright-core');
  browser = await playwright.chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  await mkdir(SHOTS, { recursive: true });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'a2ad-console-'));
  const all = 'tasks:read,tasks:write,runs:read,runs:write,interrupts:resolve,push:manage';
  keys.ops = makeKey('acme', all, 'operator');
  keys.viewer = makeKey('acme', 'tasks:read,runs:read', 'viewer');
  keys.other = makeKey('globex', all, 'other-operator');
  // The bundled workflows, and a survey whose question has a constraint only the server checks.
  const workflows = path.join(dataDir, 'workflows');
  await cp(WORKFLOWS, workflows, { recursive: true });
  await writeFile(path.join(workflows, 'survey.json'), JSON.stringify({
    id: 'survey', name: 'Survey', version: '1.0.0', description: 'Asks how many seats.', metadata: { tags: ['test'] },
    triggers: [{ id: 'manual', type: 'manual', enabled: true }], variables: [], settings: { timeout: 0 },
    nodes: [{ id: 'ask', typeId: 'core.clarificationGate', name: 'Ask', position: { x: 0, y: 0 }, inputs: {},
      config: { questions: [
        { id: 'seats', question: 'How many seats?', schema: { type: 'integer', minimum: 1, maximum: 500 } },
        { id: 'region', question: 'Which region?', schema: { enum: ['eu', 'us'] } }] } }],
    edges: [],
  }));
  // A webhook that refuses until told otherwise: its deliveries are dead-lettered at once.
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.url);
      res.writeHead(accepting ? 200 : 503).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  server = await startServer({
    dataDir, workflowsDir: workflows,
    args: ['--push-allow-http', '--push-allowlist', '127.0.0.1/32', '--push-max-attempts', '1'],
  });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  receiver?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

// A tab of its own (sessionStorage is per tab), watching every request and CSP report.
async function tab() {
  const context = await browser.newContext();
  const page = await context.newPage();
  const origin = new URL(server.baseUrl).origin;
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(`${origin}/`) && !u.startsWith('data:')) offOrigin.push(u);
  });
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  return page;
}

async function signIn(page, key, at = '/console/') {
  await page.goto(`${server.baseUrl}${at}`);
  const form = page.getByRole('form', { name: 'Sign in' });
  await form.getByRole('textbox', { name: 'API key' }).fill(key);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor({ timeout: WAIT });
}

// axe-core's violations on the page as it is now (run in the page through the DevTools
// protocol, which the page's CSP does not govern), and a screenshot.
async function check(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`);
  });
  assert.deepEqual(violations, [], `axe on ${name}`);
}

const taskIdOf = (page) => decodeURIComponent(new URL(page.url()).pathname.split('/').pop());

test('an operator runs, answers, pauses and resumes tasks from the console; other keys see what they may', async () => {
  const list = await tab();
  await signIn(list, keys.ops, '/console/tasks');
  const table = list.getByRole('table', { name: 'Tasks' });
  await table.waitFor();
  await check(list, 'tasks-empty');

  // Start a campaign-brief run from the Workflows page (another tab).
  const work = await tab();
  await signIn(work, keys.ops);
  await work.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Workflows' }).click();
  await work.getByRole('table', { name: 'Workflows' }).getByRole('link', { name: 'campaign-brief' }).click();
  await work.getByRole('heading', { name: /Workflow campaign-brief/ }).waitFor();
  await check(work, 'workflow');
  const start = work.getByRole('form', { name: 'Start a run' });
  await start.getByLabel(/prompt/).fill('Brief for the Acme launch');
  await start.getByRole('button', { name: 'Start run' }).click();
  await work.waitForURL(/\/console\/tasks\/[^/]+$/, { timeout: WAIT });
  const briefId = taskIdOf(work);

  // The first tab's list shows it without a reload.
  await table.getByRole('link', { name: briefId }).waitFor({ timeout: WAIT });
  await table.getByRole('link', { name: briefId }).click();
  await list.getByRole('heading', { name: new RegExp(briefId) }).waitFor();

  // The gate's form: an ill-typed edit is refused next to its field; accept approves.
  const answer = list.getByRole('form', { name: 'Answer' });
  await answer.waitFor({ timeout: WAIT });
  for (const action of ['accept', 'reject', 'refine', 'edit-accept', 'ask'])
    assert.equal(await answer.getByRole('button', { name: action, exact: true }).count(), 1, action);
  await check(list, 'task-waiting');
  await answer.getByLabel(/editedArtifactData/).fill('"just a string"');
  await answer.getByRole('button', { name: 'edit-accept', exact: true }).click();
  const refusal = answer.getByRole('alert');
  await refusal.waitFor();
  assert.match(await refusal.innerText(), /editedArtifactData: expected an object/);
  assert.equal(await answer.getByLabel(/editedArtifactData/).getAttribute('aria-invalid'), 'true');
  await answer.getByLabel(/editedArtifactData/).fill('');
  await answer.getByLabel('Feedback').fill('Looks right');
  // Keyboard only: the action is reached and pressed without the mouse.
  await answer.getByRole('button', { name: 'accept', exact: true }).focus();
  await list.keyboard.press('Enter');
  const timeline = list.getByRole('region', { name: 'Timeline' });
  await timeline.getByText('run.completed', { exact: true }).waitFor({ timeout: WAIT });
  await list.getByText('completed', { exact: true }).first().waitFor();
  // Once the page has read the run's end: no gate, no action (it is over).
  await list.getByRole('form', { name: 'Answer' }).waitFor({ state: 'detached', timeout: WAIT });
  await list.getByRole('button', { name: 'Cancel task' }).waitFor({ state: 'detached', timeout: WAIT });
  await check(list, 'task-completed');

  // A long-delay run: pause it (choosing the mode), then resume it.
  await work.goto(`${server.baseUrl}/console/workflows/long-delay`);
  await work.getByRole('form', { name: 'Start a run' }).getByRole('button', { name: 'Start run' }).click();
  await work.waitForURL(/\/console\/tasks\/[^/]+$/, { timeout: WAIT });
  const delayId = taskIdOf(work);
  await work.getByRole('region', { name: 'Timeline' }).getByText('node.started', { exact: true }).waitFor({ timeout: WAIT });
  await work.getByLabel('Pause mode').selectOption('interrupt_immediate');
  await work.getByRole('button', { name: 'Pause' }).click();
  await work.getByRole('button', { name: 'Resume' }).waitFor({ timeout: WAIT });
  await work.getByRole('region', { name: 'Timeline' }).getByText('run.paused', { exact: true }).waitFor({ timeout: WAIT });
  await check(work, 'task-paused');
  await work.getByRole('button', { name: 'Resume' }).click();
  await work.getByRole('button', { name: 'Pause' }).waitFor({ timeout: WAIT });
  await work.getByRole('region', { name: 'Timeline' }).getByText('run.resumed', { exact: true }).waitFor({ timeout: WAIT });

  // The list filtered by skill, from the URL (a shared link): only the long-delay run.
  await list.goto(`${server.baseUrl}/console/tasks?workflowId=long-delay`);
  await table.getByRole('link', { name: delayId }).waitFor({ timeout: WAIT });
  assert.equal(await table.getByRole('link', { name: briefId }).count(), 0);
  await check(list, 'tasks-filtered');

  // Another tenant's operator: none of these tasks, and neither task's page.
  const other = await tab();
  await signIn(other, keys.other, '/console/tasks');
  await other.getByRole('status').filter({ hasText: 'task(s)' }).waitFor();
  assert.match(await other.getByRole('status').filter({ hasText: 'task(s)' }).innerText(), /^0 task/);
  for (const id of [briefId, delayId]) {
    await other.goto(`${server.baseUrl}/console/tasks/${id}`);
    await other.getByRole('alert').waitFor({ timeout: WAIT });
    assert.equal(await other.getByRole('button', { name: 'Cancel task' }).count(), 0);
  }

  // A read-only key: the tasks, and no action it cannot take.
  const viewer = await tab();
  await signIn(viewer, keys.viewer, `/console/tasks/${delayId}`);
  await viewer.getByRole('heading', { name: new RegExp(delayId) }).waitFor({ timeout: WAIT });
  await viewer.getByRole('region', { name: 'Timeline' }).getByText('run.resumed', { exact: true }).waitFor({ timeout: WAIT });
  for (const name of ['Cancel task', 'Pause', 'Resume'])
    assert.equal(await viewer.getByRole('button', { name, exact: true }).count(), 0, name);
  await viewer.goto(`${server.baseUrl}/console/workflows/long-delay`);
  await viewer.getByRole('heading', { name: /Workflow long-delay/ }).waitFor();
  assert.equal(await viewer.getByRole('form', { name: 'Start a run' }).count(), 0);
  await viewer.goto(`${server.baseUrl}/console/tasks`);
  await viewer.getByRole('table', { name: 'Tasks' }).getByRole('link', { name: delayId }).waitFor({ timeout: WAIT });
  assert.equal(await viewer.getByRole('button', { name: /Cancel \d+ matching/ }).count(), 0);

  // A clarification: one field per question, typed; the server's refusal (a bound only it
  // checks) is shown next to the field it names, and a good answer completes the run.
  await work.goto(`${server.baseUrl}/console/workflows/survey`);
  await work.getByRole('form', { name: 'Start a run' }).getByRole('button', { name: 'Start run' }).click();
  await work.waitForURL(/\/console\/tasks\/[^/]+$/, { timeout: WAIT });
  const survey = work.getByRole('form', { name: 'Answer' });
  await survey.waitFor({ timeout: WAIT });
  await survey.getByLabel(/How many seats/).fill('9000');
  await survey.getByLabel(/Which region/).selectOption('eu');
  await survey.getByRole('button', { name: 'Answer' }).click();
  const tooMany = survey.getByRole('alert');
  await tooMany.waitFor({ timeout: WAIT });
  assert.match(await tooMany.innerText(), /500/);
  assert.equal(await survey.getByLabel(/How many seats/).getAttribute('aria-invalid'), 'true');
  await check(work, 'task-clarification-refused');
  // Asked for, the runs waiting on a person lead the list, ahead of a newer one.
  const surveyId = taskIdOf(work);
  const newer = await fetch(`${server.baseUrl}/v1/runs`, {
    method: 'POST',
    headers: { 'X-API-Key': keys.ops, 'Content-Type': 'application/json' },
    body: JSON.stringify({ workflowId: 'await-event', inputs: {} }),
  }).then((r) => r.json());
  await list.goto(`${server.baseUrl}/console/tasks`);
  await table.getByRole('link', { name: newer.runId }).waitFor({ timeout: WAIT });
  assert.equal(await table.getByRole('link').first().innerText(), newer.runId);
  await list.getByLabel('Waiting on a person first').check();
  await list.waitForURL(/waitingFirst=1/);
  await list.waitForFunction((id) => document.querySelector('table[aria-label="Tasks"] tbody a')?.textContent === id, surveyId, { timeout: WAIT });
  await check(list, 'tasks-waiting-first');
  await survey.getByLabel(/How many seats/).fill('12');
  await survey.getByRole('button', { name: 'Answer' }).click();
  await work.getByRole('region', { name: 'Timeline' }).getByText('run.completed', { exact: true }).waitFor({ timeout: WAIT });

  // An objective (the OPT extension) and its page.
  const objective = await fetch(`${server.baseUrl}/a2a/rest/objectives`, {
    method: 'POST',
    headers: { 'X-API-Key': keys.ops, 'Content-Type': 'application/json', 'A2A-Version': '1.0',
      'A2A-Extensions': 'https://github.com/zeroasterisk/a2a-opt/v1' },
    body: JSON.stringify({ name: 'Q3 launch' }),
  }).then((r) => r.json());
  const objectiveId = objective.objective?.id ?? objective.id;
  assert.ok(objectiveId, JSON.stringify(objective));
  await work.goto(`${server.baseUrl}/console/objectives`);
  await work.getByRole('table', { name: 'Objectives' }).getByRole('link', { name: objectiveId }).click();
  await work.getByRole('heading', { name: new RegExp(objectiveId) }).waitFor();
  await work.getByText('Q3 launch').waitFor();
  await check(work, 'objective');

  // The other pages, each checked.
  for (const [at, heading, name] of [['/console/health', 'Health', 'health'],
    ['/console/objectives', 'Objectives', 'objectives'], ['/console/workflows', 'Workflows', 'workflows']]) {
    await work.goto(`${server.baseUrl}${at}`);
    await work.getByRole('heading', { name: heading, exact: true }).waitFor();
    await check(work, name);
  }
  // The credential is in the tab, never in a URL.
  assert.ok(!work.url().includes(keys.ops));

  // Cancel the long-delay run from its page; its push to the refusing webhook is
  // dead-lettered, and sent again from the page once the webhook accepts.
  const pushConfig = await fetch(`${server.baseUrl}/a2a/rest/tasks/${delayId}/pushNotificationConfigs`, {
    method: 'POST',
    headers: { 'X-API-Key': keys.ops, 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ url: `http://127.0.0.1:${receiver.address().port}/hook` }),
  });
  assert.equal(pushConfig.status, 200, await pushConfig.text());
  await work.goto(`${server.baseUrl}/console/tasks/${delayId}`);
  await work.getByRole('button', { name: 'Cancel task' }).click();
  await work.getByRole('region', { name: 'Timeline' }).getByText('run.cancelled', { exact: true }).waitFor({ timeout: WAIT });
  const deliveries = work.getByRole('table', { name: 'Deliveries' });
  const retry = deliveries.getByRole('button', { name: /^Retry delivery / });
  for (let i = 0; i < 40 && (await retry.count()) === 0; i++) {
    await work.waitForTimeout(250);
    await work.reload();
    await work.getByRole('heading', { name: new RegExp(delayId) }).waitFor();
  }
  await retry.waitFor({ timeout: WAIT });
  await check(work, 'task-dead-letter');
  const refused = received.length;
  accepting = true;
  await retry.click();
  await deliveries.getByText('delivered', { exact: true }).waitFor({ timeout: WAIT });
  assert.equal(received.length, refused + 1);

  // Bulk: three more long-delay runs, filtered, cancelled together after the count is shown.
  for (let i = 0; i < 3; i++)
    await fetch(`${server.baseUrl}/v1/runs`, {
      method: 'POST',
      headers: { 'X-API-Key': keys.ops, 'Content-Type': 'application/json' },
      body: JSON.stringify({ workflowId: 'long-delay', inputs: {} }),
    });
  await work.goto(`${server.baseUrl}/console/tasks?workflowId=long-delay&state=working`);
  const bulkCancel = work.getByRole('button', { name: 'Cancel 3 matching' });
  await bulkCancel.waitFor({ timeout: WAIT });
  let asked = '';
  work.once('dialog', (d) => { asked = d.message(); void d.accept(); });
  await bulkCancel.click();
  await work.getByRole('status').filter({ hasText: 'cancel: 3 done, 0 refused' }).waitFor({ timeout: WAIT });
  assert.match(asked, /Cancel 3 task/);
  await work.getByRole('status').filter({ hasText: /^0 task/ }).waitFor({ timeout: WAIT });

  assert.deepEqual(offOrigin, [], 'requests to another origin');
  assert.deepEqual(cspViolations, [], 'Content-Security-Policy violations');
});

test('the sign-in page refuses a key the server does not know, and says so', async () => {
  const page = await tab();
  await page.goto(`${server.baseUrl}/console/`);
  const form = page.getByRole('form', { name: 'Sign in' });
  await check(page, 'sign-in');
  await form.getByRole('textbox', { name: 'API key' }).fill('a2ad_not_a_real_key');
  await form.getByRole('button', { name: 'Sign in' }).click();
  await form.getByRole('alert').waitFor();
  assert.equal(await page.getByRole('navigation', { name: 'Console' }).count(), 0);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
});

test('a key revoked while its tab is open is asked for again, and the tab forgets it', async () => {
  const temp = makeKey('acme', 'tasks:read,runs:read', 'temporary');
  const page = await tab();
  await signIn(page, temp, '/console/workflows');
  await page.getByRole('table', { name: 'Workflows' }).waitFor();
  const id = (await page.getByRole('banner').innerText()).match(/acme \/ (\S+)/)[1];
  execFileSync(resolveBinary(), ['keys', 'revoke', '--data-dir', dataDir, id], { stdio: 'ignore' });
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Tasks' }).click();
  const form = page.getByRole('form', { name: 'Sign in' });
  await form.waitFor({ timeout: WAIT });
  assert.match(await form.getByRole('alert').innerText(), /^Signed out: /);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
});

test('a development server without keys needs no sign-in', async () => {
  const open = await startServer({ workflowsDir: WORKFLOWS });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${open.baseUrl}/console/workflows`);
    await page.getByRole('table', { name: 'Workflows' }).getByRole('link', { name: 'long-delay' }).waitFor({ timeout: WAIT });
    assert.equal(await page.getByRole('form', { name: 'Sign in' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).count(), 0);
    assert.match(await page.getByRole('banner').innerText(), /default \/ anonymous/);
    await context.close();
  } finally {
    await open.stop();
  }
});
