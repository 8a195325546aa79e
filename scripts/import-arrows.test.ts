/**
 * checkImportArrows on temporary trees: a tree that keeps the arrows passes, and each kind of
 * broken arrow planted in it (an import, a client, a reach by path, a SQL statement) is reported
 * with its file and line.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkImportArrows } from './import-arrows.js';

/** `${name}` as text: a substitution in a planted file's own template literal. */
const sub = (name: string) => `\${${name}}`;

/** Every file keeps the arrows: owners import their clients, witnesses import what they like. */
const GOOD: Record<string, string> = {
  'packages/broker/src/client.ts': "import { Kafka } from 'kafkajs';\nexport const k = Kafka;\n",
  'packages/store/src/pools.ts': "import pg from 'pg';\nimport type { Pool } from 'pg';\nexport { pg };\n",
  'packages/devstack/src/pg.ts': "import pg from 'pg';\nimport { Kafka } from 'kafkajs';\n",
  'services/search/src/app.ts': "import { createReadPool } from '@event-observatory/store';\n",
  'services/search/test/harness.ts':
    "import pg from 'pg';\nimport { startStack } from '@event-observatory/devstack';\n",
  'services/consumer/src/sink.test.ts': "import type { Message } from 'kafkajs';\n",
  'services/consumer/vitest.config.ts': "import pg from 'pg';\n",
  'e2e/pipeline/pipeline.test.ts': "import pg from 'pg';\nimport { Kafka } from 'kafkajs';\n",
  'bench/ingest/floors.ts': "import { Producer } from '@platformatic/kafka';\nimport pg from 'pg';\n",
  'cdk8s/src/chart.ts': "import { Chart } from 'cdk8s';\nimport { k } from '../imports/k8s.js';\n",
  'cdk8s/imports/k8s.ts': 'export const k = 1;\n',
  'tools/kubectl-observatory/src/main.ts': "import { parseEvent } from '@event-observatory/events';\n",
  'scripts/dev.ts':
    "import { startStack } from '@event-observatory/devstack';\nimport { migrate } from '@event-observatory/store';\n",
  // SQL in the store and devstack; statement-like words that are not statements elsewhere.
  'packages/store/src/insert.ts': "export const q = 'INSERT INTO events.cloud_event (ce_id) VALUES ($1)';\n",
  'packages/devstack/src/roles.ts': `export const q = (r: string) => \`CREATE ROLE ${sub('r')} LOGIN\`;\n`,
  'services/consumer/src/trace.ts': [
    '/** Sends `SELECT 1` through the store, says this comment; in a comment SQL is words. */',
    "export const span = 'INSERT events.cloud_event';",
    "export const methods = ['DELETE', 'PUT'];",
    "export const hint = 'Select a pipeline, then DELETE it';",
    "export const pem = 'BEGIN CERTIFICATE';",
    'export const html = \'<select name="range">\';',
    '',
  ].join('\n'),
  // A witness that says so.
  'services/jobs/test/count.test.ts':
    "// sql-witness: counts the rows the job left.\nexport const q = 'SELECT count(*) FROM events.cloud_event';\n",
};

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function tree(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), 'import-arrows-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('checkImportArrows', () => {
  it('passes a tree that keeps the arrows', () => {
    expect(checkImportArrows(tree(GOOD))).toEqual({ workspaces: 11, problems: [] });
  });

  it('reports the Kafka client, pg (type-only too) and a reach into another package by path', () => {
    const { problems } = checkImportArrows(
      tree({
        ...GOOD,
        'services/ingest/src/send.ts': "// sends\nimport { Kafka } from 'kafkajs';\n",
        'services/controller/src/admin.ts': "import { Admin } from '@platformatic/kafka';\n",
        'services/search/src/tail.ts': "import type pg from 'pg';\n",
        'services/jobs/src/copy.ts': "import { from } from 'pg-copy-streams';\n",
        'services/search/src/legacy.ts': "const kafka = require('kafkajs');\n",
        'services/consumer/src/probe.ts': "const pool = await import('pg');\n",
        'services/jobs/src/run.ts':
          "import { createWritePool } from '../../../packages/store/src/pools.js';\n",
      }),
    );
    expect(problems.sort()).toEqual([
      'services/consumer/src/probe.ts:1: services/consumer may not import pg (the PostgreSQL client, owned by packages/store)',
      'services/controller/src/admin.ts:1: services/controller may not import @platformatic/kafka (the Kafka client, owned by packages/broker)',
      'services/ingest/src/send.ts:2: services/ingest may not import kafkajs (the Kafka client, owned by packages/broker)',
      'services/jobs/src/copy.ts:1: services/jobs may not import pg-copy-streams (the PostgreSQL client, owned by packages/store)',
      'services/jobs/src/run.ts:1: reaches into packages/store/src/pools.js by path; import the package instead',
      'services/search/src/legacy.ts:1: services/search may not import kafkajs (the Kafka client, owned by packages/broker)',
      'services/search/src/tail.ts:1: services/search may not import pg (the PostgreSQL client, owned by packages/store)',
    ]);
  });

  it('reports a package importing a workspace package its arrows do not allow', () => {
    const { problems } = checkImportArrows(
      tree({
        ...GOOD,
        'packages/store/src/topics.ts': "import { topicName } from '@event-observatory/broker';\n",
      }),
    );
    expect(problems).toEqual([
      'packages/store/src/topics.ts:1: packages/store may not import @event-observatory/broker',
    ]);
  });

  it('holds cdk8s, the tools and the scripts to their arrows', () => {
    const { problems } = checkImportArrows(
      tree({
        ...GOOD,
        'cdk8s/src/probe.ts': "import { readConsumerConfig } from '@event-observatory/consumer';\n",
        'cdk8s/src/config.ts': "import { config } from '../../services/consumer/src/config.js';\n",
        'tools/kubectl-observatory/src/replay.ts': "import { migrate } from '@event-observatory/store';\n",
        'tools/kubectl-observatory/src/peek.ts': "import { Kafka } from 'kafkajs';\n",
        'scripts/reset.ts': "import pg from 'pg';\n",
      }),
    );
    expect(problems.sort()).toEqual([
      'cdk8s/src/config.ts:1: reaches into services/consumer/src/config.js by path; import the package instead',
      'cdk8s/src/probe.ts:1: cdk8s may not import @event-observatory/consumer',
      'scripts/reset.ts:1: scripts may not import pg (the PostgreSQL client, owned by packages/store)',
      'tools/kubectl-observatory/src/peek.ts:1: tools/kubectl-observatory may not import kafkajs (the Kafka client, owned by packages/broker)',
      'tools/kubectl-observatory/src/replay.ts:1: tools/kubectl-observatory may not import @event-observatory/store',
    ]);
  });

  it('refuses a SQL statement outside the store, and in a test or witness only when the file says why', () => {
    const { problems } = checkImportArrows(
      tree({
        ...GOOD,
        'services/consumer/src/health.ts': "// checks\nexport const q = 'SELECT 1';\n",
        'services/search/src/page.ts': `export const q = (t: string) => \`\n  SELECT * FROM ${sub('t')}\`;\n`,
        'services/jobs/src/tx.ts': "export const steps = ['BEGIN', 'COMMIT'];\n",
        'cdk8s/src/roles.ts': `export const r = (n: string) => \`CREATE ROLE ${sub('n')}\`;\n`,
        'e2e/pipeline/count.ts': "export const q = 'DELETE FROM events.cloud_event';\n",
        // A production file cannot declare itself a witness.
        'services/ingest/src/peek.ts':
          "// sql-witness: peeks.\nexport const q = 'UPDATE events.cloud_event SET ce_type = $1';\n",
      }),
    );
    const witness =
      'use the store or devstack, or mark the file `sql-witness: <why>` if it checks the database independently';
    const store = 'move the statement into packages/store and call its export';
    expect(problems.sort()).toEqual([
      `cdk8s/src/roles.ts:1: SQL outside packages/store ('CREATE ROLE'); ${store}`,
      `e2e/pipeline/count.ts:1: SQL outside packages/store ('DELETE FROM events.cloud_event'); ${witness}`,
      `services/consumer/src/health.ts:2: SQL outside packages/store ('SELECT 1'); ${store}`,
      `services/ingest/src/peek.ts:2: SQL outside packages/store ('UPDATE events.cloud_event SET ce_type ='); ${store}`,
      `services/jobs/src/tx.ts:1: SQL outside packages/store ('BEGIN'); ${store}`,
      `services/jobs/src/tx.ts:1: SQL outside packages/store ('COMMIT'); ${store}`,
      `services/search/src/page.ts:1: SQL outside packages/store ('SELECT * FROM'); ${store}`,
    ]);
  });
});
