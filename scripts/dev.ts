/**
 * `make dev`: starts Kafka and PostgreSQL (packages/devstack), applies the migrations, ensures the
 * topics, starts every service under services/ that has a `src/main.ts`, runs the jobs of
 * services/jobs on their intervals, writes `.dev/stack.env` and prints where everything listens.
 * Ctrl-C (or SIGTERM) stops everything it started, services first, then the infrastructure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { applyPipelineCrd, clusterVersion, loadKubeConfig } from '@event-observatory/controller';
import { createDatabase, repoRoot, type Stack, startStack } from '@event-observatory/devstack';
import { readJobsConfig } from '@event-observatory/jobs';
import { randomDevSecret, signDevToken } from '@event-observatory/service-kit';
import { migrate } from '@event-observatory/store';

const DEV_SCOPES = ['events:write', 'events:admin', 'events:read'];
const SERVICE_STOP_TIMEOUT_MS = 45_000;

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
  env: Record<string, string>;
  urlVariable: string;
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
};

const children: { name: string; child: ChildProcess }[] = [];
let stack: Stack | undefined;
let stopping = false;

function log(line: string): void {
  process.stdout.write(`[dev] ${line}\n`);
}

function startService(plan: ServicePlan): void {
  const main = join(root, 'services', plan.name, 'src', 'main.ts');
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', main], {
    cwd: join(root, 'services', plan.name),
    env: { ...process.env, ...plan.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: Ctrl-C reaches only this script, which then sends exactly one SIGTERM.
    detached: true,
  });
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${plan.name}] ${line}\n`));
  }
  child.on('exit', (code, signal) => {
    if (!stopping) log(`${plan.name} exited (${signal ?? code}); the rest keeps running`);
  });
  children.push({ name: plan.name, child });
}

/**
 * Runs `observatory-jobs <job>` now and every `intervalMs`, as its CronJob would; a run that is
 * still going when the next starts makes that one skip (the job's advisory lock).
 */
function scheduleJob(job: string, intervalMs: number, env: Record<string, string>): void {
  const run = () => {
    if (stopping) return;
    const child = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', join(root, 'services', 'jobs', 'src', 'main.ts'), job],
      {
        cwd: join(root, 'services', 'jobs'),
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${job}] ${line}\n`));
    }
    const entry = { name: job, child };
    children.push(entry);
    child.on('exit', () => children.splice(children.indexOf(entry), 1));
  };
  run();
  setInterval(run, intervalMs).unref();
}

async function waitForLive(name: string, url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/health/live`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(500);
  }
  throw new Error(`${name} did not answer ${url}/health/live within 120s`);
}

async function stopAll(): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('stopping services');
  await Promise.all(
    children.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), SERVICE_STOP_TIMEOUT_MS);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  if (stack) {
    log('stopping Kafka and PostgreSQL');
    await stack.stop();
  }
}

/**
 * The controller, when `make cluster`'s API server answers at .dev/kubeconfig: the CRD is applied
 * first; it reconciles the Pipelines of namespace `default` (CONTROLLER_WATCH_NAMESPACE to change),
 * so a shared cluster's other namespaces are left to their own controllers.
 */
async function controllerPlan(): Promise<ServicePlan | undefined> {
  const kubeconfig = join(devDir, 'kubeconfig');
  const kubeConfig = existsSync(kubeconfig) ? loadKubeConfig(kubeconfig) : undefined;
  const version = kubeConfig && (await clusterVersion(kubeConfig));
  if (!kubeConfig || !version) {
    log('no cluster answers at .dev/kubeconfig (make cluster): the controller is not started');
    return undefined;
  }
  await applyPipelineCrd(kubeConfig);
  log(`cluster ${version} answers: Pipeline CRD applied, starting the controller`);
  return {
    name: 'controller',
    port: ports.controller,
    urlVariable: 'CONTROLLER_URL',
    env: {
      HTTP_PORT: String(ports.controller),
      KUBECONFIG: kubeconfig,
      CONTROLLER_WATCH_NAMESPACE: process.env.CONTROLLER_WATCH_NAMESPACE ?? 'default',
      CONTROLLER_LEASE_NAMESPACE: 'default',
      POD_NAME: `make-dev-${process.pid}`,
    },
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
  const databaseUrl = await createDatabase(stack.databaseUrl, 'observatory');
  const migrations = await migrate({ url: databaseUrl });
  log(`migrations: ${JSON.stringify(migrations)}`);

  const authSecret = process.env.AUTH_SECRET || randomDevSecret();
  const devToken = await signDevToken({ secret: authSecret, scopes: DEV_SCOPES, subject: 'dev', ttl: '24h' });
  const common = {
    BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers,
    DATABASE_URL: databaseUrl,
    AUTH_SECRET: authSecret,
    OTEL_TRACES_EXPORTER: process.env.OTEL_TRACES_EXPORTER ?? 'none',
    SERVICE_VERSION: process.env.SERVICE_VERSION ?? '0.0.0-dev',
  };
  const candidates: ServicePlan[] = [
    {
      name: 'ingest',
      port: ports.ingest,
      urlVariable: 'INGEST_URL',
      env: { HTTP_PORT: String(ports.ingest) },
    },
    {
      name: 'consumer',
      port: ports.consumer,
      urlVariable: 'CONSUMER_URL',
      env: { HTTP_PORT: String(ports.consumer) },
    },
    {
      name: 'search',
      port: ports.search,
      urlVariable: 'SEARCH_URL',
      env: { PLAY_HTTP_PORT: String(ports.search), APPLICATION_SECRET: authSecret },
    },
  ];
  const plans = candidates.filter((plan) => existsSync(join(root, 'services', plan.name, 'src', 'main.ts')));

  const controller = await controllerPlan();
  if (controller) plans.push(controller);
  for (const plan of plans) startService({ ...plan, env: { ...common, ...plan.env } });
  const urls = Object.fromEntries(plans.map((p) => [p.urlVariable, `http://127.0.0.1:${p.port}`]));
  await Promise.all(plans.map((p) => waitForLive(p.name, urls[p.urlVariable] as string)));

  const jobs = readJobsConfig(process.env);
  scheduleJob('partition-maintenance', jobs.partitionIntervalMs, common);
  scheduleJob('rollup-refresh', jobs.refreshIntervalMs, common);

  const env: Record<string, string> = {
    ...urls,
    DATABASE_URL: databaseUrl,
    BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers,
    AUTH_SECRET: authSecret,
    DEV_TOKEN: devToken,
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
  for (const plan of plans) log(`  ${plan.name.padEnd(11)} ${urls[plan.urlVariable]}`);
  log(`settings in ${envFile}; try: source .dev/stack.env && curl -s "$INGEST_URL/health/ready"`);
  log('Ctrl-C stops everything');
}

// Last resort if this script dies without a graceful stop: take the services down with it.
process.on('exit', () => {
  for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
});

// `on`, not `once`: while this listener stays registered, devstack leaves signal handling to us.
// A second Ctrl-C gives up waiting; the exit hooks still kill every child.
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
