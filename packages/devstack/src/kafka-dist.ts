/**
 * Resolves the Apache Kafka broker jars from Maven Central with Maven into the cache:
 * `<cache>/kafka/<version>/libs/*.jar`, with Maven's own repository at `<cache>/m2`.
 * A stamp file makes a warm run skip Maven entirely; a cold run resolves into a temporary folder and
 * renames it into place, so an interrupted download never leaves a half-filled `libs/` behind.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from './paths.js';
import { runCommand } from './supervise.js';

/** The default broker: the newest 4.x release on Maven Central. */
export const KAFKA_VERSION = '4.4.0';
/** The newest 3.9 release: the broker-facing suites run on it too, so both majors stay tested. */
export const KAFKA_3_VERSION = '3.9.2';
/** Logging backends matching what each line is built with (the broker POMs bring none). */
const SLF4J_VERSION = '1.7.36';
const RELOAD4J_VERSION = '1.2.25';
const LOG4J2_VERSION = '2.25.5';
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

export interface KafkaDistribution {
  version: string;
  /** Folder with every jar; the class path is `<libs>/*`. */
  libs: string;
  classPath: string;
}

/**
 * The Kafka release to run: `OBSERVATORY_KAFKA_VERSION` when set, else {@link KAFKA_VERSION}. A bare
 * major (`3`, `4`) names the newest supported release of that line; `make test` sets `3` for the
 * second run of the broker-facing suites.
 */
export function kafkaVersion(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const wanted = env.OBSERVATORY_KAFKA_VERSION;
  if (!wanted) return KAFKA_VERSION;
  return ({ '3': KAFKA_3_VERSION, '4': KAFKA_VERSION } as Record<string, string>)[wanted] ?? wanted;
}

/** Kafka 4 logs with log4j2; 3.x with reload4j (log4j 1 syntax). */
export function usesLog4j2(version: string): boolean {
  return Number.parseInt(version, 10) >= 4;
}

type Artifact = [group: string, artifact: string, version: string, exclusions?: string[]];

function artifacts(version: string): Artifact[] {
  const logging: Artifact[] = usesLog4j2(version)
    ? [
        ['org.apache.logging.log4j', 'log4j-slf4j-impl', LOG4J2_VERSION],
        ['org.apache.logging.log4j', 'log4j-core', LOG4J2_VERSION],
      ]
    : [
        ['org.slf4j', 'slf4j-reload4j', SLF4J_VERSION],
        ['ch.qos.reload4j', 'reload4j', RELOAD4J_VERSION],
      ];
  return [
    ['org.apache.kafka', 'kafka_2.13', version],
    // ProducerPerformance for the benchmarks. Kafka 4's kafka-tools also pulls Kafka Connect, whose
    // Jetty (jetty-ee10-servlets 12.0.39 for 4.4.0) is missing from Maven Central; no broker or
    // ProducerPerformance class needs it.
    usesLog4j2(version)
      ? ['org.apache.kafka', 'kafka-tools', version, ['org.apache.kafka:connect-runtime']]
      : ['org.apache.kafka', 'kafka-tools', version],
    ...logging,
  ];
}

function pom(version: string): string {
  const deps = artifacts(version)
    .map(([g, a, v, exclusions]) => {
      const excluded = (exclusions ?? [])
        .map((e) => e.split(':'))
        .map(([eg, ea]) => `<exclusion><groupId>${eg}</groupId><artifactId>${ea}</artifactId></exclusion>`)
        .join('');
      const tail = excluded ? `<exclusions>${excluded}</exclusions>` : '';
      return `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version>${tail}</dependency>`;
    })
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.event-observatory</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>${version}</version>
  <packaging>pom</packaging>
  <dependencies>
${deps}
  </dependencies>
</project>
`;
}

/**
 * Returns the Kafka class path, resolving it with Maven on the first call for a version.
 * `log` receives one line when Maven is called (cold cache).
 */
export async function ensureKafkaDistribution(
  version = kafkaVersion(),
  log: (line: string) => void = () => {},
): Promise<KafkaDistribution> {
  const root = join(cacheDir(), 'kafka', version);
  const libs = join(root, 'libs');
  const stampFile = join(libs, '.complete');
  const recipe = pom(version);
  const stamp = createHash('sha256').update(recipe).digest('hex');
  const result = { version, libs, classPath: `${libs}/*` };
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === stamp) return result;

  mkdirSync(root, { recursive: true });
  const work = join(root, `resolve-${process.pid}-${Date.now()}`);
  mkdirSync(work, { recursive: true });
  try {
    writeFileSync(join(work, 'pom.xml'), recipe);
    log(`devstack: resolving Apache Kafka ${version} from Maven Central into ${root} (first run only)`);
    await runCommand(
      'mvn',
      [
        '-B',
        '-q',
        `-Dmaven.repo.local=${join(cacheDir(), 'm2')}`,
        `${DEPENDENCY_PLUGIN}:copy-dependencies`,
        `-DoutputDirectory=${join(work, 'libs')}`,
        '-DincludeScope=runtime',
      ],
      { cwd: work, missingHint: 'install Maven (Debian: apt-get install maven)' },
    );
    writeFileSync(join(work, 'libs', '.complete'), `${stamp}\n`);
    // Another process may have finished first: then keep its copy.
    if (existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === stamp) return result;
    rmSync(libs, { recursive: true, force: true });
    renameSync(join(work, 'libs'), libs);
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
