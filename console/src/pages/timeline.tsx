// A run's timeline: every event of its log, in order, as a list that draws only the rows in
// view (a run may have tens of thousands), following the newest while the view is at the end.
// Each row's raw JSON is one click away, shown below the list.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

export type RunEvent = { sequence?: number; type?: string; nodeId?: string; timestamp?: string } & Record<string, unknown>;

const ROW = 26; // px: every row has this height (timeline.css)
const VIEW = 480; // px: the list's height
const SPARE = 10; // rows drawn above and below the view

export function Timeline({ events }: { events: RunEvent[] }) {
  const list = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [atEnd, setAtEnd] = useState(true);
  const [shown, setShown] = useState<RunEvent | null>(null);

  // Following the newest: new rows keep the view at the end while it was there.
  useLayoutEffect(() => {
    const el = list.current;
    if (el && atEnd) {
      el.scrollTop = el.scrollHeight;
      setTop(el.scrollTop);
    }
  }, [events.length]);
  useEffect(() => setShown(null), [events.length === 0]);

  const first = Math.max(0, Math.floor(top / ROW) - SPARE);
  const last = Math.min(events.length, Math.ceil((top + VIEW) / ROW) + SPARE);
  const rows = [];
  for (let i = first; i < last; i++) {
    const e = events[i];
    rows.push(
      <li key={i} aria-posinset={i + 1} aria-setsize={events.length} style={{ top: `${i * ROW}px` }}>
        <span class="seq">#{e.sequence}</span> <strong>{e.type}</strong>
        {e.nodeId && <span> · {e.nodeId}</span>}
        <span class="at"> {String(e.timestamp ?? '')}</span>{' '}
        <button type="button" class="link" aria-pressed={shown === e} onClick={() => setShown(shown === e ? null : e)}>
          Raw JSON<span class="visually-hidden"> of event {e.sequence}</span>
        </button>
      </li>,
    );
  }
  return (
    <section aria-label="Timeline" class="timeline">
      <h2>Timeline</h2>
      <p class="count" role="status">
        {events.length} event(s)
      </p>
      <div
        ref={list}
        class="rows"
        tabIndex={0}
        aria-label="Events"
        style={{ height: `${Math.min(VIEW, Math.max(ROW, events.length * ROW)) + 2}px` }}
        onScroll={(e) => {
          const el = e.currentTarget as HTMLDivElement;
          setTop(el.scrollTop);
          setAtEnd(el.scrollTop + el.clientHeight >= el.scrollHeight - ROW);
        }}
      >
        <ol style={{ height: `${events.length * ROW}px` }}>{rows}</ol>
      </div>
      {shown && (
        <section aria-label="Event">
          <h3>Event #{shown.sequence}</h3>
          <pre>{JSON.stringify(shown, null, 2)}</pre>
        </section>
      )}
    </section>
  );
}
