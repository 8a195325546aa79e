export * from './config.js';
export * from './message-limit.js';
export * from './producer.js';
export * from './topics.js';
