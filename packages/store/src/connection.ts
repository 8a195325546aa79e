/**
 * node-postgres settings for a database URL: the URL without its TLS parameters, and `ssl` built
 * from them with libpq's meaning (`databaseTls`). node-postgres reads `sslmode` its own way
 * (pg-connection-string 2.x takes `prefer`, `require` and `verify-ca` for `verify-full` unless
 * `uselibpqcompat=true`, and cannot fall back between plaintext and TLS), so it never sees them.
 *
 * `allow` and `prefer` need a choice libpq makes per connection: `prefer` asks the server whether
 * it speaks TLS (an SSLRequest), `allow` logs in without TLS and uses TLS only when the server
 * refuses that (SQLSTATE 28000, a `hostssl`-only pg_hba.conf). Each pool asks once and keeps the
 * answer until a connection fails, so a server that changed is asked again.
 *
 * libpq's `options` parameter (server settings for every session) is taken out of the URL too and
 * put before the caller's own settings (`sessionOptions`): node-postgres lets a URL's parameters
 * replace the caller's, so a URL carrying `options` would drop a pool's statement timeout and
 * read-only default. PostgreSQL applies the last of two settings of one name, so the caller's win.
 *
 * @example
 * const pool = new pg.Pool({ ...connectionConfig(url, '-c TimeZone=UTC'), max: 4 });
 */
import { connect as tcpConnect } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import { type DatabaseTls, databaseTls, TLS_PARAMETERS } from './config.js';

export interface ConnectionConfig {
  connectionString: string;
  ssl: false | ConnectionOptions;
  /** The URL's `options`, then the caller's; absent when neither has any. */
  options?: string;
  /** For `allow` and `prefer`: the client class that chooses TLS before it connects. */
  Client?: typeof pg.Client;
}

export function connectionConfig(url: string, sessionOptions = ''): ConnectionConfig {
  const tls = databaseTls(url);
  const stripped = new URL(url);
  for (const name of TLS_PARAMETERS) stripped.searchParams.delete(name);
  const options = [stripped.searchParams.get('options'), sessionOptions].filter(Boolean).join(' ');
  stripped.searchParams.delete('options');
  const connectionString = stripped.toString();
  const base = { connectionString, ...(options && { options }) };
  if (tls.mode === 'disable') return { ...base, ssl: false };
  const ssl = tlsOptions(tls);
  if (tls.mode !== 'allow' && tls.mode !== 'prefer') return { ...base, ssl };
  const ask =
    tls.mode === 'prefer' ? () => serverOffersTls(stripped) : () => serverRefusesPlaintext(connectionString);
  return { ...base, ssl: false, Client: choosingClient(ask, ssl) };
}

function tlsOptions(tls: DatabaseTls): ConnectionOptions {
  return {
    rejectUnauthorized: tls.verifyChain,
    ...(tls.ca !== undefined && { ca: tls.ca }),
    ...(tls.cert !== undefined && { cert: tls.cert, key: tls.key }),
    // verify-ca (and require with a root certificate): the chain, not the name.
    ...(!tls.verifyHost && { checkServerIdentity: () => undefined }),
  };
}

type Callback = (err: Error | null, client?: pg.Client) => void;
/** The internals of pg.Client that decide TLS; read when `connect()` starts. */
type TlsSwitch = { ssl: unknown; connection: { ssl: unknown } };

/** A pg.Client class that settles TLS with `ask` (once per class, again after a failure) before connecting. */
function choosingClient(ask: () => Promise<boolean>, ssl: ConnectionOptions): typeof pg.Client {
  let answer: Promise<boolean> | undefined;
  return class ChoosingClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: Callback): void;
    override connect(callback?: Callback): Promise<pg.Client> | undefined {
      answer ??= ask().catch(() => false);
      const settled = answer;
      const done = new Promise<pg.Client>((resolve, reject) => {
        settled.then((useTls) => {
          if (useTls) {
            const self = this as unknown as TlsSwitch;
            self.ssl = ssl;
            self.connection.ssl = ssl;
          }
          super.connect((err: Error | null) => {
            if (err) {
              answer = undefined; // ask again: the server may have changed
              reject(err);
            } else resolve(this);
          });
        }, reject);
      });
      if (!callback) return done;
      done.then(
        (c) => callback(null, c),
        (err: Error) => callback(err),
      );
      return undefined;
    }
  };
}

/** PostgreSQL's SSLRequest code: the server answers one byte, `S` (TLS) or `N`. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

function serverOffersTls(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(Number(url.port || 5432), url.hostname.replace(/^\[(.*)\]$/, '$1'));
    socket.setTimeout(10_000);
    const answer = (tls: boolean) => {
      socket.destroy();
      resolve(tls);
    };
    socket.once('connect', () => socket.write(SSL_REQUEST));
    socket.once('data', (b) => answer(b[0] === 0x53));
    // Unreachable: plaintext, and the real connection reports why.
    socket.once('error', () => answer(false));
    socket.once('timeout', () => answer(false));
  });
}

/** SQLSTATE 28000: no pg_hba.conf line admits this connection (e.g. `hostssl` only). */
async function serverRefusesPlaintext(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, ssl: false, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return false;
  } catch (err) {
    return (err as { code?: string }).code === '28000';
  } finally {
    await client.end().catch(() => {});
  }
}
