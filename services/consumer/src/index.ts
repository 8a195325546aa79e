export { type AppDeps, buildApp, type ConsumerApps } from './app.js';
export { ADMIN_SCOPE, type ConsumerConfig, readConsumerConfig } from './config.js';
export {
  buildDeadLetter,
  DEAD_LETTER_TYPE,
  type DeadLetter,
  originalMessage,
  parseDeadLetter,
} from './dlq/dead-letter.js';
export { type ConsumerService, createConsumerService, type ServiceOptions } from './service.js';
export { decodeRecord, POISON_REASONS, type PoisonReason } from './write/decode.js';
export { checkpointsOf } from './write/processor.js';
export type { ConsumedRecord } from './write/record.js';
export { EventWriter } from './write/writer.js';
