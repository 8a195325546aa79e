/**
 * The chart's evaluation profile on the real cluster: `helm install` with only
 * `kafka.bundled.enabled` and `database.bundled.enabled` (plus where the images come from, and
 * small requests for a node shared with other suites) brings every pod Ready on an empty
 * namespace: the Secrets generated, the topics made by the controller in the bundled Kafka, the
 * schema by the migration hook in the bundled PostgreSQL. `helm test` passes; an event sent the
 * way NOTES.txt says (its token command, a port-forward, its curl's headers) is found in search;
 * no service is logged in as the database's owner, and search's role (the reader) may read the
 * events and nothing else; postgres_exporter logs in as its own role, a member of pg_monitor only,
 * and reads the server's statistics (`pg_up 1`, `pg_stat_database_*`); the bundled Kafka takes
 * SCRAM logins only: a client in a release pod without the credentials cannot produce, with them
 * it is served; a second rendering keeps every generated Secret (`lookup`); `helm uninstall` leaves only the two
 * claims and the kept store Secret. One install for the whole file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { binaryHeaders } from './lib/cloudevents.js';
import { kubectlPath } from './lib/cluster.js';
import { baseInstall, CHART, setArgs } from './lib/helm.js';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const suite = new ClusterSuite('evaluation');
const { cluster, kube, helm } = suite;
const RELEASE = 'obs';

let ns: TestNamespace;
let notes = '';
const forwards: ChildProcess[] = [];

/** `kubectl port-forward svc/<service> :<port>` as NOTES says (a free local port): that port. */
function portForward(service: string, port = 8080): Promise<number> {
  const child = spawn(
    kubectlPath(),
    ['--kubeconfig', cluster.kubeconfig, '-n', ns.name, 'port-forward', `svc/${service}`, `:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  forwards.push(child);
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`port-forward to ${service} did not start`)), 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      const port = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(chunk.toString())?.[1];
      if (port) {
        clearTimeout(timer);
        done(Number(port));
      }
    });
    child.once('exit', (code) => fail(new Error(`port-forward to ${service} ended (${code})`)));
  });
}

/**
 * One statement run in the bundled PostgreSQL as search's role, over TCP with its password (both
 * from the server container's environment, which creates that role): `ok <output>`, or the error.
 */
async function asSearchRole(sql: string): Promise<string> {
  const login =
    'PGPASSWORD="$READER_PASSWORD" exec psql -X -qAt -v ON_ERROR_STOP=1 --host 127.0.0.1 --username "$READER_USER" --dbname "$POSTGRES_DB" --command "$0"';
  return ns
    .kubectl(['exec', `${RELEASE}-postgresql-0`, '--', 'sh', '-c', login, sql])
    .then((out) => `ok ${out.trim()}`)
    .catch((err: Error) => err.message);
}

/** One query run in the bundled PostgreSQL as its owner, over the server's socket: its output. */
async function asOwner(sql: string): Promise<string> {
  const login = 'exec psql -X -At --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" --command "$0"';
  return (await ns.kubectl(['exec', `${RELEASE}-postgresql-0`, '--', 'sh', '-c', login, sql])).trim();
}

/**
 * A kafkajs client run in an ingest pod (admitted by the broker's NetworkPolicy): with the pod's
 * SASL settings and password file (`sasl`) it lists the topics (`topics <names>`); without any
 * (`none`) it tries to produce to the event topic (`produced`). A failure prints `refused <error>`.
 */
const KAFKA_CLIENT = `
const { Kafka, logLevel } = require('node:module').createRequire('/app/packages/broker/package.json')('kafkajs');
const env = process.env;
const login = process.argv[1] === 'sasl';
const sasl = login
  ? { mechanism: env.BROKER_SASL_MECHANISM.toLowerCase(), username: env.BROKER_SASL_USERNAME,
      password: require('node:fs').readFileSync(env.BROKER_SASL_PASSWORD_FILE, 'utf8') }
  : undefined;
const kafka = new Kafka({ clientId: 'e2e-login', brokers: env.BROKER_BOOTSTRAP_SERVERS.split(','), sasl,
  connectionTimeout: 5000, authenticationTimeout: 5000, requestTimeout: 5000, retry: { retries: 2 },
  logLevel: logLevel.NOTHING });
async function attempt() {
  if (login) {
    const admin = kafka.admin();
    await admin.connect();
    return 'topics ' + (await admin.listTopics()).sort().join(',');
  }
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await producer.send({ topic: env.BROKER_TOPIC, acks: -1, timeout: 5000, messages: [{ value: 'no login' }] });
  return 'produced';
}
attempt()
  .catch((err) => 'refused ' + err.name + ': ' + err.message)
  .then((outcome) => { console.log(outcome); process.exit(0); });
`;

/** KAFKA_CLIENT's outcome in an ingest pod, with the pod's login or without. */
async function kafkaFromIngest(login: 'sasl' | 'none'): Promise<string> {
  const out = await ns.kubectl(
    ['exec', `deploy/${RELEASE}-ingest`, '--', 'node', '-e', KAFKA_CLIENT, login],
    {
      timeoutMs: 90_000,
    },
  );
  return out.trim();
}

/** Names of the objects of every namespaced kind the release makes (defaults excluded). */
async function leftovers(): Promise<string[]> {
  const kinds =
    'statefulsets,deployments,replicasets,pods,services,configmaps,secrets,serviceaccounts,roles,rolebindings,poddisruptionbudgets,networkpolicies,cronjobs,jobs,pipelines,leases,persistentvolumeclaims';
  const list = await kube.getJson<{ items: { kind: string; metadata: { name: string } }[] }>([
    kinds,
    '--namespace',
    ns.name,
  ]);
  return list.items
    .map((o) => `${o.kind}/${o.metadata.name}`)
    .filter((n) => !['ConfigMap/kube-root-ca.crt', 'ServiceAccount/default'].includes(n))
    .sort();
}

beforeAll(async () => {
  const t0 = Date.now();
  await suite.pipelineCrd();
  ns = await suite.namespace('eval');
  const base = await baseInstall(cluster.images);
  const output = await suite.helmInstall(RELEASE, ns, [
    ...setArgs({
      'kafka.bundled.enabled': true,
      'database.bundled.enabled': true,
      // helm test and the scripts below read search with service-account tokens (ingest's), which
      // a visibility rule lets see every event.
      'search.auth.bearer.serviceAccounts': true,
      'search.visibility.rules[0].users[0]': `system:serviceaccount:${ns.name}:${RELEASE}-ingest`,
      'search.visibility.rules[0].see.all': true,
      ...base.values,
    }),
    ...base.resourceArgs,
  ]);
  suite.onCleanup(() => {
    for (const child of forwards) child.kill();
  });
  notes = output.slice(output.indexOf('NOTES:'));
  suite.log(`installed in ${Math.round((Date.now() - t0) / 1000)} s`);
}, 480_000);

describe('the evaluation profile on the cluster', () => {
  it('brings every pod Ready, the bundled Kafka and PostgreSQL included', async () => {
    // Read until every pod is Ready at once: on a node shared with other suites a readiness probe
    // may miss one period (its checks have short bounds) right when a single read looks.
    await vi.waitFor(async () => expectAllReady(), { timeout: 120_000, interval: 2_000 });
    expect(notes).toContain('EVALUATION PROFILE');
  });

  async function expectAllReady(): Promise<void> {
    const pods = await kube.getJson<{
      items: {
        metadata: { name: string; ownerReferences?: { kind: string }[] };
        status: { phase: string; conditions?: { type: string; status: string }[] };
      }[];
    }>(['pods', '--namespace', ns.name]);
    // A CronJob's run (the jobs fire every few minutes) is not a serving pod: it may be starting or
    // done at the moment of the read, so only the long-running pods must be Ready.
    const running = pods.items.filter(
      (p) => p.status.phase !== 'Succeeded' && !p.metadata.ownerReferences?.some((o) => o.kind === 'Job'),
    );
    const names = running.map((p) => p.metadata.name);
    expect(names).toContain(`${RELEASE}-kafka-0`);
    expect(names).toContain(`${RELEASE}-postgresql-0`);
    for (const c of ['ingest', 'consumer', 'search', 'controller'])
      expect(
        names.filter((n) => n.startsWith(`${RELEASE}-${c}-`)),
        c,
      ).toHaveLength(2);
    for (const pod of running)
      expect(
        pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        pod.metadata.name,
      ).toBe(true);
  }

  it("binds the bundled Kafka's and PostgreSQL's claims through the cluster's default StorageClass", async () => {
    const claims = await kube.getJson<{
      items: { metadata: { name: string }; spec: { storageClassName?: string }; status: { phase: string } }[];
    }>(['persistentvolumeclaims', '--namespace', ns.name]);
    expect(
      claims.items.map((c) => [c.metadata.name, c.spec.storageClassName, c.status.phase]).sort(),
    ).toEqual([
      [`data-${RELEASE}-kafka-0`, 'local-path', 'Bound'],
      [`data-${RELEASE}-postgresql-0`, 'local-path', 'Bound'],
    ]);
  });

  it('passes helm test: an event validated, published and found through search', async () => {
    const output = await helm.run(['test', RELEASE, '--namespace', ns.name, '--logs', '--timeout', '3m']);
    expect(output).toMatch(/Phase:\s+Succeeded/);
    expect(output).toContain('found through search helm-test-');
  }, 240_000);

  it('finds in search an event sent as NOTES.txt says: its token command, port-forward and curl headers', async () => {
    const tokenCommand = /TOKEN=\$\((kubectl .+)\)/.exec(notes)?.[1];
    expect(tokenCommand).toContain(`exec deploy/${RELEASE}-ingest -- node services/ingest/dist/token-cli.js`);
    const args = (tokenCommand as string).split(/\s+/).slice(1);
    const token = (await kube.kubectl(args)).trim();
    expect(token.split('.')).toHaveLength(3);
    expect(notes).toContain(`port-forward svc/${RELEASE}-ingest 8080:8080`);
    const [ingest, search] = await Promise.all([
      portForward(`${RELEASE}-ingest`),
      portForward(`${RELEASE}-search`),
    ]);
    const id = `notes-${Date.now()}`;
    // The headers of the NOTES curl (ce-source /my/first), with an id of this run.
    const sent = await fetch(`http://localhost:${ingest}/v1/events`, {
      method: 'POST',
      headers: binaryHeaders(token, { id, source: '/my/first', type: 'com.example.first', subject: id }),
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(sent.status, await sent.clone().text()).toBe(200);
    // Search's local login is on: a reader without it is refused; a service-account token reads.
    const anonymous = await fetch(`http://localhost:${search}/events`, { redirect: 'manual' });
    expect(anonymous.status).not.toBe(200);
    const reader = await ns.serviceAccountToken(`${RELEASE}-ingest`, 'observatory-search');
    const deadline = Date.now() + 60_000;
    let page = '';
    while (!page.includes('href="/events/') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      const res = await fetch(`http://localhost:${search}/events?subject=${id}&source=/my/first`, {
        headers: { authorization: `Bearer ${reader}` },
      });
      page = res.status === 200 ? await res.text() : '';
    }
    expect(page).toContain('href="/events/');
  }, 120_000);

  it('generates the local admin password NOTES tells how to read', async () => {
    const command = /(kubectl -n \S+ get secret \S+ -o jsonpath='\{\.data\.admin-password\}')/.exec(
      notes,
    )?.[1];
    expect(command).toBe(
      `kubectl -n ${ns.name} get secret ${RELEASE}-login -o jsonpath='{.data.admin-password}'`,
    );
    const args = (command as string).replace(/'/g, '').split(/\s+/).slice(1);
    const password = Buffer.from(await kube.kubectl(args), 'base64').toString('utf8');
    expect(password).toMatch(/^[A-Za-z0-9]{48}$/);
  });

  it('logs no service in as the owner: consumer and jobs are the writer, search the reader', async () => {
    const user = async (configMap: string) =>
      (await kube.getJson<{ data: Record<string, string> }>(['configmap', configMap, '--namespace', ns.name]))
        .data.DATABASE_USER;
    expect(await user(`${RELEASE}-consumer`)).toBe('observatory_writer');
    expect(await user(`${RELEASE}-jobs`)).toBe('observatory_writer');
    expect(await user(`${RELEASE}-search`)).toBe('observatory_reader');
    // Who is connected now (the owner over the socket, which is not a client of the release).
    const sessions = await asOwner(
      "SELECT DISTINCT usename FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
    );
    expect(sessions.split('\n')).not.toContain('observatory');
  });

  it("gives search's role the events to read and nothing else: no write, no DDL, no partition function, no catalog secrets", async () => {
    // sql-witness: tries, as the reader role, statements no store function issues, to check its grants.
    expect(await asSearchRole('SELECT current_user')).toBe('ok observatory_reader');
    // Row visibility: without a scope in its transaction the reader sees no event; with one, its rows.
    expect(await asSearchRole('SELECT count(*) FROM events.cloud_event')).toBe('ok 0');
    expect(
      await asSearchRole(
        `SET observatory.scope = '{"all": true}'; SELECT count(*) >= 1 FROM events.cloud_event`,
      ),
    ).toBe('ok t');
    const refused = {
      insert: 'INSERT INTO events.consumer_checkpoint DEFAULT VALUES',
      update: "UPDATE events.cloud_event SET ce_type = 'x'",
      delete: 'DELETE FROM events.cloud_event',
      ddl: 'CREATE TABLE events.intruder (i int)',
      publicDdl: 'CREATE TABLE public.intruder (i int)',
      partition: "SELECT events.create_month_partition(date '2031-01-01')",
      detach: "SELECT events.detach_month_partition('cloud_event_2031_01')",
      catalog: 'SELECT count(*) FROM pg_authid',
    };
    for (const [what, sql] of Object.entries(refused))
      expect(await asSearchRole(sql), what).toMatch(/permission denied/);
  }, 60_000);

  it('lets postgres_exporter in as its own pg_monitor role, reading the pg_stat_* views', async () => {
    const role = await asOwner(
      "SELECT rolsuper, pg_has_role(rolname, 'pg_monitor', 'member') FROM pg_roles WHERE rolname = 'observatory_monitor'",
    );
    expect(role).toBe('f|t');
    // Its own scrape (through a port-forward: its policy admits only Prometheus): the connection
    // is made per scrape, so the first may precede the role's creation by the server's postStart.
    const exporter = await portForward(`${RELEASE}-postgres-exporter`, 9187);
    const deadline = Date.now() + 60_000;
    let metrics = '';
    while (!/^pg_up 1$/m.test(metrics) && Date.now() < deadline) {
      // A scrape waits on the exporter's database connection: bounded, and tried again.
      metrics = await fetch(`http://localhost:${exporter}/metrics`, { signal: AbortSignal.timeout(10_000) })
        .then((res) => res.text())
        .catch(() => '');
      if (!/^pg_up 1$/m.test(metrics)) await new Promise((r) => setTimeout(r, 2000));
    }
    expect(metrics).toMatch(/^pg_up 1$/m);
    expect(metrics).toMatch(/^pg_stat_database_xact_commit\{[^}]*datname="observatory"/m);
  }, 90_000);

  it('lets into the bundled Kafka only SCRAM logins: a client in a release pod without them cannot produce', async () => {
    const settings = (
      await kube.getJson<{ data: Record<string, string> }>([
        'configmap',
        `${RELEASE}-ingest`,
        '--namespace',
        ns.name,
      ])
    ).data;
    expect(settings).toMatchObject({
      BROKER_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
      BROKER_SASL_MECHANISM: 'SCRAM-SHA-512',
      BROKER_SASL_USERNAME: 'observatory',
    });
    // The same pod, the same network path: without a login the broker serves nothing...
    expect(await kafkaFromIngest('none')).toMatch(/^refused /);
    // ...with the pod's login it is served (the event topic the controller made).
    expect(await kafkaFromIngest('sasl')).toMatch(/^topics .*\bevents\.cloudevents\.v1\b/);
  }, 240_000);

  it('keeps every generated Secret when the release is rendered again (lookup)', async () => {
    const secret = async (name: string) =>
      (await kube.getJson<{ data: Record<string, string> }>(['secret', name, '--namespace', ns.name])).data;
    const live = {
      store: await secret(`${RELEASE}-store`),
      tokens: await secret(`${RELEASE}-tokens`),
      application: await secret(`${RELEASE}-application`),
      login: await secret(`${RELEASE}-login`),
      kafka: await secret(`${RELEASE}-kafka`),
    };
    // A server-side dry run renders with `lookup` against the cluster and changes nothing.
    const upgrade = await helm.run([
      'upgrade',
      RELEASE,
      CHART,
      '--namespace',
      ns.name,
      '--reuse-values',
      '--dry-run=server',
    ]);
    for (const [which, data] of Object.entries(live))
      for (const [key, value] of Object.entries(data))
        expect(upgrade, `${which} ${key}`).toContain(`"${key}": "${value}"`);
  });

  it('helm uninstall leaves only the two claims and the kept store Secret', async () => {
    await helm.run(['uninstall', RELEASE, '--namespace', ns.name, '--wait']);
    const kept = [
      `PersistentVolumeClaim/data-${RELEASE}-kafka-0`,
      `PersistentVolumeClaim/data-${RELEASE}-postgresql-0`,
      `Secret/${RELEASE}-store`,
    ];
    // Pods and the CronJobs' Jobs go by garbage collection, after uninstall returns.
    const deadline = Date.now() + 60_000;
    let left = await leftovers();
    while (left.join() !== kept.join() && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      left = await leftovers();
    }
    expect(left).toEqual(kept);
  }, 120_000);
});
