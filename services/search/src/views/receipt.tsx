/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** `GET /receipt`: what became of the record ingest answered with (topic, partition, offset). */
import type { Receipt, ReplicaPosition } from '@event-observatory/store';
import type { Child } from 'hono/jsx';
import { Layout, Problems, utc } from './layout.js';
import { eventHref } from './results-table.js';

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

/** The answer, announced. */
function Notice(props: { children: Child }) {
  return (
    <div class="notice" role="status">
      <p>{props.children}</p>
    </div>
  );
}

/** How far a replica has replayed the primary's transactions: the predicate of a sentence about it. */
function replayed(replica: ReplicaPosition): string {
  const at = replica.replayedUpTo;
  return at
    ? `has replayed the primary's transactions up to ${utc(at)} UTC (${Math.max(0, Math.round((Date.now() - at.getTime()) / 1000))} s ago)`
    : 'has replayed no transaction since it started';
}

/** A replica answered: what it finds no row of may be stored on the primary already. */
function ReplicaLag(props: { replica: ReplicaPosition }) {
  return (
    <div class="notice" role="note">
      <p>
        <strong>Read from a replica</strong>: it {replayed(props.replica)}. An event stored since then is not
        on it yet: it may be stored, not yet on the replica. Look again in a moment.
      </p>
    </div>
  );
}

function Answer(props: { receipt: Receipt; params: URLSearchParams }) {
  const r = props.receipt;
  if (r.status === 'pending' && r.replica)
    // The checkpoints are the replica's too: behind the offset there, the event may be stored on the
    // primary since, which a headline "Not yet stored" would deny.
    return (
      <Notice>
        <strong>Not yet on the replica</strong>: it may already be stored on the primary. Read from a replica,
        which {replayed(r.replica)}: there the consumer has {String(r.behind + 1n)} record(s) of this
        partition to read before and including it (checkpoints: {groupsOf(r)}). Look again in a moment.
      </Notice>
    );
  if (r.status !== 'stored' && r.replica)
    return (
      <>
        <Outcome receipt={r} params={props.params} />
        <ReplicaLag replica={r.replica} />
      </>
    );
  return <Outcome receipt={r} params={props.params} />;
}

/** The groups' checkpoints of the partition, as the receipt lists them. */
const groupsOf = (r: Receipt) =>
  'checkpoints' in r ? r.checkpoints.map((c) => `${c.group} at ${c.nextOffset}`).join(', ') || 'none' : '';

function Outcome(props: { receipt: Receipt; params: URLSearchParams }) {
  const r = props.receipt;
  const groups = groupsOf(r);
  if (r.status === 'stored')
    return (
      <Notice>
        <strong>Stored</strong> at {utc(r.ingestedAt)} UTC: <a href={eventHref(r.row)}>{r.row.type}</a> from{' '}
        {r.row.source}, id {r.row.id}.
      </Notice>
    );
  if (r.status === 'passed' && r.scoped)
    return (
      <Notice>
        <strong>Not among the events you may see</strong>: the consumer read past this offset (checkpoints:{' '}
        {groups}) and no event you may see has these coordinates
        {props.params.get('time')
          ? ''
          : ' among the rows ingested in the last 24 hours (give the time to look further)'}
        . Either it was dead-lettered, or it is stored outside what you may see.
      </Notice>
    );
  if (r.status === 'passed')
    return (
      <Notice>
        <strong>Passed by the consumer without a row</strong>: the consumer read past this offset
        (checkpoints: {groups}) and stored nothing with these coordinates
        {props.params.get('time')
          ? ''
          : ' among the rows ingested in the last 24 hours (give the time to look further)'}
        . It was dead-lettered: the consumer's dead-letter listing (<code>GET /admin/dlq/records</code> on the
        consumer) shows it with its reason.
      </Notice>
    );
  if (r.status === 'unknown-topic')
    return (
      <Notice>
        <strong>Unknown topic</strong>: no consumer group has a checkpoint of topic{' '}
        <code>{props.params.get('topic')}</code>, and no stored event came from it. Check the name against the{' '}
        <code>destination.topic</code> ingest answered
        {r.topics.length ? `; topics the consumer reads: ${r.topics.join(', ')}` : ''}. A topic the consumer
        has only just started reading shows here until its first commit.
      </Notice>
    );
  if (r.status === 'unknown-partition')
    return (
      <Notice>
        <strong>Unknown partition</strong>: the consumer has checkpoints of this topic for partition(s){' '}
        {r.partitions.join(', ')}, none of partition {props.params.get('partition')}, and no stored event came
        from it. Check the <code>destination.partition</code> ingest answered.
      </Notice>
    );
  return (
    <Notice>
      <strong>Not yet stored</strong>: the consumer has {String(r.behind + 1n)} record(s) of this partition to
      read before and including it (checkpoints: {groups}).
    </Notice>
  );
}

export function ReceiptPage(props: ReceiptPageProps) {
  const p = props.params;
  return (
    <Layout title="Receipt" current="receipt">
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
        <Field
          name="time"
          label="Event time (UTC)"
          value={p.get('time')}
          hint="optional: the event's time as ingest answered it (microseconds kept)"
        />
        <div class="wide">
          <button type="submit">Look up</button>
        </div>
      </form>
      {props.receipt ? <Answer receipt={props.receipt} params={p} /> : null}
    </Layout>
  );
}
