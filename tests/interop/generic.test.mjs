// Issue 29, 3: a generic A2A client, one that sends text and sets no metadata (the SDKs'
// samples, chat front ends), reaches a skill of a2ad started without --default-skill. Its
// message starts a task that asks which skill (input-required, listing the skills); the answer
// turns the same task into that skill's run. Both SDK generations, no a2ad-specific field.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDep, startServer } from './server.mjs';

const { A2AClient } = await loadDep('sdk03/client');
const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } =
  await loadDep('sdk1/client');
const { Role, TaskState } = await loadDep('sdk1');

const here = path.dirname(fileURLToPath(import.meta.url));
const workflows = path.resolve(here, '../../workflows');

const text03 = (text, taskId) => ({
  kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }],
  ...(taskId ? { taskId } : {}),
});

describe('a generic client without a skill selector', () => {
  let server;

  before(async () => {
    // No default skill: the client names none.
    server = await startServer({ workflowsDir: workflows, env: { A2AD_DEFAULT_SKILL: '' } });
  });
  after(async () => { await server?.stop(); });

  it('0.3 A2AClient: asked which skill, answers with its name, gets that run', async () => {
    const client = await A2AClient.fromCardUrl(server.cardUrl);
    const first = await client.sendMessage({ message: text03('Brief for the Acme launch') });
    assert.ok(!('error' in first), JSON.stringify(first));
    const task = first.result;
    assert.equal(task.status.state, 'input-required');
    const question = task.status.message.parts.map((p) => p.text ?? '').join('');
    for (const skill of ['campaign-brief', 'long-delay', 'clarify-then-confirm'])
      assert.ok(question.includes(skill), `the question lists ${skill}: ${question}`);
    assert.equal(task.metadata.openwop.interrupt.kind, 'clarification');

    const wrong = await client.sendMessage({ message: text03('the blue one', task.id) });
    assert.equal(wrong.error?.code, -32602, JSON.stringify(wrong));

    const chosen = await client.sendMessage({ message: text03('campaign-brief', task.id) });
    assert.ok(!('error' in chosen), JSON.stringify(chosen));
    assert.equal(chosen.result.id, task.id);
    assert.equal(chosen.result.status.state, 'input-required'); // the brief's approval gate
    assert.equal(chosen.result.metadata.openwop.interrupt.kind, 'approval');
    const run = await (await fetch(`${server.baseUrl}/v1/runs/${task.id}`)).json();
    assert.equal(run.workflowId, 'campaign-brief');
    assert.equal(run.variables.prompt, 'Brief for the Acme launch');

    const done = await client.sendMessage({
      message: {
        kind: 'message', messageId: randomUUID(), role: 'user', taskId: task.id,
        parts: [{ kind: 'data', data: { action: 'accept' } }],
      },
    });
    assert.equal(done.result.status.state, 'completed', JSON.stringify(done));
  });

  it('1.x Client: text only, then the number of the skill', async () => {
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({})],
      cardResolver: new DefaultAgentCardResolver({}),
    }));
    const client = await factory.createFromUrl(server.baseUrl);
    const say = (text, taskId) => client.sendMessage({
      message: {
        messageId: randomUUID(), role: Role.ROLE_USER, taskId: taskId ?? '',
        parts: [{ content: { $case: 'text', value: text } }],
      },
    });
    const task = await say('Plan the launch email');
    assert.equal(task.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const question = task.status.message.parts.map((p) => p.content?.value ?? '').join('');
    const line = question.split('\n').find((l) => l.includes('. clarify-then-confirm'));
    assert.ok(line, question);
    const answered = await say(line.split('.')[0], task.id);
    assert.equal(answered.id, task.id);
    assert.equal(answered.status.state, TaskState.TASK_STATE_INPUT_REQUIRED); // its two questions
    assert.equal(answered.metadata.openwop.interrupt.nodeId !== 'a2ad.skill', true);
  });

  it('a slash command names the skill in the text', async () => {
    const client = await A2AClient.fromCardUrl(server.cardUrl);
    const sent = await client.sendMessage({ message: text03('/clarify-then-confirm Plan it') });
    assert.equal(sent.result.status.state, 'input-required');
    const run = await (await fetch(`${server.baseUrl}/v1/runs/${sent.result.id}`)).json();
    assert.equal(run.workflowId, 'clarify-then-confirm');
    assert.equal(run.variables.prompt, 'Plan it');
  });
});
