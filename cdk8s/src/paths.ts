/** Folders of the repository the app reads from and writes to. */
import { resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const CHART_DIR = resolve(REPO_ROOT, 'charts/observatory');
