/** `createKafkaClient`, the tools' and tests' client, against the devstack's real broker. */
import { createServer, type Server, type Socket } from 'node:net';
import { securedClientEnv } from '@event-observatory/devstack';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKafkaClient, readBrokerSecurity } from '../src/index.js';

const { bootstrapServers, secured } = inject('stack');

/** The ids of the brokers `kafka` sees. */
async function brokerIds(kafka: Kafka): Promise<number[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.describeCluster()).brokers.map((b) => b.nodeId);
  } finally {
    await admin.disconnect();
  }
}

describe('createKafkaClient', () => {
  it('reaches the PLAINTEXT listener with servers and a client id alone', async () => {
    expect(
      await brokerIds(createKafkaClient({ bootstrapServers: [bootstrapServers], clientId: 'c' })),
    ).toEqual([1]);
  });

  it('connects as its security settings say: SASL_SSL with the SCRAM user, a wrong password refused', async () => {
    const security = readBrokerSecurity(securedClientEnv(secured, 'SASL_SSL'));
    const client = (password: string) =>
      createKafkaClient({
        bootstrapServers: [secured.saslSsl],
        clientId: 'c',
        security: { ...security, sasl: { ...security.sasl!, password } },
        // A TLS handshake and a SCRAM exchange on a loaded machine may take more than kafkajs' 1 s.
        connectionTimeout: 10_000,
        retry: { retries: 0 },
      });
    expect(await brokerIds(client(security.sasl!.password))).toEqual([1]);
    await expect(brokerIds(client('wrong'))).rejects.toThrow(/SASL SCRAM SHA512 authentication failed/);
  });

  describe('on a listener that accepts connections and never answers', () => {
    let silent: Server;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      silent = createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it('gives up at its request timeout, not kafkajs’ 30 s', async () => {
      const { port } = silent.address() as { port: number };
      const started = Date.now();
      const kafka = createKafkaClient({
        bootstrapServers: [`127.0.0.1:${port}`],
        clientId: 'c',
        requestTimeout: 500,
        retry: { retries: 0 },
      });
      await expect(brokerIds(kafka)).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  });
});
