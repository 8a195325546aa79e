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

/** The newest 3.9 release on Maven Central (kafkajs 2.2.4 needs the 3.x protocol versions). */
export const KAFKA_VERSION = '3.9.2';
/** Versions matching what Kafka 3.9 itself is built with. */
const SLF4J_VERSION = '1.7.36';
const RELOAD4J_VERSION = '1.2.25';
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

export interface KafkaDistribution {
  version: string;
  /** Folder with every jar; the class path is `<libs>/*`. */
  libs: string;
  classPath: string;
}

function artifacts(version: string): Array<[group: string, artifact: string, version: string]> {
  return [
    ['org.apache.kafka', 'kafka_2.13', version],
    ['org.apache.kafka', 'kafka-tools', version], // ProducerPerformance for the benchmarks
    ['org.slf4j', 'slf4j-reload4j', SLF4J_VERSION],
    ['ch.qos.reload4j', 'reload4j', RELOAD4J_VERSION],
  ];
}

function pom(version: string): string {
  const deps = artifacts(version)
    .map(
      ([g, a, v]) =>
        `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version></dependency>`,
    )
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
  version = KAFKA_VERSION,
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
