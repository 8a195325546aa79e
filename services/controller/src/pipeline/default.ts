/**
 * The default Pipeline: the event topic and its dead-letter topic as the broker package defines
 * them, so the chart and `crds/examples/` declare exactly what `ensureTopics` creates.
 */
import { type BrokerTopics, brokerTopics, type TopicSpec, topicSpecs } from '@event-observatory/broker';
import { API_VERSION, KIND, type Pipeline, type PipelineTopic } from './types.js';

/** A Pipeline topic from the broker's topic model. */
export function pipelineTopic(spec: TopicSpec): PipelineTopic {
  return {
    name: spec.name,
    partitions: spec.partitions,
    replicationFactor: spec.replicationFactor,
    config: { ...spec.configs },
  };
}

/**
 * @example
 * defaultPipeline({ name: 'events', namespace: 'observatory' }).spec.topics.map((t) => t.name);
 * // ['events.cloudevents.v1', 'events.cloudevents.v1.dlq']
 */
export function defaultPipeline(
  meta: { name: string; namespace: string },
  topics: BrokerTopics = brokerTopics(),
): Pipeline {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: meta.name, namespace: meta.namespace },
    spec: { deletionPolicy: 'Retain', topics: topicSpecs(topics).map(pipelineTopic) },
  };
}
