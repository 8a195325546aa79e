/** The database settings every component that reads or writes the store takes. */
import { required, value } from '../helm.js';

export function databaseSettings(): Record<string, string> {
  return {
    DATABASE_URL: required('database.url', 'database.url: the PostgreSQL URL is required'),
    DATABASE_USER: value('database.user'),
  };
}
