/**
 * Names and bounds of the monthly partitions, as `events.create_month_partition(date)` writes
 * them: `events.cloud_event_YYYY_MM`, `[YYYY-MM-01 00:00:00+00, next month)`.
 *
 * @example
 * monthPartitionName(new Date('2026-11-21T10:00:00Z')); // 'cloud_event_2026_11'
 */
export function monthPartitionName(at: Date): string {
  return `cloud_event_${at.getUTCFullYear()}_${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function monthPartitionBounds(at: Date): { from: string; to: string } {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const fmt = (d: Date) =>
    `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-01 00:00:00+00`;
  return { from: fmt(new Date(Date.UTC(y, m, 1))), to: fmt(new Date(Date.UTC(y, m + 1, 1))) };
}
