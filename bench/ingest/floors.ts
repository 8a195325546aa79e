/**
 * The parts the ingest service cannot do without, alone: a plain `node:http` server answering the
 * same requests (noop-server.ts), and the Kafka client sending the service's records with its
 * producer guarantees (idempotent, one request in flight, acks=all, no compression). Used by
 * floor.ts (the parts alone) and bench/hotpath (the service against the sum of its floors).
 */
import { fork } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_TOPIC, eventTopicSpec } from '@event-observatory/broker';
import {
  ensureStackTopics,
  freePort,
  type KafkaHandle,
  rawProducer,
  startKafka,
  tempDataDir,
} from '@event-observatory/devstack';
import { decodeHttpEvent, toKafkaRecord } from '@event-observatory/events';
import { CompressionTypes } from 'kafkajs';
import { cpuSeconds } from '../lib/proc.js';
import { SINGLE_PAYLOAD, singleEventHeaders } from './shapes.js';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * A broker of the floors' own (the service's 2 MiB message limit) with the event topic, in a
 * temporary folder removed by `stop`; `secured` adds devstack's SASL_SSL and SSL listeners.
 */
export async function startFloorBroker(
  label: string,
  opts: { secured?: boolean } = {},
): Promise<{ kafka: KafkaHandle; stop(): Promise<void> }> {
  const dir = tempDataDir(label);
  const kafka = await startKafka({
    dataDir: join(dir, 'kafka'),
    settings: { 'message.max.bytes': '2097152' },
    ...(opts.secured && { secured: {} }),
  });
  await ensureStackTopics(kafka.bootstrapServers, [eventTopicSpec(EVENT_TOPIC)]);
  return {
    kafka,
    stop: async () => {
      await kafka.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What the refusal floor answers every request with (the service's 503, built by the caller). */
export interface FloorRefusal {
  headers: Record<string, string>;
  body: string;
}

/**
 * Starts noop-server.ts on a free port with `nodeArgs` (the service's, to compare like with like);
 * with `refusal` it is the refusal floor. Resolves once it listens, rejects if it exits first.
 */
export async function startHttpFloor(
  opts: { refusal?: FloorRefusal; nodeArgs?: string[] } = {},
): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const server = fork(join(here, 'noop-server.ts'), [String(port)], {
    execArgv: [...(opts.nodeArgs ?? []), '--import', 'tsx'],
    env: { ...process.env, ...(opts.refusal && { NOOP_REFUSAL: JSON.stringify(opts.refusal) }) },
    stdio: 'inherit',
  });
  const exited = new Promise<number | null>((r) => server.once('exit', r));
  await Promise.race([
    new Promise((resolve) => server.once('message', resolve)),
    exited.then((code) => Promise.reject(new Error(`noop-server exited (${code}) before it listened`))),
  ]);
  return {
    port,
    pid: server.pid!,
    stop: async () => {
      server.kill('SIGTERM');
      await exited;
    },
  };
}

export interface ProduceResult {
  /** What decided the send size: `N per send` (`, R sends/s` when paced), or `<rate>/s, linger <ms> ms` (the service's rule). */
  mode: string;
  records: number;
  sends: number;
  recordsPerSecond: number;
  cpuMicrosPerRecord: number;
  producerCores: number;
  brokerCores: number;
}

export type ProducePacing =
  /**
   * `sendSize` records a send, as fast as one process sends them, or `perSecond` sends a second
   * when it is above 0 (as batches of that size arriving at that rate are sent).
   */
  | { sendSize: number; perSecond?: number }
  /**
   * Records arriving at `rate`/s, sent as the service's sender does: wait `lingerMs` from the
   * oldest waiting record, then send all that arrived up to `maxBatchBytes`, one send at a time.
   */
  | { rate: number; lingerMs: number; maxBatchBytes: number };

/** The records the service makes of the bench's single 1 KiB event, a fresh id and source each. */
function serviceRecord(i: number) {
  return toKafkaRecord(decodeHttpEvent(singleEventHeaders(i), SINGLE_PAYLOAD).event);
}

/** A record's bytes as the service's queue counts them (key, value, header names and values). */
const RECORD_BYTES = (() => {
  const r = serviceRecord(0);
  let size = r.key.length + (r.value?.byteLength ?? 0);
  for (const [k, v] of Object.entries(r.headers ?? {})) size += k.length + String(v).length;
  return size;
})();

/**
 * Measures this process's CPU per record while producing to `bootstrapServers` for `seconds`
 * (after 2 s of warm-up), with the service's producer guarantees.
 */
export async function produceFloor(
  bootstrapServers: string,
  brokerPid: number | undefined,
  pacing: ProducePacing,
  seconds: number,
): Promise<ProduceResult> {
  const producer = await connectProducer(bootstrapServers);
  let n = 0;
  const send = (count: number) => producer.send(Array.from({ length: count }, () => serviceRecord(n++)));
  const run = async (runSeconds: number): Promise<ProduceResult> => {
    const started = performance.now();
    const cpu0 = process.cpuUsage();
    const broker0 = cpuSeconds(brokerPid);
    let records = 0;
    let sends = 0;
    while (performance.now() - started < runSeconds * 1000) {
      let count: number;
      if ('sendSize' in pacing) {
        count = pacing.sendSize;
        if (pacing.perSecond) {
          const wait = started + (sends * 1000) / pacing.perSecond - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
      } else {
        const oldest = started + (records * 1000) / pacing.rate;
        const wait = oldest + pacing.lingerMs - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const arrived = Math.floor(((performance.now() - started) * pacing.rate) / 1000) - records;
        count = Math.min(arrived, Math.max(1, Math.floor(pacing.maxBatchBytes / RECORD_BYTES)));
        if (count <= 0) continue;
      }
      await send(count);
      records += count;
      sends += 1;
    }
    const elapsed = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      mode:
        'sendSize' in pacing
          ? `${pacing.sendSize} per send${pacing.perSecond ? `, ${pacing.perSecond} sends/s` : ''}`
          : `${pacing.rate}/s, linger ${pacing.lingerMs} ms`,
      records,
      sends,
      recordsPerSecond: Math.round(records / elapsed),
      cpuMicrosPerRecord: Math.round((cpu.user + cpu.system) / records),
      producerCores: (cpu.user + cpu.system) / 1e6 / elapsed,
      brokerCores: (cpuSeconds(brokerPid) - broker0) / elapsed,
    };
  };
  try {
    await run(2);
    return await run(seconds);
  } finally {
    await producer.close();
  }
}

interface FloorProducer {
  send(records: ReturnType<typeof serviceRecord>[]): Promise<unknown>;
  close(): Promise<void>;
}

/** kafkajs with the service's guarantees: idempotent, acks=all, no compression, one topic. */
async function connectProducer(bootstrapServers: string): Promise<FloorProducer> {
  const producer = await rawProducer(bootstrapServers, { idempotent: true, maxInFlightRequests: 1 });
  return {
    send: (messages) =>
      producer.send({ topic: EVENT_TOPIC, acks: -1, compression: CompressionTypes.None, messages }),
    close: () => producer.disconnect(),
  };
}
