export {
  type CertificateAuthority,
  type CertificateRequest,
  createCertificateAuthority,
  type IssuedCertificate,
  issueCertificate,
} from './certificates.js';
export { brokerSettings, type KafkaHandle, type KafkaOptions, startKafka } from './kafka.js';
export {
  kafkaClient,
  type LocalKafkaOptions,
  rawProducer,
  topicRecordCount,
  withKafkaAdmin,
} from './kafka-clients.js';
export {
  clusterSettings,
  type KafkaCluster,
  type KafkaClusterOptions,
  type KafkaNode,
  startKafkaCluster,
} from './kafka-cluster.js';
export {
  ensureKafkaDistribution,
  KAFKA_3_VERSION,
  KAFKA_VERSION,
  type KafkaDistribution,
  kafkaVersion,
} from './kafka-dist.js';
export {
  SCRAM_MECHANISMS,
  type ScramMechanism,
  type ScramUser,
  type SecuredListenerOptions,
  type SecuredListeners,
  securedClientEnv,
} from './kafka-secured.js';
export {
  DEFAULT_RESTART_POLICY,
  describeExit,
  type KeepRunningOptions,
  type KeptService,
  keepRunning,
  type Restartable,
  type RestartPolicy,
  restartDelayMs,
} from './keep-running.js';
export { PRODUCTION_ENV, productionNodeArgs } from './node-args.js';
export { type OAuth2ProxyConfig, oauth2ProxyAlphaConfig } from './oauth2-proxy.js';
export {
  OIDC_CLIENT_SECRET,
  OIDC_SCOPES,
  OIDC_USERS,
  type OidcIssuer,
  type OidcIssuerOptions,
  type OidcSigningAlgorithm,
  type OidcUser,
  type SigningKey,
  startOidcIssuer,
  type TokenRequest,
  type WebClient,
} from './oidc-issuer.js';
export { cacheDir, removeAbandonedTempDirs, repoRoot, tempDataDir } from './paths.js';
export { claimPort, freePort, isListening, PORT_CLAIMS } from './ports.js';
export {
  createDatabase,
  type PostgresHandle,
  type PostgresOptions,
  type PostgresTls,
  serverSettings,
  startPostgres,
} from './postgres.js';
export { type ReplicaHandle, type ReplicaOptions, startReplica } from './postgres-replica.js';
export { createDatabaseRoles, type DatabaseRole, type DatabaseRoles } from './postgres-roles.js';
export {
  type ExporterHandle,
  type PrometheusHandle,
  type PrometheusOptions,
  type PromQueryResponse,
  type ScrapeTarget,
  startPostgresExporter,
  startPrometheus,
} from './prometheus.js';
export { createTopic, type ReadRecord, readRecords } from './read-records.js';
export { rollupFromEvents, SEED_WORDS, type SeedOptions, seedEvents } from './seed-events.js';
export {
  runServiceProcess,
  type ServiceProcess,
  type ServiceProcessOptions,
  type ServiceRun,
  startServiceProcess,
} from './service-process.js';
export { type SilentProxy, startSilentProxy } from './silent-proxy.js';
export {
  ensureStackTopics,
  replicatedTopics,
  type Stack,
  type StackOptions,
  stackTopics,
  startStack,
} from './stack.js';
export { type Supervised, spawnSupervised, stopChild, tailOf } from './supervise.js';
