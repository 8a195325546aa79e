/** Vitest global setup of the ingest suite: one real Kafka broker, no PostgreSQL. */
import { kafkaGlobalSetup } from '@event-observatory/devstack/vitest-kafka-setup';

/** Broker settings the ingest tests need: a 1 MiB event plus headers must fit in one record. */
export const INGEST_BROKER_SETTINGS = { 'message.max.bytes': '2097152' };

export default kafkaGlobalSetup({ name: 'ingest', settings: INGEST_BROKER_SETTINGS });
