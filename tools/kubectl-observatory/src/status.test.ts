import { describe, expect, it } from 'vitest';
import { age, statusTable } from './status.js';

const now = new Date('2026-01-01T12:00:00Z');
const c = (type: string, status: string, reason = 'R', message = 'm') => ({ type, status, reason, message });

describe('status table', () => {
  it('one row per Pipeline with its flow, then the conditions that are not healthy', () => {
    const table = statusTable(
      [
        {
          metadata: { namespace: 'a', name: 'ok' },
          status: {
            topicsReady: '2/2',
            conditions: [
              c('Ready', 'True'),
              c('Flowing', 'True'),
              c('Lagging', 'False'),
              c('Conflict', 'False'),
            ],
            flow: { lag: 12, deadLetters: 0, observedAt: '2026-01-01T11:59:30Z' },
          },
        },
        {
          metadata: { namespace: 'a', name: 'retrying' },
          status: {
            topicsReady: '0/1',
            conditions: [
              c('Ready', 'False', 'KafkaError', 't: timeout'),
              c('Stalled', 'False', 'Retrying', ''),
              c('Reconciling', 'True', 'Retrying', 't: timeout'),
            ],
          },
        },
        {
          metadata: { namespace: 'b', name: 'stuck' },
          status: {
            conditions: [
              c('Ready', 'True'),
              c('Flowing', 'False', 'NoProgress', 'group g committed nothing'),
            ],
            flow: {
              lag: 5000,
              deadLetters: 7,
              deadLettersPerMinute: 1.5,
              observedAt: '2026-01-01T11:50:00Z',
            },
          },
        },
      ],
      now,
    );
    const lines = table.split('\n');
    expect(lines[0]).toMatch(
      /^NAMESPACE\s+NAME\s+TOPICS\s+READY\s+FLOWING\s+LAGGING\s+DEADLETTERING\s+LAG\s+DLQ/,
    );
    expect(lines[1]).toMatch(/^a\s+ok\s+2\/2\s+True\s+True\s+False\s+-\s+12\s+0\s+-\s+-\s+30s$/);
    expect(lines[3]).toMatch(/^b\s+stuck\s+-\s+True\s+False\s+-\s+-\s+5000\s+7\s+1\.5\s+-\s+10m$/);
    // Reconciling and Stalled restate Ready: one line for the Kafka error, not two.
    expect(lines.slice(4)).toEqual([
      '',
      'a/retrying: Ready=False KafkaError: t: timeout',
      'b/stuck: Flowing=False NoProgress: group g committed nothing',
    ]);
  });

  it('ages in s, m, h, d; - without a time', () => {
    expect([age('2026-01-01T11:59:00Z', now), age('2026-01-01T09:00:00Z', now), age(undefined, now)]).toEqual(
      ['60s', '3h', '-'],
    );
  });
});
