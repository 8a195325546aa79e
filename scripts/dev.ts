/**
 * `make dev`: starts Kafka and PostgreSQL (packages/devstack), creates the store's three roles and
 * applies the migrations as the owner (granting the writer and the reader), ensures the
 * topics, starts the devstack's OpenID provider (search logs in through it: users `alice`, `bob`,
 * `admin`, password `<name>-password`), starts every service under services/ that has a
 * `src/main.ts` (and starts again one that dies, saying so), runs the jobs of
 * services/jobs on their intervals, writes `.dev/stack.env` and prints where everything listens.
 * When Prometheus is installed (scripts/install/prometheus.sh) it also starts postgres_exporter and
 * Prometheus scraping the services every 15 s with the rules of monitoring/alerts loaded.
 * Ctrl-C (or SIGTERM) stops everything it started, services first, then the infrastructure.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  applyPipelineCrd,
  clusterVersion,
  EXAMPLE_PIPELINE_NAME,
  loadKubeConfig,
} from '@event-observatory/controller';
import {
  createDatabase,
  createDatabaseRoles,
  type KeptService,
  keepRunning,
  OIDC_CLIENT_SECRET,
  OIDC_USERS,
  type OidcIssuer,
  repoRoot,
  type ServiceProcess,
  type Stack,
  startOidcIssuer,
  startPostgresExporter,
  startPrometheus,
  startReplica,
  startServiceProcess,
  startStack,
} from '@event-observatory/devstack';
import { readJobsConfig } from '@event-observatory/jobs';
import { randomDevSecret, signDevToken } from '@event-observatory/service-kit';
import { migrate } from '@event-observatory/store';

const DEV_SCOPES = ['events:write', 'events:admin', 'events:read'];

function port(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new Error(`${name}: expected a port number 0..65535, got "${raw}"`);
  }
  return value;
}

interface ServicePlan {
  name: string;
  port: number;
  /** Its metrics listener's (`METRICS_PORT`): what Prometheus scrapes. */
  metricsPort: number;
  /** The consumer's admin listener's (`ADMIN_PORT`). */
  adminPort?: number;
  env: Record<string, string>;
  urlVariable: string;
  /** The service's listen variables when they are not `HTTP_HOST`/`HTTP_PORT`. */
  listen?: { host: string; port: string };
}

const root = repoRoot();
const devDir = join(root, '.dev');
const ports = {
  kafka: port('KAFKA_PORT', 9092),
  postgres: port('POSTGRES_PORT', 5432),
  ingest: port('INGEST_PORT', 8081),
  consumer: port('CONSUMER_PORT', 8082),
  search: port('SEARCH_PORT', 9000),
  controller: port('CONTROLLER_PORT', 8083),
  replica: port('REPLICA_PORT', 5433),
  consumerAdmin: port('CONSUMER_ADMIN_PORT', 8084),
  // Each service's meters on a port of their own (9464 is the services' default METRICS_PORT).
  ingestMetrics: port('INGEST_METRICS_PORT', 9464),
  consumerMetrics: port('CONSUMER_METRICS_PORT', 9465),
  searchMetrics: port('SEARCH_METRICS_PORT', 9466),
  controllerMetrics: port('CONTROLLER_METRICS_PORT', 9467),
  prometheus: port('PROMETHEUS_PORT', 9090),
  oidc: port('OIDC_PORT', 8085),
};

/** Job runs that have not exited yet. */
const children = new Set<ServiceProcess>();
/** The services, each restarted when it dies (devstack's `keepRunning`). */
const services: KeptService[] = [];
/** Stops of postgres_exporter and Prometheus, run before the infrastructure's. */
const monitors: (() => Promise<void>)[] = [];
let stack: Stack | undefined;
let identityProvider: OidcIssuer | undefined;
let stopping = false;

function log(line: string): void {
  process.stdout.write(`[dev] ${line}\n`);
}

/** Output of a child on this terminal, each line prefixed with its name. */
function prefixed(name: string): (line: string) => void {
  return (line) => process.stdout.write(`[${name}] ${line}\n`);
}

/**
 * Starts a service as the tests do (devstack's `startServiceProcess`), waits until it is live, and
 * keeps it running: one that dies is started again on its port after a backoff (1 s doubling to
 * 30 s, at most 5 exits in a row), with a line naming it and its exit code or signal.
 */
async function startService(plan: ServicePlan): Promise<void> {
  const service = await startServiceProcess({
    name: plan.name,
    env: plan.env,
    port: plan.port,
    metricsPort: plan.metricsPort,
    ...(plan.adminPort === undefined ? {} : { adminPort: plan.adminPort }),
    listen: plan.listen,
    dataDir: devDir,
    onLine: prefixed(plan.name),
  });
  services.push(keepRunning(service, { name: plan.name, log }));
}

/**
 * Runs `observatory-jobs <job>` now and every `intervalMs`, as its CronJob would; a run that is
 * still going when the next is due makes that one skip (as the job's advisory lock would).
 */
function scheduleJob(job: string, intervalMs: number, env: Record<string, string>): void {
  let running = false;
  const run = async () => {
    if (stopping || running) return;
    running = true;
    const once = await startServiceProcess({
      name: 'jobs',
      instance: job,
      args: [job],
      env,
      listen: false,
      dataDir: devDir,
      onLine: prefixed(job),
    });
    if (stopping) {
      // Ctrl-C came while it started: the stop already took its list of children.
      await once.stop();
      return;
    }
    children.add(once);
    await once.exited();
    children.delete(once);
    running = false;
  };
  const runLogged = () =>
    run().catch((err: Error) => {
      running = false;
      log(`${job} did not start: ${err.message}`);
    });
  void runLogged();
  setInterval(runLogged, intervalMs).unref();
}

async function stopAll(): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('stopping services');
  await Promise.all([...services, ...children].map((child) => child.stop()));
  for (const stop of monitors) await stop().catch(() => undefined);
  await identityProvider?.close();
  if (stack) {
    log('stopping Kafka and PostgreSQL');
    await stack.stop();
  }
}

/**
 * The controller, when `make cluster`'s API server answers at .dev/kubeconfig: the CRD is applied
 * first; it reconciles the Pipelines of namespace `default` (CONTROLLER_WATCH_NAMESPACE to change),
 * so a shared cluster's other namespaces are left to their own controllers. The example Pipeline
 * (crds/examples/pipeline.yaml) may take over `topics`, which the stack made before any
 * Pipeline existed, as the chart lets its own Pipeline take over its topics: applied as the README
 * shows, it ends Ready rather than AdoptionRequired.
 */
async function controllerPlan(topics: string[]): Promise<ServicePlan | undefined> {
  const kubeconfig = join(devDir, 'kubeconfig');
  const kubeConfig = existsSync(kubeconfig) ? loadKubeConfig(kubeconfig) : undefined;
  const version = kubeConfig && (await clusterVersion(kubeConfig));
  if (!kubeConfig || !version) {
    log('no cluster answers at .dev/kubeconfig (make cluster): the controller is not started');
    return undefined;
  }
  await applyPipelineCrd(kubeConfig);
  const namespace = process.env.CONTROLLER_WATCH_NAMESPACE ?? 'default';
  log(`cluster ${version} answers: Pipeline CRD applied, starting the controller`);
  return {
    name: 'controller',
    port: ports.controller,
    metricsPort: ports.controllerMetrics,
    urlVariable: 'CONTROLLER_URL',
    env: {
      KUBECONFIG: kubeconfig,
      CONTROLLER_WATCH_NAMESPACE: namespace,
      CONTROLLER_ADOPTABLE_TOPICS:
        process.env.CONTROLLER_ADOPTABLE_TOPICS ??
        topics.map((t) => `${namespace}/${EXAMPLE_PIPELINE_NAME}:${t}`).join(','),
      CONTROLLER_LEASE_NAMESPACE: 'default',
      POD_NAME: `make-dev-${process.pid}`,
    },
  };
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, command)));
}

/**
 * postgres_exporter and Prometheus (the spec's 15 s scrape, the 14 rules) when installed; the
 * scrape gives each target the `service` label the alerts' `exported_service` matchers rely on.
 */
async function startMonitoring(plans: ServicePlan[], databaseUrl: string): Promise<string | undefined> {
  if (!onPath('prometheus') || !onPath('prometheus-postgres-exporter')) {
    log('Prometheus not installed (scripts/install/prometheus.sh): no metrics system');
    return undefined;
  }
  const dataDir = join(devDir, 'prometheus');
  mkdirSync(dataDir, { recursive: true });
  const exporter = await startPostgresExporter({ dataDir, databaseUrl });
  monitors.unshift(() => exporter.stop());
  const alerts = join(root, 'monitoring', 'alerts');
  const prometheus = await startPrometheus({
    dataDir,
    port: ports.prometheus,
    interval: '15s',
    ruleFiles: readdirSync(alerts).map((f) => join(alerts, f)),
    targets: [
      ...plans.map((p) => ({ job: p.name, address: `127.0.0.1:${p.metricsPort}`, service: p.name })),
      { job: 'postgres-exporter', address: exporter.address, service: 'postgres-exporter' },
    ],
  });
  monitors.unshift(() => prometheus.stop());
  return prometheus.url;
}

/**
 * Where search reads: with DEV_SEARCH_REPLICA=1 a streaming replica of the PostgreSQL (kept in
 * .dev/replica, resumed on the next start), else the PostgreSQL itself.
 */
async function searchReadUrl(readerUrl: string): Promise<string> {
  if (process.env.DEV_SEARCH_REPLICA !== '1' || !stack) return readerUrl;
  log(`starting a streaming replica of PostgreSQL on 127.0.0.1:${ports.replica} for search`);
  const replica = await startReplica({
    primary: stack.postgres,
    dataDir: join(devDir, 'replica'),
    port: ports.replica,
  });
  monitors.push(() => replica.stop());
  const url = new URL(readerUrl);
  url.port = String(replica.port);
  return url.toString();
}

/**
 * The devstack's OpenID provider with search as its web client, and the search service's login
 * settings for it (mode `oidc`; the client secret in a file, as a mounted Secret would be).
 */
/** Who sees what under `make dev` (README, "A quick tour"): each provider user a team's share. */
const DEV_VISIBILITY = `# Written by make dev (scripts/dev.ts); the search README, "Visibility", has the format.
- groups: [admin]
  see: { all: true }
- groups: [team-a]
  see: { sourcePrefixes: [/sensors/] }
- groups: [team-b]
  see: { sourcePrefixes: [/plant/] }
`;

async function searchLogin(): Promise<Record<string, string>> {
  const searchUrl = `http://127.0.0.1:${ports.search}`;
  identityProvider = await startOidcIssuer({
    port: ports.oidc,
    webClients: [
      {
        clientId: 'search',
        redirectUris: [`${searchUrl}/auth/callback`],
        postLogoutRedirectUris: [`${searchUrl}/`],
      },
    ],
  });
  const clientSecretFile = join(devDir, 'search-oidc-client-secret');
  writeFileSync(clientSecretFile, OIDC_CLIENT_SECRET, { mode: 0o600 });
  const visibilityFile = join(devDir, 'search-visibility.yaml');
  writeFileSync(visibilityFile, DEV_VISIBILITY);
  return {
    SEARCH_VISIBILITY_FILE: visibilityFile,
    SEARCH_AUTH_MODE: 'oidc',
    SEARCH_PUBLIC_URL: searchUrl,
    SEARCH_SESSION_SECRET: randomDevSecret(),
    SEARCH_OIDC_ISSUER: identityProvider.issuer,
    SEARCH_OIDC_CLIENT_ID: 'search',
    SEARCH_OIDC_CLIENT_SECRET_FILE: clientSecretFile,
  };
}

async function main(): Promise<void> {
  mkdirSync(devDir, { recursive: true });
  log(`starting Kafka on 127.0.0.1:${ports.kafka} and PostgreSQL on 127.0.0.1:${ports.postgres}`);
  stack = await startStack({
    dataDir: devDir,
    kafkaPort: ports.kafka,
    postgresPort: ports.postgres,
    log: (line) => log(line),
  });
  const superuserUrl = await createDatabase(stack.databaseUrl, 'observatory');
  // As in a cluster: the owner migrates, the consumer and the jobs write, the search reads.
  const roles = await createDatabaseRoles(stack.databaseUrl, 'observatory');
  const databaseUrl = roles.owner.url;
  const grants = { DATABASE_WRITER_ROLE: roles.writer.name, DATABASE_READER_ROLE: roles.reader.name };
  const migrations = await migrate({
    url: databaseUrl,
    writerRole: roles.writer.name,
    readerRole: roles.reader.name,
  });
  log(`migrations: ${JSON.stringify(migrations)}`);
  const readUrl = await searchReadUrl(roles.reader.url);
  const searchAuth = await searchLogin();

  const authSecret = process.env.AUTH_SECRET || randomDevSecret();
  const devToken = await signDevToken({ secret: authSecret, scopes: DEV_SCOPES, subject: 'dev', ttl: '24h' });
  const common = {
    BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers,
    DATABASE_URL: roles.writer.url,
    AUTH_SECRET: authSecret,
    // One secret for both in development, so DEV_TOKEN works on ingest and the admin API alike.
    ADMIN_AUTH_SECRET: authSecret,
    OTEL_TRACES_EXPORTER: process.env.OTEL_TRACES_EXPORTER ?? 'none',
    SERVICE_VERSION: process.env.SERVICE_VERSION ?? '0.0.0-dev',
  };
  const candidates: ServicePlan[] = [
    {
      name: 'ingest',
      port: ports.ingest,
      metricsPort: ports.ingestMetrics,
      urlVariable: 'INGEST_URL',
      env: {},
    },
    {
      name: 'consumer',
      port: ports.consumer,
      adminPort: ports.consumerAdmin,
      metricsPort: ports.consumerMetrics,
      urlVariable: 'CONSUMER_URL',
      env: {},
    },
    {
      name: 'search',
      port: ports.search,
      metricsPort: ports.searchMetrics,
      urlVariable: 'SEARCH_URL',
      // On a replica its writes (saved searches, logouts) go to the primary, as the chart does.
      env: {
        APPLICATION_SECRET: authSecret,
        DATABASE_URL: readUrl,
        ...(readUrl !== roles.reader.url && { DATABASE_PRIMARY_URL: roles.reader.url }),
        ...searchAuth,
      },
      // The search service keeps the spec's Play-era names for its listener.
      listen: { host: 'PLAY_HTTP_ADDRESS', port: 'PLAY_HTTP_PORT' },
    },
  ];
  const plans = candidates.filter((plan) => existsSync(join(root, 'services', plan.name, 'src', 'main.ts')));

  const controller = await controllerPlan(stack.topics.topics.map((t) => t.name));
  if (controller) plans.push(controller);
  await Promise.all(plans.map((plan) => startService({ ...plan, env: { ...common, ...plan.env } })));
  const urls: Record<string, string> = Object.fromEntries(
    plans.map((p) => [p.urlVariable, `http://127.0.0.1:${p.port}`]),
  );
  // The consumer's admin API has a listener of its own (kubectl-observatory's --consumer-url).
  if (urls.CONSUMER_URL) urls.CONSUMER_ADMIN_URL = `http://127.0.0.1:${ports.consumerAdmin}`;

  const prometheusUrl = await startMonitoring(plans, superuserUrl);

  const jobs = readJobsConfig(process.env);
  scheduleJob('partition-maintenance', jobs.partitionIntervalMs, common);
  scheduleJob('rollup-refresh', jobs.refreshIntervalMs, common);

  const env: Record<string, string> = {
    ...urls,
    ...(prometheusUrl ? { PROMETHEUS_URL: prometheusUrl } : {}),
    // The owner's, for `make migrate` (which then grants the two roles again).
    DATABASE_URL: databaseUrl,
    ...grants,
    BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers,
    AUTH_SECRET: authSecret,
    DEV_TOKEN: devToken,
    OIDC_ISSUER_URL: searchAuth.SEARCH_OIDC_ISSUER!,
  };
  const envFile = join(devDir, 'stack.env');
  writeFileSync(
    envFile,
    `${Object.entries(env)
      .map(([k, v]) => `${k}='${v}'`)
      .join('\n')}\n`,
    { mode: 0o600 },
  );
  log('ready:');
  log(`  Kafka       ${stack.bootstrapServers}`);
  log(`  PostgreSQL  ${databaseUrl.replace(/:[^:@/]*@/, ':***@')}`);
  for (const plan of plans) {
    const admin = plan.adminPort === undefined ? '' : `, admin http://127.0.0.1:${plan.adminPort}`;
    log(`  ${plan.name.padEnd(11)} ${urls[plan.urlVariable]}${admin} (metrics :${plan.metricsPort})`);
  }
  // Debian's package ships the classic web UI only.
  if (prometheusUrl) log(`  Prometheus  ${prometheusUrl} (alerts: ${prometheusUrl}/classic/alerts)`);
  const users = Object.entries(OIDC_USERS).map(
    ([name, u]) => `${name}/${u.password} (${u.groups.join(',')})`,
  );
  log(`  OpenID      ${searchAuth.SEARCH_OIDC_ISSUER} (search logins: ${users.join(', ')})`);
  log(`settings in ${envFile}; try: source .dev/stack.env && curl -s "$INGEST_URL/health/ready"`);
  log('Ctrl-C stops everything');
}

// `on`, not `once`: while this listener stays registered, devstack leaves signal handling to us.
// A second Ctrl-C gives up waiting; devstack's exit hook and watchdogs still stop every child.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) {
      log('second signal: exiting now');
      process.exit(1);
    }
    stopAll().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`[dev] stop failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  });
}

main().catch(async (err) => {
  process.stderr.write(`[dev] ${(err as Error).message}\n`);
  await stopAll().catch(() => undefined);
  process.exit(1);
});
