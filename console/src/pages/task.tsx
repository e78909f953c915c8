// A task: its state and status message, inputs, artifacts and history; the timeline of its
// events, live (the run's event stream, every event); the workflow drawn with each node's
// state; its parent and child runs; its push configs; and what the caller may do to it:
// answer its gate, cancel, pause (choosing the mode), resume.
import { useEffect, useRef, useState } from 'preact/hooks';

import { api, ApiError, can, stream, type Me } from '../api';
import { follow, href } from '../route';
import { AnswerForm } from './answer';
import { Graph, Raw, StateBadge, type WorkflowDef } from './shared';
import { Timeline, type RunEvent } from './timeline';

type Obj = Record<string, unknown>;
type Snapshot = {
  runId: string;
  workflowId: string;
  status: string;
  variables?: Obj;
  nodeStates?: Record<string, Obj & { status?: string }>;
  interrupt?: { nodeId: string; kind: string; data?: Obj };
  metadata?: Obj;
  error?: Obj;
  parentRunId?: string;
};
type Part = { text?: string; data?: unknown; url?: string; raw?: string };
type A2aTask = {
  id: string;
  contextId: string;
  status: { state: string; message?: { parts?: Part[] }; timestamp?: string };
  artifacts?: Array<{ artifactId: string; name?: string; parts?: Part[] }>;
  history?: Array<{ messageId: string; role: string; parts?: Part[] }>;
  metadata?: Obj & { pause?: Obj & { resumeToken?: string }; openwop?: Obj };
};

type Delivery = { eventId: string; kind: string; url: string; state: string; attempts: number; lastError?: string };

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

function PartView({ part }: { part: Part }) {
  if (part.text !== undefined) return <pre class="text">{part.text}</pre>;
  if (part.data !== undefined) return <pre>{JSON.stringify(part.data, null, 2)}</pre>;
  if (part.url) return <span>{part.url}</span>;
  return <span>(bytes)</span>;
}

const stateName = (s: string) => s.replace(/^TASK_STATE_/, '').toLowerCase().replace(/_/g, '-');

export function TaskPage({ me, id }: { me: Me; id: string }) {
  const [snap, setSnap] = useState<Snapshot | null>(null);
  const [task, setTask] = useState<A2aTask | null>(null);
  const [def, setDef] = useState<WorkflowDef | null>(null);
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [pushes, setPushes] = useState<unknown[] | null>(null);
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [error, setError] = useState('');
  const [acting, setActing] = useState('');
  const [mode, setMode] = useState('finish_step');
  const pending = useRef<number | undefined>(undefined);

  const load = () => {
    api<Snapshot>(`/v1/runs/${encodeURIComponent(id)}`)
      .then((s) => {
        setSnap(s);
        setError('');
      })
      .catch((e) => setError(e instanceof ApiError ? e.message : String(e)));
    api<A2aTask>(`/a2a/rest/tasks/${encodeURIComponent(id)}?historyLength=20`)
      .then(setTask)
      .catch(() => undefined);
    api<{ deliveries: Delivery[] }>(`/v1/push/deliveries?taskId=${encodeURIComponent(id)}`)
      .then((d) => setDeliveries(d.deliveries))
      .catch(() => setDeliveries(null));
  };
  const refreshSoon = () => {
    if (pending.current !== undefined) return;
    pending.current = window.setTimeout(() => {
      pending.current = undefined;
      load();
    }, 150);
  };

  useEffect(() => {
    setSnap(null);
    setTask(null);
    setEvents([]);
    load();
    api<{ configs?: unknown[] }>(`/a2a/rest/tasks/${encodeURIComponent(id)}/pushNotificationConfigs`)
      .then((p) => setPushes(p.configs ?? []))
      .catch(() => setPushes(null));
    // The timeline: every event of the run's log, live; resumed after a dropped connection
    // from the last one seen.
    const abort = new AbortController();
    const arrived: RunEvent[] = [];
    let last = '';
    const follow = async () => {
      for (let attempt = 0; !abort.signal.aborted && attempt < 50; attempt++) {
        try {
          await stream(
            `/v1/runs/${encodeURIComponent(id)}/events?streamMode=debug`,
            (e) => {
              last = e.id || last;
              try {
                arrived.push(JSON.parse(e.data) as RunEvent);
              } catch {
                return; // a keep-alive or a non-JSON frame
              }
              // The events of a frame are drawn together (a replay brings thousands at once).
              if (arrived.length === 1)
                requestAnimationFrame(() => {
                  const batch = arrived.splice(0);
                  setEvents((prev) => prev.concat(batch));
                });
              refreshSoon();
            },
            abort.signal,
            last,
          );
          refreshSoon();
          return; // the stream ended with the run
        } catch {
          if (abort.signal.aborted) return;
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    };
    void follow();
    return () => abort.abort();
  }, [id]);

  // A delivery on its way (a retry, say) is followed until it is delivered or dead.
  const inFlight = (deliveries ?? []).some((d) => d.state === 'pending');
  useEffect(() => {
    if (!inFlight) return;
    const t = setTimeout(load, 1000);
    return () => clearTimeout(t);
  }, [inFlight, deliveries]);

  useEffect(() => {
    if (!snap?.workflowId) return;
    api<WorkflowDef>(`/v1/workflows/${encodeURIComponent(snap.workflowId)}`)
      .then(setDef)
      .catch(() => setDef(null));
  }, [snap?.workflowId]);

  const act = async (what: string, path: string, body: unknown) => {
    setActing(what);
    try {
      await api(path, { method: 'POST', body });
      setError('');
    } catch (e) {
      setError(e instanceof ApiError ? `${what}: ${e.message}` : String(e));
    } finally {
      setActing('');
      load();
    }
  };

  if (!snap)
    return (
      <section>
        <h1>Task {id}</h1>
        {error ? (
          <p role="alert" class="error">
            {error}
          </p>
        ) : (
          <p>Loading…</p>
        )}
      </section>
    );

  const enc = encodeURIComponent(id);
  const paused = snap.status === 'paused' || !!task?.metadata?.pause;
  const over = TERMINAL.has(snap.status);
  const writer = can(me, 'tasks:write');
  const openwop = (task?.metadata?.openwop ?? {}) as Obj;
  const parent = (snap.parentRunId ?? openwop.callerRunId) as string | undefined;
  const children = Object.entries(snap.nodeStates ?? {})
    .map(([node, st]) => {
      const effect = (st.effect ?? {}) as Obj;
      return [node, (st.childRunId ?? st.taskId ?? effect.taskId) as string | undefined] as const;
    })
    .filter(([, child]) => typeof child === 'string');
  const message = task?.status.message?.parts?.filter((p) => p.text !== undefined) ?? [];

  return (
    <section>
      <h1>Task {id}</h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StateBadge state={snap.status} /> {task && <span>(A2A {stateName(task.status.state)})</span>}
        </dd>
        <dt>Skill</dt>
        <dd>
          <a href={href('workflows', snap.workflowId)} onClick={follow}>
            {snap.workflowId}
          </a>
        </dd>
        {task && (
          <>
            <dt>Context</dt>
            <dd>{task.contextId}</dd>
          </>
        )}
        {parent && (
          <>
            <dt>Parent</dt>
            <dd>
              <a href={href('tasks', parent)} onClick={follow}>
                {parent}
              </a>
            </dd>
          </>
        )}
      </dl>
      {message.length > 0 && (
        <div class="status-message" aria-label="Status message">
          {message.map((p) => (
            <PartView part={p} />
          ))}
        </div>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {writer && !over && (
        <div class="actions" role="group" aria-label="Actions">
          <button type="button" disabled={!!acting} onClick={() => act('Cancel', `/a2a/rest/tasks/${enc}:cancel`, {})}>
            Cancel task
          </button>
          {!paused ? (
            <>
              <label>
                Pause mode
                <select value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)}>
                  <option value="finish_step">finish the step</option>
                  <option value="interrupt_immediate">interrupt at once</option>
                  <option value="wait_for_completion">wait for the node</option>
                </select>
              </label>
              <button
                type="button"
                disabled={!!acting}
                onClick={() => act('Pause', `/a2a/rest/tasks/${enc}:pause`, { mode, reason: 'paused from the console' })}
              >
                Pause
              </button>
            </>
          ) : (
            <button
              type="button"
              disabled={!!acting}
              onClick={() => act('Resume', `/a2a/rest/tasks/${enc}:resume`, { handle: task?.metadata?.pause?.resumeToken })}
            >
              Resume
            </button>
          )}
        </div>
      )}
      {snap.interrupt && !over && can(me, 'interrupts:resolve') && (
        <AnswerForm runId={id} interrupt={snap.interrupt} onAnswered={load} />
      )}
      {def && (
        <section aria-label="Workflow">
          <h2>Workflow</h2>
          <Graph def={def} states={snap.nodeStates} />
        </section>
      )}
      <Timeline events={events} />
      <section aria-label="Inputs">
        <h2>Inputs</h2>
        <pre>{JSON.stringify(snap.variables ?? {}, null, 2)}</pre>
      </section>
      <section aria-label="Artifacts">
        <h2>Artifacts</h2>
        {(task?.artifacts ?? []).length === 0 && <p>None.</p>}
        {(task?.artifacts ?? []).map((a) => (
          <article>
            <h3>{a.name ?? a.artifactId}</h3>
            {(a.parts ?? []).map((p) => (
              <PartView part={p} />
            ))}
          </article>
        ))}
      </section>
      {children.length > 0 && (
        <section aria-label="Child runs">
          <h2>Child runs</h2>
          <ul>
            {children.map(([node, child]) => (
              <li>
                {node}:{' '}
                <a href={href('tasks', child!)} onClick={follow}>
                  {child}
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-label="History">
        <h2>History</h2>
        <ol>
          {(task?.history ?? []).map((m) => (
            <li>
              <strong>{m.role.replace('ROLE_', '').toLowerCase()}</strong>
              {(m.parts ?? []).map((p) => (
                <PartView part={p} />
              ))}
            </li>
          ))}
        </ol>
      </section>
      <section aria-label="Push configs">
        <h2>Push configs and deliveries</h2>
        {pushes === null ? <p>Not readable with this credential.</p> : pushes.length === 0 ? <p>No push config.</p> : <Raw value={pushes} label="Configs" />}
        {deliveries && deliveries.length > 0 && (
          <table aria-label="Deliveries">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">To</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr>
                  <td>{d.eventId}</td>
                  <td>{d.url}</td>
                  <td>
                    <StateBadge state={d.state} />
                    {d.state === 'dead' && (
                      <button
                        type="button"
                        aria-label={`Retry delivery ${d.eventId}`}
                        onClick={() => act('Retry', '/v1/push/deliveries/retry', { taskId: id, eventId: d.eventId })}
                      >
                        Retry
                      </button>
                    )}
                  </td>
                  <td>{d.attempts}</td>
                  <td>{d.lastError ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <Raw value={{ snapshot: snap, task }} label="Raw snapshot and task" />
    </section>
  );
}
