/**
 * The chart's values: what an operator may change, with defaults and descriptions. values.yaml,
 * values.schema.json and the README's values table are written from this tree (main.ts).
 */
import { adminValues, authValues } from './auth.js';
import { databaseBundledValues, kafkaBundledValues } from './bundled.js';
import { searchAuthValues } from './search-auth.js';
import { bool, int, type Leaf, list, map, oneOf, open, str, type Tree } from './values-schema.js';

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

/** What an operator adds to a component's pods: environment, volumes, service account annotations. */
const podExtras = (component: string): Tree => ({
  extraEnv: {
    schema: { type: ['object', 'array'] },
    default: {},
    description: `extra environment of the ${component} container: a map (name: value, in its ConfigMap) or a list of EnvVar items (valueFrom allowed)`,
  } satisfies Leaf,
  extraVolumes: list([], `extra volumes of the ${component} pods (e.g. a CA bundle)`, { type: 'object' }),
  extraVolumeMounts: list([], `extra volumeMounts of the ${component} container`, { type: 'object' }),
  serviceAccount: {
    annotations: map(
      {},
      `annotations of the ${component} ServiceAccount (IRSA, Workload Identity)`,
      'string',
    ),
  },
});

const deployment = (component: string, replicas: number, res: ReturnType<typeof resources>): Tree => ({
  image: image(component),
  replicas: int(replicas, `${component} pods`, 1),
  resources: res,
  logLevel: oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal'], 'info', 'LOG_LEVEL'),
  ...podExtras(component),
  topologySpreadConstraints: list(
    [],
    `topologySpreadConstraints of the ${component} pods (empty: spread over nodes, ScheduleAnyway)`,
    { type: 'object' },
  ),
  preStopDelaySeconds: int(
    10,
    `seconds a ${component} pod keeps serving after it is told to stop, while it leaves the Service's endpoints (the grace period adds its shutdown bound)`,
    1,
  ),
});

/** A HorizontalPodAutoscaler for a stateless component; the Deployment then has no replicas field. */
const autoscaling = (component: string): Tree => ({
  autoscaling: {
    enabled: bool(
      false,
      `a HorizontalPodAutoscaler for ${component} (the Deployment then leaves replicas to it)`,
    ),
    minReplicas: int(2, 'fewest pods', 1),
    maxReplicas: int(6, 'most pods', 1),
    targetCPUUtilizationPercentage: int(
      70,
      'average CPU use, as a percentage of the request, the HPA aims at',
      1,
    ),
    scaleDownStabilizationSeconds: int(
      300,
      "behavior.scaleDown.stabilizationWindowSeconds: the HPA removes pods only when every recommendation of this window agrees (Kubernetes' default)",
    ),
  },
});

const secretRef = (what: string, key: string, empty = 'generated, kept across upgrades'): Tree => ({
  name: str('', `name of the Secret holding ${what} (empty: ${empty})`),
  key: str(key, `key in that Secret`),
});

/** A PostgreSQL role of its own: user and password Secret (empty user: the owner's credentials). */
const databaseRole = (role: string, who: string, key: string): Tree => ({
  user: str(
    '',
    `the ${role} role (${who}); empty: observatory_${role} with database.bundled (created there), else database.user`,
  ),
  passwordSecret: {
    name: str('', `Secret with the ${role}'s password (empty: secrets.store.name, one Secret for all)`),
    key: str(key, 'key of the password in that Secret'),
  },
});

/** Peers admitted to one component besides the release and `networkPolicies.allowFrom`. */
const allowFrom = (component: string, what: string) => ({
  allowFrom: list(
    [],
    `NetworkPolicy peers besides the release and networkPolicies.allowFrom admitted to ${component} (${what}; never its metrics port)`,
    { type: 'object' },
  ),
});

/**
 * A PostgreSQL URL refused when it holds a password (`user:password@`, or a `password` parameter); a
 * user name alone is fine. The URL is written in ConfigMaps, which whoever may read the namespace's
 * ConfigMaps sees: passwords come from Secrets. A `not` rather than a positive `pattern`: Helm's
 * message for a pattern quotes the value, and so would print the password it refuses.
 */
export const DATABASE_URL_SCHEMA = { not: { pattern: '://[^/?#@]*:[^/?#@]*@|[?&]password=' } };

/** The runbook page of monitoring/RUNBOOK.md as the project publishes it. */
export const RUNBOOK_URL =
  'https://github.com/event-observatory/event-observatory/blob/main/monitoring/RUNBOOK.md';

/** Values without a usable default: `helm install` fails naming every one that is empty. */
// The token keys and APPLICATION_SECRET are generated when their Secret is not named (bundled.ts).
export const REQUIRED: Record<string, string> = {
  'kafka.bootstrapServers': 'the Kafka bootstrap servers, unless kafka.bundled.enabled',
  'database.url': 'the PostgreSQL URL, unless database.bundled.enabled',
  'secrets.store.name': 'the Secret holding STORE_PASSWORD, unless database.bundled.enabled',
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
  global: open({
    imageRegistry: str('', "registry of every image, before the chart's own (a parent chart's global)"),
    imagePullSecrets: list(
      [],
      'imagePullSecrets of every pod, added to image.pullSecrets (names or {name: ...})',
    ),
  }),
  nameOverride: str('', 'object names become <release>-<nameOverride>-<component>'),
  fullnameOverride: str('', 'object names become <fullnameOverride>-<component> (cut to fit 63 characters)'),
  clusterDomain: str('cluster.local', "the cluster's DNS domain (search's allowed host names)"),
  affinity: map({}, 'affinity of every pod'),
  priorityClassName: str('', 'priorityClassName of every pod'),
  podSecurityContext: map(
    {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    "securityContext of every pod; OpenShift's restricted-v2 assigns its own ids: set runAsUser, runAsGroup, fsGroup to null",
  ),
  containerSecurityContext: map(
    {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    },
    "securityContext of every container (the images' USER is numeric, 1000, so runAsNonRoot holds without a runAsUser)",
  ),
  kafka: {
    bootstrapServers: str(
      '',
      'Kafka bootstrap servers, host:port[,host:port] (required unless kafka.bundled.enabled)',
    ),
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
        'SASL mechanism (empty: no SASL login; with kafka.bundled, SCRAM-SHA-512, the only one it takes)',
      ),
      username: str(
        '',
        'SASL user name (required with a mechanism; with kafka.bundled empty: observatory, the user it makes)',
      ),
      passwordSecret: {
        name: str(
          '',
          "existing Secret with the SASL password, e.g. the KafkaUser's (required with a mechanism; with kafka.bundled empty: the generated <release>-kafka)",
        ),
        key: str('password', 'key of the password in that Secret'),
      },
    },
    bundled: kafkaBundledValues,
  },
  pipeline: {
    create: bool(true, 'create the default Pipeline (the controller creates its topics)'),
    topic: str('events.cloudevents.v1', 'the event topic (BROKER_TOPIC)'),
    partitions: int(12, 'partitions of the event topic (never lowered)', 1),
    replicationFactor: int(
      0,
      'replication factor of the pipeline topics (0: 3 with an external Kafka, so one broker can fail without losing an acknowledged event; 1 with the bundled single broker)',
      0,
    ),
    retentionHours: int(168, 'retention of the event topic', 1),
    deadLetterRetentionHours: int(
      720,
      'retention of the dead-letter topic: longer than the event topic, so a letter waits for someone to look at it (30 days)',
      1,
    ),
    deletionPolicy: oneOf(['Retain', 'Delete'], 'Retain', 'what deleting the Pipeline does to its topics'),
    adoptExistingTopics: bool(
      true,
      'let this Pipeline take over its own topics if they exist already (a reinstall): the annotation observatory.dev/adopt-topics: "*" and the controller\'s allowlist entry <namespace>/<pipeline>:* for it alone',
    ), // spec.flow of the default Pipeline (the consumer's group kafka.groupId on the topic, its .dlq): thresholds.
    flow: {
      maxLag: int(1000, 'spec.flow.maxLag: Lagging=True above this many records behind', 0),
      maxDeadLettersPerMinute: int(
        0,
        'spec.flow.maxDeadLettersPerMinute: DeadLettering=True above this rate',
        0,
      ),
    },
  },
  database: {
    url: str(
      '',
      "PostgreSQL URL, postgres://[user@]host:port/database or jdbc:postgresql://..., never with a password (refused: it would be written in ConfigMaps; the password goes in the Secret of secrets.store, or each role's passwordSecret) (required unless database.bundled.enabled)",
      DATABASE_URL_SCHEMA,
    ),
    readUrl: str(
      '',
      'where search reads: a streaming replica of database.url (same roles, password and TLS), postgres://[user@]host:port/database, never with a password (refused, as database.url) (empty: database.url); the receipt then says when the replica has not replayed an event yet, and search writes its saved searches and logouts to database.url',
      DATABASE_URL_SCHEMA,
    ),
    user: str(
      '',
      'the owner role: runs the migrations; with an external database every role when writer and reader are empty (empty: the user of database.url, else observatory)',
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
    bundled: databaseBundledValues,
  },
  secrets: {
    store: secretRef(
      'the database password (STORE_PASSWORD)',
      'STORE_PASSWORD',
      'required, except with database.bundled, where it is generated and kept by helm uninstall',
    ),
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
    ...deployment('ingest', 2, resources('100m', '256Mi', '384Mi')),
    ...autoscaling('ingest'),
    brokerGatesReadiness: bool(
      false,
      "false: the readiness probe asks /health/live, so a Kafka outage leaves the pods in the Service answering the spec's 503 body; true: /health/ready (README: Decisions)",
    ),
    ingress: {
      enabled: bool(false, 'an Ingress for the ingestion API'),
      className: str('', 'ingressClassName'),
      host: str('events.example.com', 'host name of the ingestion API'),
      tlsSecret: str('', 'Secret with the TLS certificate of the host (required unless allowInsecure)'),
      allowInsecure: bool(
        false,
        'serve the Ingress over plain HTTP without tlsSecret (bearer tokens and events then cross the network in clear; e.g. TLS ends at a load balancer before the ingress controller)',
      ),
      annotations: map({}, 'annotations of the Ingress', 'string'),
      maxBodySize: str(
        '9m',
        'nginx.ingress.kubernetes.io/proxy-body-size: the largest request body (a batch is up to 8 MiB plus its envelope)',
      ),
    },
    httpRoute: {
      enabled: bool(false, 'a Gateway API HTTPRoute for the ingestion API (needs the Gateway API CRDs)'),
      parentRefs: list(
        [],
        "the Gateway(s) the route attaches to ({name, namespace, sectionName} items; TLS is the listener's)",
        { type: 'object' },
      ),
      hostnames: list([], 'host names the route answers (empty: every host of the listener)', {
        type: 'string',
      }),
      annotations: map({}, 'annotations of the HTTPRoute', 'string'),
    },
  },
  consumer: {
    ...deployment('consumer', 2, resources('100m', '320Mi', '512Mi')),
    ...allowFrom('consumer', 'its probes and admin API'),
    // The consumer scales on its group's lag, through KEDA (constructs/consumer-keda.ts).
    autoscaling: {
      keda: {
        enabled: bool(
          false,
          "a KEDA ScaledObject scaling the consumer on its group's lag (Kafka scaler; needs KEDA, README: Autoscaling the consumer on lag); the Deployment then leaves replicas to KEDA's HPA",
        ),
        minReplicas: int(1, 'fewest consumer pods', 1),
        maxReplicas: int(12, 'most consumer pods; at most pipeline.partitions (a pod beyond them idles)', 1),
        lagThreshold: int(
          1000,
          "records behind per consumer pod the HPA aims at (the scaler's lagThreshold)",
          1,
        ),
        pollingIntervalSeconds: int(15, 'how often KEDA reads the lag', 1),
        scaleDownStabilizationSeconds: int(
          300,
          'the HPA scales down only to the highest replica count it wanted in this window (each scale-down is a rebalance)',
          0,
        ),
        authenticationRef: str(
          '',
          'a TriggerAuthentication in the release namespace with the Kafka credentials (sasl, username, password, tls, ca); required with kafka.tls, kafka.sasl or kafka.bundled',
        ),
      },
    },
  },
  search: {
    ...deployment('search', 2, resources('50m', '192Mi', '384Mi')),
    ...autoscaling('search'),
    ...allowFrom('search', "its UI and API: the teams' namespaces"),
    serviceType: oneOf(
      ['ClusterIP', 'NodePort', 'LoadBalancer'],
      'ClusterIP',
      "the search Service: anything but ClusterIP opts in to exposing it (with search.auth.mode=off, every event to whoever reaches it), its http port alone (the metrics port moves to the ClusterIP Service <release>-search-metrics). Outside clients also need search.allowFrom (the NetworkPolicy admits only the release's pods otherwise) and search.allowedHosts with the names or addresses they use",
    ),
    allowedHosts: str(
      '',
      "ALLOWED_HOSTS, comma-separated (empty: every name of the Service, <release>-search[.<ns>[.svc[.<clusterDomain>]]], its ClusterIP, the pod's IP, localhost, 127.0.0.1, ::1)",
    ),
    publicUrl: str(
      '',
      "SEARCH_PUBLIC_URL: the URL users open search at (https://search.example.com), for the login's redirect URI and the origin of its forms, and the base of the alerts' search_url annotations (none while empty); required in oidc mode. The login's cookies are Secure unless it is http:// (empty too: TLS may end at your ingress); an http:// URL lets the login work over plain HTTP at that address",
      { pattern: '^(https?://.+)?$' },
    ),
    auth: searchAuthValues,
    tailMaxPerViewer: int(5, 'SEARCH_TAIL_MAX_PER_VIEWER: live tails one viewer may have open on one pod', 1),
    tailMaxPerPod: int(50, 'SEARCH_TAIL_MAX_PER_POD: live tails one pod serves at once', 1),
    visibility: {
      rules: list(
        [],
        'who sees which events (search README, Visibility): rules { groups, users, see: { all | sources, sourcePrefixes, typePrefixes, producers } }, mounted as SEARCH_VISIBILITY_FILE; empty: a logged-in viewer sees no events. Enforced by PostgreSQL only for the reader role: with rules, search refuses to start as the owner (set database.reader.user)',
        { type: 'object' },
      ),
    },
  },
  controller: {
    enabled: bool(true, 'the Pipeline controller (creates the topics of Pipelines)'),
    allowedBootstrapServers: str(
      '',
      'CONTROLLER_ALLOWED_BOOTSTRAP: the Kafka clusters Pipelines may name, clusters separated by `;`, the servers of one by `,` (a list without `;` is one cluster; empty: kafka.bootstrapServers only)',
    ),
    ...deployment('controller', 2, resources('20m', '96Mi', '256Mi')),
    ...allowFrom('controller', 'its health port'),
    // Namespaces, the topic-name rule, flow health, deletion that cannot get stuck.
    watchAllNamespaces: bool(
      false,
      "watch Pipelines of every namespace (a ClusterRole and ClusterRoleBinding); false: the release's namespace only (a Role)",
    ),
    topicNameTemplate: str(
      '',
      "CONTROLLER_TOPIC_NAME_TEMPLATE: Kafka name of spec.topics[].name in every namespace, e.g. {name} (as given); empty: {name} in the release's namespace, {namespace}.{name} in any other",
    ),
    adoptableTopics: list(
      [],
      "CONTROLLER_ADOPTABLE_TOPICS: existing topics a Pipeline may take over with the adopt annotation: a Kafka name or pattern (* any run), or namespace/pipeline:pattern for that Pipeline only (empty: none but the default Pipeline's own, see pipeline.adoptExistingTopics)",
      { type: 'string', pattern: '^([a-z0-9-]+/[a-z0-9.-]+:)?[a-zA-Z0-9._*-]+$' },
    ),
    reservedTopics: list(
      ['__*', '_*', 'connect-*'],
      'CONTROLLER_RESERVED_TOPICS: topic names or patterns never created, changed or deleted, whatever a Pipeline says (__* always)',
      { type: 'string', pattern: '^[a-zA-Z0-9._*-]+$' },
    ),
    ignoredConfigs: str(
      'leader.replication.throttled.replicas,follower.replication.throttled.replicas',
      'CONTROLLER_IGNORED_CONFIGS: topic config keys the controller never sets or resets (tuned by other tools)',
    ),
    deletionTimeout: str(
      '3m',
      'CONTROLLER_DELETION_TIMEOUT: a Delete Pipeline whose topics cannot be deleted is let go after this (with an Event); the uninstall hook waits this and one minute more, so keep it a minute under helm uninstall --timeout',
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
      "helm uninstall first deletes the release's Pipelines of deletionPolicy Delete (stamped with its name) and waits for the controller to let them go",
    ),
    deleteTopicsOnUninstall: bool(
      false,
      "CONTROLLER_PRE_DELETE_TOPICS: the pre-delete hook's deleted Pipelines delete their topics (false: they go with observatory.dev/force-delete and their topics stay)",
    ), // The namespace list and the store: a Role per listed namespace; the URL only by Secret.
    watchNamespaces: list(
      [],
      "CONTROLLER_WATCH_NAMESPACE: namespaces watched besides the release's, each with a Role and RoleBinding (not with watchAllNamespaces)",
      { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 },
    ),
    storeUrlSecret: {
      name: str(
        '',
        'Secret holding CONTROLLER_STORE_URL, a read-only PostgreSQL URL with its password, for status.flow.lastStoredAt (empty: none)',
      ),
      key: str('CONTROLLER_STORE_URL', 'key of the URL in that Secret'),
    },
  },
  jobs: {
    image: image('jobs'),
    resources: resources('50m', '96Mi', '256Mi'),
    enabled: bool(
      true,
      'MAINTENANCE_ENABLED: false makes both jobs do nothing (partitions managed elsewhere)',
    ),
    logLevel: oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal'], 'info', 'LOG_LEVEL of the jobs'),
    // The migration hook runs the jobs image: it takes these extras too.
    ...podExtras('jobs'),
    partitionMaintenance: {
      schedule: str('0 */6 * * *', 'cron schedule of partition-maintenance'),
      monthsAhead: int(3, 'MAINTENANCE_MONTHS_AHEAD', 0),
      retainMonths: int(
        0,
        'MAINTENANCE_RETAIN_MONTHS: detach (never drop) partitions older than this many months (0: never)',
      ),
      detachLockTimeout: str(
        '5s',
        'MAINTENANCE_DETACH_LOCK_TIMEOUT: lock_timeout of each creation and detach',
        {
          pattern: '^[0-9]+(ms|s|m|h|d)$',
        },
      ),
    },
    rollupRefresh: {
      schedule: str(
        '*/5 * * * *',
        "cron schedule of rollup-refresh (one run at a time; a run's deadline is 16 min, after the jobs' 15-min statement timeout, so a slow refresh holds the schedule rather than being cut)",
      ),
    },
  },
  migration: {
    activeDeadlineSeconds: int(600, 'longest a migration run may take', 1),
  },
  networkPolicies: {
    enabled: bool(true, 'NetworkPolicies: only what must talk talks'),
    allowFrom: list(
      [],
      'peers besides the release allowed to reach consumer (probes, admin API), search, controller (never their metrics ports: monitoring.scrapeFrom)',
      {
        type: 'object',
      },
    ),
    egressTo: list(
      [{ ipBlock: { cidr: '0.0.0.0/0', except: ['169.254.0.0/16'] } }],
      'where pods may connect besides DNS: Kafka, PostgreSQL, the API server, the collector (not the link-local range of the cloud metadata services)',
      { type: 'object' },
      1,
    ),
  },
  monitoring: {
    serviceMonitor: {
      enabled: bool(false, 'a ServiceMonitor per scraped component (needs the Prometheus Operator CRDs)'),
      labels: map(
        {},
        'labels of the ServiceMonitors: what the Prometheus selects (kube-prometheus-stack: release: <its release>)',
        'string',
      ),
      namespace: str('', 'namespace of the ServiceMonitors (empty: the release namespace)'),
      interval: str('15s', 'scrape interval'),
      scrapeTimeout: str('10s', 'scrape timeout (at most the interval)'),
      relabelings: list([], 'relabelings of every scrape endpoint (RelabelConfig items)', { type: 'object' }),
    },
    prometheusRule: {
      enabled: bool(false, 'the PrometheusRule with the 14 alerts of monitoring/alerts'),
      labels: map({}, 'labels of the PrometheusRule: what the Prometheus selects (ruleSelector)', 'string'),
      namespace: str('', 'namespace of the PrometheusRule (empty: the release namespace)'),
      selector: str(
        '',
        'PromQL matchers every rule selects by (empty: namespace="<release namespace>", service=~ the Services\' rendered names, "<prefix>-ingest|<prefix>-consumer|...")',
      ),
      for: map(
        {},
        "`for:` of alerts by alert name, replacing the spec's (e.g. IngestProduceFailing: 1m)",
        'string',
      ),
    },
    runbookBaseUrl: str(
      RUNBOOK_URL,
      "the runbook page: each alert's runbook_url is this URL and #<alert name in lower case>",
      { pattern: '^https?://' },
    ),
    dashboard: {
      enabled: bool(false, 'the Grafana dashboard in a ConfigMap the Grafana sidecar provisions'),
      labels: map({ grafana_dashboard: '1' }, 'labels of that ConfigMap: what the sidecar selects', 'string'),
      namespace: str('', 'namespace of that ConfigMap (empty: the release namespace)'),
    },
    scrapeFrom: {
      namespace: str(
        '',
        'with networkPolicies and a ServiceMonitor on, required: the namespace Prometheus runs in, the only one admitted to the metrics ports',
      ),
      podLabels: map(
        { 'app.kubernetes.io/name': 'prometheus' },
        "labels of Prometheus' pods, admitted to every metrics port (kube-prometheus-stack's by default)",
        'string',
      ),
    },
    postgresExporter: {
      enabled: {
        schema: { type: ['boolean', 'string'], enum: ['auto', true, false] },
        default: 'auto',
        description: 'postgres_exporter (true, false, or auto: on when database.bundled.enabled)',
      },
      image: {
        ...image('postgres-exporter'),
        registry: str('quay.io', 'registry of the postgres_exporter image'),
        repository: str('prometheuscommunity/postgres-exporter', 'repository of the postgres_exporter image'),
        tag: str('v0.17.1', 'tag of the postgres_exporter image'),
      },
      resources: resources('10m', '32Mi', '64Mi'),
      user: str(
        'observatory_monitor',
        'its role: LOGIN, member of pg_monitor, nothing else (see monitoring/README.md)',
      ),
      passwordSecret: {
        name: str('', "Secret with that role's password (empty: secrets.store.name)"),
        key: str('MONITOR_PASSWORD', 'key of the password in that Secret'),
      },
    },
  },
};
