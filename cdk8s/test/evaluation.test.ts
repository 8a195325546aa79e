/**
 * The evaluation profile: kafka.bundled, database.bundled, the generated Secrets,
 * NOTES.txt, the `helm test` pod, and the install fixes (the URL's user counts, the migration's
 * termination message). Rendered with `helm template` / `helm install --dry-run`; the install
 * itself is e2e/cluster/evaluation.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR } from '../src/paths.js';
import { helm, jsonArgs, type K8sObject, REQUIRED_VALUES, renderError, setArgs } from './helm.js';

const BUNDLED = { 'kafka.bundled.enabled': true, 'database.bundled.enabled': true };

/** `helm template` with only `values` (no required values added) and `json` (--set-json). */
function renderOnly(
  values: Record<string, string | number | boolean>,
  json: Record<string, unknown> = {},
): K8sObject[] {
  const res = helm([
    'template',
    'obs',
    CHART_DIR,
    '--namespace',
    'ev',
    ...setArgs(values),
    ...jsonArgs(json),
  ]);
  if (res.status !== 0) throw new Error(`helm template failed: ${res.stderr}`);
  return parseAllDocuments(res.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

const find = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const env = (container: { env: { name: string; value?: string; valueFrom?: unknown }[] }) =>
  Object.fromEntries(container.env.map((e) => [e.name, e.value ?? e.valueFrom]));

/** The bundled PostgreSQL makes `writer` and `reader` with the passwords of the generated store Secret. */
function expectServerRoles(objects: K8sObject[], writer: string, reader: string): void {
  expect(Object.keys(find(objects, 'Secret', 'obs-store').data ?? {})).toEqual([
    'STORE_PASSWORD',
    'WRITER_PASSWORD',
    'READER_PASSWORD',
    // postgres_exporter's role: on with the bundled PostgreSQL (monitoring.postgresExporter: auto)
    'MONITOR_PASSWORD',
  ]);
  const postgres = find(objects, 'StatefulSet', 'obs-postgresql').spec.template.spec.containers[0];
  expect(env(postgres)).toMatchObject({
    WRITER_USER: writer,
    WRITER_PASSWORD: { secretKeyRef: { name: 'obs-store', key: 'WRITER_PASSWORD' } },
    READER_USER: reader,
    READER_PASSWORD: { secretKeyRef: { name: 'obs-store', key: 'READER_PASSWORD' } },
  });
}

/** NOTES.txt as `helm install --dry-run` prints it. */
function notes(values: Record<string, string | number | boolean>): string {
  const res = helm([
    'install',
    'obs',
    CHART_DIR,
    '--namespace',
    'ev',
    '--dry-run=client',
    ...setArgs(values),
  ]);
  if (res.status !== 0) throw new Error(`helm install --dry-run failed: ${res.stderr}`);
  return res.stdout.slice(res.stdout.indexOf('NOTES:'));
}

describe('the evaluation profile: only the two bundled switches', () => {
  const objects = renderOnly(BUNDLED);

  it('passes helm lint --strict with only the two switches', () => {
    const res = helm(['lint', '--strict', CHART_DIR, ...setArgs(BUNDLED)]);
    expect(res.stderr + res.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('renders without any other value and wires every client to the bundled Kafka and PostgreSQL', () => {
    for (const name of ['obs-ingest', 'obs-consumer', 'obs-controller'])
      expect(find(objects, 'ConfigMap', name).data?.BROKER_BOOTSTRAP_SERVERS, name).toBe(
        'obs-kafka.ev.svc:9092',
      );
    for (const name of ['obs-consumer', 'obs-search', 'obs-jobs'])
      expect(find(objects, 'ConfigMap', name).data?.DATABASE_URL, name).toBe(
        'postgres://observatory@obs-postgresql.ev.svc:5432/observatory',
      );
    const kafka = find(objects, 'StatefulSet', 'obs-kafka').spec.template.spec.containers[0];
    expect(kafka.image).toBe('docker.io/apache/kafka:4.4.0');
    expect(env(kafka)).toMatchObject({
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_ADVERTISED_LISTENERS: 'CLIENT://obs-kafka.ev.svc:9092,INTERNAL://localhost:9094',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
    });
    const postgres = find(objects, 'StatefulSet', 'obs-postgresql').spec.template.spec.containers[0];
    expect(postgres.image).toBe('docker.io/postgres:15-bookworm');
    expect(env(postgres)).toMatchObject({
      POSTGRES_USER: 'observatory',
      POSTGRES_DB: 'observatory',
      POSTGRES_PASSWORD: { secretKeyRef: { name: 'obs-store', key: 'STORE_PASSWORD' } },
    });
  });

  it('runs both StatefulSets non-root, read-only, with probes, resources and a claim of their own', () => {
    for (const [name, uid] of [
      ['obs-kafka', 1000],
      ['obs-postgresql', 999],
    ] as const) {
      const set = find(objects, 'StatefulSet', name);
      const pod = set.spec.template.spec;
      expect(pod.securityContext, name).toMatchObject({ runAsNonRoot: true, runAsUser: uid, fsGroup: uid });
      const [container] = pod.containers;
      expect(container.securityContext, name).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
      expect(container.readinessProbe, name).toBeDefined();
      expect(container.livenessProbe, name).toBeDefined();
      expect(container.resources.requests.memory, name).toBeDefined();
      expect(set.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('8Gi');
      // No storageClassName: the cluster's default class.
      expect(set.spec.volumeClaimTemplates[0].spec.storageClassName ?? null).toBeNull();
      expect(find(objects, 'Service', name).spec.ports).toHaveLength(1);
    }
  });

  it("admits to the bundled Kafka only ingest, consumer and controller, to PostgreSQL only the database's clients", () => {
    const admitted = (objects: K8sObject[], name: string) => {
      const [rule] = find(objects, 'NetworkPolicy', name).spec.ingress;
      const [release, ...others] = rule.from;
      expect(release.podSelector.matchLabels, name).toEqual({ 'app.kubernetes.io/instance': 'obs' });
      expect(release.podSelector.matchExpressions[0], name).toMatchObject({
        key: 'app.kubernetes.io/name',
        operator: 'In',
      });
      return { components: release.podSelector.matchExpressions[0].values, others, ports: rule.ports };
    };
    expect(admitted(objects, 'obs-kafka')).toEqual({
      components: ['ingest', 'consumer', 'controller'],
      others: [],
      ports: [{ protocol: 'TCP', port: 9092 }],
    });
    expect(admitted(objects, 'obs-postgresql')).toEqual({
      components: ['migration', 'consumer', 'jobs', 'search', 'postgres-exporter'],
      others: [],
      ports: [{ protocol: 'TCP', port: 5432 }],
    });
    // The controller reads the store only with a URL of its own; the operator's peers join.
    const keda = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'keda' } } };
    const widened = renderOnly(
      { ...BUNDLED, 'controller.storeUrlSecret.name': 'store-url' },
      { 'kafka.bundled.allowFrom': [keda] },
    );
    expect(admitted(widened, 'obs-postgresql').components).toContain('controller');
    expect(admitted(widened, 'obs-kafka')).toMatchObject({ others: [keda] });
    expect(admitted(widened, 'obs-postgresql').others).toEqual([]);
  });

  it('logs every Kafka client in to the bundled broker with SCRAM-SHA-512, its password a file of the generated Secret', () => {
    for (const name of ['obs-ingest', 'obs-consumer', 'obs-controller']) {
      expect(find(objects, 'ConfigMap', name).data, name).toMatchObject({
        BROKER_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
        BROKER_SASL_MECHANISM: 'SCRAM-SHA-512',
        BROKER_SASL_USERNAME: 'observatory',
        BROKER_SASL_PASSWORD_FILE: '/etc/observatory/kafka/sasl-password',
      });
      const pod = find(objects, 'Deployment', name).spec.template.spec;
      expect(pod.volumes, name).toContainEqual({
        name: 'kafka-credentials',
        projected: {
          defaultMode: 288,
          sources: [{ secret: { name: 'obs-kafka', items: [{ key: 'password', path: 'sasl-password' }] } }],
        },
      });
      expect(pod.containers[0].volumeMounts, name).toContainEqual({
        name: 'kafka-credentials',
        mountPath: '/etc/observatory/kafka',
        readOnly: true,
      });
      // Never an environment variable (kubectl describe, a crash dump).
      expect(JSON.stringify(pod.containers[0].env ?? []), name).not.toContain('obs-kafka');
    }
    const secret = find(objects, 'Secret', 'obs-kafka');
    expect(Object.keys(secret.data ?? {})).toEqual(['password']);
    // The broker sets the password at every start: a new one after uninstall is harmless.
    expect(secret.metadata.annotations).toBeUndefined();
  });

  it('runs the bundled broker with a SCRAM-only client listener, its own listeners on loopback, the user set at start', () => {
    const pod = find(objects, 'StatefulSet', 'obs-kafka').spec.template.spec;
    const [kafka] = pod.containers;
    expect(env(kafka)).toMatchObject({
      KAFKA_LISTENERS: 'CLIENT://:9092,INTERNAL://localhost:9094,CONTROLLER://localhost:9093',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,CLIENT:SASL_PLAINTEXT',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'INTERNAL',
      KAFKA_SASL_ENABLED_MECHANISMS: 'SCRAM-SHA-512',
      KAFKA_LISTENER_NAME_CLIENT_SCRAM___SHA___512_SASL_JAAS_CONFIG:
        'org.apache.kafka.common.security.scram.ScramLoginModule required;',
      SCRAM_USERNAME: 'observatory',
    });
    // Only the SASL port is served to the network, and only that one is admitted.
    expect(kafka.ports).toEqual([{ name: 'kafka', containerPort: 9092 }]);
    expect(pod.volumes).toContainEqual({
      name: 'sasl',
      secret: {
        secretName: 'obs-kafka',
        defaultMode: 288,
        items: [{ key: 'password', path: 'sasl-password' }],
      },
    });
    expect(kafka.volumeMounts).toContainEqual({
      name: 'sasl',
      mountPath: '/etc/observatory/kafka',
      readOnly: true,
    });
    const script = kafka.lifecycle.postStart.exec.command.at(-1);
    expect(script).toContain('/opt/kafka/bin/kafka-configs.sh --bootstrap-server localhost:9094');
    expect(script).toContain('--entity-type users --entity-name "$SCRAM_USERNAME"');
    expect(script).toContain('SCRAM-SHA-512=[password=$(cat /etc/observatory/kafka/sasl-password)]');
  });

  it("takes the operator's own user and password Secret for the bundled broker, and refuses another mechanism or TLS", () => {
    const own = renderOnly({
      ...BUNDLED,
      'kafka.sasl.username': 'events',
      'kafka.sasl.passwordSecret.name': 'kafka-login',
      'kafka.sasl.passwordSecret.key': 'pw',
    });
    expect(own.filter((o) => o.kind === 'Secret').map((s) => s.metadata.name)).not.toContain('obs-kafka');
    expect(env(find(own, 'StatefulSet', 'obs-kafka').spec.template.spec.containers[0]).SCRAM_USERNAME).toBe(
      'events',
    );
    expect(find(own, 'StatefulSet', 'obs-kafka').spec.template.spec.volumes).toContainEqual({
      name: 'sasl',
      secret: { secretName: 'kafka-login', defaultMode: 288, items: [{ key: 'pw', path: 'sasl-password' }] },
    });
    expect(find(own, 'ConfigMap', 'obs-ingest').data?.BROKER_SASL_USERNAME).toBe('events');
    expect(renderError([...setArgs({ ...BUNDLED, 'kafka.sasl.mechanism': 'SCRAM-SHA-256' })])).toContain(
      'the bundled Kafka takes SCRAM-SHA-512 logins only',
    );
    expect(renderError([...setArgs({ ...BUNDLED, 'kafka.tls.enabled': true })])).toContain(
      'kafka.tls.enabled: the bundled Kafka serves no TLS',
    );
  });

  it('refuses KEDA on the bundled broker without a TriggerAuthentication with its login', () => {
    expect(renderError([...setArgs({ ...BUNDLED, 'consumer.autoscaling.keda.enabled': true })])).toContain(
      'consumer.autoscaling.keda.authenticationRef',
    );
  });

  it('lets the bundled servers connect to DNS and themselves only, and every other pod anywhere but 169.254.0.0/16', () => {
    for (const [name, port] of [
      ['obs-kafka', 9092],
      ['obs-postgresql', 5432],
    ] as const) {
      const policy = find(objects, 'NetworkPolicy', name);
      expect(policy.spec.policyTypes, name).toEqual(['Ingress', 'Egress']);
      const component = name.slice('obs-'.length);
      expect(policy.spec.egress, name).toEqual([
        { ports: [expect.objectContaining({ port: 53 }), expect.objectContaining({ port: 53 })] },
        {
          to: [
            {
              podSelector: {
                matchLabels: { 'app.kubernetes.io/instance': 'obs', 'app.kubernetes.io/name': component },
              },
            },
          ],
          ports: [{ protocol: 'TCP', port }],
        },
      ]);
    }
    for (const policy of objects.filter((o) => o.kind === 'NetworkPolicy'))
      for (const rule of policy.spec.egress ?? [])
        for (const peer of rule.to ?? [])
          if (peer.ipBlock) expect(peer.ipBlock.except, policy.metadata.name).toContain('169.254.0.0/16');
  });

  it("lets each client out to the bundled servers' pods by podSelector, which an ipBlock does not match under every network plugin", () => {
    const peer = (component: string, port: number) => ({
      to: [
        {
          podSelector: {
            matchLabels: { 'app.kubernetes.io/instance': 'obs', 'app.kubernetes.io/name': component },
          },
        },
      ],
      ports: [{ protocol: 'TCP', port }],
    });
    const kafka = peer('kafka', 9092);
    const postgresql = peer('postgresql', 5432);
    // After DNS and networkPolicies.egressTo.
    const bundledEgress = (objects: K8sObject[], name: string) =>
      find(objects, 'NetworkPolicy', name).spec.egress.slice(2);
    const clients = ['ingest', 'consumer', 'search', 'controller', 'jobs', 'migration', 'postgres-exporter'];
    expect(Object.fromEntries(clients.map((c) => [c, bundledEgress(objects, `obs-${c}`)]))).toEqual({
      ingest: [kafka],
      consumer: [kafka, postgresql],
      search: [postgresql],
      controller: [kafka],
      jobs: [postgresql],
      migration: [postgresql],
      'postgres-exporter': [postgresql],
    });
    // The controller reads the store only with a URL of its own, as the server admits it then.
    const withStore = renderOnly({ ...BUNDLED, 'controller.storeUrlSecret.name': 'store-url' });
    expect(bundledEgress(withStore, 'obs-controller')).toEqual([kafka, postgresql]);
    // One bundled server alone: the peers of that one only.
    const kafkaOnly = renderOnly({ ...REQUIRED_VALUES, 'kafka.bundled.enabled': true });
    expect(bundledEgress(kafkaOnly, 'obs-consumer')).toEqual([kafka]);
    expect(bundledEgress(kafkaOnly, 'obs-search')).toEqual([]);
    const external = renderOnly(REQUIRED_VALUES);
    for (const policy of external.filter((o) => o.kind === 'NetworkPolicy'))
      expect(policy.spec.egress, policy.metadata.name).toHaveLength(2);
  });

  it('migrates after the install (the database is part of it), waiting for it, granting the two roles', () => {
    const job = find(objects, 'Job', 'obs-migrate');
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('post-install,pre-upgrade');
    const [wait] = job.spec.template.spec.initContainers;
    expect(wait.image).toBe('docker.io/postgres:15-bookworm');
    expect(env(wait)).toMatchObject({
      PGHOST: 'obs-postgresql',
      PGUSER: 'observatory',
      PGPASSWORD: { secretKeyRef: { name: 'obs-store', key: 'STORE_PASSWORD' } },
      WRITER_USER: 'observatory_writer',
      READER_USER: 'observatory_reader',
    });
    // A server made by an older release has no roles yet at pre-upgrade: the grants need them.
    // sql-witness: the SQL is the rendered init container's script, read to check what it runs.
    expect(wait.command.at(-1)).toContain("SELECT format('CREATE ROLE %I LOGIN', :'name') WHERE NOT EXISTS");
    expect(env(job.spec.template.spec.containers[0])).toMatchObject({
      DATABASE_USER: '',
      DATABASE_PASSWORD: { secretKeyRef: { name: 'obs-store', key: 'STORE_PASSWORD' } },
      DATABASE_WRITER_ROLE: 'observatory_writer',
      DATABASE_READER_ROLE: 'observatory_reader',
    });
    // The consumer is the writer, which cannot migrate: the hook alone does.
    expect(find(objects, 'ConfigMap', 'obs-consumer').data?.CONSUMER_MIGRATE_ON_BOOT).toBe('false');
  });

  it('runs no service as the owner: consumer and jobs log in as the writer, search as the reader', () => {
    const login = (user: string, key: string) => ({
      DATABASE_USER: user,
      DATABASE_PASSWORD: { secretKeyRef: { name: 'obs-store', key } },
    });
    const writer = login('observatory_writer', 'WRITER_PASSWORD');
    const reader = login('observatory_reader', 'READER_PASSWORD');
    const settings = (name: string) => find(objects, 'ConfigMap', name).data;
    const podEnv = (kind: string, name: string) => {
      const o = find(objects, kind, name);
      const pod = kind === 'CronJob' ? o.spec.jobTemplate.spec.template.spec : o.spec.template.spec;
      return env(pod.containers[0]);
    };
    expect({ ...settings('obs-consumer'), ...podEnv('Deployment', 'obs-consumer') }).toMatchObject(writer);
    expect({ ...settings('obs-search'), ...podEnv('Deployment', 'obs-search') }).toMatchObject(reader);
    for (const job of ['obs-partition-maintenance', 'obs-rollup-refresh'])
      expect({ ...settings('obs-jobs'), ...podEnv('CronJob', job) }, job).toMatchObject(writer);
    expectServerRoles(objects, 'observatory_writer', 'observatory_reader');
  });

  it('makes missing roles and sets their passwords at every start of the server, so a kept volume gets them too', () => {
    const postgres = find(objects, 'StatefulSet', 'obs-postgresql').spec.template.spec.containers[0];
    const command = postgres.lifecycle.postStart.exec.command.join(' ');
    expect(command).toContain('pg_isready');
    expect(command).toContain('sh /etc/observatory/postgresql/roles.sh');
    expect(postgres.volumeMounts).toContainEqual({
      name: 'roles',
      mountPath: '/etc/observatory/postgresql',
      readOnly: true,
    });
    const script = find(objects, 'ConfigMap', 'obs-postgresql').data?.['roles.sh'] ?? '';
    expect(script).toContain(
      "THEN 'ALTER ROLE %I LOGIN PASSWORD %L' ELSE 'CREATE ROLE %I LOGIN PASSWORD %L'",
    );
    expect(script).toMatch(/ensure_role "\$\{WRITER_USER:-\}"/);
  });

  it('generates the store, token, application and login Secrets; only the store one outlives helm uninstall', () => {
    const secrets = objects.filter((o) => o.kind === 'Secret');
    expect(secrets.map((s) => s.metadata.name).sort()).toEqual([
      'obs-application',
      'obs-kafka',
      'obs-login',
      'obs-store',
      'obs-tokens',
    ]);
    const store = find(objects, 'Secret', 'obs-store');
    expect(store.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    expect(find(objects, 'Secret', 'obs-tokens').metadata.annotations).toBeUndefined();
    for (const secret of secrets)
      for (const value of Object.values(secret.data ?? {}))
        expect(Buffer.from(value, 'base64').length, secret.metadata.name).toBeGreaterThanOrEqual(48);
    const search = find(objects, 'Deployment', 'obs-search').spec.template.spec.containers[0];
    expect(env(search).APPLICATION_SECRET).toEqual({
      secretKeyRef: { name: 'obs-application', key: 'APPLICATION_SECRET' },
    });
  });

  it('has a helm test pod that mints a token with the release key and talks to ingest and search', () => {
    const pod = find(objects, 'Pod', 'obs-test');
    expect(pod.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'test' });
    const [container] = pod.spec.containers;
    expect(container.command.join(' ')).toContain('node services/ingest/dist/token-cli.js');
    expect(env(container)).toMatchObject({
      AUTH_SECRET: { secretKeyRef: { name: 'obs-tokens', key: 'AUTH_SECRET', optional: false } },
      INGEST_URL: 'http://obs-ingest:8080',
      SEARCH_URL: 'http://obs-search:8080',
    });
    expect(pod.metadata.labels?.['app.kubernetes.io/instance']).toBe('obs');
  });

  it('prints NOTES for this install: the Services, port-forwards, the token command, a first curl, helm test', () => {
    const text = notes(BUNDLED);
    expect(text).toContain('EVALUATION PROFILE');
    expect(text).toContain('for evaluation and CI only, not production');
    expect(text).toContain(
      'The bundled Kafka takes SCRAM-SHA-512 logins only (SASL_PLAINTEXT, inside the cluster)',
    );
    expect(text).toContain("kubectl -n ev get secret obs-kafka -o jsonpath='{.data.password}' | base64 -d");
    expect(text).toContain('kubectl -n ev port-forward svc/obs-ingest 8080:8080');
    expect(text).toContain('kubectl -n ev port-forward svc/obs-search 8081:8080');
    expect(text).toContain('kubectl -n ev exec deploy/obs-ingest -- node services/ingest/dist/token-cli.js');
    expect(text).toContain('curl -sS "$INGEST/v1/events"');
    expect(text).toContain('helm test obs -n ev');
    expect(text).toContain('alerts: off');
  });

  it('names in NOTES the objects as rendered under fullnameOverride, the release as itself', () => {
    const text = notes({ ...BUNDLED, fullnameOverride: 'events' });
    expect(text).toContain('Kafka (events-kafka) and PostgreSQL (events-postgresql)');
    expect(text).toContain('kubectl -n ev port-forward svc/events-ingest 8080:8080');
    expect(text).toContain('kubectl -n ev exec deploy/events-ingest -- node');
    expect(text).toContain('the PrometheusRule events-alerts');
    expect(text).toContain('helm test obs -n ev');
    // Generated Secrets are named after the release (obs-login, obs-kafka), objects as rendered.
    expect(text).toContain('kubectl -n ev get secret obs-kafka ');
    expect(text.replace('get secret obs-kafka ', '')).not.toMatch(
      /obs-(ingest|search|consumer|kafka|postgresql)/,
    );
  });
});

describe('the bundled pair is off by default and the install fixes', () => {
  it('renders no StatefulSet nor store Secret without the switches, and still asks for Kafka and PostgreSQL; one role unless named', () => {
    const error = renderError([]);
    expect(error).toContain('kafka.bootstrapServers');
    expect(error).toContain('database.url');
    const objects = renderOnly({
      'kafka.bootstrapServers': 'kafka:9092',
      'database.url': 'postgres://app@db:5432/observatory',
      'secrets.store.name': 'store',
    });
    expect(objects.filter((o) => o.kind === 'StatefulSet')).toEqual([]);
    expect(
      objects
        .filter((o) => o.kind === 'Secret')
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual(['obs-application', 'obs-login', 'obs-tokens']);
    // The user of database.url counts: DATABASE_USER is left empty unless database.user is set.
    const migrate = find(objects, 'Job', 'obs-migrate').spec.template.spec.containers[0];
    expect(env(migrate)).toMatchObject({
      DATABASE_URL: 'postgres://app@db:5432/observatory',
      DATABASE_USER: '',
    });
    expect(migrate.terminationMessagePolicy).toBe('FallbackToLogsOnError');
    // An external database without writer and reader: every component is the owner, no grants.
    expect(env(migrate)).toMatchObject({ DATABASE_WRITER_ROLE: '', DATABASE_READER_ROLE: '' });
    for (const name of ['obs-consumer', 'obs-search', 'obs-jobs'])
      expect(find(objects, 'ConfigMap', name).data?.DATABASE_USER, name).toBe('');
    const search = find(objects, 'Deployment', 'obs-search').spec.template.spec.containers[0];
    expect(env(search).DATABASE_PASSWORD).toEqual({ secretKeyRef: { name: 'store', key: 'STORE_PASSWORD' } });
    const job = find(objects, 'Job', 'obs-migrate');
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(job.spec.template.spec.initContainers).toEqual([]);
  });

  it('names the Ingress host in NOTES when the Ingress is on, and no token command with a key set', () => {
    const text = notes({
      ...BUNDLED,
      'ingest.ingress.enabled': true,
      'ingest.ingress.host': 'events.example.org',
      'ingest.ingress.tlsSecret': 'events-tls',
      'auth.jwksUrl': 'https://issuer.example.org/keys',
      'monitoring.dashboard.enabled': true,
    });
    expect(text).toContain('INGEST=https://events.example.org');
    expect(text).not.toContain('token-cli.js');
    expect(text).toContain('https://issuer.example.org/keys');
    expect(text).toContain('dashboard: ConfigMap obs-dashboard');
  });

  it('creates the writer and reader roles in the bundled PostgreSQL under the names given, with generated passwords', () => {
    const objects = renderOnly({
      ...BUNDLED,
      'database.writer.user': 'obs_writer',
      'database.reader.user': 'obs_reader',
    });
    expectServerRoles(objects, 'obs_writer', 'obs_reader');
    expect(find(objects, 'ConfigMap', 'obs-postgresql').data?.['roles.sh']).toContain('CREATE ROLE');
    // A reinstall finds its topics in the kept Kafka volume: the chart's Pipeline takes them up.
    expect(find(objects, 'Pipeline', 'obs-events').metadata.annotations).toEqual({
      'observatory.dev/controller': 'ev/obs',
      'observatory.dev/adopt-topics': '*',
    });
    const search = find(objects, 'Deployment', 'obs-search').spec.template.spec.containers[0];
    expect(env(search).DATABASE_PASSWORD).toEqual({
      secretKeyRef: { name: 'obs-store', key: 'READER_PASSWORD' },
    });
  });
});
