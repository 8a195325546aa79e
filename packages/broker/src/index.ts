export {
  type ConsumerClients,
  type ConsumerClientsOptions,
  createConsumerClients,
} from './clients/consumer.js';
export type { BrokerLogger } from './clients/kafka.js';
export {
  type BrokerConnection,
  brokerConnection,
  DEAD_LETTER_TOPIC,
  deadLetterTopicName,
  EVENT_TOPIC,
  readBrokerConnection,
} from './config/connection.js';
export { type ConsumerBrokerConfig, readConsumerBrokerConfig } from './config/consumer.js';
export {
  type ProducerConfig,
  type ProducerProperties,
  producerConfig,
  readProducerConfig,
} from './config/producer.js';
export * from './producer.js';
export * from './topics.js';
