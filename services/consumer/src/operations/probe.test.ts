import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createConsumerMetrics } from '../metrics.js';
import { Probe, type ProbeOptions } from './probe.js';

function probeAt(clock: { now: number }, consuming: { value: boolean }) {
  const registry = new Registry();
  const probe = new Probe({
    admin: {} as ProbeOptions['admin'],
    pool: {} as ProbeOptions['pool'],
    metrics: createConsumerMetrics(registry),
    registry,
    groupId: 'g',
    topic: 't',
    dlqTopic: 't.dlq',
    intervalMs: 20_000,
    requestTimeoutMs: 5_000,
    consuming: () => consuming.value,
    now: () => clock.now,
  });
  return { probe, registry };
}

describe('consume_running', () => {
  it('is NaN before the first report, 1 while consuming, 0 while not', async () => {
    const clock = { now: 0 };
    const consuming = { value: true };
    const { probe, registry } = probeAt(clock, consuming);
    expect(probe.runningValue()).toBeNaN();
    expect(await registry.metrics()).toMatch(/^consume_running nan$/im);
    probe.reportRunning();
    expect(probe.runningValue()).toBeNaN(); // local state alone is no report
    probe.reported();
    expect(probe.runningValue()).toBe(1);
    consuming.value = false;
    probe.reportRunning();
    expect(probe.runningValue()).toBe(0);
  });

  it('turns NaN when the last report is older than three intervals', () => {
    const clock = { now: 0 };
    const consuming = { value: true };
    const { probe } = probeAt(clock, consuming);
    probe.reported();
    clock.now = 60_000;
    expect(probe.runningValue()).toBe(1);
    clock.now = 60_001;
    expect(probe.runningValue()).toBeNaN();
  });

  it('does not refresh the age of the last report on a lifecycle command, only the value', () => {
    const clock = { now: 0 };
    const consuming = { value: true };
    const { probe } = probeAt(clock, consuming);
    probe.reported();
    clock.now = 50_000;
    consuming.value = false;
    probe.reportRunning();
    expect(probe.runningValue()).toBe(0);
    clock.now = 60_001;
    probe.reportRunning();
    expect(probe.runningValue()).toBeNaN();
  });
});
