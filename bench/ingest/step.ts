/** One measured step of an ingest benchmark: a fixed arrival rate against a server process. */

import { cpuSeconds, procStatus } from '../lib/proc.js';
import { type LoadRequest, percentile, runLoad } from './loadgen.js';

export interface Result {
  name: string;
  targetRate: number;
  sent: number;
  ok: number;
  failed: number;
  eventsPerSecond: number;
  p50: number;
  p99: number;
  /** p99 of the 200 responses alone. */
  p99Ok: number;
  /** Requests answered 200, and 503. */
  okRequests: number;
  refusedRequests: number;
  /** Seconds from the first due time to the last response. */
  elapsed: number;
  peakRssMiB: number;
  /** Cores used over the step by the server, the broker and the generator. */
  serviceCores: number;
  brokerCores: number;
  generatorCores: number;
}

export interface StepOptions {
  name: string;
  port: number;
  /** Requests per second. */
  rate: number;
  eventsPerRequest: number;
  request: (i: number) => LoadRequest;
  /** The server process (RSS and CPU), and the broker's when there is one. */
  pid: number;
  brokerPid?: number | undefined;
  seconds: number;
  /** Events a response acknowledged; default 1 for a 200. */
  acknowledged?: (status: number, body: Buffer) => number;
  /** The generator's connections (loadgen's default otherwise). */
  maxConnections?: number;
  /** Requests sent with `Expect: 100-continue` (loadgen's `expectContinue`). */
  expectContinue?: boolean;
}

export async function step(o: StepOptions): Promise<Result> {
  let peak = 0;
  const svc0 = cpuSeconds(o.pid);
  const brk0 = cpuSeconds(o.brokerPid);
  const r = await runLoad({
    host: '127.0.0.1',
    port: o.port,
    rate: o.rate,
    seconds: o.seconds,
    request: o.request,
    ...(o.acknowledged ? { acknowledged: o.acknowledged } : {}),
    ...(o.maxConnections ? { maxConnections: o.maxConnections } : {}),
    ...(o.expectContinue ? { expectContinue: true } : {}),
    onTick: () => {
      peak = Math.max(peak, procStatus(o.pid, 'VmRSS'));
    },
  });
  const ok = r.acknowledged;
  return {
    name: o.name,
    targetRate: o.rate * o.eventsPerRequest,
    sent: r.sent * o.eventsPerRequest,
    ok,
    failed: r.sent * o.eventsPerRequest - ok,
    eventsPerSecond: Math.round(ok / r.elapsed),
    p50: percentile(r.latencies, 50),
    p99: percentile(r.latencies, 99),
    p99Ok: percentile(r.okLatencies, 99),
    okRequests: r.statuses['200'] ?? 0,
    refusedRequests: r.statuses['503'] ?? 0,
    elapsed: r.elapsed,
    peakRssMiB: Math.round(peak / 1048576),
    serviceCores: (cpuSeconds(o.pid) - svc0) / r.elapsed,
    brokerCores: (cpuSeconds(o.brokerPid) - brk0) / r.elapsed,
    generatorCores: r.cpuSeconds / r.elapsed,
  };
}

/** The markdown table of a list of steps. */
export function resultTable(results: Result[], server = 'service'): string[] {
  const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
  const cores = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
  return [
    `| scenario | offered events/s | events sent | acknowledged | failed | achieved events/s | p50 ms | p99 ms | ${server} peak RSS MiB | ${server} cores | broker cores | generator cores | ${server} CPU µs/event |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.targetRate} | ${r.sent} | ${r.ok} | ${r.failed} | ${r.eventsPerSecond} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.peakRssMiB} | ${cores(r.serviceCores)} | ${cores(r.brokerCores)} | ${cores(r.generatorCores)} | ${r.eventsPerSecond > 0 ? Math.round((r.serviceCores * 1e6) / r.eventsPerSecond) : 'n/a'} |`,
    ),
  ];
}
