export { type AppDeps, buildApp } from './app.js';
export type { BatchCreateResponse, BatchEntry } from './batch.js';
export { type IngestConfig, type Limits, readIngestConfig } from './config.js';
export type { EventResource } from './ingest.js';
export {
  createIngestService,
  type IngestProducer,
  type IngestService,
  type IngestServiceOptions,
  type KafkaStandIn,
} from './service.js';
