/**
 * The search meters (README, "Metrics"), on the service's registry. `pool_connections_*` are
 * the store's (`registerPoolMetrics`), `http_server_requests_seconds` the HTTP timer's.
 */
import { createDistribution, createTimer, ladders } from '@event-observatory/service-kit/metrics';
import { Counter, Gauge, type Registry } from 'prom-client';
import { SHAPES, type Shape } from './filters.js';

export type PageKind = 'first' | 'continuation';

export function createSearchMeters(registry: Registry) {
  const duration = createTimer(registry, {
    name: 'search_query_duration_seconds',
    help: 'Duration of the query that reads one page of search results, by filter shape',
    labelNames: ['shape'],
    buckets: ladders.searchQuery,
  });
  const returned = createDistribution(registry, {
    name: 'search_results_returned',
    help: 'Rows on one page of search results, by filter shape',
    labelNames: ['shape'],
    buckets: ladders.searchResults,
  });
  const pages = new Counter({
    name: 'search_pages_total',
    help: 'Search result pages served: first (no cursor) or continuation',
    labelNames: ['page'] as const,
    registers: [registry],
  });
  const facetsCapped = new Counter({
    name: 'search_facets_capped_total',
    help: 'Facet computations that reached the sample cap (their counts cover the newest matches only)',
    registers: [registry],
  });
  const tailConnections = new Gauge({
    name: 'tail_connections',
    help: 'Open live-tail streams',
    registers: [registry],
  });
  const tailDelivered = new Counter({
    name: 'tail_events_delivered_total',
    help: 'Events sent to live-tail streams',
    registers: [registry],
  });
  for (const shape of SHAPES) {
    duration.zero({ shape });
    returned.zero({ shape });
  }
  pages.inc({ page: 'first' }, 0);
  pages.inc({ page: 'continuation' }, 0);
  facetsCapped.inc(0);
  return {
    /** Starts the page query's stopwatch; the returned function records it with the row count. */
    query(shape: Shape): (rows: number) => void {
      const stop = duration.start({ shape });
      return (rows) => {
        stop();
        returned.observe({ shape }, rows);
      };
    },
    page(kind: PageKind): void {
      pages.inc({ page: kind });
    },
    facetsCapped(): void {
      facetsCapped.inc();
    },
    tailOpened(): void {
      tailConnections.inc();
    },
    tailClosed(): void {
      tailConnections.dec();
    },
    delivered(n: number): void {
      tailDelivered.inc(n);
    },
  };
}

export type SearchMeters = ReturnType<typeof createSearchMeters>;
