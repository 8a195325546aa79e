export { type AppDeps, buildApp } from './app.js';
export { ADMIN_SCOPE, type ConsumerConfig, readConsumerConfig } from './config.js';
export {
  buildDeadLetter,
  DEAD_LETTER_TYPE,
  type DeadLetter,
  originalMessage,
  parseDeadLetter,
} from './dead-letter.js';
export { decodeRecord, type EventRow, POISON_REASONS, type PoisonReason } from './decode.js';
export { checkpointsOf } from './processor.js';
export type { ConsumedRecord } from './record.js';
export { type ConsumerService, createConsumerService, type ServiceOptions } from './service.js';
export { EventWriter } from './writer.js';
