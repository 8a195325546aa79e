/**
 * Generations on kafkajs (`KAFKA_CLIENT=kafkajs`, the default): one kafkajs client, and the
 * producer and admin made from it, with a socket factory of its own. Fencing destroys every socket
 * it opened and makes the factory refuse new ones, so kafkajs' own retries and reconnects cannot
 * reach the broker afterwards.
 */

import net from 'node:net';
import type { Logger } from '@event-observatory/service-kit/logger';
import { settleWithin } from '@event-observatory/service-kit/resilience';
import { type Admin, CompressionTypes, type ISocketFactory, type Kafka, type Producer } from 'kafkajs';
import { createKafka } from '../clients/kafka.js';
import { FIXED_PRODUCER_PROPERTIES, type ProducerConfig, sendRetries } from '../config/producer.js';
import type { OutboundMessage, ProbeGeneration, SendGeneration } from './generation.js';

/** A kafkajs client and its admin; `fence()` closes every socket it opened and refuses new ones. */
export class KafkajsProbeGeneration implements ProbeGeneration {
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
        retries: sendRetries(config),
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

  async partitionLeaders(topic: string): Promise<number[]> {
    await this.admin.connect();
    const meta = await this.admin.fetchTopicMetadata({ topics: [topic] });
    return (meta.topics[0]?.partitions ?? []).map((p) => p.leader);
  }

  fence(): void {
    this.isFenced = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    for (const client of this.clients()) client.disconnect().catch(() => {});
  }

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

/** A kafkajs generation that also sends: an idempotent producer with the fixed durability properties. */
export class KafkajsSendGeneration extends KafkajsProbeGeneration implements SendGeneration {
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
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

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
