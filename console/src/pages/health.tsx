// Readiness (GET /readyz) and the main metrics (GET /metrics, Prometheus text) on one page.
import { useState } from 'preact/hooks';

import { api, text } from '../api';
import { usePoll } from '../route';

const MAIN = [
  'a2ad_tasks',
  'a2ad_runs',
  'a2ad_http_requests_total',
  'a2ad_push',
  'a2ad_replica',
  'a2ad_durability_info',
  'a2ad_store',
  'a2ad_executions',
];

/** Prometheus text's samples of the metric families named in MAIN (summed over buckets no). */
export function mainSamples(body: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const line of body.split('\n')) {
    if (!line || line.startsWith('#') || line.includes('_bucket{')) continue;
    const cut = line.lastIndexOf(' ');
    const name = line.slice(0, cut);
    if (MAIN.some((m) => name.startsWith(m))) out.push([name, line.slice(cut + 1)]);
  }
  return out.slice(0, 400);
}

export function HealthPage() {
  const [ready, setReady] = useState<{ ready: boolean; checks: Record<string, unknown> } | null>(null);
  const [metrics, setMetrics] = useState<Array<[string, string]> | null>(null);
  const [metricsStatus, setMetricsStatus] = useState(0);
  usePoll(
    () => {
      api<{ ready: boolean; checks: Record<string, unknown> }>('/readyz')
        .then(setReady)
        .catch(() => setReady({ ready: false, checks: {} }));
      text('/metrics').then((r) => {
        setMetricsStatus(r.status);
        setMetrics(r.status === 200 ? mainSamples(r.body) : null);
      });
    },
    5000,
    [],
  );
  return (
    <section>
      <h1>Health</h1>
      <section aria-label="Readiness">
        <h2>Readiness: {ready ? (ready.ready ? 'ready' : 'not ready') : '…'}</h2>
        <table aria-label="Checks">
          <thead>
            <tr>
              <th scope="col">Check</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(ready?.checks ?? {}).map(([k, v]) => (
              <tr>
                <td>{k}</td>
                <td>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-label="Metrics">
        <h2>Metrics</h2>
        {metrics === null ? (
          <p>{metricsStatus ? `Not readable with this credential (${metricsStatus}).` : 'Loading…'}</p>
        ) : (
          <table aria-label="Main metrics">
            <thead>
              <tr>
                <th scope="col">Sample</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {metrics.map(([k, v]) => (
                <tr>
                  <td>
                    <code>{k}</code>
                  </td>
                  <td>{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </section>
  );
}
