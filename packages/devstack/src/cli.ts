#!/usr/bin/env node
/**
 * `devstack start [--dir .dev/stack] [--kafka-port 9092] [--postgres-port 5432] [--secured]`: starts
 * Kafka and PostgreSQL with the spec's topics, prints the connection settings as shell variables
 * (with `--secured`, also those of Kafka's SASL_SSL listener, as comments), and runs in the
 * foreground until Ctrl-C (or SIGTERM), then stops both.
 * `devstack fetch`: only resolves the Kafka jars into the cache (for CI warm-up).
 *
 * Run from the repository: `npm start -w @event-observatory/devstack`, or
 * `node --conditions=source --import tsx packages/devstack/src/cli.ts start --kafka-port 9092`.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureKafkaDistribution } from './kafka-dist.js';
import { securedClientEnv } from './kafka-secured.js';
import { repoRoot } from './paths.js';
import { startStack } from './stack.js';

const USAGE = `usage: devstack start [--dir DIR] [--kafka-port N] [--postgres-port N] [--secured]
       devstack fetch
  DIR defaults to <repo>/.dev/stack; ports default to free ports (also $KAFKA_PORT, $POSTGRES_PORT).
  --secured adds Kafka's SASL_SSL and SSL (mutual TLS) listeners (a fresh DIR: users are made at format time).`;

function port(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) {
    throw new Error(`${name}: not a TCP port: ${JSON.stringify(value)}`);
  }
  return n;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      'kafka-port': { type: 'string' },
      'postgres-port': { type: 'string' },
      secured: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  if (command === 'fetch') {
    const dist = await ensureKafkaDistribution(undefined, (line) => console.error(line));
    console.log(`Kafka ${dist.version}: ${dist.libs}`);
    return 0;
  }
  if (command !== 'start') {
    console.error(USAGE);
    return 2;
  }
  const stack = await startStack({
    dataDir: values.dir ?? join(repoRoot(), '.dev', 'stack'),
    kafkaPort: port(values['kafka-port'] ?? process.env.KAFKA_PORT, '--kafka-port'),
    postgresPort: port(values['postgres-port'] ?? process.env.POSTGRES_PORT, '--postgres-port'),
    ...(values.secured && { kafka: { secured: {} } }),
    log: (line) => console.error(line),
  });
  console.log(`BROKER_BOOTSTRAP_SERVERS=${stack.bootstrapServers}`);
  console.log(`DATABASE_URL=${stack.databaseUrl}`);
  if (stack.kafka.secured) {
    console.log('# the SASL_SSL listener instead:');
    for (const [k, v] of Object.entries(securedClientEnv(stack.kafka.secured, 'SASL_SSL')))
      console.log(`# ${k}=${v}`);
  }
  for (const t of stack.topics.topics)
    console.error(`topic ${t.name}: ${t.action}, ${t.partitions} partitions`);
  console.error(`logs: ${stack.kafka.logFile}, ${stack.postgres.logFile}; Ctrl-C stops both`);
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  console.error('stopping Kafka and PostgreSQL ...');
  await stack.stop();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
