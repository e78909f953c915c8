// The echo agent of the @a2a-js/sdk 1.x benchmark servers (sdk1_server.mjs for JSON-RPC,
// sdk1_bindings_server.mjs for HTTP+JSON and gRPC), with the behaviour of a2ad's `echo` skill:
// every message creates a task that goes submitted -> working -> (artifact echoing the
// message's parts) -> completed.
import { TaskState } from 'sdk1';
import { AgentEvent } from 'sdk1/server';

export class EchoExecutor {
  async execute(ctx, bus) {
    const user = ctx.userMessage;
    const now = () => new Date().toISOString();
    if (!ctx.task) {
      bus.publish(
        AgentEvent.task({
          id: ctx.taskId,
          contextId: ctx.contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now(), message: undefined },
          artifacts: [],
          history: [user],
          metadata: undefined,
        }),
      );
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_WORKING, timestamp: now(), message: undefined },
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        artifact: {
          artifactId: `${ctx.taskId}-echo`,
          name: 'echo',
          description: '',
          parts: user.parts,
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: now(), message: undefined },
        metadata: undefined,
      }),
    );
    bus.finished();
  }

  async cancelTask() {}
}

// The agent card of the echo servers, listing `supportedInterfaces`.
export function echoCard(supportedInterfaces) {
  return {
    name: 'sdk1 echo',
    description: 'Echo server for the a2ad benchmarks',
    supportedInterfaces,
    provider: undefined,
    version: '0.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Echoes the message as an artifact',
        tags: ['echo'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
