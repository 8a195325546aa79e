/**
 * The consumer's HTTP apps, built from explicit dependencies (tests build them too): `app`, the
 * main listener's (`HTTP_PORT`, where the kubelet probes), and `adminApp`, the admin listener's
 * (`ADMIN_PORT`). `/metrics` is on neither: main.ts serves it on the metrics listener.
 *
 * `app`:
 *
 * | method | path | |
 * |---|---|---|
 * | GET | /health/live, /health/ready | readiness: `broker` and `database` each UP or a reason |
 *
 * `adminApp`:
 *
 * | method | path | |
 * |---|---|---|
 * | GET | /admin/consumer | the stream's state |
 * | POST | /admin/consumer:start, :stop, :pause, :resume, :restart, :clearCheckpoints | lifecycle |
 * | GET | /admin/dlq | dead-letter depth per partition |
 * | GET | /admin/dlq/records | `limit`, `reason` |
 * | POST | /admin/dlq:replay | `limit`, `reason`, `dryRun` (default true) |
 *
 * Every `/admin` route needs a bearer JWT with the configured scope (`events:admin` by default);
 * auth decisions are not counted. No HTTP timer. Every authenticated `/admin` request writes one
 * audit log line (`audit: "admin"`): subject, issuer, command, arguments (the query) and status.
 */

import {
  ApiError,
  type AuthVariables,
  errorHandler,
  type HealthCheck,
  healthRoutes,
  notFoundHandler,
  type Principal,
  requireAuth,
  type Verifier,
} from '@event-observatory/service-kit';
import type { Logger } from '@event-observatory/service-kit/logger';
import { type ErrorHandler, Hono, type MiddlewareHandler } from 'hono';
import type { DlqAdmin } from './dlq/admin.js';
import type { CommandOutcome, LifecycleCommand } from './metrics.js';
import type { Lifecycle } from './operations/lifecycle.js';
import { POISON_REASONS, type PoisonReason } from './write/decode.js';

export interface AppDeps {
  lifecycle: Lifecycle;
  dlq: DlqAdmin;
  /** Null when authentication is disabled (`AUTH_ENABLED=false`). */
  verifier: Verifier | null;
  /** `broker` and `database`, and `keySet` when the admin verifier uses one. */
  checks: { broker: HealthCheck; database: HealthCheck } & Record<string, HealthCheck>;
  replayMaxRecords: number;
  logger?: Logger;
  /** Where the audit lines go; default `logger`. */
  audit?: Logger;
}

export const DEFAULT_LIST_LIMIT = 100;

const COMMANDS: Record<string, LifecycleCommand> = {
  start: 'start',
  stop: 'stop',
  pause: 'pause',
  resume: 'resume',
  restart: 'restart',
  clearCheckpoints: 'clear-checkpoints',
};

export interface ConsumerApps {
  /** The probes, on the main listener. */
  app: Hono;
  /** The admin API, on a listener of its own: a peer admitted to the probes reaches no command. */
  adminApp: Hono<{ Variables: AuthVariables }>;
}

export function buildApp(deps: AppDeps): ConsumerApps {
  const onError = errorHandler(deps.logger ? { logger: deps.logger } : {});
  const app = new Hono();
  app.onError(onError);
  app.notFound(notFoundHandler(app));
  app.route('/', healthRoutes({ checks: deps.checks }));
  return { app, adminApp: buildAdminApp(deps, onError) };
}

function buildAdminApp(deps: AppDeps, onError: ErrorHandler): ConsumerApps['adminApp'] {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.onError(onError);
  app.notFound(notFoundHandler(app));

  const guard: MiddlewareHandler = deps.verifier
    ? (requireAuth(deps.verifier) as MiddlewareHandler)
    : async (_c, next) => {
        await next();
      };
  app.use('/admin/*', guard);
  app.use('/admin/*', async (c, next) => {
    await next();
    const principal = c.get('principal') as Principal | undefined;
    (deps.audit ?? deps.logger)?.info(
      {
        audit: 'admin',
        subject: principal?.subject ?? 'anonymous',
        ...(principal?.issuer === undefined ? {} : { issuer: principal.issuer }),
        command: `${c.req.method} ${c.req.path.slice('/admin/'.length)}`,
        arguments: c.req.query(),
        status: c.res.status,
      },
      'admin command',
    );
  });

  app.get('/admin/consumer', (c) => c.json(deps.lifecycle.status()));
  for (const [verb, command] of Object.entries(COMMANDS)) {
    app.post(`/admin/consumer:${verb}`, async (c) => {
      const result = await deps.lifecycle.run(command);
      return c.json({ command, outcome: result.outcome satisfies CommandOutcome, consumer: result.status });
    });
  }

  app.get('/admin/dlq', async (c) => c.json(await deps.dlq.depth()));

  app.get('/admin/dlq/records', async (c) => {
    const limit = limitParam(c.req.query('limit'), deps.replayMaxRecords);
    const reason = reasonParam(c.req.query('reason'));
    return c.json(await deps.dlq.list(limit, reason));
  });

  app.post('/admin/dlq:replay', async (c) => {
    const limit = limitParam(c.req.query('limit'), deps.replayMaxRecords);
    const reason = reasonParam(c.req.query('reason'));
    const dryRun = boolParam(c.req.query('dryRun'), 'dryRun', true);
    return c.json(await deps.dlq.replay(limit, reason, dryRun));
  });

  return app;
}

function invalid(param: string, message: string): ApiError {
  return new ApiError('InvalidArgument', message, { reason: 'malformed', metadata: { parameter: param } });
}

function limitParam(raw: string | undefined, max: number): number {
  if (raw === undefined || raw === '') return Math.min(DEFAULT_LIST_LIMIT, max);
  if (!/^\d+$/.test(raw))
    throw invalid('limit', `limit must be a positive integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (n < 1 || n > max) throw invalid('limit', `limit must be between 1 and ${max}`);
  return n;
}

function reasonParam(raw: string | undefined): PoisonReason | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!(POISON_REASONS as readonly string[]).includes(raw)) {
    throw invalid('reason', `reason must be one of ${POISON_REASONS.join(', ')}`);
  }
  return raw as PoisonReason;
}

function boolParam(raw: string | undefined, name: string, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw invalid(name, `${name} must be true or false`);
}
