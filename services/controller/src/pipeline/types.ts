/**
 * The Pipeline resource as TypeScript values: its API coordinates, annotations, finalizer and the
 * shapes of its spec and status. `crd.ts` is the OpenAPI schema of the same shapes; the cluster
 * suite applies objects of these types, so the API server checks that the two agree.
 */
export const GROUP = 'observatory.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'Pipeline';
export const PLURAL = 'pipelines';
export const SINGULAR = 'pipeline';
export const SHORT_NAMES = ['pl'];

/** `"true"` stops reconciliation of the Pipeline (condition `ReconciliationPaused`). */
export const PAUSE_ANNOTATION = `${GROUP}/pause-reconciliation`;
/** Comma-separated topic names the controller leaves alone (never changed, never deleted). */
export const UNMANAGED_TOPICS_ANNOTATION = `${GROUP}/unmanaged-topics`;
/**
 * Comma-separated names of topics that exist in Kafka already (made by hand, another tool, or
 * Strimzi) which this Pipeline may take over, or `*` for all its topics. Without it the controller
 * changes no existing topic it did not create (`Ready=False`, reason `AdoptionRequired`).
 */
export const ADOPT_TOPICS_ANNOTATION = `${GROUP}/adopt-topics`;
/**
 * `"true"` lets a Pipeline being deleted go at once: the finalizer is removed without deleting
 * anything, and a Warning Event names what was left in Kafka.
 */
export const FORCE_DELETE_ANNOTATION = `${GROUP}/force-delete`;
/**
 * The controller a Pipeline belongs to, `namespace/release` (its `CONTROLLER_NAME`): only that one
 * reconciles it. An unstamped Pipeline is stamped by the first controller that reconciles it.
 */
export const CONTROLLER_ANNOTATION = `${GROUP}/controller`;
/**
 * The label a Secret must carry, `"true"`, for the controller to use it as a Pipeline's Kafka
 * credentials: the Secret's owner opts in, a Pipeline cannot point the controller at any Secret.
 */
export const PIPELINE_CREDENTIALS_LABEL = `${GROUP}/pipeline-credentials`;
/** Held while the controller may still have to delete the Pipeline's topics. */
export const FINALIZER = `${GROUP}/topics`;

export type DeletionPolicy = 'Retain' | 'Delete';

export interface PipelineTopic {
  /** The Kafka topic name. */
  name: string;
  partitions: number;
  replicationFactor: number;
  /** Kafka topic configs as Kafka spells them (`retention.ms`), values as strings. */
  config?: Record<string, string>;
}

/** A key of a Secret in the Pipeline's namespace (Strimzi's `CertSecretSource`). */
export interface CertSecretSource {
  secretName: string;
  /** The key holding the PEM certificate(s), e.g. `ca.crt` of Strimzi's `<cluster>-cluster-ca-cert`. */
  certificate: string;
}

/**
 * How the controller logs in, spelled as Strimzi's client `authentication` (KafkaConnect,
 * KafkaBridge, MirrorMaker 2), so the Secret a `KafkaUser` makes is referenced as it is.
 */
export interface KafkaAuthentication {
  type: 'tls' | 'scram-sha-256' | 'scram-sha-512' | 'plain';
  /** SASL user (scram-*, plain). */
  username?: string;
  /** SASL password: a key of a Secret (a KafkaUser's Secret has `password`). */
  passwordSecret?: { secretName: string; password: string };
  /** Client certificate (tls): a KafkaUser's Secret has `user.crt` and `user.key`. */
  certificateAndKey?: { secretName: string; certificate: string; key: string };
}

/** The Kafka cluster a Pipeline's topics live in, and how to reach it. */
export interface PipelineKafka {
  /** Absent: the controller's `BROKER_BOOTSTRAP_SERVERS`. */
  bootstrapServers?: string;
  /** TLS; `trustedCertificates` absent or empty: the system CAs. */
  tls?: { trustedCertificates?: CertSecretSource[] };
  authentication?: KafkaAuthentication;
}

/** Where the flow of events through the Pipeline's topics is read (status.flow). */
export interface PipelineFlow {
  /** The consumer group whose committed offsets are measured against the topic's end offsets. */
  consumerGroup: string;
  /** The topic it consumes, as `spec.topics[].name` spells it; default the first declared topic. */
  topic?: string;
  /** The dead-letter topic whose depth and growth are reported; absent: no `DeadLettering`. */
  deadLetterTopic?: string;
  /** `Lagging` above this many records behind; default `CONTROLLER_FLOW_MAX_LAG`. */
  maxLag?: number;
  /** `DeadLettering` above this rate; default `CONTROLLER_FLOW_MAX_DEAD_LETTERS_PER_MINUTE`. */
  maxDeadLettersPerMinute?: number;
}

export interface PipelineSpec {
  /**
   * Where the topics live. Without `tls` and `authentication`, the controller's own `BROKER_*`
   * security settings apply.
   */
  kafka?: PipelineKafka;
  /** What deleting the Pipeline does to its topics; default `Retain`. */
  deletionPolicy?: DeletionPolicy;
  topics: PipelineTopic[];
  /** Flow health in `status.flow`; absent: not observed. */
  flow?: PipelineFlow;
  /**
   * Topic config keys the controller never sets or resets (tools such as Cruise Control tune
   * them), besides `CONTROLLER_IGNORED_CONFIGS`.
   */
  ignoredConfigs?: string[];
}

/** A condition as the Kubernetes API conventions define it (metav1.Condition). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

/**
 * How one declared topic stands. `Creating`: recorded as the Pipeline's just before it is created
 * (the reconcile's status replaces it).
 */
export type TopicPhase = 'Ready' | 'Refused' | 'Blocked' | 'Conflict' | 'Unmanaged' | 'Error' | 'Creating';

/** One declared topic: its state in Kafka as last read, and why it is not Ready. */
export interface TopicStatus {
  name: string;
  phase: TopicPhase;
  /** Absent when the topic does not exist (or was not read). */
  partitions?: number;
  replicationFactor?: number;
  /** Values in Kafka of the configs the spec names. */
  config?: Record<string, string>;
  message?: string;
  /**
   * The controller created this topic for the Pipeline, adopted it, or took it over from an older
   * Pipeline, in the cluster `PipelineStatus.cluster`: it may change it (and delete it under
   * `Delete`) there without the adopt annotation. Never true in a `Conflict` entry.
   */
  managed?: boolean;
  /**
   * Set in a `Conflict` entry (and kept by an `Error` or `Blocked` one that follows it): the older
   * Pipeline (`namespace/name`) that manages the topic in the cluster `PipelineStatus.cluster`;
   * once it no longer claims the topic, this Pipeline takes it over without the adopt annotation
   * (a hand-over never adopts what the older one had not).
   */
  handOverFrom?: string;
}

/** The flow through the Pipeline as last observed. */
export interface FlowStatus {
  /** Records the consumer group is behind, in all (absent: no committed offsets to compare). */
  lag?: number;
  /** Per partition with a committed offset. */
  partitions?: Array<{ partition: number; lag: number }>;
  /** Records retained in the dead-letter topic. */
  deadLetters?: number;
  /** Dead letters written per minute over the last period. */
  deadLettersPerMinute?: number;
  /** The newest `ingested_at` in the store (only with `CONTROLLER_STORE_URL`). */
  lastStoredAt?: string;
  observedAt: string;
  /** Why a reading is missing. */
  message?: string;
}

export interface PipelineStatus {
  observedGeneration?: number;
  /**
   * The Kafka cluster the records of `topics` (`managed`, `handOverFrom`) are for: the servers of
   * its `CONTROLLER_ALLOWED_BOOTSTRAP` entry. Absent in a status written before it was recorded.
   */
  cluster?: string;
  /** Null only in a write: removes it (the Pipeline no longer has `spec.flow`). */
  flow?: FlowStatus | null;
  conditions?: Condition[];
  topics?: TopicStatus[];
  /** `ready/declared`, for `kubectl get`. */
  topicsReady?: string;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  finalizers?: string[];
}

export interface Pipeline {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec: PipelineSpec;
  status?: PipelineStatus;
}

/** `namespace/name`: the work queue's key of a Pipeline. */
export function keyOf(meta: { namespace: string; name: string }): string {
  return `${meta.namespace}/${meta.name}`;
}
