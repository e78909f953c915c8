// Every call the console makes goes through a2ad's public API with the tab's credential (an
// API key or a bearer token, kept in sessionStorage, never in a URL): a principal sees
// exactly what the API lets it see.

export type Credential = { kind: 'key' | 'bearer'; value: string };

const STORAGE = 'a2ad.console.credential';

export function loadCredential(): Credential | null {
  try {
    const raw = sessionStorage.getItem(STORAGE);
    if (!raw) return null;
    const c = JSON.parse(raw) as Credential;
    return (c.kind === 'key' || c.kind === 'bearer') && typeof c.value === 'string' ? c : null;
  } catch {
    return null;
  }
}

export function saveCredential(c: Credential | null): void {
  if (c) sessionStorage.setItem(STORAGE, JSON.stringify(c));
  else sessionStorage.removeItem(STORAGE);
}

/** A refusal of the API, in whichever of its shapes it came. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export type Me = {
  principal: string;
  tenant: string;
  authenticated: boolean;
  scopes: string[];
  allScopes: boolean;
};

export function can(me: Me | null, scope: string): boolean {
  return !!me && (me.allScopes || me.scopes.includes('admin') || me.scopes.includes(scope));
}

function headers(extra?: Record<string, string>): Headers {
  const h = new Headers(extra);
  const c = loadCredential();
  if (c?.kind === 'key') h.set('X-API-Key', c.value);
  if (c?.kind === 'bearer') h.set('Authorization', `Bearer ${c.value}`);
  if (!h.has('A2A-Version')) h.set('A2A-Version', '1.0');
  return h;
}

// The OpenWOP envelope {error, message, details}, google.rpc.Status {error: {code, status,
// message, details}}, or the 0.3 REST {code, message, data}.
async function refusal(r: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await r.json();
  } catch {
    return new ApiError(r.status, 'http_error', `${r.status} ${r.statusText}`);
  }
  const o = (body ?? {}) as Record<string, unknown>;
  if (typeof o.error === 'string') {
    const details = (o.details ?? {}) as Record<string, unknown>;
    const field = typeof details.field === 'string' ? details.field : undefined;
    return new ApiError(r.status, o.error, String(o.message ?? o.error), field);
  }
  if (o.error && typeof o.error === 'object') {
    const e = o.error as Record<string, unknown>;
    let field: string | undefined;
    for (const d of (e.details as Array<Record<string, unknown>>) ?? []) {
      const meta = (d.metadata ?? {}) as Record<string, unknown>;
      if (typeof meta.field === 'string') field = meta.field;
    }
    return new ApiError(r.status, String(e.status ?? 'error'), String(e.message ?? ''), field);
  }
  return new ApiError(r.status, 'http_error', `${r.status} ${r.statusText}`);
}

/** The event the page hears when the server refuses the tab's credential (revoked, expired):
 * the console asks to sign in again. */
export const SIGNED_OUT = 'a2ad:signed-out';

async function refused(r: Response): Promise<ApiError> {
  const e = await refusal(r);
  if (r.status === 401 && loadCredential())
    dispatchEvent(new CustomEvent(SIGNED_OUT, { detail: e.message }));
  return e;
}

export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<T> {
  const h = headers(init.headers);
  if (init.body !== undefined) h.set('Content-Type', 'application/json');
  const r = await fetch(path, {
    method: init.method ?? 'GET',
    headers: h,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: init.signal,
    cache: 'no-store',
  });
  if (!r.ok) throw await refused(r);
  const text = await r.text();
  return (text ? JSON.parse(text) : {}) as T;
}

export async function text(path: string): Promise<{ status: number; body: string }> {
  const r = await fetch(path, { headers: headers(), cache: 'no-store' });
  return { status: r.status, body: await r.text() };
}

export type SseEvent = { id: string; event: string; data: string };

/**
 * An SSE stream read through fetch (EventSource cannot send the credential's header).
 * Calls `onEvent` for each event; resolves when the server ends the stream.
 */
export async function stream(
  path: string,
  onEvent: (e: SseEvent) => void,
  signal: AbortSignal,
  lastEventId?: string,
): Promise<void> {
  const extra: Record<string, string> = { Accept: 'text/event-stream' };
  if (lastEventId) extra['Last-Event-ID'] = lastEventId;
  const r = await fetch(path, { headers: headers(extra), signal, cache: 'no-store' });
  if (!r.ok || !r.body) throw await refused(r);
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let current: SseEvent = { id: '', event: 'message', data: '' };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const end = buffer.lastIndexOf('\n');
    if (end < 0) continue;
    const lines = buffer.slice(0, end).split('\n');
    buffer = buffer.slice(end + 1);
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '') {
        if (current.data !== '') onEvent(current);
        current = { id: current.id, event: 'message', data: '' };
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
        if (name === 'data') current.data += (current.data ? '\n' : '') + val;
        else if (name === 'event') current.event = val;
        else if (name === 'id') current.id = val;
      }
    }
  }
}
