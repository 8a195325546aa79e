/**
 * What kafkajs allocates and spends to encode one produce request, with the project's patch
 * sharing large pieces (`patches/kafkajs+2.2.4.patch`) and with that sharing turned off (kafkajs'
 * copying), in the same run: requests as the service sends them (idempotent, acks=all, no
 * compression, its records of the bench's binary event) of 1, 100 and 500 events of 1 KiB, and
 * one of 1 MB.
 * Encoding only, no broker: the CPU is the client's own share of the hot path.
 *
 *   node --conditions=source --import tsx bench/kafkajs/encode.ts
 *
 * Writes its section of bench/results/latest.md (part of `make bench`).
 */
import {
  encodeProduceRequest as encode,
  KafkajsEncoder,
  withCopyingEncoder,
} from '@event-observatory/broker/kafkajs-encoding';
import { decodeHttpEvent, toKafkaRecord } from '@event-observatory/events';
import type { Message } from 'kafkajs';
import { singleEventHeaders } from '../ingest/shapes.js';
import { benchRun } from '../lib/report.js';

const run = benchRun('kafkajs-encode');
const SHAPES = [
  { records: 1, bytes: 1024, rounds: 20_000 },
  { records: 100, bytes: 1024, rounds: 1_000 },
  { records: 500, bytes: 1024, rounds: 200 },
  { records: 1, bytes: 1_000_000, rounds: 200 },
];

/** Records as the service makes them (`toKafkaRecord`) of the bench's binary events. */
function messages(count: number, bytes: number) {
  const payload = Buffer.alloc(bytes, 0x61);
  return Array.from({ length: count }, (_, i) =>
    toKafkaRecord(decodeHttpEvent(singleEventHeaders(i), payload).event),
  );
}

/** Bytes that Buffer.allocUnsafe (kafkajs' only allocator) hands out while `work` runs. */
async function allocatedBy(work: () => Promise<unknown>): Promise<number> {
  const allocUnsafe = Buffer.allocUnsafe;
  let bytes = 0;
  Buffer.allocUnsafe = (size: number) => {
    bytes += size;
    return allocUnsafe(size);
  };
  try {
    await work();
  } finally {
    Buffer.allocUnsafe = allocUnsafe;
  }
  return bytes;
}

async function cpuMicrosPerRecord(batch: Message[], rounds: number): Promise<number> {
  for (let i = 0; i < rounds / 5; i++) await encode(batch);
  const start = process.cpuUsage();
  for (let i = 0; i < rounds; i++) await encode(batch);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / rounds / batch.length;
}

/** Allocation and CPU of encoding `batch`, with kafkajs' copying or the patch's sharing. */
async function measure(batch: Message[], rounds: number, sharing: boolean) {
  const run = async () => ({
    sharing,
    allocated: await allocatedBy(() => encode(batch)),
    cpu: await cpuMicrosPerRecord(batch, rounds),
  });
  return sharing ? run() : withCopyingEncoder(run);
}

const rows: string[] = [];
for (const shape of SHAPES) {
  const batch = messages(shape.records, shape.bytes);
  const size = (await encode(batch)).size();
  const figures: Awaited<ReturnType<typeof measure>>[] = [];
  // Alternating, twice each, so drift on a noisy machine falls on both.
  for (const sharing of [true, false, true, false]) figures.push(await measure(batch, shape.rounds, sharing));
  const of = (sharing: boolean) => figures.filter((f) => f.sharing === sharing);
  const cpu = (sharing: boolean) =>
    of(sharing)
      .map((f) => f.cpu.toFixed(1))
      .join(', ');
  const alloc = (sharing: boolean) => (of(sharing)[0]!.allocated / size).toFixed(2);
  rows.push(
    `| ${shape.records} x ${shape.bytes} B | ${size} | ${alloc(false)}x | ${alloc(true)}x | ${cpu(false)} | ${cpu(true)} |`,
  );
}

run.write(`# kafkajs: encoding one produce request (bench/kafkajs)

Bytes allocated while encoding, as a multiple of the request's size, and CPU an encoded record
(two alternating runs each), with the patch's sharing of pieces of ${KafkajsEncoder.SHARE_BYTES} bytes or more
off (kafkajs' copying) and on. The rest of the patch (in-place varints, no zero-filling, records
sized up front, headers written into the record) is in both columns.

| records | request bytes | allocated, copying | allocated, sharing | µs a record, copying | µs a record, sharing |
| --- | --- | --- | --- | --- | --- |
${rows.join('\n')}
`);
