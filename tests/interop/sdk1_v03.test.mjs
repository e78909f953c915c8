// @a2a-js/sdk 1.3.0 (`sdk1`) in its A2A 0.3 compatibility mode against a2ad's 0.3 HTTP+JSON
// binding and 0.3 gRPC service. Its ClientFactory (legacyCompat enabled on the transport
// factories) picks, per binding, the card's supportedInterfaces entry of protocolVersion 1.0
// when there is one, so it is given the card with only the 0.3 entries (what an agent serving
// 0.3 alone would publish): it then builds LegacyRestTransport / LegacyGrpcTransport for the
// 0.3 URLs, sends `A2A-Version: 0.3`, and maps a2ad's 0.3 errors (the REST body's code, the
// gRPC ErrorInfo) back to its typed errors.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { loadDep, startServer } from './server.mjs';

const { ClientFactory, DefaultAgentCardResolver, RestTransportFactory } = await loadDep('sdk1/client');
const { GrpcTransportFactory } = await loadDep('sdk1/client/grpc');
const { Role, TaskState } = await loadDep('sdk1');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// Every field set: the gRPC transports serialize with ts-proto.
function userMessage(text) {
  return {
    messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, filename: '', mediaType: '' }],
    extensions: [], referenceTaskIds: [], metadata: undefined,
  };
}

function artifactText(task) {
  return task.artifacts.flatMap((a) => a.parts)
    .filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
}

async function drain(gen) {
  const out = [];
  for await (const ev of gen) out.push(ev);
  return out;
}

for (const { binding, makeFactory, expectedUrl } of [
  {
    binding: 'HTTP+JSON',
    makeFactory: () => new RestTransportFactory({ legacyCompat: { enabled: true } }),
    expectedUrl: (server) => `${server.baseUrl}/a2a/rest03`,
  },
  {
    binding: 'GRPC',
    makeFactory: () => new GrpcTransportFactory({ legacyCompat: { enabled: true } }),
    expectedUrl: (_server, grpcAddress) => grpcAddress,
  },
]) {
  describe(`a2ad ${binding} 0.3 with @a2a-js/sdk 1.3.0 in 0.3 compatibility mode`, () => {
    let server;
    let client;
    let grpcAddress;

    before(async () => {
      grpcAddress = `127.0.0.1:${await freePort()}`;
      server = await startServer({
        args: ['--grpc-listen', grpcAddress, '--push-allow-http', '--push-allowlist', '127.0.0.1/32'],
      });
      const resolver = new DefaultAgentCardResolver();
      const card = await resolver.resolve(server.baseUrl);
      const v03 = card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3');
      const entry = v03.find((i) => i.protocolBinding === binding);
      assert.equal(entry?.url, expectedUrl(server, grpcAddress), JSON.stringify(card.supportedInterfaces));
      client = await new ClientFactory({ transports: [makeFactory()], cardResolver: resolver })
        .createFromAgentCard({ ...card, supportedInterfaces: v03 });
    });
    after(async () => { await server?.stop(); });

    it('selects the 0.3 interface', () => {
      assert.equal(client.protocolVersion, '0.3');
    });

    it('sendMessage and getTask', async () => {
      const text = `sdk1 ${binding} 0.3 ${randomUUID()}`;
      const task = await client.sendMessage({ message: userMessage(text) });
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
      assert.ok(artifactText(task).includes(text), JSON.stringify(task.artifacts));
      const got = await client.getTask({ tenant: '', id: task.id, historyLength: 1 });
      assert.equal(got.id, task.id);
      assert.equal(got.history.length, 1);
    });

    it('errors arrive as the SDK\'s typed A2A errors', async () => {
      await assert.rejects(client.getTask({ tenant: '', id: `none-${randomUUID()}` }),
        (err) => { assert.match(err.name, /TaskNotFound/, `${err.name}: ${err.message}`); return true; });
      const done = await client.sendMessage({ message: userMessage('finish') });
      await assert.rejects(client.cancelTask({ tenant: '', id: done.id }),
        (err) => { assert.match(err.name, /TaskNotCancelable/, `${err.name}: ${err.message}`); return true; });
    });

    it('sendMessageStream yields task, working, artifact, completed', async () => {
      const text = `sdk1 ${binding} stream ${randomUUID()}`;
      const events = await drain(client.sendMessageStream({ message: userMessage(text) }));
      const kinds = events.map(({ payload }) => (payload?.$case === 'statusUpdate'
        ? `statusUpdate:${TaskState[payload.value.status?.state]}` : payload?.$case));
      assert.deepEqual(kinds, ['task', 'statusUpdate:TASK_STATE_WORKING', 'artifactUpdate',
        'statusUpdate:TASK_STATE_COMPLETED'], JSON.stringify(events));
      assert.equal(events[2].payload.value.artifact.parts[0].content.value, text);

      const replay = await drain(client.resubscribeTask({ tenant: '', id: events[0].payload.value.id }));
      assert.deepEqual(replay.map(({ payload }) => payload?.$case), ['task'], JSON.stringify(replay));
    });

    it('push configs: create, get, list, delete', async () => {
      const task = await client.sendMessage({ message: userMessage('push target') });
      const created = await client.createTaskPushNotificationConfig({
        tenant: '', taskId: task.id, id: 'cfg-1', url: 'http://127.0.0.1:9/hook', token: 'tok',
      });
      assert.equal(created.taskId, task.id);
      assert.equal(created.id, 'cfg-1');
      const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
      assert.equal(got.url, 'http://127.0.0.1:9/hook');
      const list = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
      assert.deepEqual(list.configs.map((c) => c.id), ['cfg-1']);
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
      const empty = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
      assert.equal(empty.configs.length, 0);
    });
  });
}
