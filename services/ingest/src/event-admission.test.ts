import { ApiError } from '@event-observatory/service-kit/errors';
import { describe, expect, it } from 'vitest';
import { GradientLimit } from './concurrency-limit.js';
import { EventAdmission } from './event-admission.js';

const admission = (limit: number) =>
  new EventAdmission(new GradientLimit({ initial: limit, min: 1, max: limit }), 256, {
    initialElementBytes: 1000,
  });

describe('the event admission', () => {
  it('estimates a batch from its declared length and the element size it learned, within 1 and the batch ceiling', () => {
    const a = admission(1000);
    expect(a.estimateBatch('100000')).toBe(100);
    expect(a.estimateBatch('10')).toBe(1);
    expect(a.estimateBatch('9999999')).toBe(256);
    expect(a.estimateBatch(undefined)).toBe(256);
    for (let i = 0; i < 50; i++) a.learn(100, 50_000);
    expect(a.estimateBatch('100000')).toBe(200);
  });

  it('is moved little by one batch padded around a single element', () => {
    const a = admission(1000);
    a.learn(1, 8 * 1024 * 1024);
    // The padded batch counted as 4,000 bytes an element, not 8 MiB: 1,600 on average now.
    expect(a.estimateBatch('100000')).toBe(63);
  });

  it('refuses a request over the limit with the 503 overloaded and retry-after, without running it', async () => {
    const a = admission(10);
    let release: () => void = () => {};
    const held = a.run(8, () => new Promise<void>((r) => (release = r)));
    let ran = false;
    const refused = await a
      .run(5, async () => {
        ran = true;
      })
      .catch((e: unknown) => e);
    expect(ran).toBe(false);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).toBody().error).toMatchObject({
      code: 503,
      status: 'UNAVAILABLE',
      details: [{ reason: 'unpersistable', metadata: { failure: 'overloaded', limitEvents: '10' } }],
    });
    expect((refused as ApiError).headers['retry-after']).toBe('1');
    release();
    await held;
    expect(a.limit.inFlight).toBe(0);
  });

  it('charges a split batch its real count, refusing it whole when that does not fit beside others', async () => {
    const a = admission(10);
    let release: () => void = () => {};
    const held = a.run(4, () => new Promise<void>((r) => (release = r)));
    const grown = await a
      .run(2, async (permit) => {
        permit.resize(8, 8000);
        return 'published';
      })
      .catch((e: unknown) => e);
    expect((grown as ApiError).code).toBe(503);
    expect(a.limit.inFlight).toBe(4);
    expect(
      await a.run(5, async (permit) => {
        permit.resize(2, 2000);
        expect(a.limit.inFlight).toBe(6);
        return 'fits';
      }),
    ).toBe('fits');
    release();
    await held;
    // Alone, a batch larger than the limit is admitted whole.
    expect(await a.run(1, async (permit) => permit.resize(40, 40_000))).toBeUndefined();
    expect(a.limit.inFlight).toBe(0);
  });

  it('learns from the publishing it measured: an unavailable failure backs the limit off', async () => {
    const a = admission(100);
    const unavailable = new ApiError('Unavailable', 'broker away', { reason: 'unpersistable' });
    await expect(
      a.run(60, (permit) =>
        permit.measure(async () => {
          throw unavailable;
        }),
      ),
    ).rejects.toBe(unavailable);
    expect(a.limit.limit).toBe(90);
    // A refusal of the event itself is no sample.
    const invalid = new ApiError('InvalidArgument', 'bad event', { reason: 'malformed' });
    await expect(
      a.run(60, (permit) =>
        permit.measure(async () => {
          throw invalid;
        }),
      ),
    ).rejects.toBe(invalid);
    expect(a.limit.limit).toBe(90);
    expect(a.limit.inFlight).toBe(0);
  });

  it('takes no sample of work that published nothing (a batch of none, or of refused elements only)', async () => {
    const a = admission(100);
    await a.run(3, async (permit) => {
      await permit.measure(
        async () => 'nothing published',
        () => undefined,
      );
      expect(permit.sample).toBeUndefined();
      await permit.measure(
        async () => 'published',
        () => true,
      );
      expect(permit.sample).toMatchObject({ ok: true });
    });
  });

  it('says when one more event would be refused, and gives the refusal as JSON bytes made once per limit', async () => {
    const a = admission(2);
    expect(a.full).toBe(false);
    let release: () => void = () => {};
    const held = a.run(2, () => new Promise<void>((r) => (release = r)));
    expect(a.full).toBe(true);
    const body = a.refusedBody();
    expect(JSON.parse(body.toString())).toEqual(a.refused().toBody());
    expect(a.refusedBody()).toBe(body);
    release();
    await held;
    expect(a.full).toBe(false);
  });

  it('tells each admission, not a refusal', async () => {
    let admitted = 0;
    const a = new EventAdmission(new GradientLimit({ initial: 1, min: 1, max: 1 }), 256, {
      onAdmit: () => admitted++,
    });
    let release: () => void = () => {};
    const held = a.run(1, () => new Promise<void>((r) => (release = r)));
    await expect(a.run(1, async () => {})).rejects.toBeInstanceOf(ApiError);
    expect(admitted).toBe(1);
    release();
    await held;
  });
});
