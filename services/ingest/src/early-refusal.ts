/**
 * The refusal of a single event under overload, made on Node's request before the app sees it
 * (service-kit `serveApp`'s `preempt`): when the event limit would refuse one more event, a
 * `POST /v1/events` is answered the same 503 `overloaded` that `EventAdmission.run` gives, without
 * the app's request objects, routing, middleware or token check. For a 1 KiB event those are most
 * of what a refusal costs, and an overloaded service only keeps up with its clients when its
 * refusals cost a small fraction of an acknowledgement (DESIGN.md, "Overload control").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from '@event-observatory/service-kit/errors';
import type { EventAdmission } from './event-admission.js';

export interface EarlyRefusalDeps {
  events: EventAdmission;
  /** `INGEST_MAX_EVENT_BYTES`: a body declared larger, or not declared, is left to the app. */
  maxEventBytes: number;
  /** Counts the refusal (`ingest_events_rejected_total`). */
  rejected: (err: ApiError) => void;
}

/** `serveApp`'s `preempt`: true when it answered the request. */
export function earlyRefusal(deps: EarlyRefusalDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (!deps.events.full || req.method !== 'POST' || req.url !== '/v1/events') return false;
    // Node reads the unread body off the connection after the answer, however long it is: only a
    // body the app would read too is dropped here; the app answers the others (413, or its 503).
    const declared = Number(req.headers['content-length']);
    if (!(declared <= deps.maxEventBytes)) return false;
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
