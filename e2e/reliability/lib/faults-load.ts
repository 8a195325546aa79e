/**
 * A steady, bounded load of CloudEvents with unique ids against the ingestion service, recording
 * what each request was answered. Every request carries its own deadline, so a hung request shows
 * as `hung` instead of stalling the suite; the load stops by itself after `maxMs`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Partitioners } from 'kafkajs';

/**
 * How one request ended. `refused`: no connection (the event never reached the service);
 * `reset`: the connection was closed under the request before any answer (a reused keep-alive
 * connection the server was closing); `hung`: no answer within the deadline; `broken`: any other
 * transport error.
 */
export type Answer = number | 'refused' | 'reset' | 'hung' | 'broken';

export interface Outcome {
  id: string;
  sentAt: number;
  answer: Answer;
  /** When the answer (or the transport error) came. */
  answeredAt: number;
  /** For a 200, the event topic's partition the service answered (`destination.partition`). */
  partition?: number;
  /** For a 200, the record's offset the service answered (`destination.offset`). */
  offset?: number;
  /** For a 503, the spec's `metadata.failure` (`overloaded`, `queue-full`, `timeout`, `unavailable`, `closed`). */
  failure?: string;
  /** For a 503, the spec's `ErrorInfo.reason` (`unpersistable`). */
  reason?: string;
  /** For `broken`, what the client saw (reset mid-request, socket hang up). */
  detail?: string;
}

export interface LoadOptions {
  /** Read at every send, so a restarted service on another port is followed. */
  url: () => string;
  token: string;
  source: string;
  perSecond: number;
  /** Subjects taken in turn (the partition key is `source#subject`); none: no subject, one partition. */
  subjects?: readonly string[];
  /** The load stops by itself after this long, even if nobody calls `stop()`. */
  maxMs: number;
  /** A request not answered within this is `hung`. */
  requestTimeoutMs: number;
}

export interface Load {
  outcomes: Outcome[];
  /** Sends `n` events at once, beside the steady load; resolves when all are answered. */
  burst(n: number): Promise<void>;
  /** Stops sending, waits for every request in flight, and returns every outcome. */
  stop(): Promise<Outcome[]>;
}

/**
 * One subject per partition of a `partitions`-partition topic for events of `source`: the
 * producer's partitioner (murmur2 of `source#subject`, as kafkajs and the Java client) decides, so
 * the subjects are searched until every partition has one.
 */
export function subjectsCoveringPartitions(source: string, partitions: number): string[] {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionId,
    partitionErrorCode: 0,
    leader: 0,
    replicas: [],
    isr: [],
  }));
  const byPartition = new Map<number, string>();
  for (let i = 0; byPartition.size < partitions; i++) {
    if (i > 10_000) throw new Error(`no subjects of ${source} cover ${partitions} partitions`);
    const subject = `device-${i}`;
    const partition = partitioner({
      topic: 't',
      partitionMetadata,
      message: { key: `${source}#${subject}`, value: null },
    });
    if (!byPartition.has(partition)) byPartition.set(partition, subject);
  }
  return [...byPartition.values()];
}

const RESETS = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

function classify(error: unknown): { answer: Answer; detail?: string } {
  if (error instanceof DOMException && error.name === 'TimeoutError') return { answer: 'hung' };
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return { answer: 'refused' };
  if (cause?.code && RESETS.has(cause.code)) return { answer: 'reset', detail: cause.code };
  return { answer: 'broken', detail: cause?.code ?? cause?.message ?? String(error) };
}

/** Starts sending `perSecond` events, spread evenly (10 ticks a second). */
export function startLoad(opts: LoadOptions): Load {
  const outcomes: Outcome[] = [];
  const inFlight = new Set<Promise<void>>();
  let n = 0;
  let paced = 0;
  let stopped = false;
  const started = Date.now();

  const send = (): Promise<void> => {
    const subject = opts.subjects?.[n % opts.subjects.length];
    const id = `${opts.source.slice(opts.source.lastIndexOf(':') + 1)}-${n++}`;
    const sentAt = Date.now();
    const body = JSON.stringify({
      specversion: '1.0',
      id,
      source: opts.source,
      ...(subject === undefined ? {} : { subject }),
      type: 'com.example.faults.tick',
      time: new Date(sentAt).toISOString(),
      datacontenttype: 'application/json',
      data: { n },
    });
    const request = fetch(`${opts.url()}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${opts.token}`, 'content-type': 'application/cloudevents+json' },
      body,
      signal: AbortSignal.timeout(opts.requestTimeoutMs),
    })
      .then(async (res) => {
        const text = await res.text();
        const detail =
          res.status === 503
            ? (
                JSON.parse(text) as {
                  error?: { details?: { reason?: string; metadata?: { failure?: string } }[] };
                }
              ).error?.details?.[0]
            : undefined;
        const destination =
          res.status === 200
            ? (JSON.parse(text) as { destination?: { partition?: number; offset?: number } }).destination
            : undefined;
        outcomes.push({
          id,
          sentAt,
          answer: res.status,
          answeredAt: Date.now(),
          failure: detail?.metadata?.failure,
          reason: detail?.reason,
          partition: destination?.partition,
          offset: destination?.offset,
        });
      })
      .catch((error: unknown) => {
        outcomes.push({ id, sentAt, answeredAt: Date.now(), ...classify(error) });
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
    return request;
  };

  const perTick = opts.perSecond / 10;
  const pacing = (async () => {
    for (let tick = 1; !stopped && Date.now() - started < opts.maxMs; tick++) {
      // Catch up on ticks a busy event loop missed, so the rate stays what was asked.
      const due = Math.floor(((Date.now() - started) / 100) * perTick);
      for (; paced < due; paced++) void send();
      await sleep(Math.max(0, started + tick * 100 - Date.now()));
    }
  })();

  return {
    outcomes,
    async burst(count) {
      await Promise.all(Array.from({ length: count }, send));
    },
    async stop() {
      stopped = true;
      await pacing;
      await Promise.all([...inFlight]);
      return outcomes;
    },
  };
}
