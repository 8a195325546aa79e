/** Vitest global setup of the controller's tests: one real Kafka broker, no PostgreSQL. */
import { kafkaGlobalSetup } from '@event-observatory/devstack/vitest-kafka-setup';

export default kafkaGlobalSetup({ name: 'controller' });
