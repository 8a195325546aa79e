/**
 * The ingest service's node flags against its memory at saturation: for each variant of flags,
 * the service from dist/ on one broker, a short warm-up, then one saturating step (single events
 * at 10,000/s, batches of 100 at 300 requests/s, or `both` one after the other as
 * bench/hotpath/run.ts runs them), printing peak RSS and CPU µs an event. The
 * variants run one after the other on the same broker, so compare them within one run.
 *
 *   BENCH_FLAG_VARIANTS='--max-semi-space-size=32|--max-semi-space-size=16' BENCH_MODE=single \
 *     node --conditions=source --import tsx bench/hotpath/flags.ts
 *
 * `BENCH_SECONDS` per step (default 8). Add `--trace-gc` to a variant to see the heap at each GC.
 * A word `NAME=value` in a variant sets that variable of the service instead (e.g.
 * `INGEST_MAX_INFLIGHT_BYTES=9437184 --max-semi-space-size=16`).
 */
import { join } from 'node:path';
import { productionNodeArgs, repoRoot } from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { startFloorBroker } from '../ingest/floors.js';
import { startIngestService } from '../ingest/service.js';
import { createdOf, requestShapes } from '../ingest/shapes.js';
import { step } from '../ingest/step.js';
import { procStatus } from '../lib/proc.js';

const SERVICE_DIR = join(repoRoot(), 'services/ingest');
const SECRET = 'bench-secret-bench-secret-bench-secret!!';
const MODE = process.env.BENCH_MODE ?? 'single';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const VARIANTS = (process.env.BENCH_FLAG_VARIANTS ?? productionNodeArgs(SERVICE_DIR).join(' ')).split('|');
const MiB = (bytes: number) => Math.round(bytes / 1048576);

const broker = await startFloorBroker('bench-hotpath-flags');
try {
  for (const flags of VARIANTS) {
    const words = flags.split(' ').filter(Boolean);
    const isSetting = (word: string) => /^[A-Z_]+=/.test(word);
    const service = await startIngestService({
      bootstrapServers: broker.kafka.bootstrapServers,
      nodeArgs: words.filter((word) => !isSetting(word)),
      env: Object.fromEntries(words.filter(isSetting).map((word) => word.split(/=(.*)/s).slice(0, 2))),
      authSecret: SECRET,
    });
    try {
      const token = await signDevToken({ secret: SECRET, scopes: ['events:write'], ttl: '1h', subject: 'b' });
      const { single, batch } = requestShapes(`127.0.0.1:${service.port}`, token);
      const at = { port: service.port, pid: service.pid, brokerPid: broker.kafka.pid(), seconds: SECONDS };
      const idle = MiB(procStatus(service.pid, 'VmRSS'));
      await step({ ...at, name: 'warm-up', rate: 3000, eventsPerRequest: 1, request: single, seconds: 5 });
      const singleStep = () =>
        step({ ...at, name: 'single @ 10000/s', rate: 10000, eventsPerRequest: 1, request: single });
      const batchStep = () =>
        step({
          ...at,
          name: 'batch of 100 @ 300 req/s',
          rate: 300,
          eventsPerRequest: 100,
          request: batch,
          acknowledged: createdOf,
        });
      // `both`: the saturating steps in the order of bench/hotpath/run.ts, one service for both.
      const steps = MODE === 'batch' ? [batchStep] : MODE === 'both' ? [singleStep, batchStep] : [singleStep];
      for (const run of steps) {
        const r = await run();
        const micros = Math.round((r.serviceCores * 1e6) / r.eventsPerSecond);
        console.log(
          `${flags || '(no flags)'}: ${r.name}, idle ${idle} MiB, peak RSS ${r.peakRssMiB} MiB, high-water ${MiB(procStatus(service.pid, 'VmHWM'))} MiB, ${r.eventsPerSecond} events/s acknowledged, ${micros} µs an event, ${r.serviceCores.toFixed(2)} cores`,
        );
      }
    } finally {
      await service.stop();
    }
  }
} finally {
  await broker.stop();
}
