export { type IngestConfig, type Limits, readIngestConfig } from './config.js';
export { overloadedEvents } from './event-admission.js';
export {
  type BrokerClients,
  createIngestService,
  type IngestProducer,
  type IngestService,
  type IngestServiceOptions,
} from './service.js';
