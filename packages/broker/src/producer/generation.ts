/**
 * Generation fencing. A generation is one kafkajs client (and the producer and admin made from it)
 * with a socket factory of its own. Fencing destroys every socket it opened and makes the factory
 * refuse new ones, so nothing the generation still retries can reach the broker afterwards: what a
 * delivery deadline gave up on stays given up (the module comment of `event-producer.ts`).
 */
import net from 'node:net';
import { settleWithin } from '@event-observatory/service-kit/resilience';
import type { Admin, ISocketFactory, Kafka, Producer } from 'kafkajs';
import { type BrokerLogger, createKafka } from '../clients/kafka.js';
import { FIXED_PRODUCER_PROPERTIES, type ProducerConfig } from '../config/producer.js';

/**
 * kafkajs retries for an idempotent send: as many attempts (each bounded by the request timeout,
 * separated by at most `maxRetryTime`) as fit in the delivery timeout, at least 1 (kafkajs
 * refuses 0 for an idempotent producer).
 */
export function kafkajsRetries(config: ProducerConfig): number {
  const per = config.requestTimeoutMs + config.producer.maxRetryTime;
  return Math.max(1, Math.floor((config.deliveryTimeoutMs - config.requestTimeoutMs) / per));
}

/** A kafkajs client and its admin; `fence()` closes every socket it opened and refuses new ones. */
export class Generation {
  /** Set once the producer (or admin) connected and the topic's partitions are known. */
  connected = false;
  readonly admin: Admin;
  protected readonly kafka: Kafka;
  private isFenced = false;
  private readonly sockets = new Set<net.Socket>();

  constructor(config: ProducerConfig, logger?: BrokerLogger) {
    const p = config.producer;
    this.kafka = createKafka({
      clientId: p.clientId,
      brokers: config.bootstrapServers,
      connectionTimeout: Math.min(p.connectionTimeout, config.maxBlockMs),
      requestTimeout: config.requestTimeoutMs,
      enforceRequestTimeout: true,
      retry: {
        retries: kafkajsRetries(config),
        initialRetryTime: p.initialRetryTime,
        maxRetryTime: p.maxRetryTime,
      },
      socketFactory: this.socketFactory,
      logger,
      muted: () => this.isFenced,
    });
    this.admin = this.kafka.admin({ retry: { retries: 0 } });
  }

  get fenced(): boolean {
    return this.isFenced;
  }

  /** Closes every socket now and refuses new ones: nothing of this generation reaches the broker. */
  fence(): void {
    this.isFenced = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    for (const client of this.clients()) client.disconnect().catch(() => {});
  }

  /** Disconnects politely within `timeoutMs`, then fences whatever is left. */
  async close(timeoutMs: number): Promise<void> {
    await settleWithin(Promise.allSettled(this.clients().map((c) => c.disconnect())), timeoutMs);
    this.fence();
  }

  protected clients(): { disconnect(): Promise<void> }[] {
    return [this.admin];
  }

  private readonly socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    if (this.isFenced) {
      const refused = new net.Socket();
      process.nextTick(() =>
        refused.destroy(new Error('producer generation fenced after a delivery timeout')),
      );
      return refused;
    }
    const socket = net.connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    socket.setNoDelay(true);
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    return socket;
  };
}

/** A generation that also sends: an idempotent producer with the fixed durability properties. */
export class SendGeneration extends Generation {
  readonly producer: Producer;

  constructor(config: ProducerConfig, logger?: BrokerLogger) {
    super(config, logger);
    this.producer = this.kafka.producer({
      idempotent: FIXED_PRODUCER_PROPERTIES.idempotent,
      maxInFlightRequests: FIXED_PRODUCER_PROPERTIES.maxInFlightRequests,
      allowAutoTopicCreation: FIXED_PRODUCER_PROPERTIES.allowAutoTopicCreation,
      metadataMaxAge: config.producer.metadataMaxAge,
    });
  }

  protected override clients(): { disconnect(): Promise<void> }[] {
    return [this.producer, this.admin];
  }
}
