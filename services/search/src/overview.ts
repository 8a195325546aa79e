/**
 * The overview page's data, from the hourly rollup: volume over time, top types, top sources and
 * severities, and how many stored rows the rollup has not counted yet, read concurrently (five of
 * the eight read connections; the spec allows seven).
 */
import {
  type DatabasePool,
  type RollupBacklog,
  type RollupCount,
  rollupBacklog,
  rollupSeverities,
  rollupTop,
  rollupVolume,
  type SeveritySummary,
  type VolumeBucket,
} from '@event-observatory/store';

export const RANGES = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type RangeName = keyof typeof RANGES;
export const DEFAULT_RANGE: RangeName = '7d';
const TOP = 10;

export interface OverviewView {
  range: RangeName;
  since: Date;
  volume: VolumeBucket[];
  unit: 'hour' | 'day';
  types: RollupCount[];
  sources: RollupCount[];
  severities: SeveritySummary;
  /** Rows stored since the rollup's last refresh: the charts do not show them yet. */
  backlog: RollupBacklog;
}

export function rangeOf(raw: string | undefined): RangeName | undefined {
  if (raw === undefined || raw === '') return DEFAULT_RANGE;
  return Object.hasOwn(RANGES, raw) ? (raw as RangeName) : undefined;
}

export async function runOverview(
  pool: DatabasePool,
  range: RangeName,
  now = Date.now(),
): Promise<OverviewView> {
  const unit = range === '24h' ? 'hour' : 'day';
  // Whole hours, so the first bucket is not cut.
  const since = new Date(Math.floor((now - RANGES[range]) / 3_600_000) * 3_600_000);
  const [volume, types, sources, severities, backlog] = await Promise.all([
    rollupVolume(pool, since, unit),
    rollupTop(pool, since, 'ce_type', TOP),
    rollupTop(pool, since, 'ce_source', TOP),
    rollupSeverities(pool, since),
    rollupBacklog(pool),
  ]);
  return { range, since, volume, unit, types, sources, severities, backlog };
}
