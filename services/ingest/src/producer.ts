/**
 * The `observatory-producer` header value of a request's principal, made once per principal: the
 * verifier caches a frozen principal per token, so a producer sending many events pays the JSON
 * encoding once, not once an event.
 */
import { encodeProducer, producerOf, UNAUTHENTICATED } from '@event-observatory/events';
import { ANONYMOUS, type Principal } from '@event-observatory/service-kit/auth';

const encoded = new WeakMap<Principal, string>();
const UNAUTHENTICATED_HEADER = encodeProducer(UNAUTHENTICATED);

/** The header value naming `principal` (`unauthenticated` for the principal of disabled auth). */
export function producerHeader(principal: Principal): string {
  if (principal === ANONYMOUS) return UNAUTHENTICATED_HEADER;
  let value = encoded.get(principal);
  if (value === undefined) {
    value = encodeProducer(producerOf(principal));
    encoded.set(principal, value);
  }
  return value;
}
