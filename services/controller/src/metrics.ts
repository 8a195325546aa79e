/**
 * The controller's meters, named as every service's (service-kit README, "Metrics"): `_total`
 * counters, `_seconds` timers with count, sum, max and buckets, `outcome` from the services'
 * closed set.
 */
import { createTimer, ladders } from '@event-observatory/service-kit/metrics';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RestartReason } from './kube/informer.js';

/** success: Ready=True; failure: an error, or Ready=False; skipped: paused or gone. */
export type ReconcileOutcome = 'success' | 'failure' | 'skipped';

export function createControllerMetrics(registry: Registry) {
  const managed = new Map<string, number>();
  const reconciles = new Counter({
    name: 'controller_reconciles_total',
    help: 'Reconciles of Pipeline resources by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const duration = createTimer<'outcome'>(registry, {
    name: 'controller_reconcile_duration_seconds',
    help: 'Duration of one reconcile of a Pipeline',
    labelNames: ['outcome'],
    buckets: ladders.reconcile,
  });
  for (const outcome of ['success', 'failure', 'skipped'] as const) {
    reconciles.inc({ outcome }, 0);
    duration.zero({ outcome });
  }
  const queueDepth = new Gauge({
    name: 'controller_queue_depth',
    help: 'Pipelines waiting in the work queue',
    registers: [registry],
  });
  new Gauge({
    name: 'controller_topics_managed',
    help: 'Kafka topics the controller manages (declared, not unmanaged, not owned by an older Pipeline)',
    registers: [registry],
    collect() {
      this.set([...managed.values()].reduce((a, b) => a + b, 0));
    },
  });
  const leader = new Gauge({
    name: 'controller_leader',
    help: '1 while this replica holds the leader lease',
    registers: [registry],
  });
  const watchRestarts = new Counter({
    name: 'controller_watch_restarts_total',
    help: 'Pipeline watches restarted, by why the previous one ended',
    labelNames: ['reason'],
    registers: [registry],
  });
  const statusWrites = new Counter({
    name: 'controller_status_writes_total',
    help: 'Status writes to Pipelines, by cause: reconcile, or flow (a flow change worth writing)',
    labelNames: ['cause'],
    registers: [registry],
  });
  for (const cause of ['reconcile', 'flow'] as const) statusWrites.inc({ cause }, 0);
  leader.set(0);
  return {
    /** Times one reconcile; call the result with its outcome. */
    startReconcile() {
      const stop = duration.start({});
      return (outcome: ReconcileOutcome) => {
        stop({ outcome });
        reconciles.inc({ outcome });
      };
    },
    queueDepth: (n: number) => queueDepth.set(n),
    /** Topics managed for one Pipeline (0 or absent once it is gone). */
    topicsManaged: (key: string, n: number) => (n > 0 ? managed.set(key, n) : managed.delete(key)),
    leader: (isLeader: boolean) => leader.set(isLeader ? 1 : 0),
    watchRestart: (reason: RestartReason) => watchRestarts.inc({ reason }),
    statusWritten: (cause: 'reconcile' | 'flow') => statusWrites.inc({ cause }),
  };
}

export type ControllerMetrics = ReturnType<typeof createControllerMetrics>;
