/**
 * The chart README's "Production install", run as written, against a Kafka that already holds the
 * release's topics (a reinstall after `helm uninstall` with the default `Retain`): the commands are
 * read from the README's own code blocks, so a README that stops working fails here. Then the
 * README's uninstall and the same install again. And a reinstall whose Pipeline may not take the
 * kept topics over fails within a minute and a half, naming the topics and the way out, instead of
 * waiting out Helm's timeout.
 *
 * What the suite changes in the README's commands, and why: the namespace (a fresh one of its own,
 * made by the suite, so `kubectl create namespace` is not run), the Kafka address and database URL
 * (the suite's), the password (the database's), the chart's path (absolute); and it appends the
 * images of `make images`, replication factor 1 (the suite's Kafka is one broker), a topic and
 * group of this run, and small resource requests (a 2-core node shared with other suites).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kafkaClient } from '@event-observatory/devstack';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './lib/cluster.js';
import { baseInstall, CHART, setArgs } from './lib/helm.js';
import { createPipelineTopics } from './lib/kafka.js';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const suite = new ClusterSuite('production');
const README = readFileSync(join(REPO_ROOT, 'charts/observatory/README.md'), 'utf8');

/** The commands of the first `sh` block under `heading`, continuation lines joined, split into words. */
function readmeCommands(heading: string): string[][] {
  const section = README.split(/^## /m).find((s) => s.startsWith(heading));
  const block = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`no sh block under "## ${heading}" in the chart README`);
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.trim() && !line.trim().startsWith('#'))
    .map((line) => line.trim().split(/\s+/));
}

let ns: TestNamespace;
/** The README's install and uninstall, their words adapted to the suite (header). */
let secretCommand: string[];
let installArgs: string[];
let uninstallArgs: string[];
const RELEASE = 'observatory';
const PIPELINE = `${RELEASE}-events`;

/** Replaces the README's example values by the suite's, word by word. */
function adapt(words: string[], values: { databaseUrl: URL; bootstrap: string }): string[] {
  const user = decodeURIComponent(values.databaseUrl.username);
  const password = decodeURIComponent(values.databaseUrl.password);
  const ownerUrl = new URL(values.databaseUrl);
  ownerUrl.password = '';
  return words.map((word, i) => {
    const previous = words[i - 1];
    if (previous === '--namespace' || previous === '-n') return ns.name;
    if (word === 'charts/observatory') return CHART;
    if (word.startsWith('--from-literal=STORE_PASSWORD=')) return `--from-literal=STORE_PASSWORD=${password}`;
    if (word.startsWith('kafka.bootstrapServers=')) return `kafka.bootstrapServers=${values.bootstrap}`;
    if (word.startsWith('database.url=')) return `database.url=${ownerUrl}`;
    if (word.startsWith('database.user=')) return `database.user=${user}`;
    return word;
  });
}

interface PipelineJson {
  status?: { conditions?: { type: string; status: string; reason?: string }[] };
}

async function pipelineReady(): Promise<{ status: string; reason?: string } | undefined> {
  const p = await suite.kube.getJson<PipelineJson>(['pipeline', PIPELINE, '--namespace', ns.name]);
  return p.status?.conditions?.find((c) => c.type === 'Ready');
}

/** The suite's one Kafka admin, connected in beforeAll. */
const admin = kafkaClient(suite.podStack.bootstrapServers, { clientId: 'production-e2e' }).admin();

/** Records retained per partition of `topic`, summed: unchanged means the topic was kept, not made anew. */
async function retained(topic: string): Promise<number> {
  return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
}

async function helmInstall(extra: string[] = []): Promise<{ ms: number; error?: string }> {
  const t0 = Date.now();
  try {
    await suite.helm.run([...installArgs, ...extra], 420_000);
    return { ms: Date.now() - t0 };
  } catch (error) {
    const ms = Date.now() - t0;
    await suite.logRelease(RELEASE, ns);
    return { ms, error: (error as Error).message };
  }
}

beforeAll(async () => {
  ns = await suite.namespace();
  const databaseUrl = new URL(await suite.database());
  const adaptTo = { databaseUrl, bootstrap: suite.podStack.bootstrapServers };
  const install = readmeCommands('Production install');
  const [created, secret, helm] = install;
  expect(created?.slice(0, 3)).toEqual(['kubectl', 'create', 'namespace']);
  expect(secret?.slice(0, 3)).toEqual(['kubectl', '-n', 'observatory']);
  expect(helm?.slice(0, 3)).toEqual(['helm', 'install', RELEASE]);
  secretCommand = adapt(secret as string[], adaptTo).slice(1);
  const base = await baseInstall(suite.cluster.images);
  installArgs = [
    ...adapt(helm as string[], adaptTo).slice(1),
    ...setArgs({
      ...base.values,
      'pipeline.topic': suite.topic,
      'kafka.groupId': suite.groupId,
      'ingest.replicas': 1,
      'consumer.replicas': 1,
      'search.replicas': 1,
      'controller.replicas': 1,
    }),
    ...base.resourceArgs,
  ];
  // Every example value of the README was replaced: a changed README must change adapt() too.
  expect(JSON.stringify([secretCommand, installArgs])).not.toMatch(/\.\.\.|kafka\.kafka:|postgres\.db/);
  const uninstall = readmeCommands('Uninstall')[0] as string[];

  expect(uninstall.slice(0, 3)).toEqual(['helm', 'uninstall', RELEASE]);
  uninstallArgs = adapt(uninstall, adaptTo).slice(1);
  suite.onCleanup(() => suite.helm.run(uninstallArgs).catch(() => {}));

  // The Kafka of an earlier install: both topics, and a record in the event topic.
  await createPipelineTopics(suite.podStack.bootstrapServers, suite.topic);
  const producer = kafkaClient(suite.podStack.bootstrapServers, { clientId: 'production-e2e' }).producer();
  await producer.connect();
  await producer.send({ topic: suite.topic, messages: [{ key: 'k', value: 'kept' }] });
  await producer.disconnect();
  await admin.connect();
  suite.onCleanup(async () => {
    await admin.deleteTopics({ topics: [suite.topic, `${suite.topic}.dlq`] }).catch(() => {});
    await admin.disconnect();
  });
}, 120_000);

describe("the chart README's production install, as written, over topics that exist", () => {
  /** The README's helm install succeeds, the Pipeline takes the kept topics over, their record intact. */
  async function expectInstalledOverKeptTopics(what: string): Promise<void> {
    const { ms, error } = await helmInstall();
    suite.log(`${what} in ${Math.round(ms / 1000)} s`);
    expect(error).toBeUndefined();
    expect(await pipelineReady()).toMatchObject({ status: 'True' });
    expect(await retained(suite.topic)).toBe(1);
  }

  it('installs: the release is deployed and its Pipeline takes the kept topics over (Ready), their records intact', async () => {
    await suite.kube.kubectl(secretCommand);
    await expectInstalledOverKeptTopics('installed');
  }, 480_000);

  it("reinstalls after the README's uninstall, which keeps the topics: deployed again, Ready, nothing lost", async () => {
    await suite.helm.run(uninstallArgs);
    expect(await retained(suite.topic)).toBe(1);
    await expectInstalledOverKeptTopics('reinstalled');
  }, 480_000);

  it('a reinstall whose Pipeline may not take the topics over fails within 90 s, naming the topics and the way out', async () => {
    await suite.helm.run(uninstallArgs);
    const { ms, error } = await helmInstall(['--set', 'pipeline.adoptExistingTopics=false']);
    suite.log(`refused in ${Math.round(ms / 1000)} s: ${error}`);
    // Helm quotes the Pipeline's Stalled condition (kstatus: Failed), which names each topic and the way out.
    expect(error).toMatch(/Pipeline\/.*observatory-events not ready\. status: Failed/);
    expect(error).toMatch(/exists in Kafka and was not created by this Pipeline: add it to the annotation/);
    expect(ms).toBeLessThan(90_000);
    // --rollback-on-failure removed the failed release; the topics are as they were.
    await expect(suite.helm.run(['status', RELEASE, '--namespace', ns.name])).rejects.toThrow(/not found/);
    expect(await retained(suite.topic)).toBe(1);
  }, 480_000);
});
