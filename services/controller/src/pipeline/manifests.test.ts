import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { crdManifests } from './manifests.js';

const root = resolve(import.meta.dirname, '../../../..');

describe('generated manifests', () => {
  for (const [path, content] of Object.entries(crdManifests())) {
    it(`committed ${path} equals the one generated from the typed source (npm run crd)`, () => {
      expect(readFileSync(resolve(root, path), 'utf8')).toBe(content);
    });
  }

  it('the example Pipeline declares the two topics of the spec with their partitions', () => {
    const example = loadYaml<{ spec: { topics: Array<{ name: string; partitions: number }> } }>(
      crdManifests()['crds/examples/pipeline.yaml'] ?? '',
    );
    expect(example.spec.topics.map((t) => [t.name, t.partitions])).toEqual([
      ['events.cloudevents.v1', 12],
      ['events.cloudevents.v1.dlq', 3],
    ]);
  });
});
