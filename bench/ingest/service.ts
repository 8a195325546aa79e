/**
 * The ingestion service as the benchmarks run it: a child process in its production form
 * (`node <start:prod flags> dist/main.js`, or from sources through tsx), its settings only from
 * here (never from the caller's shell), LOG_LEVEL info, tracing off.
 */
import { rmSync } from 'node:fs';
import { startServiceProcess, tempDataDir } from '@event-observatory/devstack';

export interface ServiceOptions {
  /** The service's folder (default services/ingest of this checkout). */
  dir?: string;
  bootstrapServers: string;
  nodeArgs: string[];
  fromSource?: boolean;
  /** HS256 secret; undefined runs with AUTH_ENABLED=false. */
  authSecret?: string | undefined;
  env?: Record<string, string>;
}

export interface RunningService {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the service (devstack's `startServiceProcess`) and resolves once /health/ready answers 200 (50 s at most). */
export async function startIngestService(o: ServiceOptions): Promise<RunningService> {
  const dataDir = tempDataDir('bench-ingest-service');
  const service = await startServiceProcess({
    name: 'ingest',
    dir: o.dir,
    build: o.fromSource ? 'source' : 'dist',
    nodeArgs: o.nodeArgs,
    dataDir,
    baseEnv: Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^(BROKER_|KAFKA_|INGEST_|AUTH_|OTEL_)/.test(k)),
    ),
    env: {
      BROKER_BOOTSTRAP_SERVERS: o.bootstrapServers,
      AUTH_ENABLED: o.authSecret ? 'true' : 'false',
      ...(o.authSecret ? { AUTH_SECRET: o.authSecret } : {}),
      OTEL_SDK_DISABLED: 'true',
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
      ...o.env,
    },
  });
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${service.url}/health/ready`)).status === 200) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    port: service.port,
    pid: service.pid()!,
    stop: async () => {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
