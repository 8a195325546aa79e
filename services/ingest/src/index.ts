export { type IngestConfig, type Limits, readIngestConfig } from './config.js';
export {
  createIngestService,
  type IngestProducer,
  type IngestService,
  type IngestServiceOptions,
  type KafkaStandIn,
} from './service.js';
