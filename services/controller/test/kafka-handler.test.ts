/**
 * The Kafka handler on the devstack's Kafka: its calls on their own (apply with adoption, delete),
 * then, through the whole loop (fast-tier.ts) where the status and Events show what it answered,
 * reaching a secured cluster with the controller's own `BROKER_*` settings or a Pipeline's
 * `spec.kafka` (credentials from Secrets), failures that say why without showing a secret, and
 * an unreachable cluster.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readAdminBrokerConfig } from '@event-observatory/broker';
import { securedClientEnv } from '@event-observatory/devstack';
import { describe, expect, it, vi } from 'vitest';
import { KafkaHandler } from '../src/kafka-handler.js';
import { PIPELINE_CREDENTIALS_LABEL } from '../src/pipeline/types.js';
import type { FakeApiServer } from '../src/testing/fake-api-server.js';
import {
  afterTest,
  bootstrapServers,
  condition,
  createServedTopics,
  createWithTopic,
  kafkaTopic,
  log,
  meta,
  NAMESPACE,
  secured,
  sharedKafka,
  startController,
  topicName,
  useFastTier,
  waitReady,
} from './fast-tier.js';

useFastTier();

describe('KafkaHandler', () => {
  const target = () => ({ servers: [bootstrapServers] });

  it('creates what is missing, telling `creating` first; leaves an existing topic it may not take over; reads the read-only ones', async () => {
    const [fresh, existing, readOnly] = ['h-fresh', 'h-existing', 'h-read-only'].map(topicName) as [
      string,
      string,
      string,
    ];
    await createServedTopics([existing, readOnly]);
    const creating: string[] = [];
    const spec = (name: string) => ({ name, partitions: 2, replicationFactor: 1, configs: {} });
    const result = await sharedKafka().apply(target(), [spec(fresh), spec(existing)], [readOnly], [], {
      mayTakeOver: () => false,
      creating: async (names) => {
        creating.push(...names);
      },
    });
    expect(creating).toEqual([fresh]);
    expect(result.outcomes.map((o) => [o.name, o.action])).toEqual([[fresh, 'created']]);
    expect(result.notAdopted).toEqual([existing]);
    expect(Object.fromEntries([...result.states].map(([name, s]) => [name, s.partitions]))).toEqual({
      [fresh]: 2,
      [existing]: 1,
      [readOnly]: 1,
    });
  });

  it('a topic someone else creates between the read and the create is not changed: refused unless it may be taken over', async () => {
    const [raced, allowed] = ['h-raced', 'h-raced-allowed'].map(topicName) as [string, string];
    const spec = (name: string) => ({
      name,
      partitions: 3,
      replicationFactor: 1,
      configs: { 'retention.ms': '86400000' },
    });
    const mayTakeOver = (name: string) => name === allowed;
    const result = await sharedKafka().apply(target(), [spec(raced), spec(allowed)], [], ['retention.ms'], {
      mayTakeOver,
      // Recorded, then made by another client before this one's CreateTopics.
      creating: async (names) => {
        await createServedTopics(names);
      },
    });
    expect(result.notAdopted).toEqual([raced]);
    expect(result.outcomes.map((o) => [o.name, o.action])).toEqual([[allowed, 'updated']]);
    expect(await kafkaTopic(raced, ['retention.ms'])).toMatchObject({
      partitions: 1,
      configs: { 'retention.ms': expect.not.stringMatching(/^86400000$/) },
    });
    expect((await kafkaTopic(allowed, ['retention.ms']))?.partitions).toBe(3);
  });

  it('after a failed create, names the recorded topics that do not exist (`notCreated`)', async () => {
    const [made, impossible] = ['h-made', 'h-impossible'].map(topicName) as [string, string];
    const notCreated: string[] = [];
    // One broker: a replication factor of 3 is refused (INVALID_REPLICATION_FACTOR).
    const specs = [
      { name: made, partitions: 1, replicationFactor: 1, configs: {} },
      { name: impossible, partitions: 1, replicationFactor: 3, configs: {} },
    ];
    await expect(
      sharedKafka().apply(target(), specs, [], [], {
        mayTakeOver: () => false,
        creating: async () => {},
        notCreated: (names) => notCreated.push(...names),
      }),
    ).rejects.toThrow();
    expect(notCreated).toEqual([impossible]);
    expect(await kafkaTopic(made)).toBeDefined();
  });

  it('deletes those of the names that exist and returns them', async () => {
    const [doomed, absent] = ['h-doomed', 'h-absent'].map(topicName) as [string, string];
    await createServedTopics([doomed]);
    expect(await sharedKafka().delete(target(), [doomed, absent])).toEqual([doomed]);
    expect(await kafkaTopic(doomed)).toBeUndefined();
  });
});

describe('spec.kafka: a secured cluster, credentials from Secrets', () => {
  const allowedServers = [bootstrapServers, secured.saslSsl, secured.ssl];
  const user = secured.users[0] as { username: string; password: string };
  const labelled = { [PIPELINE_CREDENTIALS_LABEL]: 'true' };
  /** As Strimzi makes them: the cluster CA's Secret and a KafkaUser's Secret; labelled for the controller, or not. */
  const putSecrets = (server: FakeApiServer, labels: Record<string, string> = labelled) => {
    server.putSecret(
      NAMESPACE,
      'cluster-ca-cert',
      { 'ca.crt': readFileSync(secured.caFile, 'utf8') },
      labels,
    );
    server.putSecret(
      NAMESPACE,
      'observatory-user',
      {
        password: user.password,
        'user.crt': readFileSync(secured.clientCertFile, 'utf8'),
        'user.key': readFileSync(secured.clientKeyFile, 'utf8'),
      },
      labels,
    );
  };
  const tls = { trustedCertificates: [{ secretName: 'cluster-ca-cert', certificate: 'ca.crt' }] };
  /** `spec` of the SASL_SSL listener with a SCRAM user whose password is in the Secret `secretName`. */
  const scram = (type: 'scram-sha-256' | 'scram-sha-512', secretName = 'observatory-user') => ({
    kafka: {
      bootstrapServers: secured.saslSsl,
      tls,
      authentication: { type, username: user.username, passwordSecret: { secretName, password: 'password' } },
    },
  });

  it('creates topics over SASL_SSL with a SCRAM-SHA-512 user (scram-sha-512, passwordSecret)', async () => {
    const { server } = startController({ allowedServers });
    putSecrets(server);
    const topic = createWithTopic(server, 'scram', scram('scram-sha-512'));
    await waitReady(server, 'scram', 'True');
    expect((await kafkaTopic(topic))?.partitions).toBe(1);
  });

  it('creates topics over mutual TLS (type tls, certificateAndKey)', async () => {
    const { server } = startController({ allowedServers });
    putSecrets(server);
    const topic = createWithTopic(server, 'mtls', {
      kafka: {
        bootstrapServers: secured.ssl,
        tls,
        authentication: {
          type: 'tls',
          certificateAndKey: { secretName: 'observatory-user', certificate: 'user.crt', key: 'user.key' },
        },
      },
    });
    await waitReady(server, 'mtls', 'True');
    expect((await kafkaTopic(topic))?.partitions).toBe(1);
  });

  it('a missing Secret: Ready=False KafkaAccessInvalid naming it (no secret value), retried until it appears', async () => {
    const { server } = startController({ allowedServers });
    const topic = createWithTopic(server, 'waiting', scram('scram-sha-256'));
    const p = await waitReady(server, 'waiting', 'False');
    expect(condition(p, 'Ready')?.reason).toBe('KafkaAccessInvalid');
    expect(condition(p, 'Ready')?.message).toContain(`Secret ${NAMESPACE}/cluster-ca-cert`);
    expect(await kafkaTopic(topic)).toBeUndefined();
    putSecrets(server);
    await waitReady(server, 'waiting', 'True');
    expect(JSON.stringify(server.get(meta('waiting')))).not.toContain(user.password);
    expect(JSON.stringify(server.events)).not.toContain(user.password);
  });

  it('Secrets without the label observatory.dev/pipeline-credentials: "true": Ready=False CredentialsNotLabelled naming one, nothing created; labelled, they are used', async () => {
    const { server } = startController({ allowedServers });
    putSecrets(server, {});
    const topic = createWithTopic(server, 'unlabelled', scram('scram-sha-512'));
    const p = await waitReady(server, 'unlabelled', 'False');
    expect(condition(p, 'Ready')).toMatchObject({
      reason: 'CredentialsNotLabelled',
      message: expect.stringContaining(
        `Secret ${NAMESPACE}/cluster-ca-cert lacks the label ${PIPELINE_CREDENTIALS_LABEL}`,
      ),
    });
    expect(await kafkaTopic(topic)).toBeUndefined();
    expect(JSON.stringify([server.get(meta('unlabelled')), server.events])).not.toContain(user.password);
    putSecrets(server); // the Secret's owner opts in
    await waitReady(server, 'unlabelled', 'True');
    expect((await kafkaTopic(topic))?.partitions).toBe(1);
  });

  it('a wrong password: Ready=False KafkaError, the topic not created, the password nowhere in status or Events', async () => {
    const { server } = startController({ allowedServers });
    putSecrets(server);
    server.putSecret(NAMESPACE, 'wrong', { password: 'not-the-password' }, labelled);
    const topic = createWithTopic(server, 'denied', scram('scram-sha-512', 'wrong'));
    const p = await waitReady(server, 'denied', 'False');
    expect(condition(p, 'Ready')?.reason).toBe('KafkaError');
    expect(await kafkaTopic(topic)).toBeUndefined();
    expect(JSON.stringify([server.get(meta('denied')), server.events])).not.toContain('not-the-password');
  });
});

it('Kafka unreachable: Ready=False KafkaError, topics in Error, retried with backoff, one Warning for the same message', async () => {
  const { server, metric } = startController({ allowedServers: [bootstrapServers, '127.0.0.1:1'] });
  createWithTopic(server, 'unreachable', { kafka: { bootstrapServers: '127.0.0.1:1' } });
  const p = await waitReady(server, 'unreachable', 'False');
  expect(condition(p, 'Ready')?.reason).toBe('KafkaError');
  // Not stalled: a retry may mend it, so kstatus (Helm's --wait) reads it as in progress.
  expect(condition(p, 'Stalled')?.status).toBe('False');
  expect(condition(p, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Retrying' });
  expect(p.status?.topics?.[0]).toMatchObject({
    phase: 'Error',
    message: expect.stringMatching(/^Kafka: /),
  });
  // Retried (the same failure again): still the one Warning.
  await vi.waitFor(
    async () =>
      expect(await metric('controller_reconciles_total', { outcome: 'failure' })).toBeGreaterThanOrEqual(2),
    { timeout: 15_000 },
  );
  expect(server.events.filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual(['ReconcileFailed']);
});

describe('on a secured Kafka (the BROKER_* security settings)', () => {
  /** A handler and loop configured as the service is, from `env`, on the listener `env` names. */
  async function securedController(env: Record<string, string>) {
    const config = readAdminBrokerConfig(env, 'controller-secured');
    const handler = new KafkaHandler({
      clientId: config.clientId,
      requestTimeoutMs: 5_000,
      security: config.security,
      logger: log,
    });
    const loop = startController({ kafka: handler, defaultServers: config.bootstrapServers });
    afterTest(() => handler.close());
    return loop;
  }

  it.each([
    ['SASL_SSL', securedClientEnv(secured, 'SASL_SSL')],
    ['SSL with a client certificate', securedClientEnv(secured, 'SSL')],
  ])('creates the declared topics over %s', async (listener, env) => {
    const { server } = await securedController(env);
    const name = `secured-${listener.split(' ')[0]!.toLowerCase().replace('_', '-')}`;
    const topic = createWithTopic(server, name);
    const p = await waitReady(server, name, 'True');
    expect(p.status?.topics?.[0]).toMatchObject({ name: topic, phase: 'Ready', partitions: 1 });
    expect((await kafkaTopic(topic))?.partitions).toBe(1); // seen over PLAINTEXT
  });

  it.each([
    [
      'a wrong password',
      { ...securedClientEnv(secured, 'SASL_SSL'), BROKER_SASL_PASSWORD: 'wrong' },
      /authentication failed.*\(BROKER_SASL_USERNAME, BROKER_SASL_PASSWORD\)$/,
    ],
    [
      'a plaintext client on the TLS port',
      { BROKER_BOOTSTRAP_SERVERS: secured.saslSsl },
      /listener requires TLS or SASL \(BROKER_SECURITY_PROTOCOL=PLAINTEXT\)$/,
    ],
  ])('with %s: Ready=False KafkaError saying why, one Warning, no topic', async (_, env, reason) => {
    const { server } = await securedController(env);
    const name = `refused-${randomUUID().slice(0, 4)}`;
    const topic = createWithTopic(server, name);
    const p = await waitReady(server, name, 'False');
    expect(condition(p, 'Ready')).toMatchObject({
      reason: 'KafkaError',
      message: expect.stringMatching(reason),
    });
    expect(p.status?.topics?.[0]?.message).toMatch(reason);
    // The Warning follows the status write it tells of.
    const warnings = () =>
      server.events.filter((e) => e.type === 'Warning' && e.object === `${NAMESPACE}/${name}`);
    await vi.waitFor(() => expect(warnings()).toHaveLength(1));
    expect(warnings()[0]?.message).toMatch(reason);
    expect(JSON.stringify(p)).not.toContain(secured.users[0]!.password);
    expect(await kafkaTopic(topic)).toBeUndefined();
  });
});
