/**
 * The ingestion service on a secured Kafka: the suite's broker has a SASL_SSL listener
 * (SCRAM users made at format time) and an SSL listener requiring a client certificate, beside
 * the PLAINTEXT one the test reads back from. The service runs as a real process configured by
 * the `BROKER_*` variables alone; a wrong password, an untrusted CA and a plaintext client on the
 * TLS port each leave it not ready with the reason, answer 503, publish nothing, and log the reason
 * once.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createCertificateAuthority,
  runServiceProcess,
  type ServiceProcess,
  securedClientEnv,
  startServiceProcess,
} from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ceHeaders, createTopic, readRecords, SECRET, uniqueTopic } from './harness.js';

const { bootstrapServers, secured } = inject('kafka');
const password = secured.users[0]!.password;
let dataDir: string;
let token: string;
const running: ServiceProcess[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ingest-secured-'));
  token = await signDevToken({ secret: SECRET, scopes: ['events:write'] });
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  rmSync(dataDir, { recursive: true, force: true });
});

function serviceEnv(topic: string, broker: Record<string, string>): Record<string, string> {
  return {
    ...broker,
    BROKER_TOPIC: topic,
    BROKER_PROBE_INTERVAL: '200ms',
    AUTH_SECRET: SECRET,
    OTEL_SDK_DISABLED: 'true',
    LOG_LEVEL: 'info',
  };
}

async function startIngest(name: string, topic: string, broker: Record<string, string>) {
  const ingest = await startServiceProcess({
    name: 'ingest',
    dataDir: mkdtempSync(join(dataDir, `${name}-`)),
    env: serviceEnv(topic, broker),
  });
  running.push(ingest);
  return ingest;
}

async function post(url: string, id: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...ceHeaders(id, new Date().toISOString()) },
    body: `payload-${id}`,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function readiness(url: string): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${url}/health/ready`);
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** Waits until the service is ready (the boot probe may still be running). */
async function untilReady(url: string): Promise<void> {
  for (let i = 0; i < 50 && (await readiness(url)).status !== 200; i++) await sleep(200);
}

describe('ingest on the secured listeners', () => {
  it('publishes over SASL_SSL (SCRAM-SHA-512, password from a file) and the record is on the topic', async () => {
    const topic = uniqueTopic('secured-sasl');
    await createTopic(bootstrapServers, topic, 3);
    const passwordFile = join(dataDir, 'sasl-password');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    const { BROKER_SASL_PASSWORD: _inline, ...env } = securedClientEnv(secured, 'SASL_SSL');
    const ingest = await startIngest('sasl', topic, { ...env, BROKER_SASL_PASSWORD_FILE: passwordFile });
    await untilReady(ingest.url);
    expect((await readiness(ingest.url)).body).toMatchObject({ status: 'UP', broker: 'reachable' });

    const answer = await post(ingest.url, 'over-sasl-ssl');
    expect(answer.status).toBe(200);
    const records = await readRecords(bootstrapServers, topic, (rs) => rs.length >= 1);
    expect(records.map((r) => r.headers.ce_id?.toString())).toEqual(['over-sasl-ssl']);

    const metrics = await (await fetch(`${ingest.metricsUrl}/metrics`)).text();
    expect(metrics).toContain('ingest_events_received_total');
    expect(metrics).not.toContain(password);
    expect(readFileSync(ingest.logFile, 'utf8')).not.toContain(password);
  });

  it('publishes over SSL with a client certificate (mutual TLS) and SCRAM-SHA-256', async () => {
    const topic = uniqueTopic('secured-mtls');
    await createTopic(bootstrapServers, topic, 3);
    const [mtls, scram256] = await Promise.all([
      startIngest('mtls', topic, securedClientEnv(secured, 'SSL')),
      startIngest('scram256', topic, securedClientEnv(secured, 'SASL_SSL', 'SCRAM-SHA-256')),
    ]);
    await Promise.all([untilReady(mtls.url), untilReady(scram256.url)]);
    expect((await post(mtls.url, 'over-mtls')).status).toBe(200);
    expect((await post(scram256.url, 'over-scram-256')).status).toBe(200);
    const records = await readRecords(bootstrapServers, topic, (rs) => rs.length >= 2);
    expect(records.map((r) => r.headers.ce_id?.toString()).sort()).toEqual(['over-mtls', 'over-scram-256']);
  });

  it('refuses to start on an inconsistent set, with one line naming the variable', async () => {
    const run = await runServiceProcess({
      name: 'ingest',
      dataDir: mkdtempSync(join(dataDir, 'refused-')),
      env: serviceEnv('t', { ...securedClientEnv(secured, 'SASL_SSL'), BROKER_SASL_MECHANISM: '' }),
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(
      /BROKER_SASL_MECHANISM: is required with BROKER_SECURITY_PROTOCOL=SASL_SSL/,
    );
    expect(run.stderr + run.stdout).not.toContain(password);
  });
});

describe.each([
  {
    name: 'a wrong password',
    broker: () => ({ ...securedClientEnv(secured, 'SASL_SSL'), BROKER_SASL_PASSWORD: 'not-the-password' }),
    reason: /authentication failed.*\(BROKER_SASL_USERNAME, BROKER_SASL_PASSWORD\)$/i,
  },
  {
    name: 'an untrusted CA',
    broker: () => {
      const other = createCertificateAuthority(join(dataDir, 'other-ca'), 'not-the-brokers-ca');
      return { ...securedClientEnv(secured, 'SASL_SSL'), BROKER_SSL_CA_FILE: other.certFile };
    },
    reason: /^the broker's certificate is not trusted: .*\(BROKER_SSL_CA_FILE\)$/,
  },
  {
    name: 'a plaintext client on the TLS port',
    broker: () => ({ BROKER_BOOTSTRAP_SERVERS: secured.saslSsl }),
    reason: /listener requires TLS or SASL \(BROKER_SECURITY_PROTOCOL=PLAINTEXT\)$/,
  },
])('ingest with $name', ({ name, broker, reason }) => {
  it('is not ready with the reason, answers 503, publishes nothing, and logs the reason once', async () => {
    const topic = uniqueTopic('secured-refused');
    await createTopic(bootstrapServers, topic, 3);
    const ingest = await startIngest(name.replace(/\W+/g, '-'), topic, broker());

    const ready = await readiness(ingest.url);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'DOWN', broker: 'unreachable' });
    expect(ready.body.brokerReason).toMatch(reason);

    for (let i = 0; i < 4; i++) {
      const answer = await post(ingest.url, `refused-${i}`);
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({
        error: { code: 503, status: 'UNAVAILABLE', details: [{ reason: 'unpersistable' }] },
      });
    }
    await sleep(1000); // five more probes

    const records = await readRecords(bootstrapServers, topic, () => false, 1500);
    expect(records).toEqual([]);
    const lines = readFileSync(ingest.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; reason?: string });
    // Each reason once (README "Decisions"). Under load a connection can also time out before its
    // handshake fails: a second, different reason, logged once too.
    const told = lines.filter((l) => l.msg === 'broker unreachable').map((l) => l.reason);
    expect(told).toContainEqual(expect.stringMatching(reason));
    expect(told).toEqual([...new Set(told)]);
    // kafkajs' own account of the failure, if any, once as well.
    const kafkajs = lines.filter((l) => 'kafkajs' in l);
    expect(new Set(kafkajs.map((l) => l.msg)).size).toBe(kafkajs.length);
    expect(readFileSync(ingest.logFile, 'utf8')).not.toContain(password);
    // A process start, a refused connection and a read of the topic: past 30 s once on a loaded CI
    // machine (the Kafka 3.9 rerun beside the cluster suites).
  }, 60_000);
});
