import { signDevToken } from '@event-observatory/service-kit';

/** A token the chart's ingest accepts: `events:write` for its audience, signed with the release's secret. */
export function ingestToken(authSecret: string): Promise<string> {
  return signDevToken({
    secret: authSecret,
    scopes: ['events:write'],
    audience: 'observatory-ingest',
    ttl: '1h',
  });
}

/** Headers of a binary-mode CloudEvent POST to ingest (JSON data, `ce-time` now). */
export function binaryHeaders(
  token: string,
  event: { id: string; source: string; type: string; subject?: string },
): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'ce-specversion': '1.0',
    'ce-id': event.id,
    'ce-source': event.source,
    'ce-type': event.type,
    ...(event.subject === undefined ? {} : { 'ce-subject': event.subject }),
    'ce-time': new Date().toISOString(),
  };
}
