import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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

const TEMP_PREFIX = 'event-observatory-';

/**
 * A new empty folder `<tmp>/event-observatory-<label>-XXXXXX` (mkdtemp), readable and traversable by
 * other users (0755): when the tests run as root, PostgreSQL runs as the `postgres` user and must be
 * able to reach its data folder inside it. The folder records the creating process (`owner.pid`), so
 * {@link removeAbandonedTempDirs} can delete it if that process dies before cleaning up.
 */
export function tempDataDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${TEMP_PREFIX}${label}-`));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'owner.pid'), `${process.pid}\n`);
  return dir;
}

/** Deletes folders made by {@link tempDataDir} whose owning process is gone (killed test runs). */
export function removeAbandonedTempDirs(): void {
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith(TEMP_PREFIX)) continue;
    const dir = join(tmpdir(), entry);
    let owner: number;
    try {
      owner = Number.parseInt(readFileSync(join(dir, 'owner.pid'), 'utf8'), 10);
    } catch {
      continue; // not ours, or not fully created yet
    }
    if (Number.isInteger(owner) && owner > 0 && !pidExists(owner))
      rmSync(dir, { recursive: true, force: true });
  }
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
