/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** `GET /receipt`: what became of the record ingest answered with (topic, partition, offset). */
import type { Receipt } from '@event-observatory/store';
import { Layout, Problems, utc } from './layout.js';
import { eventHref } from './search.js';

export interface ReceiptPageProps {
  params: URLSearchParams;
  problems: string[];
  receipt?: Receipt;
}

function Field(props: { name: string; label: string; value: string | null; hint: string }) {
  return (
    <div>
      <label for={`r-${props.name}`}>{props.label}</label>
      <input
        id={`r-${props.name}`}
        name={props.name}
        type="text"
        value={props.value ?? ''}
        aria-describedby={`r-${props.name}-hint`}
      />
      <span id={`r-${props.name}-hint`} class="hint">
        {props.hint}
      </span>
    </div>
  );
}

function Answer(props: { receipt: Receipt; params: URLSearchParams }) {
  const r = props.receipt;
  const groups =
    'checkpoints' in r ? r.checkpoints.map((c) => `${c.group} at ${c.nextOffset}`).join(', ') || 'none' : '';
  if (r.status === 'stored')
    return (
      <div class="notice" role="status">
        <p>
          <strong>Stored</strong> at {utc(r.ingestedAt)} UTC: <a href={eventHref(r.row)}>{r.row.type}</a> from{' '}
          {r.row.source}, id {r.row.id}.
        </p>
      </div>
    );
  if (r.status === 'passed')
    return (
      <div class="notice" role="status">
        <p>
          <strong>Passed by the consumer without a row</strong>: the consumer read past this offset
          (checkpoints: {groups}) and stored nothing with these coordinates
          {props.params.get('time')
            ? ''
            : ' among the rows ingested in the last 24 hours (give the time to look further)'}
          . It was dead-lettered: the consumer's dead-letter listing (<code>GET /admin/dlq/records</code> on
          the consumer) shows it with its reason.
        </p>
      </div>
    );
  return (
    <div class="notice" role="status">
      <p>
        <strong>Not yet stored</strong>:{' '}
        {r.behind === undefined
          ? 'the consumer has recorded no checkpoint for this partition yet.'
          : `the consumer has ${r.behind + 1n} record(s) of this partition to read before and including it (checkpoints: ${groups}).`}
      </p>
    </div>
  );
}

export function ReceiptPage(props: ReceiptPageProps) {
  const p = props.params;
  return (
    <Layout title="Receipt" current="none">
      <h1>Receipt</h1>
      <p class="hint">
        The destination ingest answered (topic, partition, offset): is the event stored, not yet, or passed by
        the consumer? Read from the store and the consumer's checkpoints only.
      </p>
      <Problems problems={props.problems} />
      <form method="get" action="/receipt" class="filters" aria-label="Receipt">
        <Field name="topic" label="Topic" value={p.get('topic')} hint="destination.topic" />
        <Field name="partition" label="Partition" value={p.get('partition')} hint="destination.partition" />
        <Field name="offset" label="Offset" value={p.get('offset')} hint="destination.offset" />
        <Field name="time" label="Event time (UTC)" value={p.get('time')} hint="optional: the event's time" />
        <div class="wide">
          <button type="submit">Look up</button>
        </div>
      </form>
      {props.receipt ? <Answer receipt={props.receipt} params={p} /> : null}
    </Layout>
  );
}
