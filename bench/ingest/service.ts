/**
 * The ingestion service as the benchmarks run it: a child process in its production form
 * (`node <start:prod flags> dist/main.js`, or from sources through tsx), its settings only from
 * here (never from the caller's shell), LOG_LEVEL info, tracing off.
 */
import { spawn } from 'node:child_process';
import { freePort } from '@event-observatory/devstack';

export interface ServiceOptions {
  serviceDir: string;
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

/** Starts the service and resolves once /health/ready answers 200 (50 s at most). */
export async function startIngestService(o: ServiceOptions): Promise<RunningService> {
  const port = await freePort();
  const entry = o.fromSource ? ['--conditions=source', '--import', 'tsx', 'src/main.ts'] : ['dist/main.js'];
  const service = spawn(process.execPath, [...o.nodeArgs, ...entry], {
    cwd: o.serviceDir,
    env: {
      ...Object.fromEntries(
        Object.entries(process.env).filter(([k]) => !/^(BROKER_|KAFKA_|INGEST_|AUTH_|OTEL_)/.test(k)),
      ),
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      BROKER_BOOTSTRAP_SERVERS: o.bootstrapServers,
      AUTH_ENABLED: o.authSecret ? 'true' : 'false',
      ...(o.authSecret ? { AUTH_SECRET: o.authSecret } : {}),
      OTEL_SDK_DISABLED: 'true',
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
      ...o.env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((r) => service.once('exit', r));
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    port,
    pid: service.pid!,
    stop: async () => {
      service.kill('SIGTERM');
      await exited;
    },
  };
}
