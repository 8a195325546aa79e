/**
 * `kubectl observatory status`: the flow health of Pipelines as a table, from the objects
 * `kubectl get pipelines -o json` prints. Only what the CRD's status promises is read.
 */

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** The part of a Pipeline the table shows. */
export interface PipelineView {
  metadata: { namespace: string; name: string };
  status?: {
    topicsReady?: string;
    conditions?: Condition[];
    flow?: {
      lag?: number;
      deadLetters?: number;
      deadLettersPerMinute?: number;
      lastStoredAt?: string;
      observedAt?: string;
      message?: string;
    };
  };
}

const COLUMNS = [
  'NAMESPACE',
  'NAME',
  'TOPICS',
  'READY',
  'FLOWING',
  'LAGGING',
  'DEADLETTERING',
  'LAG',
  'DLQ',
  'DLQ/MIN',
  'STORED',
  'OBSERVED',
];

/** `12s`, `4m`, `3h`, `2d` since `iso`, or `-`. */
export function age(iso: string | undefined, now: Date): string {
  const ms = iso ? now.getTime() - Date.parse(iso) : Number.NaN;
  if (!Number.isFinite(ms)) return '-';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

/** The table, then one line per condition that is not healthy (its reason and message). */
export function statusTable(pipelines: PipelineView[], now: Date): string {
  const cond = (p: PipelineView, type: string) => p.status?.conditions?.find((c) => c.type === type);
  const rows = pipelines.map((p) => {
    const f = p.status?.flow;
    const num = (n: number | undefined) => (n === undefined ? '-' : String(n));
    return [
      p.metadata.namespace,
      p.metadata.name,
      p.status?.topicsReady ?? '-',
      ...['Ready', 'Flowing', 'Lagging', 'DeadLettering'].map((t) => cond(p, t)?.status ?? '-'),
      num(f?.lag),
      num(f?.deadLetters),
      num(f?.deadLettersPerMinute),
      age(f?.lastStoredAt, now),
      age(f?.observedAt, now),
    ];
  });
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('   ')
      .trimEnd();
  const problems = pipelines.flatMap((p) =>
    (p.status?.conditions ?? [])
      .filter((c) =>
        c.type === 'Ready' || c.type === 'Flowing' ? c.status !== 'True' : c.status !== 'False',
      )
      .filter((c) => c.type !== 'Conflict' || c.status === 'True')
      // They restate Ready, for kstatus (Helm's --wait): the same message twice says nothing more.
      .filter((c) => c.type !== 'Stalled' && c.type !== 'Reconciling')
      .map(
        (c) => `${p.metadata.namespace}/${p.metadata.name}: ${c.type}=${c.status} ${c.reason}: ${c.message}`,
      ),
  );
  return [line(COLUMNS), ...rows.map(line), ...(problems.length > 0 ? ['', ...problems] : [])].join('\n');
}
