import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADVISORY_LOCKS } from './advisory-locks.js';
import { DEFAULT_MIGRATIONS_DIR } from './migrate.js';

describe('ADVISORY_LOCKS', () => {
  it('gives every kind of work a key of its own', () => {
    const keys = Object.values(ADVISORY_LOCKS);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('holds every key a migration takes by its literal number', () => {
    const known = new Set<number>(Object.values(ADVISORY_LOCKS));
    const taken = readdirSync(DEFAULT_MIGRATIONS_DIR)
      .filter((f) => f.endsWith('.sql'))
      .flatMap((f) =>
        [
          ...readFileSync(join(DEFAULT_MIGRATIONS_DIR, f), 'utf8').matchAll(
            /pg_(?:try_)?advisory_\w*lock\w*\s*\(\s*(\d+)/g,
          ),
        ].map((m) => ({ file: f, key: Number(m[1]) })),
      );
    expect(taken.filter((t) => !known.has(t.key))).toEqual([]);
  });
});
