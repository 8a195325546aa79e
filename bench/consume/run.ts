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
import { createDatabase, freePort, repoRoot, startStack, tempDataDir } from '@event-observatory/devstack';
import { toKafkaRecord } from '@event-observatory/events';
import { migrate } from '@event-observatory/store';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { decodeRecord } from '../../services/consumer/src/decode.js';
import { COPY_COLUMNS as COLUMNS, copyLine, benchEvent as event } from './events.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 600) * 1000;
const TOPIC = 'events.cloudevents.v1';
const root = repoRoot();

async function main() {
  const loadAtStart = loadavg();
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
    const adminPort = await freePort();
    const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
    child = spawn(process.execPath, [...nodeArgs, join(root, 'services/consumer/dist/main.js')], {
      cwd: root,
      env: {
        ...process.env,
        BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers,
        DATABASE_URL: databaseUrl,
        AUTH_ENABLED: 'false',
        HTTP_PORT: String(adminPort),
        HTTP_HOST: '127.0.0.1',
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
      // Progress from the checkpoint rows (written in the same transaction as the events; offsets
      // start at 0 on every partition, so their sum counts the records stored). A count(*) of the
      // event table every 100 ms would scan it and compete with the writer being measured.
      const { rows } = await db.query(
        'SELECT coalesce(sum(next_offset), 0)::int AS n FROM events.consumer_checkpoint',
      );
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
    const stored = await db.query('SELECT count(*)::int AS n FROM events.cloud_event');
    if (stored.rows[0].n !== RECORDS) throw new Error(`expected ${RECORDS} rows, found ${stored.rows[0].n}`);
    const span = await db.query(
      'SELECT extract(epoch FROM max(ingested_at) - min(ingested_at))::float8 AS s FROM events.cloud_event',
    );
    // Where the consumer's time went, from its own meters.
    const exposition = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    const sumOf = (name: string) =>
      exposition
        .split('\n')
        .filter((l) => l.startsWith(name))
        .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    const groups = sumOf('consume_batch_size_count');
    const groupRecords = sumOf('consume_batch_size_sum');
    const writeSeconds = sumOf('consume_batch_latency_seconds_sum');
    const decodeSeconds = sumOf('consume_decode_duration_seconds_sum');
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

Command: \`flock /work/helpers/bench.lock node --conditions=source --import tsx bench/consume/run.ts\` (BENCH_RECORDS=${RECORDS})

Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.version}.
Run: ${new Date().toISOString()}. Kafka 3.9 and PostgreSQL from devstack on the same machine; topic
\`${TOPIC}\` with 12 partitions pre-filled with ${RECORDS} binary-mode CloudEvents (~${Math.round(
      lines.reduce((s, l) => s + l.length, 0) / RECORDS,
    )} bytes a row); the consumer with its default configuration (batch 500, window 250 ms, two
groups written at once, write pool 6) as a child process; every index of the migrations in place.
Run it alone on the machine: \`flock /work/helpers/bench.lock <command>\` where benchmarks share it.
History and analysis: [services/consumer/README.md](../../services/consumer/README.md#throughput).

| measure | value | target |
|---|---|---|
| consumer rows/s (first row to last) | ${Math.round(consumerRate).toLocaleString('en-US')} | >= 20,000 |
| consumer rows/s (by ingested_at span) | ${Math.round(RECORDS / txSpan).toLocaleString('en-US')} | |
| plain COPY rows/s (same rows, same table) | ${Math.round(copyRate).toLocaleString('en-US')} | ceiling |
| consumer / COPY | ${(ratio * 100).toFixed(0)} % | >= 50 % |
| consumer peak RSS (VmHWM) | ${peakMiB.toFixed(0)} MiB | <= 384 MiB |
| consumer CPU per 1,000 rows (user+system, boot included) | ${((cpuTicks / 100 / RECORDS) * 1000 * 1000).toFixed(0)} ms | |

Consumer meters: ${groups} groups, ${(groupRecords / groups).toFixed(0)} records a group on average; groups
being processed (decode of what was not decoded ahead, write, commit of rows and checkpoints),
summed over the groups in flight: ${writeSeconds.toFixed(1)} s in the ${consumerSeconds.toFixed(1)} s run (${((writeSeconds / consumerSeconds) * 100).toFixed(0)} %);
decoding ${decodeSeconds.toFixed(1)} s in all.

Load average when the run started: ${loadAtStart
      .map((l) => l.toFixed(1))
      .join(', ')}; when it ended: ${loadavg()
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
