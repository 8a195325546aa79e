/**
 * The ingest meters (README, "Metrics"), on the service's registry. `broker_produce_latency_seconds`
 * is the producer's, `http_server_requests_seconds` the HTTP timer's and `auth_decisions_total`
 * the verifier's.
 */
import { REJECTION_REASONS, type RejectionReason } from '@event-observatory/events';
import { cappedLabel, createDistribution, ladders } from '@event-observatory/service-kit/metrics';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { GradientLimit } from './concurrency-limit.js';

export type Mode = 'binary' | 'structured';

export function createIngestMeters(registry: Registry) {
  const received = new Counter({
    name: 'ingest_events_received_total',
    help: 'Events made durable (counted after broker acknowledgement)',
    labelNames: ['type', 'mode'] as const,
    registers: [registry],
  });
  const rejected = new Counter({
    name: 'ingest_events_rejected_total',
    help: 'Rejected events by closed-set reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const unrecognised = new Counter({
    name: 'event_unrecognised_total',
    help: 'Accepted events of a type no consumer recognises (INGEST_KNOWN_TYPES)',
    labelNames: ['type', 'reason'] as const,
    registers: [registry],
  });
  const payloadBytes = createDistribution(registry, {
    name: 'ingest_payload_bytes',
    help: 'Body size of accepted requests',
    labelNames: ['mode'],
    buckets: ladders.payloadBytes,
  });
  const batchEvents = createDistribution(registry, {
    name: 'ingest_batch_events',
    help: 'Events per batch request',
    buckets: ladders.batchEvents,
  });
  const timeSkew = createDistribution(registry, {
    name: 'ingest_time_skew',
    help: 'Distance of event time from the service clock, in seconds',
    labelNames: ['direction'],
    buckets: ladders.timeSkew,
  });
  const receivedTypes = cappedLabel(50);
  const unrecognisedTypes = cappedLabel(50);
  // Every reason the service can refuse with starts at 0; an unknown type is never refused here
  // (it is counted in event_unrecognised_total and published).
  for (const reason of REJECTION_REASONS) if (reason !== 'unknown-type') rejected.inc({ reason }, 0);
  return {
    received(type: string, mode: Mode): void {
      if (receivedTypes.admit(type)) received.inc({ type, mode });
    },
    rejected(reason: RejectionReason): void {
      rejected.inc({ reason });
    },
    unrecognised(type: string, reason: 'unknown-type' | 'invalid-payload'): void {
      if (unrecognisedTypes.admit(type)) unrecognised.inc({ type, reason });
    },
    payload(mode: Mode, bytes: number): void {
      payloadBytes.observe({ mode }, bytes);
    },
    batch(events: number): void {
      batchEvents.observe({}, events);
    },
    skew(direction: 'future' | 'past', seconds: number): void {
      timeSkew.observe({ direction }, seconds);
    },
  };
}

export type IngestMeters = ReturnType<typeof createIngestMeters>;

/**
 * `ingest_inflight_events` and `ingest_inflight_events_limit`: the adaptive event limit and what
 * it holds, read at scrape time (their ratio is how close the service is to refusing).
 */
export function registerEventLimitGauges(
  registry: Registry,
  limit: Pick<GradientLimit, 'limit' | 'inFlight'>,
): void {
  new Gauge({
    name: 'ingest_inflight_events',
    help: 'Events of admitted create and batch create requests not yet answered',
    registers: [registry],
    collect() {
      this.set(limit.inFlight);
    },
  });
  new Gauge({
    name: 'ingest_inflight_events_limit',
    help: 'The adaptive limit on events in flight; a request over it is refused 503 before its body is read',
    registers: [registry],
    collect() {
      this.set(limit.limit);
    },
  });
}
