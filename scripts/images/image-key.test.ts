/**
 * image_key (scripts/images/cache.sh) on a temporary tree: a component's key changes with a file
 * of its own workspace closure (dependencies, tsconfig references), a workspace manifest, the
 * recipe, migrations or the base image, and with nothing else (tests elsewhere, devDependencies'
 * sources, dist/, node_modules/, the browser tests' .screenshots/).
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SCRIPTS = join(import.meta.dirname, '..');
let root: string;

const manifest = (name: string, deps: string[] = [], devDeps: string[] = []) =>
  JSON.stringify({
    name,
    dependencies: Object.fromEntries(deps.map((d) => [d, '*'])),
    devDependencies: Object.fromEntries(devDeps.map((d) => [d, '*'])),
  });

const TREE: Record<string, string> = {
  Dockerfile: 'FROM scratch\n',
  '.dockerignore': '**/node_modules\n',
  'package.json': JSON.stringify({ workspaces: ['packages/*', 'services/*', 'e2e'] }),
  'package-lock.json': '{}',
  'tsconfig.json': '{}',
  'tsconfig.base.json': '{}',
  'patches/x.patch': 'patch\n',
  'migrations/0001.sql': '-- the first migration\n',
  'scripts/images/build.sh': '',
  'scripts/images/service-tree.sh': '',
  'scripts/images/copy-manifests.sh': '',
  'scripts/images/build-base.sh': '',
  'packages/kit/package.json': manifest('@x/kit'),
  'packages/kit/tsconfig.json': '{}',
  'packages/kit/src/index.ts': 'export const kit = 1;\n',
  'packages/db/package.json': manifest('@x/db', ['@x/kit']),
  'packages/db/tsconfig.json': '{}',
  'packages/db/src/index.ts': 'export const db = 1;\n',
  'packages/dev/package.json': manifest('@x/dev'),
  'packages/dev/tsconfig.json': '{}',
  'packages/dev/src/index.ts': 'export const dev = 1;\n',
  'packages/types/package.json': manifest('@x/types'),
  'packages/types/tsconfig.json': '{}',
  'packages/types/src/index.ts': 'export type T = 1;\n',
  'services/api/package.json': manifest('@x/api', ['@x/kit'], ['@x/dev']),
  'services/api/tsconfig.json': JSON.stringify({ references: [{ path: '../../packages/types' }] }),
  'services/api/src/main.ts': 'export {};\n',
  'services/worker/package.json': manifest('@x/worker', ['@x/db'], ['@x/dev']),
  'services/worker/tsconfig.json': '{}',
  'services/worker/src/main.ts': 'export {};\n',
  'e2e/package.json': manifest('@x/e2e'),
  'e2e/cluster.test.ts': 'export {};\n',
};

function key(component: string, base = 'sha256:base'): string {
  return execFileSync(
    'bash',
    [
      '-c',
      // As build.sh runs it: a step that fails (an unreadable manifest) fails the key.
      'set -euo pipefail; source scripts/images/config.sh; source scripts/images/cache.sh; image_key "$1" "$2"',
      '_',
      component,
      base,
    ],
    { cwd: root, encoding: 'utf8' },
  ).trim();
}
const keys = () => ({ api: key('api'), worker: key('worker') });
let edits = 0;
/** Changes a file's contents; a JSON file stays valid JSON (a manifest is read, not only hashed). */
function edit(file: string): void {
  const path = join(root, file);
  if (file.endsWith('.json')) {
    const doc = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...doc, description: `changed ${++edits}` }));
  } else appendFileSync(path, '// changed\n');
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'image-key-'));
  for (const [file, text] of Object.entries(TREE)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  for (const file of ['images/cache.sh', 'images/config.sh', 'versions.sh'])
    copyFileSync(join(SCRIPTS, file), join(root, 'scripts', file));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('image_key', () => {
  it('follows the closure: dependencies (transitive) and tsconfig references, not devDependencies', () => {
    const before = keys();
    expect(before.api).toMatch(/^[0-9a-f]{32}$/);
    expect(before.api).not.toBe(before.worker);

    edit('e2e/cluster.test.ts');
    mkdirSync(join(root, 'services/api/dist'), { recursive: true });
    writeFileSync(join(root, 'services/api/dist/main.js'), 'built\n');
    mkdirSync(join(root, 'packages/kit/node_modules/y'), { recursive: true });
    writeFileSync(join(root, 'packages/kit/node_modules/y/index.js'), 'dep\n');
    edit('packages/dev/src/index.ts');
    // The browser tests' pictures of a run, taken while the prebuild has already built the images.
    mkdirSync(join(root, 'services/api/.screenshots'), { recursive: true });
    writeFileSync(join(root, 'services/api/.screenshots/page.png'), 'picture\n');
    expect(keys()).toEqual(before);

    edit('packages/db/src/index.ts');
    const afterDb = keys();
    expect(afterDb.api).toBe(before.api);
    expect(afterDb.worker).not.toBe(before.worker);

    edit('packages/kit/src/index.ts'); // worker reaches it through db
    const afterKit = keys();
    expect(afterKit.api).not.toBe(afterDb.api);
    expect(afterKit.worker).not.toBe(afterDb.worker);

    edit('packages/types/src/index.ts'); // a tsconfig reference of api only
    const afterTypes = keys();
    expect(afterTypes.api).not.toBe(afterKit.api);
    expect(afterTypes.worker).toBe(afterKit.worker);
  });

  it('changes for every component with any manifest, the lock, the recipe, migrations, patches or the base image', () => {
    for (const file of [
      'packages/dev/package.json',
      'package-lock.json',
      'Dockerfile',
      'scripts/images/service-tree.sh',
      'migrations/0001.sql',
      'patches/x.patch',
    ]) {
      const before = keys();
      edit(file);
      const after = keys();
      expect(after.api, file).not.toBe(before.api);
      expect(after.worker, file).not.toBe(before.worker);
    }
    expect(key('api', 'sha256:other')).not.toBe(key('api'));
  });
});
