import { readFileSync, rmSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { ensureTopics } from '@event-observatory/broker';
import {
  KAFKA_3_VERSION,
  KAFKA_VERSION,
  type KafkaHandle,
  type SecuredListeners,
  securedClientEnv,
  startKafka,
  tempDataDir,
  topicRecordCount,
  withKafkaAdmin,
} from '@event-observatory/devstack';
import { Kafka, type KafkaConfig, logLevel, type SASLOptions } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The secured clients are kafkajs' own, configured here by hand: independent witnesses of the
// listeners, not of the broker package's security settings.
function client(brokers: string, extra: Partial<KafkaConfig>): Kafka {
  return new Kafka({
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3000,
    retry: { retries: 0 },
    ...extra,
  });
}

function saslClient(
  secured: SecuredListeners,
  mechanism: 'scram-sha-512' | 'scram-sha-256',
  password?: string,
) {
  const [user] = secured.users;
  return client(secured.saslSsl, {
    ssl: { ca: readFileSync(secured.caFile, 'utf8') },
    sasl: { mechanism, username: user!.username, password: password ?? user!.password } as SASLOptions,
  });
}

/** This machine's own IPv4 address (what the cluster suites give as `host`), else loopback. */
const ownAddress =
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a?.family === 'IPv4' && !a.internal)?.address ?? '127.0.0.1';

// The 3.9 broker listens on this machine's address: its certificate must name that IP.
describe.each([
  [KAFKA_VERSION, '127.0.0.1'],
  [KAFKA_3_VERSION, ownAddress],
])('a Kafka %s broker with secured listeners on %s', (version, host) => {
  const dir = tempDataDir(`kafka-secured-${version}`);
  let kafka: KafkaHandle;
  let secured: SecuredListeners;
  const topic = 'secured-roundtrip';

  /** Produces one record on the topic through `client`, then counts the topic's records over PLAINTEXT. */
  async function produceAndCount(client: Kafka): Promise<number> {
    const producer = client.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      await producer.send({ topic, acks: -1, messages: [{ value: 'secured' }] });
    } finally {
      await producer.disconnect();
    }
    return topicRecordCount(kafka.bootstrapServers, topic);
  }

  beforeAll(async () => {
    kafka = await startKafka({ dataDir: dir, version, host, secured: { users: ['producer', 'reader'] } });
    secured = kafka.secured!;
    await withKafkaAdmin(kafka.bootstrapServers, (admin) =>
      ensureTopics(admin, [{ name: topic, partitions: 1, replicationFactor: 1, configs: {} }]),
    );
  }, 180_000);
  afterAll(async () => {
    await kafka?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports both listeners on its host, the CA, a client certificate and the users', () => {
    expect(secured.saslSsl).toMatch(new RegExp(`^${host.replaceAll('.', '\\.')}:\\d+$`));
    expect(secured.ssl).toMatch(new RegExp(`^${host.replaceAll('.', '\\.')}:\\d+$`));
    expect(new Set([kafka.port, secured.saslSsl, secured.ssl]).size).toBe(3);
    expect(readFileSync(secured.caFile, 'utf8')).toContain('BEGIN CERTIFICATE');
    expect(readFileSync(secured.clientKeyFile, 'utf8')).toContain('BEGIN PRIVATE KEY');
    expect(secured.users.map((u) => u.username)).toEqual(['producer', 'reader']);
    expect(securedClientEnv(secured, 'SASL_SSL')).toMatchObject({
      BROKER_BOOTSTRAP_SERVERS: secured.saslSsl,
      BROKER_SECURITY_PROTOCOL: 'SASL_SSL',
      BROKER_SASL_USERNAME: 'producer',
    });
  });

  it('takes records over SASL_SSL with SCRAM-SHA-512 and SCRAM-SHA-256, and over SSL with a client certificate', async () => {
    expect(await produceAndCount(saslClient(secured, 'scram-sha-512'))).toBe(1);
    expect(await produceAndCount(saslClient(secured, 'scram-sha-256'))).toBe(2);
    const mtls = client(secured.ssl, {
      ssl: {
        ca: readFileSync(secured.caFile, 'utf8'),
        cert: readFileSync(secured.clientCertFile, 'utf8'),
        key: readFileSync(secured.clientKeyFile, 'utf8'),
      },
    });
    expect(await produceAndCount(mtls)).toBe(3);
  });

  it('refuses a wrong password, and an SSL client without a certificate', async () => {
    await expect(saslClient(secured, 'scram-sha-512', 'wrong').admin().connect()).rejects.toThrow(
      /SASL SCRAM SHA512 authentication failed/,
    );
    const anonymous = client(secured.ssl, { ssl: { ca: readFileSync(secured.caFile, 'utf8') } });
    const admin = anonymous.admin();
    await expect(admin.connect().then(() => admin.listTopics())).rejects.toThrow();
    await admin.disconnect();
  });

  it('keeps its users and passwords across a restart on the same data', async () => {
    await kafka.stop();
    const again = await startKafka({
      dataDir: dir,
      version,
      host,
      secured: { users: ['producer', 'reader'] },
    });
    kafka = again;
    expect(again.secured!.users).toEqual(secured.users);
    secured = again.secured!;
    expect(await produceAndCount(saslClient(secured, 'scram-sha-512'))).toBe(4);
  }, 180_000);
});
