import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from '@event-observatory/service-kit/errors';
import { describe, expect, it } from 'vitest';
import { GradientLimit } from './concurrency-limit.js';
import { earlyRefusal } from './early-refusal.js';
import { EventAdmission } from './event-admission.js';

/** A response that records what was written to it. */
function response() {
  const written: { status?: number; headers?: Record<string, string>; body?: string } = {};
  const res = {
    writeHead(status: number, headers: Record<string, string>) {
      written.status = status;
      written.headers = headers;
    },
    end(body: Buffer) {
      written.body = body.toString();
    },
  };
  return { res: res as unknown as ServerResponse, written };
}

const request = (method: string, url: string, length?: string) =>
  ({ method, url, headers: length === undefined ? {} : { 'content-length': length } }) as IncomingMessage;

/** An early refusal over an event limit fixed at `limit`, recording what it counts as rejected. */
function refusing(limit: number) {
  const events = new EventAdmission(new GradientLimit({ initial: limit, min: limit, max: limit }), 256);
  const rejected: ApiError[] = [];
  const preempt = earlyRefusal({
    events,
    maxEventBytes: 1000,
    maxBatchBytes: 100_000,
    rejected: (err) => void rejected.push(err),
  });
  return { events, rejected, preempt };
}

describe('the early refusal of single events', () => {
  const { events, rejected, preempt } = refusing(1);

  it('leaves every request to the app while one more event fits', () => {
    expect(preempt(request('POST', '/v1/events', '10'), response().res)).toBe(false);
  });

  it('answers the 503 overloaded of the event limit to a single event while the limit is full', () => {
    events.limit.tryAcquire(1);
    const { res, written } = response();
    expect(preempt(request('POST', '/v1/events', '1000'), res)).toBe(true);
    expect(written.status).toBe(503);
    expect(written.headers).toMatchObject({ 'retry-after': '1', 'content-type': 'application/json' });
    expect(Number(written.headers?.['content-length'])).toBe(written.body?.length);
    expect(JSON.parse(written.body ?? '')).toEqual(events.refused().toBody());
    expect(rejected).toEqual([events.refused()]);
  });

  it('leaves other routes, and bodies undeclared or over the event ceiling, to the app', () => {
    for (const req of [
      request('POST', '/v1/events:validate', '10'),
      request('GET', '/v1/events'),
      request('POST', '/v1/events'),
      request('POST', '/v1/events', '1001'),
    ]) {
      expect(preempt(req, response().res)).toBe(false);
    }
    events.limit.release(1);
  });
});

describe('the early refusal of batches', () => {
  // Room for 100 events; a batch element is estimated at 512 bytes until batches are seen.
  const { events, rejected, preempt } = refusing(100);
  const batch = (length?: string) => request('POST', '/v1/events:batchCreate', length);

  it('leaves a batch to the app while its estimate fits, and any batch while nothing is in flight', () => {
    expect(preempt(batch(String(40 * 512)), response().res)).toBe(false);
    // Over the limit alone, but nothing in flight: the app admits it (work larger than the limit is never starved).
    expect(preempt(batch(String(150 * 512)), response().res)).toBe(false);
  });

  it('answers the 503 overloaded to a batch whose estimate does not fit what is left', () => {
    events.limit.tryAcquire(70);
    expect(preempt(batch(String(20 * 512)), response().res)).toBe(false);
    const { res, written } = response();
    expect(preempt(batch(String(40 * 512)), res)).toBe(true);
    expect(written.status).toBe(503);
    expect(written.headers).toMatchObject({ 'retry-after': '1' });
    expect(JSON.parse(written.body ?? '')).toEqual(events.refused().toBody());
    expect(rejected).toEqual([events.refused()]);
  });

  it('leaves batches undeclared or over the batch ceiling to the app', () => {
    for (const req of [batch(), batch('100001')]) expect(preempt(req, response().res)).toBe(false);
    events.limit.release(70);
  });
});
