/**
 * The producer on a path so slow that connecting takes longer than `BROKER_MAX_BLOCK` (a loaded
 * machine, or a path that just healed): each send waits at most the bound, but the connection
 * goes on behind them, so a later send gets through instead of every send starting it over.
 */
import { randomUUID } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { createTopic } from '@event-observatory/devstack';
import { afterAll, expect, inject, it } from 'vitest';
import { EventProducer, PublishError, producerConfig } from '../src/index.js';

const { bootstrapServers } = inject('stack');
/** Each way of the proxied path: a round trip takes twice this, a connect two round trips. */
const DELAY_MS = 150;
const MAX_BLOCK_MS = 250;

/** A TCP proxy to `target` that delivers every chunk `DELAY_MS` late (in order, nothing lost). */
async function slowPath(target: string): Promise<{ address: string; close(): void }> {
  const [host, port] = [
    target.slice(0, target.lastIndexOf(':')),
    Number(target.slice(target.lastIndexOf(':') + 1)),
  ];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, host);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk) => setTimeout(() => to.write(chunk), DELAY_MS));
      from.on('error', () => {});
      from.on('close', () => setTimeout(() => to.destroy(), DELAY_MS));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as { port: number }).port}`,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const path = await slowPath(bootstrapServers);
afterAll(() => path.close());

it('connects across sends when connecting takes longer than BROKER_MAX_BLOCK, and then publishes', async () => {
  const topic = `slow-connect-${randomUUID()}`;
  await createTopic(bootstrapServers, topic, 1);
  const producer = new EventProducer({
    // Only the bootstrap goes the slow way (the broker advertises its own address): its
    // ApiVersions and Metadata round trips alone take 4 × DELAY_MS, past the bound.
    config: producerConfig({
      bootstrapServers: [path.address],
      topic,
      lingerMs: 0,
      maxBlockMs: MAX_BLOCK_MS,
      requestTimeoutMs: 2_000,
      deliveryTimeoutMs: 3_000,
    }),
  });
  try {
    const answers: string[] = [];
    for (let i = 0; i < 8 && answers.at(-1) !== 'acknowledged'; i++) {
      answers.push(
        await producer.publish({ key: `k${i}`, value: Buffer.from('x'), headers: {} }).then(
          () => 'acknowledged',
          (e: unknown) => (e instanceof PublishError ? e.kind : String(e)),
        ),
      );
    }
    // The first send gives up connecting at the bound; a later one finds the connection made.
    expect(answers[0]).toBe('unavailable');
    expect(answers.at(-1)).toBe('acknowledged');
  } finally {
    await producer.close(1_000);
  }
});
