/**
 * How a service runs in production: the node flags of its `start:prod` script
 * (`node <flags> dist/main.js`), which the image runs as its `/app/start`, and the environment
 * the image's runtime stage sets. Local processes and the benchmarks take both from here, so what
 * they measure is the memory and CPU of the real thing.
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

/**
 * Variables every image sets (the Dockerfile's `runtime` stage, kept equal by a test), under
 * whatever the caller's environment says. `MALLOC_ARENA_MAX=2`: glibc gives each thread that
 * allocates (V8's garbage collection helpers, libuv's pool) a malloc arena of its own, up to eight
 * per core, and an arena keeps its high-water mark; two arenas took about 20 MiB off the ingestion
 * service's peak under batch overload (services/ingest/README.md, "Node flags and the allocator").
 */
export const PRODUCTION_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
