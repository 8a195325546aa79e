/**
 * Generations on `@platformatic/kafka` (`KAFKA_CLIENT=platformatic`). A closed client never opens
 * a connection again and ends its pending retries; its connection close lets data already queued
 * on a socket go out first (`destroySoon`), so fencing also destroys every socket the client holds:
 * nothing of the generation reaches the broker after the fence.
 */
import { backoffDelay, settleWithin } from '@event-observatory/service-kit/resilience';
import { Admin, type BaseOptions, Producer, stringSerializer } from '@platformatic/kafka';
import { FIXED_PRODUCER_PROPERTIES, type ProducerConfig, sendRetries } from '../config/producer.js';
import type { OutboundMessage, ProbeGeneration, SendGeneration } from './generation.js';

/** What both generations need of a platformatic client. */
type Client = Admin | Producer<string, Buffer, string, string>;

/** Connection, timeout and retry options from the producer's settings. */
function baseOptions(config: ProducerConfig): BaseOptions {
  const p = config.producer;
  return {
    clientId: p.clientId,
    bootstrapBrokers: config.bootstrapServers,
    connectTimeout: Math.min(p.connectionTimeout, config.maxBlockMs),
    requestTimeout: config.requestTimeoutMs,
    // An idempotent platformatic producer takes fewer than 2 retries for "retry forever"; the
    // deadline fence ends whatever retries remain anyway.
    retries: Math.max(2, sendRetries(config)),
    retryDelay: (_client, _operation, attempt) =>
      backoffDelay({ initialMs: p.initialRetryTime, maxMs: p.maxRetryTime }, attempt - 1),
    metadataMaxAge: p.metadataMaxAge,
    autocreateTopics: FIXED_PRODUCER_PROPERTIES.allowAutoTopicCreation,
  };
}

abstract class PlatformaticGeneration<C extends Client> implements ProbeGeneration {
  private isFenced = false;

  constructor(protected readonly client: C) {}

  get fenced(): boolean {
    return this.isFenced;
  }

  async partitionLeaders(topic: string): Promise<number[]> {
    const meta = await this.client.metadata({ topics: [topic], forceUpdate: true });
    return (meta.topics.get(topic)?.partitions ?? []).map((p) => p.leader);
  }

  fence(): void {
    if (this.isFenced) return;
    this.isFenced = true;
    const sockets = [...this.client.connections].map(([, c]) => c.socket).filter((s) => s !== undefined);
    this.client.close().catch(() => {});
    for (const s of sockets) s.destroy();
  }

  async close(timeoutMs: number): Promise<void> {
    await settleWithin(
      this.client.close().catch(() => {}),
      timeoutMs,
    );
    this.fence();
  }
}

/** The readiness probe's metadata client. */
export class PlatformaticProbeGeneration extends PlatformaticGeneration<Admin> {
  constructor(config: ProducerConfig) {
    super(new Admin(baseOptions(config)));
  }
}

/** An idempotent platformatic producer with the fixed durability properties. */
export class PlatformaticSendGeneration
  extends PlatformaticGeneration<Producer<string, Buffer, string, string>>
  implements SendGeneration
{
  connected = false;

  constructor(private readonly config: ProducerConfig) {
    super(
      new Producer<string, Buffer, string, string>({
        ...baseOptions(config),
        // Idempotence also makes the library keep one request in flight and send with acks=all.
        idempotent: FIXED_PRODUCER_PROPERTIES.idempotent,
        acks: FIXED_PRODUCER_PROPERTIES.acks,
        maxInflights: FIXED_PRODUCER_PROPERTIES.maxInFlightRequests,
        timeout: config.requestTimeoutMs,
        compression: config.producer.compression,
        serializers: { key: stringSerializer, headerKey: stringSerializer, headerValue: stringSerializer },
      }),
    );
  }

  async connect(): Promise<void> {
    await this.client.initIdempotentProducer({});
  }

  async send(messages: OutboundMessage[]): Promise<Map<number, bigint>> {
    const { topic } = this.config;
    const result = await this.client.send({
      messages: messages.map((m) => ({
        topic,
        key: m.key,
        value: m.value ?? undefined,
        headers: m.headers,
        partition: m.partition,
      })),
    });
    return new Map((result.offsets ?? []).map((o) => [o.partition, o.offset]));
  }
}
