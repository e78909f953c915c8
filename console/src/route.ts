// Every page has its own URL under /console/, so a link can be shared and a reload keeps the
// place; the filters of the task list live in its query string.
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export type Route =
  | { page: 'tasks'; query: URLSearchParams }
  | { page: 'task'; id: string }
  | { page: 'workflows' }
  | { page: 'workflow'; id: string }
  | { page: 'objectives' }
  | { page: 'objective'; id: string }
  | { page: 'health' }
  | { page: 'missing'; path: string };

export function parseRoute(pathname: string, search: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const seg = rest.split('/').filter(Boolean).map(decodeURIComponent);
  if (seg.length === 0 || (seg.length === 1 && seg[0] === 'tasks'))
    return { page: 'tasks', query: new URLSearchParams(search) };
  if (seg.length === 2 && seg[0] === 'tasks') return { page: 'task', id: seg[1] };
  if (seg.length === 1 && seg[0] === 'workflows') return { page: 'workflows' };
  if (seg.length === 2 && seg[0] === 'workflows') return { page: 'workflow', id: seg[1] };
  if (seg.length === 1 && seg[0] === 'objectives') return { page: 'objectives' };
  if (seg.length === 2 && seg[0] === 'objectives') return { page: 'objective', id: seg[1] };
  if (seg.length === 1 && seg[0] === 'health') return { page: 'health' };
  return { page: 'missing', path: pathname };
}

export function href(...parts: string[]): string {
  return [BASE, ...parts.map(encodeURIComponent)].join('/');
}

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** A link's click handled in the page (a plain click; a modified one opens as usual). */
export function follow(e: MouseEvent): void {
  const a = e.currentTarget as HTMLAnchorElement;
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute('href') ?? BASE + '/');
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname, location.search));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.pathname, location.search));
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  return route;
}

/** Calls `fn` now and every `ms` while the page is shown (the console's live lists). */
export function usePoll(fn: () => void, ms: number, deps: unknown[]): void {
  useEffect(() => {
    fn();
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') fn();
    }, ms);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
}
