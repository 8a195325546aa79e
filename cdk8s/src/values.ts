/**
 * The chart's values: what an operator may change, with defaults and descriptions. values.yaml,
 * values.schema.json and the README's values table are written from this tree (main.ts).
 */
import { adminValues, authValues } from './auth.js';
import { bool, int, list, map, oneOf, str, type Tree } from './values-schema.js';

const image = (component: string) => ({
  registry: str('', `registry of the ${component} image (empty: image.registry)`),
  repository: str(`observatory/${component}`, `repository of the ${component} image`),
  tag: str('', `tag of the ${component} image (empty: image.tag)`),
  pullPolicy: oneOf(['', 'Always', 'IfNotPresent', 'Never'], '', 'empty: image.pullPolicy'),
});

/** Requests from the memory each service was measured at (README), limits with headroom. */
const resources = (cpu: string, memory: string, memoryLimit: string) =>
  map(
    { requests: { cpu, memory }, limits: { memory: memoryLimit } },
    'container resources (requests from the measured memory; no CPU limit, so no throttling)',
  );

const deployment = (component: string, replicas: number, res: ReturnType<typeof resources>): Tree => ({
  image: image(component),
  replicas: int(replicas, `${component} pods`, 1),
  resources: res,
  logLevel: oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal'], 'info', 'LOG_LEVEL'),
  extraEnv: map({}, `extra environment variables of the ${component} container (name: value)`, 'string'),
});

const secretRef = (what: string, key: string): Tree => ({
  name: str('', `name of the Secret holding ${what} (required)`),
  key: str(key, `key in that Secret`),
});

/** A PostgreSQL role of its own: user and password Secret (empty user: the owner's credentials). */
const databaseRole = (role: string, who: string, key: string): Tree => ({
  user: str('', `the ${role} role (${who}); empty: database.user`),
  passwordSecret: {
    name: str('', `Secret with the ${role}'s password (empty: secrets.store.name, one Secret for all)`),
    key: str(key, 'key of the password in that Secret'),
  },
});

/** Values without a usable default: `helm install` fails naming every one that is empty. */
export const REQUIRED: Record<string, string> = {
  'kafka.bootstrapServers': 'the Kafka bootstrap servers',
  'database.url': 'the PostgreSQL URL',
  'secrets.store.name': 'the Secret holding STORE_PASSWORD',
  'secrets.auth.name': 'the Secret holding AUTH_SECRET (or the public key), unless auth names a key set',
  'secrets.admin.name':
    'the Secret holding ADMIN_AUTH_SECRET (or the public key), unless admin names a key set',
  'secrets.application.name': 'the Secret holding APPLICATION_SECRET',
};

export const values: Tree = {
  image: {
    registry: str('ghcr.io/event-observatory', 'default registry of every image'),
    tag: str('', 'default tag of every image (empty: the chart appVersion)'),
    pullPolicy: oneOf(['Always', 'IfNotPresent', 'Never'], 'IfNotPresent', 'default pull policy'),
    pullSecrets: list([], 'imagePullSecrets of every pod ({name: ...} items)', { type: 'object' }),
  },
  commonLabels: map({}, 'labels added to every object', 'string'),
  commonAnnotations: map({}, 'annotations added to every object', 'string'),
  podAnnotations: map({}, 'annotations added to every pod', 'string'),
  nodeSelector: map({}, 'nodeSelector of every pod', 'string'),
  tolerations: list([], 'tolerations of every pod', { type: 'object' }),
  kafka: {
    bootstrapServers: str('', 'Kafka bootstrap servers, host:port[,host:port] (required)'),
    groupId: str('cobalt-cloudevents-v1', "the consumer's group id (changing it replays the topic)"),
    tls: {
      enabled: bool(
        false,
        'connect to Kafka over TLS (BROKER_SECURITY_PROTOCOL SSL, or SASL_SSL with kafka.sasl)',
      ),
      caSecret: {
        name: str(
          '',
          "existing Secret with the CA to trust, e.g. Strimzi's <cluster>-cluster-ca-cert (empty: system CAs)",
        ),
        key: str('ca.crt', 'key of the PEM CA bundle in that Secret'),
      },
      clientCertSecret: {
        name: str(
          '',
          "existing Secret with a client certificate (Strimzi's tls authentication: the KafkaUser's Secret)",
        ),
        certificateKey: str('user.crt', 'key of the PEM certificate in that Secret'),
        keyKey: str('user.key', 'key of the PKCS#8 PEM private key in that Secret'),
      },
    },
    sasl: {
      mechanism: oneOf(
        ['', 'PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'],
        '',
        'SASL mechanism (empty: no SASL login)',
      ),
      username: str('', 'SASL user name (required with a mechanism)'),
      passwordSecret: {
        name: str(
          '',
          "existing Secret with the SASL password, e.g. the KafkaUser's (required with a mechanism)",
        ),
        key: str('password', 'key of the password in that Secret'),
      },
    },
  },
  pipeline: {
    create: bool(true, 'create the default Pipeline (the controller creates its topics)'),
    topic: str('events.cloudevents.v1', 'the event topic (BROKER_TOPIC)'),
    partitions: int(12, 'partitions of the event topic (never lowered)', 1),
    replicationFactor: int(1, 'replication factor of the pipeline topics', 1),
    retentionHours: int(168, 'retention of the pipeline topics', 1),
    deletionPolicy: oneOf(['Retain', 'Delete'], 'Retain', 'what deleting the Pipeline does to its topics'),
    adoptExistingTopics: bool(
      false,
      'let the controller take over the topics if they exist already (annotation observatory.dev/adopt-topics: "*")',
    ),
  },
  database: {
    url: str('', 'PostgreSQL URL without password, postgres:// or jdbc:postgresql:// (required)'),
    user: str(
      'observatory',
      'the owner role: runs the migrations; every role when writer and reader are empty',
    ),
    writer: databaseRole(
      'writer',
      'the consumer and the jobs: insert, checkpoints, partitions',
      'WRITER_PASSWORD',
    ),
    reader: databaseRole('reader', 'search: SELECT only', 'READER_PASSWORD'),
    tls: {
      mode: oneOf(
        ['', 'disable', 'prefer', 'require', 'verify-ca', 'verify-full'],
        '',
        'sslmode added to the URL (empty: as database.url says)',
      ),
      caSecret: {
        name: str('', 'existing Secret with the CA of the PostgreSQL server (sslrootcert; empty: none)'),
        key: str('ca.crt', 'key of the PEM CA in that Secret'),
      },
    },
  },
  secrets: {
    store: secretRef('the database password (STORE_PASSWORD)', 'STORE_PASSWORD'),
    auth: secretRef(
      "the ingest API's token key: AUTH_SECRET (HS*) or the PEM public key (RS*, ES*, EdDSA); not with a key set",
      'AUTH_SECRET',
    ),
    admin: secretRef(
      "the admin API's own token key: ADMIN_AUTH_SECRET (HS*) or the PEM public key; not with a key set",
      'ADMIN_AUTH_SECRET',
    ),
    application: secretRef(
      'APPLICATION_SECRET (signs search cursors; 32 bytes or more)',
      'APPLICATION_SECRET',
    ),
  },
  auth: authValues,
  admin: adminValues,
  tracing: {
    otlpEndpoint: str('', 'OTLP endpoint of a collector (empty: traces off)'),
    otlpProtocol: oneOf(
      ['grpc', 'http/protobuf', 'http/json'],
      'grpc',
      "OTEL_EXPORTER_OTLP_PROTOCOL: the endpoint's protocol (the spec's is gRPC on 4317)",
    ),
  },
  ingest: {
    ...deployment('ingest', 2, resources('100m', '128Mi', '384Mi')),
    ingress: {
      enabled: bool(false, 'an Ingress for the ingestion API'),
      className: str('', 'ingressClassName'),
      host: str('events.example.com', 'host name of the ingestion API'),
      tlsSecret: str('', 'Secret with the TLS certificate (empty: no TLS)'),
      annotations: map({}, 'annotations of the Ingress', 'string'),
    },
  },
  consumer: deployment('consumer', 2, resources('100m', '192Mi', '512Mi')),
  search: {
    ...deployment('search', 2, resources('50m', '128Mi', '384Mi')),
    serviceType: oneOf(
      ['ClusterIP', 'NodePort', 'LoadBalancer'],
      'ClusterIP',
      'the search Service: it has no login, so anything but ClusterIP opts in to exposing it',
    ),
    allowedHosts: str('', 'ALLOWED_HOSTS, comma-separated (empty: the Service names in the namespace)'),
  },
  controller: {
    enabled: bool(true, 'the Pipeline controller (creates the topics of Pipelines)'),
    allowedBootstrapServers: str(
      '',
      'CONTROLLER_ALLOWED_BOOTSTRAP: the Kafka clusters Pipelines may name (empty: kafka.bootstrapServers only)',
    ),
    ...deployment('controller', 2, resources('20m', '96Mi', '256Mi')),
    // Issue 33: namespaces, the topic-name rule, flow health, deletion that cannot get stuck.
    watchAllNamespaces: bool(
      false,
      "watch Pipelines of every namespace (a ClusterRole and ClusterRoleBinding); false: the release's namespace only (a Role)",
    ),
    topicNameTemplate: str(
      '{name}',
      'CONTROLLER_TOPIC_NAME_TEMPLATE: Kafka name of spec.topics[].name; {name} as given, or e.g. {namespace}.{name}',
    ),
    ignoredConfigs: str(
      'leader.replication.throttled.replicas,follower.replication.throttled.replicas',
      'CONTROLLER_IGNORED_CONFIGS: topic config keys the controller never sets or resets (tuned by other tools)',
    ),
    deletionTimeout: str(
      '3m',
      'CONTROLLER_DELETION_TIMEOUT: a Delete Pipeline whose topics cannot be deleted is let go after this (with an Event)',
    ),
    flow: {
      period: str('30s', 'CONTROLLER_FLOW_PERIOD: how often the flow of the Pipelines is read'),
      maxLag: int(1000, 'CONTROLLER_FLOW_MAX_LAG: Lagging=True above this many records behind', 0),
      maxDeadLettersPerMinute: int(
        0,
        'CONTROLLER_FLOW_MAX_DEAD_LETTERS_PER_MINUTE: DeadLettering=True above this rate',
        0,
      ),
    },
    preDeleteHook: bool(
      true,
      'helm uninstall first deletes the Pipelines of deletionPolicy Delete and waits for the controller to finalize them',
    ),
  },
  jobs: {
    image: image('jobs'),
    resources: resources('50m', '96Mi', '256Mi'),
    partitionMaintenance: {
      schedule: str('0 */6 * * *', 'cron schedule of partition-maintenance'),
      monthsAhead: int(3, 'MAINTENANCE_MONTHS_AHEAD', 0),
    },
    rollupRefresh: {
      schedule: str('*/5 * * * *', 'cron schedule of rollup-refresh'),
    },
  },
  migration: {
    activeDeadlineSeconds: int(600, 'longest a migration run may take', 1),
  },
  networkPolicies: {
    enabled: bool(true, 'NetworkPolicies: only what must talk talks'),
    allowFrom: list(
      [],
      'peers besides the release allowed to reach consumer, search, controller (Prometheus)',
      {
        type: 'object',
      },
    ),
    egressTo: list(
      [{ ipBlock: { cidr: '0.0.0.0/0', except: ['169.254.169.254/32'] } }],
      'where pods may connect besides DNS: Kafka, PostgreSQL, the API server, the collector (not the cloud metadata address)',
      { type: 'object' },
      1,
    ),
  },
  monitoring: {
    serviceMonitor: bool(false, 'ServiceMonitors (needs the Prometheus Operator CRDs)'),
    prometheusRule: bool(false, 'the PrometheusRule with the alerts of monitoring/'),
    dashboard: bool(false, 'the Grafana dashboard ConfigMap (label grafana_dashboard: "1")'),
    interval: str('15s', 'scrape interval of the ServiceMonitors'),
    labels: map(
      {},
      'extra labels of the monitoring objects (e.g. the Prometheus release selector)',
      'string',
    ),
  },
};
