#!/usr/bin/env node
/**
 * Publishes a manifest without the monorepo's `source` export condition.
 *
 * In the repository, `exports` carries a `source` condition pointing at `src/*.ts` so that sibling
 * workspaces, vitest and `tsc` (customConditions ["source"]) use the TypeScript source without a
 * build. Published, that condition would make any consumer whose bundler or tsconfig happens to
 * enable a `source` condition type-check or bundle our `.ts` files. npm has no publish-time
 * override of `exports` (`publishConfig` only carries registry settings for npm), so:
 *
 *   node scripts/pack-manifest.mjs strip    # prepack: back up package.json, drop `source` conditions
 *   node scripts/pack-manifest.mjs restore  # postpack: put the original package.json back
 *
 * The backup lives in node_modules/.forge-client-pack/ (never packed, ignored by git). A `strip`
 * that finds a backup restores it first, so an interrupted pack never compounds.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const backupDir = join(root, 'node_modules', '.forge-client-pack');
const backup = join(backupDir, 'package.json');

function restore() {
  if (!existsSync(backup)) return;
  copyFileSync(backup, manifest);
  rmSync(backupDir, { recursive: true, force: true });
}

/** Removes every `source` key from an exports map (conditions nest). */
function stripSource(value) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out = {};
  for (const [key, v] of Object.entries(value)) if (key !== 'source') out[key] = stripSource(v);
  return out;
}

const command = process.argv[2];
if (command === 'restore') {
  restore();
} else if (command === 'strip') {
  restore();
  mkdirSync(backupDir, { recursive: true });
  copyFileSync(manifest, backup);
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  pkg.exports = stripSource(pkg.exports);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else {
  console.error('usage: pack-manifest.mjs strip|restore');
  process.exit(2);
}
