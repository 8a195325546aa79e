export { type AppDeps, buildApp } from './app.js';
export { ADMIN_SCOPE, type ConsumerConfig, readConsumerConfig } from './config.js';
export {
  buildDeadLetter,
  DEAD_LETTER_TYPE,
  type DeadLetter,
  originalMessage,
  parseDeadLetter,
} from './dead-letter.js';
export { decodeRecord, POISON_REASONS, type PoisonReason } from './decode.js';
export { type ConsumerService, createConsumerService, type ServiceOptions } from './service.js';
