/**
 * The controller's HTTP listener as a Hono app built from explicit dependencies.
 *
 * | method | path | |
 * |---|---|---|
 * | GET | /health/live | consults nothing |
 * | GET | /health/ready | `kubernetes`: the API server answered the last lease request; `role`: leader or standby |
 *
 * None of them is timed (the service kit never times health routes); no other route. `/metrics`
 * is on the metrics listener main.ts serves (`METRICS_PORT`).
 */

import {
  errorHandler,
  type HealthCheck,
  healthRoutes,
  notFoundHandler,
} from '@event-observatory/service-kit';
import type { Logger } from '@event-observatory/service-kit/logger';
import { Hono } from 'hono';

export interface AppDeps {
  checks: { kubernetes: HealthCheck; role: HealthCheck };
  logger?: Logger;
}

export function buildApp(deps: AppDeps): Hono {
  const app = new Hono();
  app.onError(errorHandler(deps.logger ? { logger: deps.logger } : {}));
  app.notFound(notFoundHandler(app));
  app.route('/', healthRoutes({ checks: deps.checks }));
  return app;
}
