/**
 * Checks the import arrows of docs/architecture.md ("Import arrows") on this repository: which
 * workspace may import which, who alone imports the Kafka and PostgreSQL clients, and that SQL is
 * written only in packages/store (the rules and their exceptions are in import-arrows.ts). `make
 * lint` runs it; it prints each broken arrow with its file and line and exits 1.
 */
import { resolve } from 'node:path';
import { checkImportArrows, RULES } from './import-arrows.js';

const { workspaces, problems } = checkImportArrows(resolve(import.meta.dirname, '..'));
if (problems.length > 0) {
  console.error(`Import arrows broken (see ${RULES}):\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`Import arrows hold in ${workspaces} workspaces.`);
