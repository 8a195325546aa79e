/**
 * Deadlines, retries and periodic readings, shared by every package so no module keeps a hand-written copy.
 * @module
 */
export { type DeadlineOptions, settleWithin, TIMED_OUT, TimeoutError, withTimeout } from './deadline.js';
export { Periodic } from './periodic.js';
export { type Backoff, backoffDelay, type RetryOptions, retry } from './retry.js';
