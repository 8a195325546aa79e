/**
 * scripts/versions.sh is the one file of pinned versions: no other script, nor the Makefile,
 * assigns a version of its own, and the pins TypeScript keeps for itself equal it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { KAFKA_VERSION } from '@event-observatory/devstack';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const VERSIONS = join(ROOT, 'scripts/versions.sh');

/** `NAME=value` of versions.sh (the value without its comment). */
function pinned(name: string): string | undefined {
  const line = readFileSync(VERSIONS, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}=`));
  return line
    ?.slice(name.length + 1)
    .split(/\s+#/)[0]
    ?.trim();
}

function shellScripts(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.sh'))
    .map((e) => join(e.parentPath, e.name));
}

describe('scripts/versions.sh', () => {
  it('holds every version a script or the Makefile pins', () => {
    const files = [
      ...shellScripts(join(ROOT, 'scripts')),
      ...shellScripts(join(ROOT, 'packages/forge-client/scripts')),
      join(ROOT, 'Makefile'),
    ].filter((f) => f !== VERSIONS);
    const pins = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => ({ at: `${relative(ROOT, file)}:${i + 1}`, line }))
        .filter(({ line }) => /^\s*[A-Z_]*VERSION[A-Z_]*\s*:?=\s*["']?v?\d+\.\d+/.test(line)),
    );
    expect(pins).toEqual([]);
  });

  it("equals the devstack's default Kafka (the stand-in image's broker)", () => {
    expect(pinned('KAFKA_VERSION')).toBe(KAFKA_VERSION);
  });

  it("tests every Kubernetes line the chart admits: K8S_OLDER_LINES and K8S_VERSION, one each, from the chart's kubeVersion up", () => {
    const minor = (version: string) => Number(/^v1\.(\d+)\.\d+$/.exec(version)?.[1]);
    const chart = readFileSync(join(ROOT, 'charts/observatory/Chart.yaml'), 'utf8');
    const oldest = Number(/^kubeVersion: ">=1\.(\d+)\.0-0"$/m.exec(chart)?.[1]);
    const lines = [...(pinned('K8S_OLDER_LINES') ?? '').split(','), pinned('K8S_VERSION') ?? ''];
    const newest = minor(pinned('K8S_VERSION') ?? '');
    expect(lines.map(minor)).toEqual(Array.from({ length: newest - oldest + 1 }, (_, i) => oldest + i));
  });
});
