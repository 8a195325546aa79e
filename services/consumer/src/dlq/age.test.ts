import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { OldestPending } from './admin.js';
import { DeadLetterAge } from './age.js';

const NOW = Date.parse('2026-11-28T12:00:00Z');

function meter(read: () => Promise<OldestPending>) {
  const registry = new Registry();
  const gauge = new Gauge({
    name: 'dlq_oldest_age_seconds',
    help: 'h',
    labelNames: ['partition'],
    registers: [registry],
  });
  const age = new DeadLetterAge({ read, gauge, intervalMs: 60_000, now: () => NOW });
  const series = async () =>
    Object.fromEntries((await gauge.get()).values.map((v) => [v.labels.partition, v.value]));
  return { age, series };
}

describe('DeadLetterAge', () => {
  it('reports each settled partition: the waiting letter’s age, 0 when none waits', async () => {
    const { age, series } = meter(
      async () =>
        new Map([
          [0, new Date(NOW - 90_000)],
          [1, null],
        ]),
    );
    await age.tick();
    expect(await series()).toEqual({ '0': 90, '1': 0 });
  });

  it('removes every series when a reading fails, rather than keep a stale age', async () => {
    let fail = false;
    const { age, series } = meter(async () => {
      if (fail) throw new Error('broker unreachable');
      return new Map([[2, new Date(NOW - 5_000)]]);
    });
    await age.tick();
    expect(await series()).toEqual({ '2': 5 });
    fail = true;
    await age.tick();
    expect(await series()).toEqual({});
  });
});
