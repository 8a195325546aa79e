export * from './config.js';
export * from './producer.js';
export * from './topics.js';
