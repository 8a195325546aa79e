/**
 * The refusal of a create or batch create request under overload, made on Node's request before
 * the app sees it (service-kit `serveApp`'s `preempt`): when the event limit would refuse the
 * request's charge (one event, or a batch's estimate from its declared length), it is answered the
 * same 503 `overloaded` that `EventAdmission.run` gives, without the app's request objects,
 * routing, middleware or token check. Those are most of what a refusal costs, and an overloaded
 * service only keeps up with its clients when its refusals cost a small fraction of an
 * acknowledgement (DESIGN.md, "Overload control").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from '@event-observatory/service-kit/errors';
import type { EventAdmission } from './event-admission.js';

export interface EarlyRefusalDeps {
  events: EventAdmission;
  /** `INGEST_MAX_EVENT_BYTES`: a single event declared larger, or not declared, is left to the app. */
  maxEventBytes: number;
  /** `INGEST_MAX_BATCH_BYTES`: a batch declared larger, or not declared, is left to the app. */
  maxBatchBytes: number;
  /** Counts the refusal (`ingest_events_rejected_total`). */
  rejected: (err: ApiError) => void;
}

/** `serveApp`'s `preempt`: true when it answered the request. */
export function earlyRefusal(deps: EarlyRefusalDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST' || !overCharged(deps, req)) return false;
    deps.rejected(deps.events.refused());
    const body = deps.events.refusedBody();
    res.writeHead(503, {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'retry-after': '1',
    });
    res.end(body);
    return true;
  };
}

/**
 * Whether the request's events would not fit the limit now, as the app would charge them. Node
 * reads the unread body off the connection after the answer, however long it is: only a body the
 * app would read too is dropped here; the app answers the others (413, or its 503).
 */
function overCharged(
  { events, maxEventBytes, maxBatchBytes }: EarlyRefusalDeps,
  req: IncomingMessage,
): boolean {
  const length = req.headers['content-length'];
  const declared = Number(length);
  if (req.url === '/v1/events') return events.full && declared <= maxEventBytes;
  if (req.url === '/v1/events:batchCreate') {
    return declared <= maxBatchBytes && !events.limit.fits(events.estimateBatch(length));
  }
  return false;
}
