/**
 * Checks the import arrows of ../shared/DESIGN.md ("Ownership") on this repository (the rules are
 * in import-arrows.ts). `make lint` runs it; it prints each broken arrow with its file and line
 * and exits 1.
 */
import { resolve } from 'node:path';
import { checkImportArrows } from './import-arrows.js';

const { workspaces, problems } = checkImportArrows(resolve(import.meta.dirname, '..'));
if (problems.length > 0) {
  console.error(`Import arrows broken (see ../shared/DESIGN.md, "Ownership"):\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`Import arrows hold in ${workspaces} workspaces.`);
