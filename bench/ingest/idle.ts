/**
 * Idle CPU of the ingestion service: what a pod spends with no traffic, which an autoscaler on
 * CPU reads as load (the chart's HPA targets 70 % of a 100m request by default; an idle pod must
 * read well under whatever target an operator sets, or the HPA never scales back in). Starts a dedicated Kafka broker and the service
 * as `run.ts` does (`dist/`, production flags, auth on), sends a few seconds of single events so
 * whatever the load started has had its chance to stop, waits, then reads the service's CPU from
 * /proc over the idle window.
 *
 * Usage: `(cd bench/ingest && node --conditions=source --import tsx idle.ts)`. Env: IDLE_SECONDS
 * (default 30), IDLE_SETTLE_SECONDS after the load (default 5). Runs this checkout's dist/
 * (`npx tsc -b` first); compare another commit by running its checkout's copy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_TOPIC, eventTopicSpec } from '@event-observatory/broker';
import { ensureStackTopics, productionNodeArgs, startKafka } from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { cpuSeconds } from '../lib/proc.js';
import { runLoad } from './loadgen.js';
import { startIngestService } from './service.js';
import { requestShapes } from './shapes.js';

const SERVICE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'services/ingest');
const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 30);
const SETTLE_SECONDS = Number(process.env.IDLE_SETTLE_SECONDS ?? 5);
const SECRET = 'bench-secret-bench-secret-bench-secret!!';

const sleep = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-idle-'));
  const kafka = await startKafka({ dataDir: join(dir, 'kafka') });
  await ensureStackTopics(kafka.bootstrapServers, [eventTopicSpec(EVENT_TOPIC)]);
  const service = await startIngestService({
    bootstrapServers: kafka.bootstrapServers,
    nodeArgs: productionNodeArgs(SERVICE_DIR),
    authSecret: SECRET,
  });
  try {
    const token = await signDevToken({
      secret: SECRET,
      scopes: ['events:write'],
      ttl: '1h',
      subject: 'bench',
    });
    const { single } = requestShapes(`127.0.0.1:${service.port}`, token);
    await runLoad({ host: '127.0.0.1', port: service.port, rate: 2000, seconds: 3, request: single });
    await sleep(SETTLE_SECONDS);
    const cpu0 = cpuSeconds(service.pid);
    await sleep(IDLE_SECONDS);
    const millicores = ((cpuSeconds(service.pid) - cpu0) / IDLE_SECONDS) * 1000;
    console.log(`idle CPU ${millicores.toFixed(2)} millicores over ${IDLE_SECONDS} s`);
  } finally {
    await service.stop();
    await kafka.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
