import { readFileSync, rmSync } from 'node:fs';
import {
  KAFKA_3_VERSION,
  KAFKA_VERSION,
  kafkaVersion,
  startKafka,
  tempDataDir,
} from '@event-observatory/devstack';
import { afterAll, describe, expect, it } from 'vitest';

describe('the Kafka release devstack runs', () => {
  it('is 4.4.0 by default, 3.9.2 for OBSERVATORY_KAFKA_VERSION=3, and any release named in full', () => {
    expect(kafkaVersion({})).toBe(KAFKA_VERSION);
    expect(KAFKA_VERSION).toMatch(/^4\./);
    expect(kafkaVersion({ OBSERVATORY_KAFKA_VERSION: '3' })).toBe(KAFKA_3_VERSION);
    expect(KAFKA_3_VERSION).toMatch(/^3\.9\./);
    expect(kafkaVersion({ OBSERVATORY_KAFKA_VERSION: '4' })).toBe(KAFKA_VERSION);
    expect(kafkaVersion({ OBSERVATORY_KAFKA_VERSION: '4.1.2' })).toBe('4.1.2');
  });
});

describe.each([KAFKA_VERSION, KAFKA_3_VERSION])('a Kafka %s broker', (version) => {
  const dir = tempDataDir(`kafka-${version}`);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // The INFO start line passes the WARN root only when the backend read devstack's configuration.
  it('logs its start line through the logging backend of its line, and nothing at INFO besides', async () => {
    const kafka = await startKafka({ dataDir: dir, version });
    await kafka.stop();
    const log = readFileSync(kafka.logFile, 'utf8');
    expect(log).toContain(`starting Kafka ${version}`);
    expect(log).toMatch(/INFO .*Kafka Server started/);
    expect(log).not.toMatch(/INFO .*\((?!kafka\.server\.KafkaRaftServer|kafka\.Kafka\$)/);
  }, 180_000);
});
