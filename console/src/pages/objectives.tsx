// The Objective-Plan-Task extension: the caller's objectives, and one objective's tree of
// plans and tasks with each one's rolled-up state, refreshed every 2 s.
import { useState } from 'preact/hooks';

import { api, ApiError } from '../api';
import { follow, href, usePoll } from '../route';
import { Raw, StateBadge } from './shared';

const OPT = { 'A2A-Extensions': 'https://github.com/zeroasterisk/a2a-opt/v1' };
type Obj = Record<string, unknown>;
type Objective = Obj & { id: string; name?: string; status?: string; plans?: Plan[] };
type Plan = Obj & { id: string; name?: string; status?: string; tasks?: Array<Obj & { id?: string; taskId?: string; status?: unknown }> };

const str = (v: unknown) => (typeof v === 'string' ? v : v && typeof v === 'object' && 'state' in v ? String((v as Obj).state) : '');

export function ObjectivesPage() {
  const [list, setList] = useState<Objective[] | null>(null);
  const [error, setError] = useState('');
  usePoll(
    () =>
      api<{ objectives: Objective[] }>('/a2a/rest/objectives?pageSize=100', { headers: OPT })
        .then((o) => setList(o.objectives ?? []))
        .catch((e) => setError(e instanceof ApiError ? e.message : String(e))),
    2000,
    [],
  );
  return (
    <section>
      <h1>Objectives</h1>
      {error && <p role="alert" class="error">{error}</p>}
      <table aria-label="Objectives">
        <thead>
          <tr>
            <th scope="col">Objective</th>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {(list ?? []).map((o) => (
            <tr>
              <td>
                <a href={href('objectives', o.id)} onClick={follow}>
                  {o.id}
                </a>
              </td>
              <td>{o.name}</td>
              <td>
                <StateBadge state={str(o.status)} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list?.length === 0 && <p>No objectives.</p>}
    </section>
  );
}

export function ObjectivePage({ id }: { id: string }) {
  const [o, setO] = useState<Objective | null>(null);
  const [error, setError] = useState('');
  usePoll(
    () =>
      api<{ objective: Objective }>(`/a2a/rest/objectives/${encodeURIComponent(id)}`, { headers: OPT })
        .then((r) => setO(r.objective))
        .catch((e) => setError(e instanceof ApiError ? e.message : String(e))),
    2000,
    [id],
  );
  return (
    <section>
      <h1>Objective {id}</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {o && (
        <>
          <p>
            {o.name} <StateBadge state={str(o.status)} />
          </p>
          <ul class="tree" aria-label="Plans">
            {(o.plans ?? []).map((p) => (
              <li>
                <strong>{p.name ?? p.id}</strong> <StateBadge state={str(p.status)} />
                <ul>
                  {(p.tasks ?? []).map((t) => {
                    const tid = String(t.taskId ?? t.id ?? '');
                    return (
                      <li>
                        <a href={href('tasks', tid)} onClick={follow}>
                          {tid}
                        </a>{' '}
                        <StateBadge state={str(t.status)} />
                      </li>
                    );
                  })}
                </ul>
              </li>
            ))}
          </ul>
          <Raw value={o} />
        </>
      )}
    </section>
  );
}
