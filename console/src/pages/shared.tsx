// Pieces several pages draw: a state's badge, a value's raw JSON one click away, and a
// workflow drawn as a graph with each node's state.
import { useState } from 'preact/hooks';

export function StateBadge({ state }: { state: string }) {
  return <span class={`badge state-${state.replace(/[^a-z-]/g, '')}`}>{state}</span>;
}

/** A value's JSON one click away, written only once opened (a timeline has thousands). */
export function Raw({ value, label = 'Raw JSON' }: { value: unknown; label?: string }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="raw" onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>{label}</summary>
      {open && <pre>{JSON.stringify(value, null, 2)}</pre>}
    </details>
  );
}

export type WorkflowDef = {
  id: string;
  name?: string;
  description?: string;
  variables?: unknown[];
  nodes: Array<{ id: string; typeId: string; name?: string }>;
  edges?: Array<{ id?: string; sourceNodeId: string; targetNodeId: string; condition?: unknown }>;
};

const W = 170;
const H = 44;
const GAP_X = 60;
const GAP_Y = 22;

/** Columns by longest path from a source (cycles are cut where first met). */
function layers(def: WorkflowDef): Map<string, number> {
  const incoming = new Map<string, string[]>();
  for (const n of def.nodes) incoming.set(n.id, []);
  for (const e of def.edges ?? []) incoming.get(e.targetNodeId)?.push(e.sourceNodeId);
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const walk = (id: string): number => {
    if (depth.has(id)) return depth.get(id)!;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const d = Math.max(-1, ...(incoming.get(id) ?? []).map(walk)) + 1;
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const n of def.nodes) walk(n.id);
  return depth;
}

export function Graph({ def, states }: { def: WorkflowDef; states?: Record<string, { status?: string }> }) {
  const depth = layers(def);
  const rows = new Map<number, number>();
  const at = new Map<string, { x: number; y: number }>();
  for (const n of def.nodes) {
    const col = depth.get(n.id) ?? 0;
    const row = rows.get(col) ?? 0;
    rows.set(col, row + 1);
    at.set(n.id, { x: 10 + col * (W + GAP_X), y: 10 + row * (H + GAP_Y) });
  }
  const width = 20 + (Math.max(0, ...depth.values()) + 1) * (W + GAP_X);
  const height = 20 + Math.max(1, ...rows.values()) * (H + GAP_Y);
  const summary = def.nodes
    .map((n) => `${n.id}${states?.[n.id]?.status ? ` (${states[n.id].status})` : ''}`)
    .join(', ');
  return (
    <figure class="graph">
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={`Workflow graph: ${summary}`}>
        {(def.edges ?? []).map((e) => {
          const a = at.get(e.sourceNodeId);
          const b = at.get(e.targetNodeId);
          if (!a || !b) return null;
          return <line class="edge" x1={a.x + W} y1={a.y + H / 2} x2={b.x} y2={b.y + H / 2} />;
        })}
        {def.nodes.map((n) => {
          const p = at.get(n.id)!;
          const status = states?.[n.id]?.status ?? 'pending';
          return (
            <g class={`node node-${status.replace(/[^a-z-]/g, '')}`} transform={`translate(${p.x},${p.y})`}>
              <title>{`${n.name ?? n.id} (${n.typeId}): ${status}`}</title>
              <rect width={W} height={H} rx={6} />
              <text x={8} y={18}>
                {n.id.length > 22 ? `${n.id.slice(0, 21)}…` : n.id}
              </text>
              <text x={8} y={35} class="sub">
                {status}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
