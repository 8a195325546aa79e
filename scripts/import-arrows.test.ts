/**
 * checkImportArrows on temporary trees: a tree that keeps the arrows passes, and each kind of
 * broken arrow planted in it is reported with its file and line.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkImportArrows } from './import-arrows.js';

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
    expect(checkImportArrows(tree(GOOD))).toEqual({ workspaces: 7, problems: [] });
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
});
