export { type AdminClientOptions, createAdminClient } from './clients/admin.js';
export {
  type ConsumerClients,
  type ConsumerClientsOptions,
  createConsumerClients,
} from './clients/consumer.js';
export { brokerFailureReason } from './clients/failure.js';
export type {
  GroupMember,
  GroupMemberSettings,
  GroupRunOptions,
  InboundRecord,
  PartitionBatch,
} from './clients/group-member.js';
export { createKafkaClient, type KafkaClientOptions } from './clients/kafka.js';
export { type AdminBrokerConfig, readAdminBrokerConfig } from './config/admin.js';
export {
  type BrokerTopics,
  bootstrapList,
  brokerTopics,
  DEAD_LETTER_TOPIC,
  deadLetterTopicName,
  EVENT_TOPIC,
  readBrokerTopics,
} from './config/connection.js';
export { type ConsumerBrokerConfig, readConsumerBrokerConfig } from './config/consumer.js';
export {
  type ProducerConfig,
  type ProducerProperties,
  producerConfig,
  readProducerConfig,
} from './config/producer.js';
export {
  type BrokerSecurity,
  PLAINTEXT,
  readBrokerSecurity,
  SASL_MECHANISMS,
  type SaslMechanism,
  SECURITY_PROTOCOLS,
  type SecurityProtocol,
} from './config/security.js';
export {
  DEAD_LETTER_SEND_BYTES,
  DeadLetterProducer,
  type DeadLetterTopics,
  sendsOf,
} from './dead-letters/producer.js';
export type { RawRecord, RecordHeaders, RecordPosition } from './dead-letters/record.js';
export {
  type DeadLetterScanOptions,
  type DeadLetterScanOutcome,
  type ScannedRecord,
  type ScanStep,
  scanDeadLetters,
} from './dead-letters/scan.js';
export {
  GroupAdmin,
  groupLag,
  type PartitionDepth,
  type PartitionRange,
  readGroupReadings,
  type TopicDepth,
  topicDepth,
} from './groups/admin.js';
export * from './message-limit.js';
export { EventProducer, type EventProducerOptions } from './producer/event-producer.js';
export {
  type OutboundRecord,
  PublishError,
  type PublishFailure,
  type PublishReceipt,
} from './producer/record.js';
export {
  deleteTopics,
  type EnsureTopicsOptions,
  type EnsureTopicsResult,
  ensureTopics,
  isVanishedTopic,
  readTopicStates,
  type TopicAction,
  type TopicOutcome,
  waitForLeaders,
} from './topics/admin.js';
export {
  changeOf,
  DEAD_LETTER_MAX_MESSAGE_BYTES,
  deadLetterTopicSpec,
  EVENT_MAX_MESSAGE_BYTES,
  eventTopicSpec,
  planTopic,
  retentionMs,
  type TopicChange,
  type TopicPlan,
  type TopicRefusal,
  type TopicSpec,
  type TopicState,
  topicSpecs,
  validateSpec,
  validateSpecs,
} from './topics/model.js';
