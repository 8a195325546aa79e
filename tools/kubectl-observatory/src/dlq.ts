/**
 * `kubectl observatory dlq list|replay`: the consumer's admin API (`/admin/dlq/records`,
 * `/admin/dlq:replay`) with a bearer token, printed one dead letter a line. The token is sent,
 * never printed.
 */

/** One dead letter as the consumer lists it (the fields printed). */
interface Letter {
  key: string;
  time: string;
  reason: string;
  detail: string;
  outcome?: string;
  error?: string;
}

interface Listing {
  records: Letter[];
  scanned: number;
  truncated: boolean;
  returned?: number;
  dryRun?: boolean;
  planned?: number;
  replayed?: number;
  failed?: number;
}

export interface DlqRequest {
  consumerUrl: string;
  token: string;
  limit?: number | undefined;
  reason?: string | undefined;
}

function query(req: DlqRequest, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams(extra);
  if (req.limit !== undefined) q.set('limit', String(req.limit));
  if (req.reason !== undefined) q.set('reason', req.reason);
  const text = q.toString();
  return text ? `?${text}` : '';
}

/** How long a listing or a plan may take; a committed replay has no bound (the server goes on anyway). */
const CALL_TIMEOUT_MS = 60_000;

async function call(url: string, method: 'GET' | 'POST', token: string, bounded = true): Promise<Listing> {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    ...(bounded && { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) }),
  });
  const body = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${body.slice(0, 300)}`);
  return JSON.parse(body) as Listing;
}

/** The letters, then a summary line. */
export function formatListing(listing: Listing): string {
  const lines = listing.records.map((r) =>
    [r.time, r.reason, r.key, r.outcome ?? '', r.detail, r.error ?? ''].filter((s) => s !== '').join('  '),
  );
  const summary =
    listing.dryRun === undefined
      ? `${listing.returned ?? listing.records.length} listed, ${listing.scanned} scanned${listing.truncated ? ' (truncated)' : ''}`
      : `${listing.dryRun ? 'dry run: ' : ''}${listing.planned} planned, ${listing.replayed} replayed, ${listing.failed} failed, ${listing.scanned} scanned${listing.truncated ? ' (truncated)' : ''}`;
  return [...lines, summary].join('\n');
}

export async function listDeadLetters(req: DlqRequest): Promise<string> {
  return formatListing(await call(`${req.consumerUrl}/admin/dlq/records${query(req)}`, 'GET', req.token));
}

/** Plans unless `commit` (the consumer's own default is a plan too); the text, and how many failed. */
export async function replayDeadLetters(
  req: DlqRequest,
  commit: boolean,
): Promise<{ text: string; failed: number }> {
  const url = `${req.consumerUrl}/admin/dlq:replay${query(req, { dryRun: String(!commit) })}`;
  const listing = await call(url, 'POST', req.token, !commit);
  return { text: formatListing(listing), failed: listing.failed ?? 0 };
}
