/**
 * Who produced an event: the `observatory-producer` record header ingest writes beside the
 * CloudEvent, and the consumer reads into the store's `producer` column. A record header, not a
 * CloudEvents extension (no `ce_` prefix): the producer's event stays exactly as sent. Its value is
 * JSON in the spirit of the CloudEvents Auth Context extension: `authtype`, `authid` (the token's
 * subject), `issuer`, and `namespace` for a Kubernetes service account.
 *
 * @example
 * encodeProducer(producerOf({ subject: 'system:serviceaccount:payments:exporter' }));
 * // '{"authtype":"service_account","authid":"system:serviceaccount:payments:exporter","namespace":"payments"}'
 */
import type { KafkaRecordIn } from './kafka.js';

export const PRODUCER_HEADER = 'observatory-producer';

/**
 * `service_account`: a Kubernetes service-account token; `unknown`: any other verified subject (a
 * JWT's `sub` does not say whether a person or a program holds it); `unauthenticated`: the service
 * runs with authentication disabled.
 */
export type AuthType = 'service_account' | 'unknown' | 'unauthenticated';

/** The header's content. Read back from a record, `authtype` may be any text another writer put. */
export interface ProducerIdentity {
  authtype: string;
  authid?: string;
  issuer?: string;
  namespace?: string;
}

/** The producer of every event when authentication is disabled. */
export const UNAUTHENTICATED: ProducerIdentity = Object.freeze({ authtype: 'unauthenticated' });

const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):[^:]+$/;

/** The identity of a verified token's subject (and issuer, when it has one). */
export function producerOf(token: { subject: string; issuer?: string }): ProducerIdentity {
  const namespace = SERVICE_ACCOUNT.exec(token.subject)?.[1];
  return {
    authtype: namespace === undefined ? 'unknown' : 'service_account',
    authid: token.subject,
    ...(token.issuer === undefined ? {} : { issuer: token.issuer }),
    ...(namespace === undefined ? {} : { namespace }),
  };
}

/** The header's value. */
export function encodeProducer(identity: ProducerIdentity): string {
  return JSON.stringify(identity);
}

const MEMBERS = ['authtype', 'authid', 'issuer', 'namespace'] as const;

/**
 * The producer a record's header names, as JSON text holding only the known members, or null
 * when the record has none or one that is not a JSON object with a text `authtype` and text
 * members (records from before the header, or from another writer): never a reason to refuse the
 * event.
 */
export function readProducer(record: KafkaRecordIn): string | null {
  const raw = record.headers?.[PRODUCER_HEADER];
  if (raw === undefined || Array.isArray(raw)) return null;
  let value: unknown;
  try {
    value = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const given = value as Record<string, unknown>;
  if (typeof given.authtype !== 'string' || given.authtype === '') return null;
  const identity: Record<string, string> = {};
  for (const name of MEMBERS) {
    const member = given[name];
    if (member === undefined) continue;
    if (typeof member !== 'string') return null;
    identity[name] = member;
  }
  return JSON.stringify(identity);
}
