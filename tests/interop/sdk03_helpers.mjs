// Shapes and checks shared by the tests that drive a2ad with @a2a-js/sdk 0.3.14 (`sdk03`):
// its v0.3 objects (kind-tagged, lowercase states) whichever binding carried them.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { artifactText03 } from './server.mjs';

export function userMessage(text, extra = {}) {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra };
}

export function assertEchoTask(task, text) {
  assert.equal(task.kind, 'task');
  assert.equal(typeof task.id, 'string');
  assert.ok(task.id.length > 0);
  assert.equal(typeof task.contextId, 'string');
  assert.ok(task.contextId.length > 0);
  assert.equal(task.status?.state, 'completed', `task state: ${JSON.stringify(task.status)}`);
  assert.equal(task.artifacts?.length, 1, `artifacts: ${JSON.stringify(task.artifacts)}`);
  const [artifact] = task.artifacts;
  assert.equal(typeof artifact.artifactId, 'string');
  for (const part of artifact.parts) assert.ok(part.kind, `artifact part without kind: ${JSON.stringify(part)}`);
  assert.ok(artifactText03(task).includes(text), `artifact does not echo '${text}': ${JSON.stringify(artifact)}`);
}

/** v0.3 stream of an echo task: Task, status working, artifact (lastChunk), status completed final. */
export function assertEchoStream(events, text) {
  const kinds = events.map((e) => e.kind === 'status-update' ? `status:${e.status?.state}` : e.kind);
  assert.deepEqual(kinds, ['task', 'status:working', 'artifact-update', 'status:completed'],
    `event sequence: ${JSON.stringify(events)}`);
  const [task, working, artifact, completed] = events;
  assert.equal(task.status.state, 'submitted');
  for (const ev of [working, artifact, completed]) {
    assert.equal(ev.taskId, task.id);
    assert.equal(ev.contextId, task.contextId);
  }
  assert.equal(working.final, false);
  assert.equal(artifact.lastChunk, true);
  assert.ok(artifact.append !== true, 'the single echo chunk must not append');
  assert.ok(artifact.artifact.parts.filter((p) => p.kind === 'text').map((p) => p.text).join('').includes(text),
    `artifact does not echo '${text}': ${JSON.stringify(artifact.artifact)}`);
  assert.equal(completed.final, true);
}
