/** The suite's Kafka (devstack, on this machine's own address) as the cluster suites use it. */
import { deadLetterTopicSpec, eventTopicSpec, type TopicSpec } from '@event-observatory/broker';
import { ensureStackTopics } from '@event-observatory/devstack';

const eventTopic = (topic: string, partitions?: number): TopicSpec => ({
  ...eventTopicSpec(topic),
  ...(partitions ? { partitions } : {}),
});

/** Makes `topic` with the event topics' settings (`partitions` of them, else the default). */
export async function createEventTopic(
  bootstrapServers: string,
  topic: string,
  partitions?: number,
): Promise<void> {
  await ensureStackTopics(bootstrapServers, [eventTopic(topic, partitions)]);
}

/**
 * Makes `topic` (as createEventTopic) and its dead-letter topic `<topic>.dlq`, as the chart's
 * Pipeline would: for installs with `pipeline.create=false`.
 */
export async function createPipelineTopics(
  bootstrapServers: string,
  topic: string,
  partitions?: number,
): Promise<void> {
  await ensureStackTopics(bootstrapServers, [
    eventTopic(topic, partitions),
    deadLetterTopicSpec(`${topic}.dlq`),
  ]);
}
