/**
 * Builds the search service from configuration: the read pool `observatory-read` (8 connections,
 * read-only, statement timeout 2 s, connection timeout 3 s) with its pool meters, a pool on the
 * primary when that one reads a replica, the page deadline, the search meters, the cursor codec and
 * the app. `main.ts` adds the listener, telemetry and signals.
 */
import type { HealthCheck } from '@event-observatory/service-kit/health';
import type { Logger } from '@event-observatory/service-kit/logger';
import { createReadPool } from '@event-observatory/store';
import type { Registry } from 'prom-client';
import { buildApp } from './app.js';
import { DEFAULT_PAGE_TIMEOUT_MS, type SearchConfig } from './config.js';
import { cursorCodec } from './cursor.js';
import type { ExportLimits } from './export.js';
import { createSearchMeters } from './metrics.js';
import { TAIL_LIMITS, type TailLimits } from './tail.js';
import type { Authenticator, StoredAuthenticator } from './viewer.js';
import type { VisibilityPolicy } from './visibility.js';

/** Connections to the primary: its statements are a save, a rename, a logout, a list of saved searches. */
export const PRIMARY_POOL_SIZE = 2;

export interface ServiceOptions {
  config: Pick<SearchConfig, 'allowedHosts' | 'secret'> &
    Partial<Pick<SearchConfig, 'pageTimeoutMs' | 'publicUrl' | 'tailMaxPerViewer' | 'tailMaxPerPod'>>;
  databaseUrl: string;
  /**
   * `DATABASE_PRIMARY_URL`: the primary, when `databaseUrl` names a streaming replica. The saved
   * searches and the ended sessions are read and written there (a pool of `PRIMARY_POOL_SIZE`).
   */
  primaryUrl?: string;
  registry: Registry;
  logger?: Logger;
  /** Live-tail poll period; default 1 s. */
  tailPollMs?: number;
  /** Live-tail caps; default `TAIL_LIMITS` with the configured per-viewer and per-pod caps. */
  tailLimits?: TailLimits;
  /** Export caps; default `EXPORT_LIMITS`. */
  exportLimits?: ExportLimits;
  /** Whether reads may be served yet (`rowSecurityGate`); default always. */
  serving?: () => boolean;
  /** Finds each request's viewer; default `openAccess` (no login). */
  authenticate?: Authenticator | StoredAuthenticator;
  /** What each viewer may see; default no rules (only an open viewer sees events). */
  visibility?: VisibilityPolicy;
  /** Readiness checks beside the database's (the bearer tokens' key sets). */
  checks?: Record<string, HealthCheck>;
}

export type SearchService = ReturnType<typeof createSearchService>;

export function createSearchService(opts: ServiceOptions) {
  const pool = createReadPool({ url: opts.databaseUrl, registry: opts.registry });
  // Not metered: the spec's pool meters name the read and the write pools only.
  const primary =
    opts.primaryUrl && opts.primaryUrl !== opts.databaseUrl
      ? createReadPool({ url: opts.primaryUrl, max: PRIMARY_POOL_SIZE })
      : pool;
  const authenticate =
    typeof opts.authenticate === 'object' ? opts.authenticate.withPool(primary) : opts.authenticate;
  const shutdown = new AbortController();
  const app = buildApp({
    pool,
    primary,
    registry: opts.registry,
    meters: createSearchMeters(opts.registry),
    cursors: cursorCodec(opts.config.secret),
    allowedHosts: opts.config.allowedHosts,
    pageTimeoutMs: opts.config.pageTimeoutMs ?? DEFAULT_PAGE_TIMEOUT_MS,
    shutdown: shutdown.signal,
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.tailPollMs !== undefined ? { tailPollMs: opts.tailPollMs } : {}),
    tailLimits: opts.tailLimits ?? {
      ...TAIL_LIMITS,
      perViewer: opts.config.tailMaxPerViewer ?? TAIL_LIMITS.perViewer,
      perPod: opts.config.tailMaxPerPod ?? TAIL_LIMITS.perPod,
    },
    ...(opts.exportLimits ? { exportLimits: opts.exportLimits } : {}),
    ...(opts.serving ? { serving: opts.serving } : {}),
    ...(authenticate ? { authenticate } : {}),
    ...(opts.config.publicUrl ? { publicUrl: opts.config.publicUrl } : {}),
    ...(opts.visibility ? { visibility: opts.visibility } : {}),
    ...(opts.checks ? { checks: opts.checks } : {}),
  });
  return {
    app,
    pool,
    primary,
    /** Ends every live tail (so the listener can drain), then closes the pools. */
    async close(): Promise<void> {
      shutdown.abort();
      await Promise.all([pool.end(), primary === pool ? undefined : primary.end()]);
    },
    /** Ends the live tails only; call before closing the listener. */
    endTails(): void {
      shutdown.abort();
    },
  };
}
