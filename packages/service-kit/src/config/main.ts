import { ConfigError } from './schema.js';

/** What `runMain` and `fatal` need of the process; tests pass their own. */
export interface ProcessLike {
  stderr: { write(text: string): unknown };
  exit(code: number): never | undefined;
}

/**
 * Prints one line to stderr and exits with status 1. For a `ConfigError` the line is its message
 * (`HTTP_PORT: expected an integer ...`); for anything else it is the error's name and message.
 *
 * @example
 * ```ts
 * try { cfg = readConfig(process.env, schema); } catch (err) { fatal(err); }
 * ```
 */
export function fatal(err: unknown, proc: ProcessLike = process): never {
  proc.stderr.write(`${describeFatal(err)}\n`);
  proc.exit(1);
  throw err; // unreachable with the real process; keeps `never` honest with a test double
}

/** The single line `fatal` prints. */
export function describeFatal(err: unknown): string {
  if (err instanceof ConfigError) return `configuration error: ${err.message}`;
  if (err instanceof Error) return `${err.name}: ${err.message}`.replace(/\s*[\r\n]+\s*/g, ' ');
  return String(err).replace(/\s*[\r\n]+\s*/g, ' ');
}

/**
 * Runs a service's `main`, turning a start-up failure (a `ConfigError`, a refused port, ...) into
 * one line on stderr and exit status 1. It does not exit on success: the listener and the
 * shutdown hooks keep the process alive.
 *
 * @example
 * ```ts
 * // services/ingest/src/main.ts
 * runMain(async () => {
 *   const cfg = readConfig(process.env, schema);
 *   const server = await serveApp(buildApp(cfg), { host: cfg.host, port: cfg.port });
 *   installShutdown({ steps: [{ name: 'listener', run: server.close }], timeoutMs: 15_000, logger });
 * });
 * ```
 */
export function runMain(main: () => Promise<void> | void, proc: ProcessLike = process): Promise<void> {
  return Promise.resolve()
    .then(main)
    .catch((err: unknown) => {
      try {
        fatal(err, proc);
      } catch {
        // a test double's exit returned; the line has been written
      }
    });
}
