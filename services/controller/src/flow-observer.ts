/**
 * Reads the flow of every Pipeline that declares `spec.flow`, once a period, from the topics it is
 * entitled to as the reconciler judges them (`entitlement`): per Kafka cluster one admin
 * connection, one offsets request per distinct topic and group (`readGroupReadings`), the store's
 * newest row when a store is given. Each observation is kept here; those worth a status
 * write (`worthWriting`) are handed to `onChange`, and the controller's one worker writes them,
 * so flow writes never race the reconciler's.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import { pipelineSecurity } from './kafka-access.js';
import type { KafkaHandler } from './kafka-handler.js';
import type { PipelineApi } from './kube/api.js';
import { type ClusterRules, clusterRefusal, clusterRules, serversOf } from './model/cluster.js';
import {
  type FlowObservation,
  type FlowReading,
  type FlowSample,
  type FlowThresholds,
  flowTopic,
  observeFlow,
  refusedFlowTopics,
  type WriteRule,
  worthWriting,
} from './model/flow.js';
import { entitlement, type Unentitled } from './model/ownership.js';
import type { TopicRules } from './model/safety.js';
import { keyOf, type Pipeline } from './pipeline/types.js';

export interface FlowObserverOptions {
  api: PipelineApi;
  kafka: KafkaHandler;
  defaultServers: string[];
  /** `CONTROLLER_ALLOWED_BOOTSTRAP` as its clusters (`;` between them), each a list of servers. */
  allowedClusters: string[][];
  thresholds: FlowThresholds;
  rule: WriteRule;
  /**
   * The release namespace when it comes first (the default topic-name rule): a Pipeline of another
   * namespace reads no topic one of its Pipelines declares.
   */
  home?: string | undefined;
  /** The reconciler's `topicRules`: a reserved name is never read. Default: only Kafka's own (`__*`). */
  topicRules?: TopicRules;
  /** The store's newest `ingested_at` (ISO), when the controller has a store URL. */
  newestStored?: () => Promise<string | undefined>;
  log: Logger;
  now?: () => Date;
}

interface Entry {
  sample?: FlowSample;
  observation: FlowObservation;
}

export class FlowObserver {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => Date;
  private readonly clusters: ClusterRules;

  constructor(private readonly opts: FlowObserverOptions) {
    this.now = opts.now ?? (() => new Date());
    this.clusters = clusterRules(opts.defaultServers, opts.allowedClusters);
  }

  /** The last observation of the Pipeline `key`, if it has one. */
  observation(key: string): FlowObservation | undefined {
    return this.entries.get(key)?.observation;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  /** Reads the flow of `pipelines` (Kafka names); calls `onChange(key)` for those worth a write. */
  async observe(pipelines: Pipeline[], onChange: (key: string) => void): Promise<void> {
    const observed = pipelines.filter((p) => p.spec.flow && !p.metadata.deletionTimestamp);
    const keys = new Set(observed.map((p) => keyOf(p.metadata)));
    for (const key of this.entries.keys()) if (!keys.has(key)) this.entries.delete(key);
    const byCluster = new Map<string, Pipeline[]>();
    for (const p of observed) {
      // One admin client per servers and credentials, as the reconciler's.
      const servers = serversOf(p, this.clusters.defaultServers).join(',');
      const id = `${servers}|${p.metadata.namespace}|${JSON.stringify(p.spec.kafka ?? {})}`;
      byCluster.set(id, [...(byCluster.get(id) ?? []), p]);
    }
    const stored = await this.opts.newestStored?.().catch((error: Error) => {
      this.opts.log.warn({ err: error.message }, 'reading the store for lastStoredAt failed');
      return undefined;
    });
    // Judged from every Pipeline, as the reconciler judges ownership (the cache holds only this
    // controller's, so another controller's are not counted either).
    const entitled = entitlement(
      pipelines,
      this.clusters,
      this.opts.topicRules ?? { reserved: [], adoptable: [] },
      this.opts.home,
    );
    for (const group of byCluster.values()) {
      const readings = await this.read(group, entitled);
      const now = this.now();
      for (const p of group) {
        const key = keyOf(p.metadata);
        const reading = readings.get(key);
        if (!reading) continue;
        const entry = this.entries.get(key);
        const spec = p.spec.flow;
        const observation = observeFlow(
          { ...reading, ...(stored ? { lastStoredAt: stored } : {}) },
          entry?.sample,
          {
            maxLag: spec?.maxLag ?? this.opts.thresholds.maxLag,
            maxDeadLettersPerMinute:
              spec?.maxDeadLettersPerMinute ?? this.opts.thresholds.maxDeadLettersPerMinute,
          },
          now,
        );
        this.entries.set(key, { sample: observation.sample ?? entry?.sample, observation });
        if (worthWriting(p.status ?? {}, observation, this.opts.rule, now)) onChange(key);
      }
    }
  }

  /**
   * One cluster's readings, keyed by Pipeline; a failure is a reading with `error` for each. Only
   * topics a Pipeline is entitled to are asked of Kafka; the others are `refused` in its reading.
   */
  private async read(
    pipelines: Pipeline[],
    entitled: (pipeline: Pipeline, name: string) => Unentitled | undefined,
  ): Promise<Map<string, FlowReading>> {
    const first = pipelines[0] as Pipeline;
    const servers = serversOf(first, this.clusters.defaultServers);
    const targets = pipelines.map((p) => {
      const flow = p.spec.flow as NonNullable<Pipeline['spec']['flow']>;
      const refused = refusedFlowTopics(p, (name) => entitled(p, name));
      const read = !refused.some((r) => r.field === 'topic');
      // The dead-letter topic only with the topic: an observation without the topic has neither.
      const deadLetterTopic =
        read && !refused.some((r) => r.field === 'deadLetterTopic') ? flow.deadLetterTopic : undefined;
      return { key: keyOf(p.metadata), flow, topic: flowTopic(p), refused, read, deadLetterTopic };
    });
    const readings = new Map<string, FlowReading>();
    const base = (t: (typeof targets)[number]) => ({
      consumerGroup: t.flow.consumerGroup,
      topic: t.topic,
      ...(t.flow.deadLetterTopic ? { deadLetterTopic: t.flow.deadLetterTopic } : {}),
      ...(t.refused.length > 0 ? { refused: t.refused } : {}),
    });
    const reading = targets.filter((t) => t.read);
    for (const t of targets) if (!t.read) readings.set(t.key, base(t));
    if (reading.length === 0) return readings;
    const refusal = clusterRefusal(servers, this.clusters.allowed);
    try {
      if (refusal) throw new Error(refusal);
      const security = await pipelineSecurity(this.opts.api, first);
      const { committed, ranges } = await this.opts.kafka.readFlow(
        { servers, security },
        reading.map((t) => ({ groupId: t.flow.consumerGroup, topic: t.topic })),
        reading.flatMap((t) => (t.deadLetterTopic ? [t.deadLetterTopic] : [])),
      );
      for (const t of reading) {
        const topicRanges = ranges.get(t.topic);
        const dlq = t.deadLetterTopic ? ranges.get(t.deadLetterTopic) : undefined;
        readings.set(t.key, {
          ...base(t),
          ...(topicRanges
            ? {
                ranges: topicRanges,
                committed: committed.get(`${t.flow.consumerGroup}|${t.topic}`) ?? new Map(),
              }
            : {}),
          ...(dlq ? { deadLetterRanges: dlq } : {}),
        });
      }
    } catch (error) {
      for (const t of reading) readings.set(t.key, { ...base(t), error: (error as Error).message });
    }
    return readings;
  }
}
