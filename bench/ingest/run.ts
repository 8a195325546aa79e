/**
 * Ingest benchmark: starts a dedicated Kafka broker (devstack) and the ingestion service as a
 * child process (`src/main.ts`, so its RSS is measured alone), then drives it with an open-loop
 * generator: requests are *scheduled* at a fixed arrival rate and latency is measured from the
 * scheduled time (no coordinated omission), whatever the service's answers do.
 *
 * Scenarios: single 1 KiB binary events at a fixed rate; batches of 100 events; 64 concurrent
 * 1 MiB uploads. Writes bench/results/ingest.md.
 *
 * Usage: `(cd bench/ingest && npm run bench)` (env BENCH_SECONDS, default 10 per step).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startKafka } from '@event-observatory/devstack';
import { Kafka, logLevel } from 'kafkajs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TOPIC = 'events.cloudevents.v1';

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

function hwmOf(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

interface Result {
  name: string;
  targetRate: number;
  sent: number;
  ok: number;
  failed: number;
  eventsPerSecond: number;
  p50: number;
  p99: number;
  peakRssMiB: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Open loop: request i is due at start + i/rate; it is sent then, whatever is outstanding. */
async function openLoop(
  name: string,
  url: URL,
  rate: number,
  seconds: number,
  eventsPerRequest: number,
  makeRequest: (i: number) => { headers: Record<string, string>; body: Buffer },
  pid: number,
): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let peak = 0;
  const total = Math.round(rate * seconds);
  const start = performance.now() + 50;
  const inflight: Promise<void>[] = [];
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 100);
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const { headers, body } = makeRequest(i);
    inflight.push(
      new Promise<void>((resolve) => {
        const req = http.request(
          url,
          { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.byteLength) } },
          (res) => {
            res.resume();
            res.on('end', () => {
              latencies.push(performance.now() - due);
              if (res.statusCode === 200) ok++;
              else failed++;
              resolve();
            });
          },
        );
        req.on('error', () => {
          failed++;
          resolve();
        });
        req.end(body);
      }),
    );
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  clearInterval(sampler);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    name,
    targetRate: rate * eventsPerRequest,
    sent: total,
    ok,
    failed,
    eventsPerSecond: Math.round((ok * eventsPerRequest) / elapsed),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    peakRssMiB: Math.round(peak / 1048576),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
  chmodSync(dir, 0o755);
  const kafka = await startKafka({
    dataDir: join(dir, 'kafka'),
    settings: { 'message.max.bytes': '2097152' },
  });
  const admin = new Kafka({ brokers: [kafka.bootstrapServers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: TOPIC, numPartitions: 12, replicationFactor: 1 }],
  });
  await admin.disconnect();
  const port = await freePort();
  const service = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/main.ts'], {
    cwd: join(repo, 'services/ingest'),
    env: {
      ...process.env,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      BROKER_BOOTSTRAP_SERVERS: kafka.bootstrapServers,
      AUTH_ENABLED: 'false',
      OTEL_SDK_DISABLED: 'true',
      LOG_LEVEL: 'WARN',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/health/ready`)).status === 200) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  const pid = service.pid!;
  const payload1k = Buffer.alloc(1024, 0x61);
  const single = (i: number) => ({
    headers: {
      'ce-specversion': '1.0',
      'ce-id': `e-${i}-${Math.random()}`,
      'ce-source': `https://bench.example/src/${i % 64}`,
      'ce-type': 'bench.reading',
      'ce-time': new Date().toISOString(),
      'content-type': 'application/octet-stream',
    },
    body: payload1k,
  });
  const element = (i: number, j: number) =>
    JSON.stringify({
      specversion: '1.0',
      id: `b-${i}-${j}-${Math.random()}`,
      source: `https://bench.example/src/${j % 64}`,
      type: 'bench.reading',
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      data: { v: 'x'.repeat(900) },
    });
  const batch = (i: number) => ({
    headers: { 'content-type': 'application/cloudevents-batch+json' },
    body: Buffer.from(`[${Array.from({ length: 100 }, (_, j) => element(i, j)).join(',')}]`),
  });
  const results: Result[] = [];
  const url = new URL(`${base}/v1/events`);
  const batchUrl = new URL(`${base}/v1/events:batchCreate`);
  // warm-up
  await openLoop('warm-up', url, 1000, 3, 1, single, pid);
  for (const rate of [5000, 7500, 10000]) {
    results.push(await openLoop(`single 1 KiB binary @ ${rate}/s`, url, rate, SECONDS, 1, single, pid));
  }
  for (const rate of [300, 500, 700]) {
    results.push(await openLoop(`batch of 100 @ ${rate} req/s`, batchUrl, rate, SECONDS, 100, batch, pid));
  }
  // 64 concurrent 1 MiB uploads
  const big = Buffer.alloc(1_048_576, 0x62);
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 20);
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: 64 }, async (_, i) => {
      const r = await fetch(`${base}/v1/events`, { method: 'POST', headers: single(i).headers, body: big });
      await r.arrayBuffer();
      return r.status;
    }),
  );
  clearInterval(sampler);
  const bigMs = performance.now() - started;
  const hwm = hwmOf(pid);
  service.kill('SIGTERM');
  await new Promise((r) => service.once('exit', r));
  await kafka.stop();
  rmSync(dir, { recursive: true, force: true });

  const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
  const lines = [
    '# Ingest benchmark',
    '',
    `Generated by \`(cd bench/ingest && npm run bench)\` on ${new Date().toISOString()} (${SECONDS}s per step, Node ${process.version}).`,
    'Open loop: requests are scheduled at a fixed arrival rate and latency counts from the scheduled time.',
    'One Kafka 3.9 broker (KRaft, local), 12 partitions, acks=all, idempotent producer; service with AUTH_ENABLED=false, tracing off.',
    'Load generator, service and broker share the same 2-core machine.',
    '',
    '| scenario | offered events/s | requests | 200 | failed | achieved events/s | p50 ms | p99 ms | service peak RSS MiB |',
    '|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.targetRate} | ${r.sent} | ${r.ok} | ${r.failed} | ${r.eventsPerSecond} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.peakRssMiB} |`,
    ),
    '',
    `64 concurrent 1 MiB uploads: statuses ${JSON.stringify(countBy(statuses))}, ${bigMs.toFixed(0)} ms, peak RSS during the burst ${Math.round(peak / 1048576)} MiB, process high-water mark ${Math.round(hwm / 1048576)} MiB.`,
    '',
  ];
  const out = join(repo, 'bench/results/ingest.md');
  writeFileSync(out, lines.join('\n'));
  console.log(lines.join('\n'));
}

function countBy(values: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

await main();
