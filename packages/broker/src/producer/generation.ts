/**
 * Generation fencing, the contract both Kafka libraries implement. A generation is one client (a
 * producer, or the probe's metadata client) whose sockets are its own. `fence()` destroys every
 * socket it opened and leaves it unable to open new ones, so nothing it still retries can reach
 * the broker afterwards: what a delivery deadline gave up on stays given up (the module comment of
 * `event-producer.ts`). `KAFKA_CLIENT` picks the library: `kafkajs-generation.ts` or
 * `platformatic-generation.ts`.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import type { KafkaClient } from '../config/connection.js';
import type { ProducerConfig } from '../config/producer.js';
import { KafkajsProbeGeneration, KafkajsSendGeneration } from './kafkajs-generation.js';
import { PlatformaticProbeGeneration, PlatformaticSendGeneration } from './platformatic-generation.js';

/** A generation that reads the topic's partitions (the readiness probe). */
export interface ProbeGeneration {
  readonly fenced: boolean;
  /** The leader of each partition of `topic` (-1: none), in partition order. */
  partitionLeaders(topic: string): Promise<number[]>;
  /** Closes every socket now and opens no new one: nothing of this generation reaches the broker. */
  fence(): void;
  /** Disconnects politely within `timeoutMs`, then fences whatever is left. */
  close(timeoutMs: number): Promise<void>;
}

/** One record as the sender hands it to a generation: its partition is already chosen. */
export interface OutboundMessage {
  key: string;
  value: Buffer | null;
  headers: Record<string, string>;
  partition: number;
}

/**
 * A generation that sends to `config.topic` with the fixed durability properties (idempotent, one
 * request in flight, acks from all in-sync replicas, no topic auto-creation).
 */
export interface SendGeneration extends ProbeGeneration {
  /** Set by the sender once connected and the topic's partitions are known. */
  connected: boolean;
  /** Connects and obtains a producer id. */
  connect(): Promise<void>;
  /** Sends one batch; resolves with the base offset each partition of the batch got. */
  send(messages: OutboundMessage[]): Promise<Map<number, bigint>>;
}

export interface Generations {
  probe(config: ProducerConfig): ProbeGeneration;
  send(config: ProducerConfig, logger?: Logger): SendGeneration;
}

const GENERATIONS: Record<KafkaClient, Generations> = {
  kafkajs: {
    probe: (config) => new KafkajsProbeGeneration(config),
    send: (config, logger) => new KafkajsSendGeneration(config, logger),
  },
  platformatic: {
    probe: (config) => new PlatformaticProbeGeneration(config),
    send: (config) => new PlatformaticSendGeneration(config),
  },
};

/** The generations of the library `KAFKA_CLIENT` names. */
export function generationsOf(client: KafkaClient): Generations {
  return GENERATIONS[client];
}
