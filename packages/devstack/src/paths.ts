import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root of the repository (the folder holding the workspace's package.json). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'packages')) && existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

/** Downloads and builds live here: `$OBSERVATORY_CACHE`, else `<repo>/.cache`. */
export function cacheDir(): string {
  const fromEnv = process.env.OBSERVATORY_CACHE;
  return fromEnv ? resolve(fromEnv) : join(repoRoot(), '.cache');
}
