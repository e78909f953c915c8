// The loaded workflows (the A2A skills), each drawn as a graph, and a run started from one
// with a form of its variables.
import { useEffect, useState } from 'preact/hooks';

import { api, ApiError, can, type Me } from '../api';
import { buildValues, variableFields } from '../forms';
import { follow, href, navigate } from '../route';
import { FieldInput } from './answer';
import { Graph, type WorkflowDef } from './shared';

type Summary = { id: string; name?: string; version?: string; description?: string };

export function WorkflowsPage() {
  const [list, setList] = useState<Summary[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api<{ workflows: Summary[] }>('/v1/workflows')
      .then((w) => setList(w.workflows))
      .catch((e) => setError(e instanceof ApiError ? e.message : String(e)));
  }, []);
  return (
    <section>
      <h1>Workflows</h1>
      {error && <p role="alert" class="error">{error}</p>}
      <table aria-label="Workflows">
        <thead>
          <tr>
            <th scope="col">Workflow</th>
            <th scope="col">Name</th>
            <th scope="col">Version</th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          {(list ?? []).map((w) => (
            <tr>
              <td>
                <a href={href('workflows', w.id)} onClick={follow}>
                  {w.id}
                </a>
              </td>
              <td>{w.name}</td>
              <td>{w.version}</td>
              <td>{w.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function WorkflowPage({ me, id }: { me: Me; id: string }) {
  const [def, setDef] = useState<WorkflowDef | null>(null);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<WorkflowDef>(`/v1/workflows/${encodeURIComponent(id)}`)
      .then((d) => {
        setDef(d);
        const init: Record<string, string | boolean> = {};
        for (const f of variableFields(d.variables)) if (f.initial !== undefined) init[f.id] = f.initial;
        setValues(init);
      })
      .catch((e) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [id]);
  if (!def)
    return (
      <section>
        <h1>Workflow {id}</h1>
        {error ? <p role="alert" class="error">{error}</p> : <p>Loading…</p>}
      </section>
    );
  const fields = variableFields(def.variables);
  const start = async (e: Event) => {
    e.preventDefault();
    const built = buildValues(fields, values);
    if (!built.ok) {
      setErrors(built.errors);
      return;
    }
    setBusy(true);
    try {
      const run = await api<{ runId: string }>('/v1/runs', {
        method: 'POST',
        body: { workflowId: id, inputs: built.value },
        headers: { 'Idempotency-Key': crypto.randomUUID() },
      });
      navigate(href('tasks', run.runId));
    } catch (err) {
      if (err instanceof ApiError && err.field) setErrors({ [err.field]: err.message });
      else setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section>
      <h1>Workflow {def.id}</h1>
      {def.description && <p>{def.description}</p>}
      <Graph def={def} />
      {can(me, 'runs:write') && (
        <form aria-label="Start a run" onSubmit={start}>
          <h2>Start a run</h2>
          {fields.map((f) => (
            <FieldInput field={f} value={values[f.id]} error={errors[f.path]} onChange={(v) => setValues({ ...values, [f.id]: v })} />
          ))}
          {error && <p role="alert" class="error">{error}</p>}
          <button type="submit" disabled={busy}>
            Start run
          </button>
        </form>
      )}
    </section>
  );
}
