/**
 * The Pipeline CustomResourceDefinition, the one source of `crds/pipeline.yaml`
 * (`npm run crd -w @event-observatory/controller` writes it; a test fails when the file differs).
 * Written as the API server's JSON (`x-kubernetes-*` keys), not client-node's camel-cased models.
 *
 * Validation happens in the API server, so `kubectl apply` answers a bad Pipeline at once:
 * OpenAPI bounds for single fields, CEL rules where a rule spans fields or versions (partitions
 * never decrease, the replication factor never changes, the known cleanup policies).
 */
import { GROUP, KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION } from './types.js';

/** The part of OpenAPI v3 (structural schema) this CRD uses. */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema;
  enum?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  pattern?: string;
  'x-kubernetes-list-type'?: 'map' | 'set' | 'atomic';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: Array<{ rule: string; message: string; reason?: string; fieldPath?: string }>;
}

/** Cleanup policies Kafka knows; the CRD refuses any other value of `cleanup.policy`. */
export const CLEANUP_POLICIES = ['delete', 'compact', 'compact,delete', 'delete,compact'];

const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });

const topicSchema: Schema = {
  type: 'object',
  required: ['name', 'partitions'],
  properties: {
    name: str('Kafka topic name; names starting with __ are Kafka internal topics and refused.', {
      minLength: 1,
      maxLength: 249,
      pattern: '^[a-zA-Z0-9._-]+$',
      'x-kubernetes-validations': [
        {
          rule: "!self.startsWith('__')",
          message: 'topic names starting with __ are reserved for Kafka internal topics',
        },
      ],
    }),
    partitions: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 100000,
      description: 'Number of partitions; may be raised, never lowered (Kafka cannot remove partitions).',
    },
    replicationFactor: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 32767,
      default: 1,
      description: 'Replicas of each partition; fixed once the topic exists.',
    },
    config: {
      type: 'object',
      description:
        'Kafka topic configs as Kafka spells them (retention.ms, cleanup.policy, ...), values as strings.',
      maxProperties: 64,
      additionalProperties: { type: 'string', maxLength: 1024 },
      'x-kubernetes-validations': [
        {
          rule: `!('cleanup.policy' in self) || self['cleanup.policy'] in [${CLEANUP_POLICIES.map((p) => `'${p}'`).join(', ')}]`,
          message: `cleanup.policy must be one of ${CLEANUP_POLICIES.join(', ')}`,
        },
      ],
    },
  },
};

const conditionSchema: Schema = {
  type: 'object',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  properties: {
    type: str(
      'Ready, Stalled, Reconciling, Conflict, ReconciliationPaused, Flowing, Lagging or DeadLettering.',
      {
        maxLength: 316,
      },
    ),
    status: str('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
    reason: str('CamelCase reason of the last transition.', { maxLength: 1024 }),
    message: str('Human-readable details.', { maxLength: 32768 }),
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: str('When the status last changed.', { format: 'date-time' }),
  },
};

const topicStatusSchema: Schema = {
  type: 'object',
  required: ['name', 'phase'],
  properties: {
    name: str('Kafka topic name.'),
    phase: str('How the topic stands.', {
      enum: ['Ready', 'Refused', 'Blocked', 'Conflict', 'Unmanaged', 'Error', 'Creating'],
    }),
    partitions: { type: 'integer', format: 'int32', description: 'Partitions in Kafka.' },
    replicationFactor: { type: 'integer', format: 'int32', description: 'Replication factor in Kafka.' },
    config: {
      type: 'object',
      description: 'Values in Kafka of the configs the spec names.',
      additionalProperties: { type: 'string' },
    },
    message: str('Why the topic is not Ready.'),
    managed: {
      type: 'boolean',
      description:
        'The controller created or adopted this topic for this Pipeline in status.cluster: it changes it there without the adopt annotation. Never true in a Conflict entry.',
    },
    handOverFrom: str(
      'Set in a Conflict entry: the older Pipeline (namespace/name) that manages the topic in status.cluster; this one takes it over when that one no longer claims it.',
      { maxLength: 317 },
    ),
  },
};

/** A key of a Secret in the Pipeline's namespace, as Strimzi's CertSecretSource. */
const secretKey = (description: string, keyField: string, example: string): Schema => ({
  type: 'object',
  description,
  required: ['secretName', keyField],
  properties: {
    secretName: str("Secret in the Pipeline's namespace.", { minLength: 1, maxLength: 253 }),
    [keyField]: str(`Key in that Secret (e.g. ${example}).`, { minLength: 1, maxLength: 253 }),
  },
});

const kafkaSchema: Schema = {
  type: 'object',
  description:
    "The Kafka cluster and how to reach it, spelled as Strimzi's client settings; absent: the controller's BROKER_* settings.",
  properties: {
    bootstrapServers: str('Comma-separated host:port list; must be in CONTROLLER_ALLOWED_BOOTSTRAP.', {
      pattern: '^[^\\s,:]+:[0-9]{1,5}(,[^\\s,:]+:[0-9]{1,5})*$',
      maxLength: 4096,
    }),
    tls: {
      type: 'object',
      description: 'Connect over TLS. Without trustedCertificates the system CAs are trusted.',
      properties: {
        trustedCertificates: {
          type: 'array',
          maxItems: 16,
          description: "CA certificates to trust, e.g. Strimzi's <cluster>-cluster-ca-cert, key ca.crt.",
          items: secretKey('A PEM certificate in a Secret.', 'certificate', 'ca.crt'),
        },
      },
    },
    authentication: {
      type: 'object',
      description: "How to log in, as Strimzi's KafkaUser: tls (client certificate) or SASL.",
      required: ['type'],
      properties: {
        type: str('tls, scram-sha-256, scram-sha-512 or plain.', {
          enum: ['tls', 'scram-sha-256', 'scram-sha-512', 'plain'],
        }),
        username: str('SASL user name (the KafkaUser name).', { minLength: 1, maxLength: 253 }),
        passwordSecret: secretKey('The SASL password in a Secret.', 'password', 'password'),
        certificateAndKey: {
          ...secretKey('Client certificate and PKCS#8 key in a Secret.', 'certificate', 'user.crt'),
          required: ['secretName', 'certificate', 'key'],
          properties: {
            ...secretKey('', 'certificate', 'user.crt').properties,
            key: str('Key in that Secret (e.g. user.key).', { minLength: 1, maxLength: 253 }),
          },
        },
      },
      'x-kubernetes-validations': [
        {
          rule: "self.type == 'tls' ? has(self.certificateAndKey) : has(self.username) && has(self.passwordSecret)",
          message:
            'type tls needs certificateAndKey; scram-sha-256, scram-sha-512 and plain need username and passwordSecret',
        },
      ],
    },
  },
  'x-kubernetes-validations': [
    {
      rule: "!has(self.authentication) || self.authentication.type != 'tls' || has(self.tls)",
      message: 'authentication type tls needs tls',
    },
  ],
};

const flowSchema: Schema = {
  type: 'object',
  description:
    'Where the flow through the topics is read for status.flow and the Flowing, Lagging, DeadLettering conditions.',
  required: ['consumerGroup'],
  properties: {
    consumerGroup: str('Consumer group whose committed offsets are compared with the end offsets.', {
      minLength: 1,
      maxLength: 249,
    }),
    topic: str(
      'The topic it consumes, one of spec.topics[].name as spelled there; default the first declared topic.',
      { maxLength: 249 },
    ),
    deadLetterTopic: str(
      'Dead-letter topic whose depth and growth are reported, one of spec.topics[].name: a Pipeline reads only its own topics.',
      { maxLength: 249 },
    ),
    maxLag: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'Lagging=True above this many records behind; default CONTROLLER_FLOW_MAX_LAG.',
    },
    maxDeadLettersPerMinute: {
      type: 'number',
      minimum: 0,
      description: 'DeadLettering=True above this rate; default CONTROLLER_FLOW_MAX_DEAD_LETTERS_PER_MINUTE.',
    },
  },
};

const flowStatusSchema: Schema = {
  type: 'object',
  required: ['observedAt'],
  properties: {
    lag: { type: 'integer', format: 'int64', description: 'Records behind, all partitions.' },
    partitions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['partition', 'lag'],
        properties: {
          partition: { type: 'integer', format: 'int32' },
          lag: { type: 'integer', format: 'int64' },
        },
      },
    },
    deadLetters: { type: 'integer', format: 'int64', description: 'Records in the dead-letter topic.' },
    deadLettersPerMinute: { type: 'number', description: 'Dead letters per minute over the last period.' },
    lastStoredAt: str('Newest ingested_at in the store.', { format: 'date-time' }),
    observedAt: str('When the flow was read.', { format: 'date-time' }),
    message: str('Why a reading is missing.'),
  },
};

const pipelineSchema: Schema = {
  type: 'object',
  description: 'Kafka topics declared for the event pipeline; the controller makes Kafka match them.',
  required: ['spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['topics'],
      // The flow is read only from the Pipeline's own topics (a tenant must not learn another's).
      'x-kubernetes-validations': (['topic', 'deadLetterTopic'] as const).map((field) => ({
        rule: `!has(self.flow) || !has(self.flow.${field}) || self.topics.exists(t, t.name == self.flow.${field})`,
        message: 'must be one of spec.topics[].name: a Pipeline reads only its own topics',
        fieldPath: `.flow.${field}`,
      })),
      properties: {
        kafka: kafkaSchema,
        flow: flowSchema,
        ignoredConfigs: {
          type: 'array',
          maxItems: 64,
          'x-kubernetes-list-type': 'set',
          description: 'Topic config keys the controller never sets or resets (tuned by other tools).',
          items: { type: 'string', minLength: 1, maxLength: 249 },
        },
        deletionPolicy: str('Retain keeps the topics when the Pipeline is deleted; Delete deletes them.', {
          enum: ['Retain', 'Delete'],
          default: 'Retain',
        }),
        topics: {
          type: 'array',
          maxItems: 100,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: topicSchema,
          // Rules between versions, on the whole list: the API server does not correlate the old
          // and new item of a map-list for a rule placed on the items.
          'x-kubernetes-validations': [
            {
              rule: 'oldSelf.all(o, self.all(t, t.name != o.name || t.partitions >= o.partitions))',
              message: 'partitions may not decrease: Kafka cannot remove partitions from a topic',
            },
            {
              rule: 'oldSelf.all(o, self.all(t, t.name != o.name || t.replicationFactor == o.replicationFactor))',
              message: 'replicationFactor is immutable: changing it needs a partition reassignment',
            },
          ],
        },
      },
    },
    status: {
      type: 'object',
      // Read back as `{observedGeneration: 0}` until the controller writes one: kstatus (Helm 4's
      // `--wait`, Flux, Argo CD) then waits for the first reconcile instead of reading a Pipeline no
      // controller has seen yet as Current.
      default: {},
      properties: {
        observedGeneration: {
          type: 'integer',
          format: 'int64',
          default: 0,
          description: 'The generation the status describes; 0 until the controller first reconciles it.',
        },
        cluster: str(
          'The Kafka cluster the managed records of topics are for: the servers of its CONTROLLER_ALLOWED_BOOTSTRAP entry.',
        ),
        topicsReady: str('Ready topics / declared topics.'),
        flow: flowStatusSchema,
        conditions: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          items: conditionSchema,
        },
        topics: { type: 'array', items: topicStatusSchema },
      },
    },
  },
};

const conditionColumn = (type: string, field = 'status') =>
  `.status.conditions[?(@.type=="${type}")].${field}`;

/** The CustomResourceDefinition object, as `kubectl apply` takes it. */
export const pipelineCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${PLURAL}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: {
      kind: KIND,
      listKind: `${KIND}List`,
      plural: PLURAL,
      singular: SINGULAR,
      shortNames: SHORT_NAMES,
    },
    versions: [
      {
        name: VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          {
            name: 'Topics',
            type: 'string',
            jsonPath: '.status.topicsReady',
            description: 'Ready / declared',
          },
          { name: 'Ready', type: 'string', jsonPath: conditionColumn('Ready') },
          { name: 'Lag', type: 'integer', jsonPath: '.status.flow.lag', description: 'Records behind' },
          { name: 'DLQ', type: 'integer', jsonPath: '.status.flow.deadLetters', description: 'Dead letters' },
          { name: 'Flowing', type: 'string', jsonPath: conditionColumn('Flowing') },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          { name: 'Reason', type: 'string', jsonPath: conditionColumn('Ready', 'reason'), priority: 1 },
          { name: 'Lagging', type: 'string', jsonPath: conditionColumn('Lagging'), priority: 1 },
          { name: 'DeadLettering', type: 'string', jsonPath: conditionColumn('DeadLettering'), priority: 1 },
          {
            name: 'DLQ/min',
            type: 'number',
            jsonPath: '.status.flow.deadLettersPerMinute',
            priority: 1,
          },
          { name: 'Observed', type: 'date', jsonPath: '.status.flow.observedAt', priority: 1 },
        ],
        schema: { openAPIV3Schema: pipelineSchema },
      },
    ],
  },
} as const;
