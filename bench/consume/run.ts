/**
 * Consumer throughput benchmark (issue 4): rows per second the consumer persists from a pre-filled
 * topic, next to a plain server-side `COPY` of the same rows into the same table as the ceiling,
 * and the consumer's peak resident memory (VmHWM) at the default batch size.
 *
 *   node --conditions=source --import tsx bench/consume/run.ts        # BENCH_RECORDS=200000 default
 *
 * Starts its own Kafka and PostgreSQL (devstack), runs the compiled consumer as a child process
 * (`services/consumer/dist/main.js` after `tsc -b`, default configuration, authentication off), and writes
 * `bench/results/consume.md`. Bounded: it stops by itself after BENCH_TIMEOUT_S (default 600).
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { deadLetterTopicSpec, ensureTopics, eventTopicSpec } from '@event-observatory/broker';
import { createDatabase, repoRoot, startStack, tempDataDir } from '@event-observatory/devstack';
import { type CloudEvent, toKafkaRecord } from '@event-observatory/events';
import { migrate } from '@event-observatory/store';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { decodeRecord, type EventRow } from '../../services/consumer/src/decode.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 600) * 1000;
const TOPIC = 'events.cloudevents.v1';
const root = repoRoot();

function event(i: number, now: number): CloudEvent {
  const device = `device-${i % 5000}`;
  return {
    specversion: '1.0',
    id: `bench-${i}`,
    source: `urn:bench:site-${i % 50}`,
    type: `com.example.bench.${['reading', 'alarm', 'heartbeat', 'status'][i % 4]}`,
    time: new Date(now - (i % 86_400) * 1000).toISOString(),
    subject: device,
    datacontenttype: 'application/json',
    extensions: i % 10 === 0 ? { severity: 'error', tags: 'bench,hot' } : { severity: 'info' },
    data: Buffer.from(
      JSON.stringify({
        deviceId: device,
        seq: i,
        temperature: 20 + (i % 100) / 10,
        humidity: 40 + (i % 37),
        message: `reading ${i} from ${device} in hall ${i % 12}`,
      }),
    ),
  };
}

/** One value in COPY text format. */
function copyValue(v: string | number | null): string {
  if (v === null) return '\\N';
  return String(v).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

const COLUMNS =
  'occurred_at, ce_source, ce_id, ce_type, ce_specversion, ce_subject, ce_datacontenttype, ce_dataschema, partition_key, raw, data, extensions, broker_topic, broker_partition, broker_offset, device_id, tags';

/** A text[] literal of the writer's U+001F-joined tags. */
function arrayLiteral(joined: string): string {
  if (joined === '') return '{}';
  return `{${joined
    .split('\u001f')
    .map((t) => `"${t.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)
    .join(',')}}`;
}

function copyLine(r: EventRow): string {
  return [
    r.occurredAt,
    r.source,
    r.id,
    r.type,
    r.specversion,
    r.subject,
    r.datacontenttype,
    r.dataschema,
    r.partitionKey,
    r.raw,
    r.data,
    r.extensions,
    r.topic,
    r.partition,
    r.offset,
    r.deviceId,
    arrayLiteral(r.tags),
  ]
    .map(copyValue)
    .join('\t');
}

async function main() {
  const dir = tempDataDir('bench-consume-');
  const deadline = setTimeout(() => {
    console.error(`benchmark exceeded ${TIMEOUT_MS / 1000}s; giving up`);
    process.exit(2);
  }, TIMEOUT_MS);
  deadline.unref();
  const stack = await startStack({ dataDir: dir, topics: [] });
  let child: ReturnType<typeof spawn> | undefined;
  try {
    const databaseUrl = await createDatabase(stack.databaseUrl, 'bench_consume');
    await migrate({ url: databaseUrl });
    const kafka = new Kafka({
      clientId: 'bench',
      brokers: [stack.bootstrapServers],
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [eventTopicSpec(TOPIC), deadLetterTopicSpec(`${TOPIC}.dlq`)]);

    // Pre-fill the topic.
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const now = Date.now();
    const fillStarted = Date.now();
    const chunk = 2_000;
    for (let i = 0; i < RECORDS; i += chunk) {
      const messages = [];
      for (let j = i; j < Math.min(RECORDS, i + chunk); j++) messages.push(toKafkaRecord(event(j, now)));
      await producer.send({ topic: TOPIC, acks: -1, messages });
    }
    await producer.disconnect();
    const fillSeconds = (Date.now() - fillStarted) / 1000;
    console.log(`pre-filled ${RECORDS} records in ${fillSeconds.toFixed(1)} s`);

    // The consumer as a child process, default batch settings.
    const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    // The compiled consumer (tsc -b), as a container runs it.
    execFileSync('npx', ['tsc', '-b', 'services/consumer'], { cwd: root, stdio: 'inherit' });
    child = spawn(process.execPath, [join(root, 'services/consumer/dist/main.js')], {
      cwd: root,
      env: {
        ...process.env,
        BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers,
        DATABASE_URL: databaseUrl,
        AUTH_ENABLED: 'false',
        HTTP_PORT: '0',
        OTEL_SDK_DISABLED: 'true',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const pid = child.pid!;
    let peakKb = 0;
    let cpuTicks = 0;
    const rss = () => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        cpuTicks = Number(fields[11]) + Number(fields[12]);
      } catch {
        // exited
      }
    };
    let firstAt = 0;
    let firstCount = 0;
    let doneAt = 0;
    for (;;) {
      rss();
      const { rows } = await db.query('SELECT count(*)::int AS n FROM events.cloud_event');
      const n = rows[0].n as number;
      if (n > 0 && firstAt === 0) {
        firstAt = Date.now();
        firstCount = n;
      }
      if (n >= RECORDS) {
        doneAt = Date.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    rss();
    const span = await db.query(
      'SELECT extract(epoch FROM max(ingested_at) - min(ingested_at))::float8 AS s FROM events.cloud_event',
    );
    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
    child = undefined;
    const consumerSeconds = (doneAt - firstAt) / 1000;
    const consumerRate = (RECORDS - firstCount) / consumerSeconds;
    const txSpan = span.rows[0].s as number;

    // The ceiling: a plain COPY of the same rows into the same (emptied) table.
    const file = join(dir, 'rows.copy');
    const lines: string[] = [];
    const partitions = await admin.fetchTopicOffsets(TOPIC);
    await admin.disconnect();
    for (let i = 0; i < RECORDS; i++) {
      const e = event(i, now);
      const rec = toKafkaRecord(e);
      const decoded = decodeRecord({
        topic: TOPIC,
        partition: i % partitions.length,
        offset: String(i),
        key: Buffer.from(rec.key),
        value: rec.value,
        headers: rec.headers,
        timestamp: String(now),
      });
      if (!decoded.ok) throw new Error(`bench event ${i} does not decode: ${decoded.detail}`);
      lines.push(copyLine(decoded.row));
    }
    writeFileSync(file, `${lines.join('\n')}\n`);
    chmodSync(file, 0o644);
    await db.query('TRUNCATE events.cloud_event');
    await db.query('CHECKPOINT');
    const copyStarted = process.hrtime.bigint();
    await db.query(`COPY events.cloud_event (${COLUMNS}) FROM '${file}'`);
    const copySeconds = Number(process.hrtime.bigint() - copyStarted) / 1e9;
    const copyRate = RECORDS / copySeconds;
    await db.end();

    const ratio = consumerRate / copyRate;
    const peakMiB = peakKb / 1024;
    const report = `# Consumer throughput (bench/consume)

Command: \`node --conditions=source --import tsx bench/consume/run.ts\` (BENCH_RECORDS=${RECORDS})

Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.version}.
Run: ${new Date().toISOString()}. Kafka 3.9 and PostgreSQL from devstack on the same machine; topic
\`${TOPIC}\` with 12 partitions pre-filled with ${RECORDS} binary-mode CloudEvents (~${Math.round(
      lines.reduce((s, l) => s + l.length, 0) / RECORDS,
    )} bytes a row); the consumer with its default configuration (batch 500, window 250 ms, write
pool 6) as a child process; every index of the migration in place.

| measure | value | target |
|---|---|---|
| consumer rows/s (first row to last) | ${Math.round(consumerRate).toLocaleString('en-US')} | >= 20,000 |
| consumer rows/s (by ingested_at span) | ${Math.round(RECORDS / txSpan).toLocaleString('en-US')} | |
| plain COPY rows/s (same rows, same table) | ${Math.round(copyRate).toLocaleString('en-US')} | ceiling |
| consumer / COPY | ${(ratio * 100).toFixed(0)} % | >= 50 % |
| consumer peak RSS (VmHWM) | ${peakMiB.toFixed(0)} MiB | <= 384 MiB |
| consumer CPU per 1,000 rows (user+system, boot included) | ${((cpuTicks / 100 / RECORDS) * 1000 * 1000).toFixed(0)} ms | |

Load average when the run ended: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')} (${cpus().length} cores); rates on a busy machine are lower bounds.

Pre-filling the topic took ${fillSeconds.toFixed(1)} s. The consumer ran compiled
(\`services/consumer/dist/main.js\`).
`;
    const out = join(root, 'bench/results/consume.md');
    writeFileSync(out, report);
    console.log(report);
  } finally {
    if (child) child.kill('SIGKILL');
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
