import { ApiError } from '@event-observatory/service-kit/errors';
import { describe, expect, it } from 'vitest';
import { chargeOf, InFlightBudget, REQUEST_OVERHEAD_BYTES } from './admission.js';

describe('the in-flight byte budget', () => {
  it('charges the declared length, the ceiling when none is declared, and no body for one over the ceiling', () => {
    expect(chargeOf('1000', 4096)).toBe(1000 + REQUEST_OVERHEAD_BYTES);
    expect(chargeOf(undefined, 4096)).toBe(4096 + REQUEST_OVERHEAD_BYTES);
    expect(chargeOf('chunked?', 4096)).toBe(4096 + REQUEST_OVERHEAD_BYTES);
    expect(chargeOf('5000', 4096)).toBe(REQUEST_OVERHEAD_BYTES);
  });

  it('refuses work that does not fit with the 503 at once, without running it, and admits it again once others settle', async () => {
    const budget = new InFlightBudget(100);
    let release: () => void = () => {};
    const first = budget.run(60, () => new Promise<string>((r) => (release = () => r('first'))));
    expect(budget.inFlightBytes).toBe(60);
    let ran = false;
    const refused = await budget
      .run(50, async () => {
        ran = true;
      })
      .catch((e: unknown) => e);
    expect(ran).toBe(false);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).toBody().error).toMatchObject({
      code: 503,
      status: 'UNAVAILABLE',
      details: [{ reason: 'unpersistable', metadata: { failure: 'overloaded', limitBytes: '100' } }],
    });
    expect((refused as ApiError).headers['retry-after']).toBe('1');
    expect(await budget.run(40, async () => 'fits beside it')).toBe('fits beside it');
    release();
    expect(await first).toBe('first');
    expect(budget.inFlightBytes).toBe(0);
    expect(await budget.run(100, async () => 'whole budget')).toBe('whole budget');
  });

  it('releases the charge of work that fails', async () => {
    const budget = new InFlightBudget(100);
    await expect(budget.run(80, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(budget.inFlightBytes).toBe(0);
  });
});
