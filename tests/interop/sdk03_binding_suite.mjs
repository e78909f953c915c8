// One suite, run per binding by sdk03_rest.test.mjs and sdk03_grpc.test.mjs: the 0.3.x
// ClientFactory of @a2a-js/sdk 0.3.14 (`sdk03`), given only that binding's transport, picks
// a2ad's interface from the card's `additionalInterfaces` (its `preferredTransport` is
// JSONRPC, which the factory then cannot serve) and drives every operation the binding has:
// send (blocking and not), get, cancel, stream, resubscribe, the push-config methods, the
// extended card, and the errors as the SDK's typed errors. A second server with a slow echo
// (--echo-delay-ms) makes cancel and resubscribe meet a live task.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TERMINAL_STATES_03, loadDep, startServer, uncleanExit, waitFor } from './server.mjs';
import { assertEchoStream, assertEchoTask, userMessage } from './sdk03_helpers.mjs';

const {
  ClientFactory, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError,
} = await loadDep('sdk03/client');

async function drain(gen) {
  const out = [];
  for await (const ev of gen) out.push(ev);
  return out;
}

/**
 * `binding`: the card's transport name ("HTTP+JSON", "GRPC"); `transportFactory()` makes the
 * SDK's factory for it; `serverArgs()` the extra `a2ad serve` flags (per server, e.g. a fresh
 * --grpc-listen port); `interfaceUrl(server, args)` the URL the card must name for the binding
 * of the server started with those flags.
 */
export function describeSdk03Binding({ binding, transportFactory, serverArgs, interfaceUrl }) {
  describe(`a2ad ${binding} 0.3 with @a2a-js/sdk 0.3.14 (ClientFactory, ${binding} only)`, () => {
    let server;
    let client;
    let args;

    before(async () => {
      args = await serverArgs();
      server = await startServer({
        args: ['--push-allow-http', '--push-allowlist', '127.0.0.1/32', ...args],
      });
      client = await new ClientFactory({ transports: [transportFactory()] })
        .createFromUrl(server.baseUrl);
    });
    after(async () => { await server?.stop(); });

    it(`the card's additionalInterfaces name the ${binding} interface, and the client took it`, async () => {
      const card = await client.getAgentCard();
      assert.equal(card.preferredTransport, 'JSONRPC');
      const entry = card.additionalInterfaces.find((i) => i.transport === binding);
      assert.ok(entry, JSON.stringify(card.additionalInterfaces));
      assert.equal(entry.url, interfaceUrl(server, args));
      // The 1.0 card (A2A-Version: 1.0) lists the same 0.3 interface.
      const card10 = await (await fetch(server.cardUrl, { headers: { 'A2A-Version': '1.0' } })).json();
      const v03 = card10.supportedInterfaces.find(
        (i) => i.protocolBinding === binding && i.protocolVersion === '0.3');
      assert.equal(v03?.url, entry.url, JSON.stringify(card10.supportedInterfaces));
    });

    it('sendMessage (blocking) returns the completed echo task', async () => {
      const text = `${binding} hello ${randomUUID()}`;
      const task = await client.sendMessage({ message: userMessage(text) });
      assertEchoTask(task, text);
      assert.equal(task.history?.[0]?.parts?.[0]?.text, text, JSON.stringify(task.history));
    });

    it('sendMessage (non-blocking) returns at once; getTask shows it completed, historyLength trims', async () => {
      const text = `${binding} later ${randomUUID()}`;
      const task = await client.sendMessage({ message: userMessage(text), configuration: { blocking: false } });
      assert.equal(task.kind, 'task');
      const done = await waitFor(() => client.getTask({ id: task.id }),
        (t) => TERMINAL_STATES_03.includes(t.status?.state));
      assertEchoTask(done, text);
      assert.equal(done.contextId, task.contextId);
      const trimmed = await client.getTask({ id: task.id, historyLength: 1 });
      assert.equal(trimmed.history.length, 1);
    });

    it('a follow-up in the same context keeps the contextId', async () => {
      const first = await client.sendMessage({ message: userMessage('first turn') });
      const second = await client.sendMessage({ message: userMessage('second', { contextId: first.contextId }) });
      assert.equal(second.contextId, first.contextId);
      assert.notEqual(second.id, first.id);
    });

    it('errors arrive as the SDK\'s typed A2A errors', async () => {
      await assert.rejects(client.getTask({ id: `none-${randomUUID()}` }), TaskNotFoundError);
      const done = await client.sendMessage({ message: userMessage('finish') });
      await assert.rejects(client.cancelTask({ id: done.id }), TaskNotCancelableError);
      await assert.rejects(client.cancelTask({ id: `none-${randomUUID()}` }), TaskNotFoundError);
      await assert.rejects(client.sendMessage({ message: userMessage('more', { taskId: done.id }) }));
      await assert.rejects(
        client.sendMessage({ message: userMessage('x', { taskId: `none-${randomUUID()}` }) }),
        TaskNotFoundError);
      // This agent has no extended card (0.3: GET /v1/card, gRPC GetAgentCard).
      await assert.rejects(client.transport.getExtendedAgentCard(), UnsupportedOperationError);
    });

    it('sendMessageStream yields task, working, artifact, completed final:true', async () => {
      const text = `${binding} stream ${randomUUID()}`;
      const events = await drain(client.sendMessageStream({ message: userMessage(text) }));
      assertEchoStream(events, text);
      assertEchoTask(await client.getTask({ id: events[0].id }), text);
    });

    it('resubscribeTask of a finished task yields the Task and ends; of an unknown one throws', async () => {
      const text = `${binding} resubscribe ${randomUUID()}`;
      const task = await client.sendMessage({ message: userMessage(text) });
      const events = await drain(client.resubscribeTask({ id: task.id }));
      assert.equal(events.length, 1, JSON.stringify(events));
      assertEchoTask(events[0], text);
      await assert.rejects(drain(client.resubscribeTask({ id: `none-${randomUUID()}` })), TaskNotFoundError);
    });

    it('push configs: set, get, list, delete', async () => {
      const task = await client.sendMessage({ message: userMessage('push target') });
      const set = await client.setTaskPushNotificationConfig({
        taskId: task.id,
        pushNotificationConfig: {
          id: 'cfg-1', url: 'http://127.0.0.1:9/hook', token: 'tok',
          authentication: { schemes: ['Bearer'], credentials: 'secret' },
        },
      });
      assert.equal(set.taskId, task.id);
      assert.equal(set.pushNotificationConfig.id, 'cfg-1');
      assert.equal(set.pushNotificationConfig.token, 'tok');
      assert.deepEqual(set.pushNotificationConfig.authentication?.schemes, ['Bearer']);
      assert.ok(!set.pushNotificationConfig.authentication?.credentials, 'credentials are never echoed');
      const got = await client.getTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'cfg-1' });
      assert.equal(got.pushNotificationConfig.url, 'http://127.0.0.1:9/hook');
      const second = await client.setTaskPushNotificationConfig({
        taskId: task.id, pushNotificationConfig: { id: 'cfg-2', url: 'http://127.0.0.1:9/other' },
      });
      assert.equal(second.pushNotificationConfig.id, 'cfg-2');
      const list = await client.listTaskPushNotificationConfig({ id: task.id });
      assert.deepEqual(list.map((c) => c.pushNotificationConfig.id).sort(), ['cfg-1', 'cfg-2']);
      await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'cfg-1' });
      const after = await client.listTaskPushNotificationConfig({ id: task.id });
      assert.deepEqual(after.map((c) => c.pushNotificationConfig.id), ['cfg-2']);
      await assert.rejects(client.setTaskPushNotificationConfig({
        taskId: `none-${randomUUID()}`, pushNotificationConfig: { id: 'x', url: 'http://127.0.0.1:9/h' },
      }), TaskNotFoundError);
      // A URL the egress guard refuses: an error (0.3 has no typed InvalidParams in this SDK).
      await assert.rejects(client.setTaskPushNotificationConfig({
        taskId: task.id, pushNotificationConfig: { id: 'bad', url: 'http://10.0.0.1/h' },
      }));
    });

    it('shuts down cleanly on SIGTERM', async () => {
      const how = uncleanExit(await server.stop());
      assert.equal(how, '', how);
    });
  });

  describe(`a2ad ${binding} 0.3 with a slow echo and @a2a-js/sdk 0.3.14: live tasks`, () => {
    const DELAY_MS = 1000;
    let server;
    let client;

    before(async () => {
      server = await startServer({ args: ['--echo-delay-ms', String(DELAY_MS), ...(await serverArgs())] });
      client = await new ClientFactory({ transports: [transportFactory()] })
        .createFromUrl(server.baseUrl);
    });
    after(async () => { await server?.stop(); });

    it('cancelTask of a working task cancels it for good; a second cancel is TaskNotCancelable', async () => {
      const task = await client.sendMessage({ message: userMessage('cancel me'), configuration: { blocking: false } });
      assert.ok(['submitted', 'working'].includes(task.status?.state), JSON.stringify(task.status));
      const canceled = await client.cancelTask({ id: task.id });
      assert.equal(canceled.id, task.id);
      assert.equal(canceled.status.state, 'canceled');
      await new Promise((r) => setTimeout(r, DELAY_MS + 300));
      assert.equal((await client.getTask({ id: task.id })).status.state, 'canceled');
      await assert.rejects(client.cancelTask({ id: task.id }), TaskNotCancelableError);
    });

    it('resubscribeTask on a live task yields the snapshot, then the events up to completed final', async () => {
      const text = `${binding} live ${randomUUID()}`;
      const task = await client.sendMessage({ message: userMessage(text), configuration: { blocking: false } });
      const events = await drain(client.resubscribeTask({ id: task.id }));
      const [snapshot, ...rest] = events;
      assert.equal(snapshot.kind, 'task', JSON.stringify(events));
      assert.equal(snapshot.id, task.id);
      const kinds = rest.map((e) => (e.kind === 'status-update' ? `status:${e.status?.state}` : e.kind));
      assert.deepEqual(kinds.slice(-2), ['artifact-update', 'status:completed'], JSON.stringify(rest));
      assert.equal(rest.at(-1).final, true);
      for (const ev of rest.slice(0, -1)) if (ev.kind === 'status-update') assert.equal(ev.final, false);
    });

    it('shuts down cleanly on SIGTERM', async () => {
      const how = uncleanExit(await server.stop());
      assert.equal(how, '', how);
    });
  });
}
