/** Writes crds/pipeline.yaml and crds/examples/pipeline.yaml from the typed source. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { crdManifests } from '../src/pipeline/manifests.js';

const root = resolve(import.meta.dirname, '../../..');
for (const [path, content] of Object.entries(crdManifests())) {
  mkdirSync(dirname(resolve(root, path)), { recursive: true });
  writeFileSync(resolve(root, path), content);
  process.stdout.write(`wrote ${path}\n`);
}
