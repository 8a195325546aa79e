/** The suite's Kafka (devstack, on this machine's own address) as the cluster suites use it. */
import { ensureTopics, eventTopicSpec } from '@event-observatory/broker';
import { Kafka, logLevel } from 'kafkajs';

/** Makes `topic` with the event topics' settings (`partitions` of them, else the default). */
export async function createEventTopic(
  bootstrapServers: string,
  topic: string,
  partitions?: number,
): Promise<void> {
  const kafka = new Kafka({
    clientId: 'cluster-e2e',
    brokers: [bootstrapServers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(admin, [{ ...eventTopicSpec(topic), ...(partitions ? { partitions } : {}) }]);
  } finally {
    await admin.disconnect();
  }
}
