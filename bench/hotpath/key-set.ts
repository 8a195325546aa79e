/**
 * bench/hotpath/run.ts (unless `BENCH_KEY_SET=off`): ingest CPU per single event with its tokens verified
 * against a key set (an OpenID provider on this machine, found by discovery, RS256) beside the
 * static HS256 key of the main measurement, in the same round on the same broker. Both send one
 * token string throughout, so both measure the verified-token cache: what a producer reusing its
 * token until it expires costs.
 */
import { startOidcIssuer } from '@event-observatory/devstack';
import { startIngestService } from '../ingest/service.js';
import { requestShapes } from '../ingest/shapes.js';
import { type Result, step } from '../ingest/step.js';

export const KEY_SET_ENABLED = process.env.BENCH_KEY_SET !== 'off';

export interface KeySetStep {
  nodeArgs: string[];
  rate: number;
  seconds: number;
  warmupSeconds: number;
}

/** The service verifying a key set, under the single-event load of the main measurement. */
export async function measureKeySetSingle(
  bootstrapServers: string,
  brokerPid: number | undefined,
  o: KeySetStep,
): Promise<Result> {
  const idp = await startOidcIssuer();
  const service = await startIngestService({
    bootstrapServers,
    nodeArgs: o.nodeArgs,
    env: { AUTH_ENABLED: 'true', AUTH_OIDC_ISSUER: idp.issuer, AUTH_AUDIENCE: 'observatory-ingest' },
  });
  try {
    const token = await idp.token({ scope: 'events:write' });
    const { single } = requestShapes(`127.0.0.1:${service.port}`, token);
    const one = {
      port: service.port,
      pid: service.pid,
      brokerPid,
      seconds: o.seconds,
      eventsPerRequest: 1,
      request: single,
    };
    await step({ ...one, name: 'warm-up', rate: 3000, seconds: o.warmupSeconds / 2 });
    await step({ ...one, name: 'warm-up', rate: 6000, seconds: o.warmupSeconds / 2 });
    return await step({ ...one, name: `single @ ${o.rate}/s, key set`, rate: o.rate });
  } finally {
    await service.stop();
    await idp.close();
  }
}
