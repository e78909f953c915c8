// An @a2a-js/sdk 0.3.x JSON-RPC server with the behaviour of a2ad's `echo` skill, for the side-
// by-side benchmarks (bench/RESULTS.md): every message creates a task that goes submitted ->
// working -> (artifact echoing the message's parts) -> completed; a blocking message/send
// returns the completed task. Tasks live in the SDK's InMemoryTaskStore (0.3.x ships no other).
//
//   node sdk03_server.mjs
//
// Listens on 127.0.0.1, port 0 (a free port). When ready, prints
// "sdk03: serving http://127.0.0.1:PORT/" on stdout.
import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from 'sdk03/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from 'sdk03/server/express';

class EchoExecutor {
  async execute(ctx, bus) {
    const user = ctx.userMessage;
    const now = () => new Date().toISOString();
    const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    if (!ctx.task) {
      bus.publish({
        kind: 'task',
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: 'submitted', timestamp: now() },
        history: [user],
      });
    }
    bus.publish({ kind: 'status-update', ...ids, status: { state: 'working', timestamp: now() }, final: false });
    bus.publish({
      kind: 'artifact-update',
      ...ids,
      artifact: { artifactId: `${ctx.taskId}-echo`, name: 'echo', parts: user.parts },
      lastChunk: true,
    });
    bus.publish({ kind: 'status-update', ...ids, status: { state: 'completed', timestamp: now() }, final: true });
    bus.finished();
  }

  async cancelTask() {}
}

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const base = `http://127.0.0.1:${port}`;
  const card = {
    protocolVersion: '0.3.0',
    name: 'sdk03 echo',
    description: 'Echo server for the a2ad benchmarks',
    url: `${base}/v1/a2a`,
    preferredTransport: 'JSONRPC',
    version: '0.0.0',
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the message as an artifact', tags: ['echo'] }],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor());
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/v1/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(`sdk03: serving ${base}/`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
