export * from './topics.js';
