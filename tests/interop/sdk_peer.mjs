// An A2A peer written with an official SDK, for a2ad's core.a2a.invoke interop test
// (invoke.test.mjs): `node sdk_peer.mjs sdk1` serves @a2a-js/sdk 1.3.0 (A2A 1.0 card and
// JSON-RPC, REST at /v1/rest: a second 1.0 interface, HTTP+JSON, and gRPC: the SDK's
// grpcService on an @grpc/grpc-js server, plaintext, a third), `node sdk_peer.mjs sdk03`
// serves 0.3.14. The first word of the message's first
// text part says what the agent does:
//   complete  working, an artifact "done: <text>", completed
//   input     input-required asking "Which region?"; the reply completes it with an artifact
//             "region: <reply>"
//   auth      auth-required asking "Sign in first"; the reply completes it likewise
//   reject    rejected          fail   failed ("out of paper")
//   slow      working for 1.5 s, then as complete (a caller following by stream or push
//             hears the change; the peers stream and push, to any URL: test peers)
// Listens on 127.0.0.1:0; prints "<sdk>: serving http://127.0.0.1:PORT/" when ready.
import express from 'express';

const which = process.argv[2];
if (which !== 'sdk1' && which !== 'sdk03') throw new Error('usage: sdk_peer.mjs sdk1|sdk03');
const server = await import(`${which}/server`);
const serverExpress = await import(`${which}/server/express`);
const now = () => new Date().toISOString();

// The two SDKs' shapes of what the executor publishes.
const shapes = which === 'sdk03'
  ? {
      text: (t) => ({ kind: 'text', text: t }),
      textOf: (m) => (m.parts.find((p) => p.kind === 'text') ?? {}).text ?? '',
      state: (s) => s,
      message: (ctx, t) => ({ kind: 'message', messageId: `${ctx.taskId}-${Date.now()}`, role: 'agent',
        parts: [{ kind: 'text', text: t }], taskId: ctx.taskId, contextId: ctx.contextId }),
      task: (ctx, user) => ({ kind: 'task', id: ctx.taskId, contextId: ctx.contextId,
        status: { state: 'submitted', timestamp: now() }, history: [user] }),
      status: (ctx, state, message) => ({ kind: 'status-update', taskId: ctx.taskId, contextId: ctx.contextId,
        status: { state, timestamp: now(), message }, final: ['completed', 'failed', 'rejected', 'input-required', 'auth-required'].includes(state) }),
      artifact: (ctx, t) => ({ kind: 'artifact-update', taskId: ctx.taskId, contextId: ctx.contextId,
        artifact: { artifactId: `${ctx.taskId}-out`, name: 'out', parts: [{ kind: 'text', text: t }] }, lastChunk: true }),
    }
  : await (async () => {
      const { TaskState, Role } = await import('sdk1');
      const { AgentEvent } = server;
      const states = { working: TaskState.TASK_STATE_WORKING, completed: TaskState.TASK_STATE_COMPLETED,
        failed: TaskState.TASK_STATE_FAILED, rejected: TaskState.TASK_STATE_REJECTED,
        'input-required': TaskState.TASK_STATE_INPUT_REQUIRED, 'auth-required': TaskState.TASK_STATE_AUTH_REQUIRED };
      const part = (t) => ({ content: { $case: 'text', value: t }, metadata: undefined, filename: '', mediaType: '' });
      return {
        textOf: (m) => (m.parts.find((p) => p.content?.$case === 'text') ?? { content: { value: '' } }).content.value,
        message: (ctx, t) => ({ messageId: `${ctx.taskId}-${Date.now()}`, contextId: ctx.contextId, taskId: ctx.taskId,
          role: Role.ROLE_AGENT, parts: [part(t)], metadata: undefined, extensions: [], referenceTaskIds: [] }),
        task: (ctx, user) => AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now(), message: undefined },
          artifacts: [], history: [user], metadata: undefined }),
        status: (ctx, state, message) => AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId,
          status: { state: states[state], timestamp: now(), message }, metadata: undefined }),
        artifact: (ctx, t) => AgentEvent.artifactUpdate({ taskId: ctx.taskId, contextId: ctx.contextId,
          artifact: { artifactId: `${ctx.taskId}-out`, name: 'out', description: '', parts: [part(t)],
            metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined }),
      };
    })();

class Behaviours {
  async execute(ctx, bus) {
    const s = shapes;
    const text = s.textOf(ctx.userMessage);
    const finish = (state, message) => { bus.publish(s.status(ctx, state, message)); bus.finished(); };
    if (ctx.task) {  // the reply to an input-required or auth-required
      bus.publish(s.status(ctx, 'working'));
      bus.publish(s.artifact(ctx, `region: ${text}`));
      return finish('completed');
    }
    bus.publish(s.task(ctx, ctx.userMessage));
    bus.publish(s.status(ctx, 'working'));
    const word = text.split(/\s+/)[0];
    if (word === 'input') return finish('input-required', s.message(ctx, 'Which region?'));
    if (word === 'auth') return finish('auth-required', s.message(ctx, 'Sign in first'));
    if (word === 'reject') return finish('rejected', s.message(ctx, 'not my job'));
    if (word === 'fail') return finish('failed', s.message(ctx, 'out of paper'));
    if (word === 'slow') await new Promise((r) => setTimeout(r, 1500));
    // A little work first, so the caller sees the task working.
    await new Promise((r) => setTimeout(r, 100));
    bus.publish(s.artifact(ctx, `done: ${text}`));
    return finish('completed');
  }
  async cancelTask() {}
}

// The 1.3.0 peer's gRPC interface (lf.a2a.v1.A2AService), plaintext HTTP/2.
const grpc = which === 'sdk1' ? await (async () => {
  const { Server, ServerCredentials } = await import('@grpc/grpc-js');
  const srv = new Server();
  const port = await new Promise((resolve, reject) =>
    srv.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return { srv, port, mod: await import('sdk1/server/grpc') };
})() : undefined;

const app = express();
const listener = app.listen(0, '127.0.0.1', () => {
  const { port } = listener.address();
  const base = `http://127.0.0.1:${port}`;
  const skill = { id: 'behave', name: 'Behave', description: 'does what the message says', tags: ['test'] };
  const card = which === 'sdk03'
    ? { protocolVersion: '0.3.0', name: 'sdk03 peer', description: 'test peer', url: `${base}/v1/a2a`,
        preferredTransport: 'JSONRPC', version: '0.0.0', capabilities: { streaming: true, pushNotifications: true },
        defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [skill] }
    : { name: 'sdk1 peer', description: 'test peer',
        supportedInterfaces: [{ url: `${base}/v1/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
          { url: `${base}/v1/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
          { url: `127.0.0.1:${grpc.port}`, protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: '' }],
        provider: undefined, version: '0.0.0', capabilities: { streaming: true, pushNotifications: true, extensions: [] },
        securitySchemes: {}, securityRequirements: [], defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
        skills: [{ ...skill, examples: [], inputModes: [], outputModes: [], securityRequirements: [] }], signatures: [] };
  const pushStore = new server.InMemoryPushNotificationStore();
  const handler = new server.DefaultRequestHandler(card, new server.InMemoryTaskStore(), new Behaviours(),
    new server.DefaultExecutionEventBusManager(), pushStore, new server.DefaultPushNotificationSender(pushStore));
  app.use('/.well-known/agent-card.json', serverExpress.agentCardHandler({ agentCardProvider: handler }));
  app.use('/v1/a2a', serverExpress.jsonRpcHandler({ requestHandler: handler, userBuilder: serverExpress.UserBuilder.noAuthentication }));
  if (serverExpress.restHandler)
    app.use('/v1/rest', serverExpress.restHandler({ requestHandler: handler, userBuilder: serverExpress.UserBuilder.noAuthentication }));
  if (grpc)
    grpc.srv.addService(grpc.mod.A2AService,
      grpc.mod.grpcService({ requestHandler: handler, userBuilder: serverExpress.UserBuilder.noAuthentication }));
  console.log(`${which}: serving ${base}/`);
});
process.on('SIGTERM', () => {
  grpc?.srv.forceShutdown();
  listener.close(() => process.exit(0));
});
