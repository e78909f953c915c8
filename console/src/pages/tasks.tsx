// The task list: every run of the caller's tenant, newest change first, filtered in the
// server (state, workflow, context, changed since), paged by the server's cursor, counted
// per state, refreshed every 2 s while shown; bulk cancel or pause of the filtered set after
// saying how many it touches.
import { useEffect, useState } from 'preact/hooks';

import { api, ApiError, can, type Me } from '../api';
import { follow, href, navigate, usePoll } from '../route';
import { StateBadge } from './shared';

export const STATES = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
] as const;

export type RunRow = {
  runId: string;
  workflowId: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  metadata?: Record<string, unknown>;
};
type RunPage = { runs: RunRow[]; totalSize: number; nextPageToken?: string };

const FILTERS = ['state', 'workflowId', 'contextId', 'updatedSince'] as const; // server-side

// An RFC 3339 instant as a datetime-local input shows it (this machine's time zone).
function localInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function runsPath(query: URLSearchParams, extra: Record<string, string>): string {
  const q = new URLSearchParams();
  for (const f of FILTERS) if (query.get(f)) q.set(f, query.get(f)!);
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  return `/v1/runs?${q}`;
}

export function TasksPage({ me, query }: { me: Me; query: URLSearchParams }) {
  const [page, setPage] = useState<RunPage | null>(null);
  const [waiting, setWaiting] = useState<RunRow[]>([]);
  const waitingFirst = query.get('waitingFirst') === '1' && !query.get('state');
  const [error, setError] = useState('');
  const [tokens, setTokens] = useState<string[]>(['']); // the cursor of each page seen
  const [counts, setCounts] = useState<Record<string, number>>({});
  const [workflows, setWorkflows] = useState<string[]>([]);
  const [bulk, setBulk] = useState<{ action: 'cancel' | 'pause'; done?: number; failed?: number } | null>(null);
  const key = query.toString();
  const token = tokens[tokens.length - 1];

  useEffect(() => setTokens(['']), [key]);
  useEffect(() => {
    api<{ workflows: Array<{ id: string }> }>('/v1/workflows')
      .then((w) => setWorkflows(w.workflows.map((x) => x.id)))
      .catch(() => setWorkflows([]));
  }, []);
  usePoll(
    () => {
      api<RunPage>(runsPath(query, { pageSize: '50', ...(token ? { pageToken: token } : {}) }))
        .then((p) => {
          setPage(p);
          setError('');
        })
        .catch((e) => setError(e instanceof ApiError ? e.message : String(e)));
      // Asked for: the runs waiting on a person (the other filters apply) lead the first page.
      if (waitingFirst && !token)
        api<RunPage>(runsPath(query, { state: 'input-required', pageSize: '50' }))
          .then((p) => setWaiting(p.runs))
          .catch(() => setWaiting([]));
      else setWaiting([]);
    },
    2000,
    [key, token],
  );
  usePoll(
    () => {
      const base = new URLSearchParams(query);
      base.delete('state');
      Promise.all(
        STATES.map((s) =>
          api<RunPage>(runsPath(base, { state: s, pageSize: '1' })).then((p) => [s, p.totalSize] as const),
        ),
      )
        .then((all) => setCounts(Object.fromEntries(all)))
        .catch(() => undefined);
    },
    5000,
    [key],
  );

  const setFilter = (name: string, value: string) => {
    const q = new URLSearchParams(query);
    if (value) q.set(name, value);
    else q.delete(name);
    navigate(`${href('tasks')}${q.toString() ? `?${q}` : ''}`, true);
  };

  const runBulk = async (action: 'cancel' | 'pause') => {
    const total = page?.totalSize ?? 0;
    if (!confirm(`${action === 'cancel' ? 'Cancel' : 'Pause'} ${total} task(s) matching these filters?`)) return;
    setBulk({ action, done: 0, failed: 0 });
    let done = 0;
    let failed = 0;
    let next = '';
    const ids: string[] = [];
    do {
      const p = await api<RunPage>(runsPath(query, { pageSize: '100', ...(next ? { pageToken: next } : {}) }));
      ids.push(...p.runs.map((r) => r.runId));
      next = p.nextPageToken ?? '';
    } while (next);
    for (const id of ids) {
      try {
        await api(`/a2a/rest/tasks/${encodeURIComponent(id)}:${action}`, { method: 'POST', body: {} });
        done++;
      } catch {
        failed++;
      }
      setBulk({ action, done, failed });
    }
  };

  const writer = can(me, 'tasks:write');
  return (
    <section aria-labelledby="tasks-title">
      <h1 id="tasks-title">Tasks</h1>
      <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          State
          <select value={query.get('state') ?? ''} onChange={(e) => setFilter('state', (e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {STATES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Skill
          <select
            value={query.get('workflowId') ?? ''}
            onChange={(e) => setFilter('workflowId', (e.target as HTMLSelectElement).value)}
          >
            <option value="">any</option>
            {workflows.map((w) => (
              <option value={w}>{w}</option>
            ))}
          </select>
        </label>
        <label>
          Context
          <input
            value={query.get('contextId') ?? ''}
            onChange={(e) => setFilter('contextId', (e.target as HTMLInputElement).value.trim())}
          />
        </label>
        <label>
          Updated since
          <input
            type="datetime-local"
            value={localInput(query.get('updatedSince'))}
            onChange={(e) => {
              const v = (e.target as HTMLInputElement).value;
              setFilter('updatedSince', v ? new Date(v).toISOString() : '');
            }}
          />
        </label>
        <label class="inline">
          <input
            type="checkbox"
            checked={waitingFirst}
            disabled={!!query.get('state')}
            onChange={(e) => setFilter('waitingFirst', (e.target as HTMLInputElement).checked ? '1' : '')}
          />
          Waiting on a person first
        </label>
      </form>
      <ul class="counts" aria-label="Count per state">
        {STATES.map((s) => (
          <li>
            <a href={`${href('tasks')}?state=${s}`} onClick={follow}>
              {s}: <strong>{counts[s] ?? '…'}</strong>
            </a>
          </li>
        ))}
      </ul>
      {writer && page && page.totalSize > 0 && (
        <div class="bulk">
          <button type="button" onClick={() => runBulk('cancel')}>
            Cancel {page.totalSize} matching
          </button>
          <button type="button" onClick={() => runBulk('pause')}>
            Pause {page.totalSize} matching
          </button>
          {bulk && (
            <span role="status">
              {bulk.action}: {bulk.done} done, {bulk.failed} refused
            </span>
          )}
        </div>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <table aria-label="Tasks">
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">Skill</th>
            <th scope="col">Status</th>
            <th scope="col">Updated</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {[...waiting, ...(page?.runs ?? []).filter((r) => !waiting.some((w) => w.runId === r.runId))].map((r) => (
            <tr key={r.runId}>
              <td>
                <a href={href('tasks', r.runId)} onClick={follow}>
                  {r.runId}
                </a>
              </td>
              <td>{r.workflowId}</td>
              <td>
                <StateBadge state={r.status} />
              </td>
              <td>
                <time dateTime={r.updatedAt}>{new Date(r.updatedAt).toLocaleString()}</time>
              </td>
              <td>
                <time dateTime={r.createdAt}>{new Date(r.createdAt).toLocaleString()}</time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p role="status" class="pager">
        {page ? `${page.totalSize} task(s); page ${tokens.length}` : 'Loading…'}
        <button type="button" disabled={tokens.length < 2} onClick={() => setTokens(tokens.slice(0, -1))}>
          Previous page
        </button>
        <button
          type="button"
          disabled={!page?.nextPageToken}
          onClick={() => page?.nextPageToken && setTokens([...tokens, page.nextPageToken])}
        >
          Next page
        </button>
      </p>
    </section>
  );
}
