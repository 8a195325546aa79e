/**
 * The controller's HTTP listener as a Hono app built from explicit dependencies.
 *
 * | method | path | |
 * |---|---|---|
 * | GET | /metrics | text exposition |
 * | GET | /health/live | consults nothing |
 * | GET | /health/ready | `kubernetes`: the API server answered the last lease request; `role`: leader or standby |
 *
 * None of them is timed (the service kit never times health and metrics routes); no other route.
 */

import {
  errorHandler,
  type HealthCheck,
  healthRoutes,
  metricsHandler,
  notFoundHandler,
} from '@event-observatory/service-kit';
import type { Logger } from '@event-observatory/service-kit/logger';
import { Hono } from 'hono';
import type { Registry } from 'prom-client';

export interface AppDeps {
  registry: Registry;
  checks: { kubernetes: HealthCheck; role: HealthCheck };
  logger?: Logger;
}

export function buildApp(deps: AppDeps): Hono {
  const app = new Hono();
  app.onError(errorHandler(deps.logger ? { logger: deps.logger } : {}));
  app.notFound(notFoundHandler(app));
  app.get('/metrics', metricsHandler(deps.registry));
  app.route('/', healthRoutes({ checks: deps.checks }));
  return app;
}
