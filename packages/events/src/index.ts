export {
  BATCH_MEDIA_TYPE,
  type ContentMode,
  checkJsonPayload,
  type DecodedRequest,
  decodeBinary,
  decodeHttpEvent,
  decodeJsonEvent,
  decodeStructured,
  decodeUtf8,
  type HeaderPairs,
  percentDecodeHeader,
  STRUCTURED_MEDIA_TYPE,
  selectMode,
  splitBatch,
} from './http.js';
export { memberSpan, splitJsonArray } from './json-scan.js';
export {
  type DecodedKafkaRecord,
  decodeKafkaRecord,
  encodeStructured,
  encodeStructuredWithData,
  fromKafkaRecord,
  type KafkaRecordIn,
  type KafkaRecordOut,
  kafkaHeaderName,
  orderedAttributes,
  recordHeader,
  toKafkaRecord,
  toKafkaRecordFrom,
  toStructuredJson,
} from './kafka.js';
export {
  type CloudEvent,
  CONTEXT_ATTRIBUTES,
  type ContextAttribute,
  isContextAttribute,
  SPEC_VERSION,
} from './model.js';
export { encodeNamePart, eventName, parseEventName, partitionKey } from './names.js';
export {
  type AuthType,
  encodeProducer,
  PRODUCER_HEADER,
  type ProducerIdentity,
  producerOf,
  readProducer,
  UNAUTHENTICATED,
} from './producer.js';
export {
  EventRejection,
  invalidAttributes,
  invalidPayload,
  malformed,
  REJECTION_REASONS,
  type RejectionKind,
  type RejectionReason,
  tooLarge,
} from './rejection.js';
export {
  EARLIEST_EVENT_TIME_MS,
  MAX_AHEAD_MS,
  plausibleTimeProblem,
  plausibleWindow,
} from './time-window.js';
export {
  buildEvent,
  checkExtensionName,
  checkTimeWindow,
  type EventFields,
  EXTENSION_NAME,
  isCloudEventsString,
  isJsonMediaType,
  isTextMediaType,
  mediaTypeEssence,
  mediaTypeParameter,
  parseRfc3339,
  type TimeSkew,
  type TimeWindow,
} from './validate.js';
