/**
 * Health probes: `GET /health/live` consults nothing; `GET /health/ready` consults the checks a
 * service registers, each adding one field to the body.
 * @module
 */
import { Hono } from 'hono';
import { settleWithin, TIMED_OUT } from '../resilience/index.js';

/**
 * One check's verdict; `value` becomes the check's field in the readiness body, and a failing
 * check's `reason`, when given, a field `<check>Reason` beside it.
 */
export type CheckResult = { ok: true; value: string } | { ok: false; value: string; reason?: string };

/** A readiness check: synchronous or asynchronous; a throw counts as DOWN with its message. */
export type HealthCheck = () => CheckResult | Promise<CheckResult>;

/** A passing check; its field reads `value` (default `UP`). */
export function up(value = 'UP'): CheckResult {
  return { ok: true, value };
}

/**
 * A failing check; its field reads `value` (e.g. `unreachable`), and `<check>Reason` reads
 * `reason` when given (a field whose value the spec fixes keeps it, and still says why).
 */
export function down(value: string, reason?: string): CheckResult {
  return reason === undefined ? { ok: false, value } : { ok: false, value, reason };
}

export interface HealthOptions {
  /** Check name -> check; the name is the field of the readiness body. */
  checks?: Record<string, HealthCheck>;
  /** A check not settled within this many ms is DOWN with reason `timeout`. Default 2000. */
  timeoutMs?: number;
}

/** Readiness body: `status` plus one field per check. */
export type ReadinessBody = { status: 'UP' | 'DOWN' } & Record<string, string>;

/**
 * Runs every check concurrently and builds the readiness body: `{ status: 'UP', broker: 'reachable' }`
 * when all pass, `{ status: 'DOWN', broker: 'unreachable' }` when any fails.
 */
export async function runChecks(
  checks: Record<string, HealthCheck>,
  timeoutMs = 2000,
): Promise<{ ok: boolean; body: ReadinessBody }> {
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((name) => settle(checks[name]!, timeoutMs)));
  const ok = results.every((r) => r.ok);
  const body: ReadinessBody = { status: ok ? 'UP' : 'DOWN' };
  names.forEach((name, i) => {
    const result = results[i]!;
    body[name] = result.value;
    if (!result.ok && result.reason !== undefined) body[`${name}Reason`] = result.reason;
  });
  return { ok, body };
}

async function settle(check: HealthCheck, timeoutMs: number): Promise<CheckResult> {
  try {
    const result = await settleWithin(Promise.resolve().then(check), timeoutMs);
    return result === TIMED_OUT ? down('timeout') : result;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return down(message.replace(/\s+/g, ' ').slice(0, 200) || 'error');
  }
}

/**
 * A Hono sub-app serving `GET /health/live` (200 `{status:'UP'}`, consults nothing) and
 * `GET /health/ready` (200 or 503 with `status` and one field per registered check). Neither is
 * timed by `httpServerTimer`. Responses are `cache-control: no-store`.
 *
 * @example
 * ```ts
 * app.route('/', healthRoutes({
 *   checks: { broker: () => (belief.reachable ? up('reachable') : down('unreachable')) },
 * }));
 * // GET /health/ready -> 200 {"status":"UP","broker":"reachable"}
 * //                   or 503 {"status":"DOWN","broker":"unreachable"}
 * ```
 */
export function healthRoutes(opts: HealthOptions = {}): Hono {
  const checks = { ...opts.checks };
  if ('status' in checks) throw new Error('healthRoutes: a check may not be named "status"');
  const timeoutMs = opts.timeoutMs ?? 2000;
  const app = new Hono();
  app.get('/health/live', (c) => c.json({ status: 'UP' }, 200, { 'cache-control': 'no-store' }));
  app.get('/health/ready', async (c) => {
    const { ok, body } = await runChecks(checks, timeoutMs);
    return c.json(body, ok ? 200 : 503, { 'cache-control': 'no-store' });
  });
  return app;
}
