/**
 * @event-observatory/service-kit: what every service shares. Each module is also a subpath
 * (`@event-observatory/service-kit/auth`, `/config`, `/errors`, `/health`, `/logger`, `/metrics`,
 * `/resilience`, `/server`, `/tracing`).
 * @module
 */
export * from './auth/index.js';
export * from './config/index.js';
export * from './errors/index.js';
export * from './health/index.js';
export * from './logger/index.js';
export * from './metrics/index.js';
export * from './resilience/index.js';
export * from './server/index.js';
export * from './tracing/index.js';
