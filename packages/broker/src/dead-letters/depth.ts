import type { ConsumerClients } from '../clients/consumer.js';
import { GroupAdmin, type TopicDepth, topicDepth } from '../groups/admin.js';

/** Records retained in the dead-letter topic, read through an admin connection of its own. */
export async function readDeadLetterDepth(clients: ConsumerClients, dlqTopic: string): Promise<TopicDepth> {
  const admin = new GroupAdmin(clients);
  await admin.connect();
  try {
    return topicDepth(await admin.partitionRanges(dlqTopic));
  } finally {
    await admin.disconnect();
  }
}
