/**
 * What a reader is told when the store fails a page: the page's deadline passed, a statement hit
 * the 2 s statement timeout, a connection was not handed out within 3 s, or the store is
 * unreachable. Never a stack.
 */
import { TimeoutError } from '@event-observatory/service-kit/resilience';
import { isAcquireTimeout, isStatementTimeout, READ_STATEMENT_TIMEOUT_MS } from '@event-observatory/store';

const NARROW =
  'Narrow the time range, or add a filter that has an index path (free text, payload equality, type, source, extension, or a severity of error and above).';

export interface Failure {
  status: 503 | 504;
  title: string;
  message: string;
}

export function failureOf(err: unknown): Failure {
  if (err instanceof TimeoutError) {
    return {
      status: 504,
      title: 'The search took too long',
      message: `This page stopped its queries after ${err.timeoutMs / 1000} s. ${NARROW}`,
    };
  }
  if (isStatementTimeout(err)) {
    return {
      status: 504,
      title: 'The search took too long',
      message: `The store stopped this query after ${READ_STATEMENT_TIMEOUT_MS / 1000} s. ${NARROW}`,
    };
  }
  if (isAcquireTimeout(err)) {
    return {
      status: 503,
      title: 'The store is busy',
      message: 'No database connection became free in time. Try again in a moment.',
    };
  }
  return {
    status: 503,
    title: 'The store is unavailable',
    message: 'The event store could not answer this page. Try again in a moment.',
  };
}
