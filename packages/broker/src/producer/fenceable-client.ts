/**
 * The kafkajs clients the producer can fence. A `FenceableClient` is one kafkajs client (and the
 * admin made from it) on sockets of its own; `FenceableProducer` adds the idempotent producer.
 * `fence()` destroys every socket the client opened and makes its socket factory refuse new ones,
 * so nothing kafkajs still retries or reconnects for can reach the broker afterwards: what a
 * delivery deadline gave up on stays given up (the module comment of `event-producer.ts`). A
 * fenced client is never used again; the sender and the prober build a new one.
 */

import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from '@event-observatory/service-kit/logger';
import { settleWithin } from '@event-observatory/service-kit/resilience';
import { type Admin, CompressionTypes, type ISocketFactory, type Kafka, type Producer } from 'kafkajs';
import { createKafka } from '../clients/kafka.js';
import {
  clientRetries,
  FIXED_PRODUCER_PROPERTIES,
  type ProducerConfig,
  sendRetries,
} from '../config/producer.js';

/** One record as the sender hands it over: its partition is already chosen. */
export interface OutboundMessage {
  key: string;
  value: Buffer | null;
  headers: Record<string, string>;
  partition: number;
}

/** A kafkajs client and its admin (the readiness probe's metadata reads), fenceable. */
export class FenceableClient {
  protected readonly admin: Admin;
  protected readonly kafka: Kafka;
  private isFenced = false;
  private readonly sockets = new Set<net.Socket>();

  constructor(config: ProducerConfig, logger?: Logger) {
    const p = config.producer;
    this.kafka = createKafka({
      clientId: p.clientId,
      brokers: config.bootstrapServers,
      connectionTimeout: Math.min(p.connectionTimeout, config.maxBlockMs),
      requestTimeout: config.requestTimeoutMs,
      enforceRequestTimeout: true,
      retry: {
        retries: clientRetries(config),
        initialRetryTime: p.initialRetryTime,
        maxRetryTime: p.maxRetryTime,
      },
      security: config.security,
      socketFactory: this.socketFactory,
      logger,
      muted: () => this.isFenced,
    });
    this.admin = this.kafka.admin({ retry: { retries: 0 } });
  }

  get fenced(): boolean {
    return this.isFenced;
  }

  /** The leader of each partition of `topic` (-1: none), in partition order. */
  async partitionLeaders(topic: string): Promise<number[]> {
    await this.admin.connect();
    const meta = await this.admin.fetchTopicMetadata({ topics: [topic] });
    return (meta.topics[0]?.partitions ?? []).map((p) => p.leader);
  }

  /** Closes every socket now and opens no new one: nothing of this client reaches the broker. */
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

  /** kafkajs' own factory (TLS when `ssl` is given: the server name unless an IP), plus fencing. */
  private readonly socketFactory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
    if (this.isFenced) {
      const refused = new net.Socket();
      process.nextTick(() => refused.destroy(new Error('producer fenced after a delivery timeout')));
      return refused;
    }
    const socket = ssl
      ? tls.connect({ host, port, ...(!net.isIP(host) && { servername: host }), ...ssl }, onConnect)
      : net.connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    socket.setNoDelay(true);
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    return socket;
  };
}

/**
 * A fenceable client that also sends to `config.topic`: an idempotent producer with the fixed
 * durability properties (one request in flight, acks from all in-sync replicas, no topic
 * auto-creation).
 */
export class FenceableProducer extends FenceableClient {
  /** Set by the sender once connected and the topic's partitions are known. */
  connected = false;
  private readonly producer: Producer;

  constructor(
    private readonly config: ProducerConfig,
    logger?: Logger,
  ) {
    super(config, logger);
    this.producer = this.kafka.producer({
      idempotent: FIXED_PRODUCER_PROPERTIES.idempotent,
      maxInFlightRequests: FIXED_PRODUCER_PROPERTIES.maxInFlightRequests,
      allowAutoTopicCreation: FIXED_PRODUCER_PROPERTIES.allowAutoTopicCreation,
      metadataMaxAge: config.producer.metadataMaxAge,
      retry: {
        retries: sendRetries(config),
        initialRetryTime: config.producer.initialRetryTime,
        maxRetryTime: config.producer.maxRetryTime,
      },
    });
  }

  /** Connects and obtains a producer id. */
  connect(): Promise<void> {
    return this.producer.connect();
  }

  /** Sends one batch; resolves with the base offset each partition of the batch got. */
  async send(messages: OutboundMessage[]): Promise<Map<number, bigint>> {
    const { config } = this;
    const meta = await this.producer.send({
      topic: config.topic,
      acks: FIXED_PRODUCER_PROPERTIES.acks,
      timeout: config.requestTimeoutMs,
      compression: config.producer.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      messages,
    });
    return new Map(meta.map((m) => [m.partition, BigInt(m.baseOffset ?? '-1')]));
  }

  protected override clients(): { disconnect(): Promise<void> }[] {
    return [this.producer, this.admin];
  }
}
