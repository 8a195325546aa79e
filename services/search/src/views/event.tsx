/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** `GET /events/:uid`: the stored attributes and the verbatim CloudEvent (`raw`). */
import { type StoredEvent, severityName } from '@event-observatory/store';
import { Layout, utc } from './layout.js';

export function EventPage(props: { event: StoredEvent }) {
  const e = props.event;
  const rows: [string, string][] = [
    ['Time (UTC)', utc(e.occurredAt)],
    ['Type', e.type],
    ['Source', e.source],
    ['Id', e.id],
    ['Subject', e.subject ?? '—'],
    ['Severity', e.severityRank === null ? '—' : (severityName(e.severityRank) ?? String(e.severityRank))],
    ['Device', e.deviceId ?? '—'],
    ['Tags', e.tags.length ? e.tags.join(', ') : '—'],
    ['Stored (UTC)', utc(e.ingestedAt)],
    ['Broker topic', e.broker?.topic ?? '—'],
    ['Partition', e.broker ? String(e.broker.partition) : '—'],
    ['Offset', e.broker?.offset ?? '—'],
    ['Event uid', e.key.uid],
  ];
  return (
    <Layout title={`Event ${e.type}`} current="none">
      <p>
        <a href="/events">← Back to search</a>
      </p>
      <h1>Event {e.type}</h1>
      <dl>
        {rows.map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </>
        ))}
      </dl>
      <section aria-labelledby="raw-title">
        <h2 id="raw-title">CloudEvent as stored</h2>
        <pre>
          <code>{JSON.stringify(e.raw, null, 2)}</code>
        </pre>
      </section>
    </Layout>
  );
}
