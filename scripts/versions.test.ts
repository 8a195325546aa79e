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
});
