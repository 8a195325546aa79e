import { chmodSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/**
 * A new empty folder under the system's temporary folder (`mkdtemp`), readable and traversable by
 * other users (0755): when the tests run as root, PostgreSQL runs as the `postgres` user and must be
 * able to reach its data folder inside it.
 */
export function tempDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}
