import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { load } from 'js-yaml';
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
    const example = load(crdManifests()['crds/examples/pipeline.yaml'] ?? '') as {
      spec: { topics: Array<{ name: string; partitions: number }> };
    };
    expect(example.spec.topics.map((t) => [t.name, t.partitions])).toEqual([
      ['events.cloudevents.v1', 12],
      ['events.cloudevents.v1.dlq', 3],
    ]);
  });

  it('keeps every CEL rule of the typed source in the YAML', () => {
    const crd = crdManifests()['crds/pipeline.yaml'] ?? '';
    expect(crd).toContain('partitions may not decrease');
    expect(crd).toContain('replicationFactor is immutable');
    expect(crd).toContain('cleanup.policy must be one of');
    for (const field of ['topic', 'deadLetterTopic'])
      expect(crd).toContain(`self.topics.exists(t, t.name == self.flow.${field})`);
  });
});
