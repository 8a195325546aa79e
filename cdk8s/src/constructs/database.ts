/** The database settings every component that reads or writes the store takes. */
import { value } from '../helm.js';

export function databaseSettings(): Record<string, string> {
  return {
    DATABASE_URL: value('database.url'),
    DATABASE_USER: value('database.user'),
  };
}
