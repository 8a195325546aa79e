/** The suite's Kafka (devstack, on this machine's own address) as the cluster suites use it. */
import { deadLetterTopicSpec, ensureTopics, eventTopicSpec, type TopicSpec } from '@event-observatory/broker';
import { Kafka, logLevel } from 'kafkajs';

async function createTopics(bootstrapServers: string, specs: TopicSpec[]): Promise<void> {
  const kafka = new Kafka({
    clientId: 'cluster-e2e',
    brokers: [bootstrapServers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(admin, specs);
  } finally {
    await admin.disconnect();
  }
}

const eventTopic = (topic: string, partitions?: number): TopicSpec => ({
  ...eventTopicSpec(topic),
  ...(partitions ? { partitions } : {}),
});

/** Makes `topic` with the event topics' settings (`partitions` of them, else the default). */
export function createEventTopic(
  bootstrapServers: string,
  topic: string,
  partitions?: number,
): Promise<void> {
  return createTopics(bootstrapServers, [eventTopic(topic, partitions)]);
}

/**
 * Makes `topic` (as createEventTopic) and its dead-letter topic `<topic>.dlq`, as the chart's
 * Pipeline would: for installs with `pipeline.create=false`.
 */
export function createPipelineTopics(
  bootstrapServers: string,
  topic: string,
  partitions?: number,
): Promise<void> {
  return createTopics(bootstrapServers, [eventTopic(topic, partitions), deadLetterTopicSpec(`${topic}.dlq`)]);
}
