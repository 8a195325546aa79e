/**
 * The node flags a service runs with in production: those of its `start:prod` script
 * (`node <flags> dist/main.js`), which the image runs as its `/app/start`. Local processes and the
 * benchmarks take them from here, so what they measure is the memory and CPU of the real thing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The flags of `<serviceDir>/package.json`'s `start:prod`; none when it has no such script. */
export function productionNodeArgs(serviceDir: string): string[] {
  const scripts: Record<string, string> | undefined = JSON.parse(
    readFileSync(join(serviceDir, 'package.json'), 'utf8'),
  ).scripts;
  const script = scripts?.['start:prod'];
  if (script === undefined) return [];
  const words = script.split(/\s+/);
  const entry = words.indexOf('dist/main.js');
  if (words[0] !== 'node' || entry < 0)
    throw new Error(`start:prod is not "node <flags> dist/main.js": ${script}`);
  return words.slice(1, entry);
}
