import { connect } from 'node:net';
import pg from 'pg';

// The two services the suite needs running on this machine (the README's Quick start names them):
// PostgreSQL (trust auth, database `test`, user postgres) and Redis. TOOLCHAIN_TEST_POSTGRES and
// TOOLCHAIN_TEST_REDIS name others. The global setup (test/global-setup.ts) asks both before any
// test runs, so that a missing one is one line, not hundreds of failures and hook timeouts.

export const POSTGRES_URL = process.env.TOOLCHAIN_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TOOLCHAIN_TEST_REDIS ?? 'redis://127.0.0.1:6379';

const WAIT_MS = 3_000;

/** Undefined when Redis answers PING; otherwise why not. */
function askRedis(url: string): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) }, () => socket.write('PING\r\n'));
    let got = '';
    const done = (why: string | undefined): void => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(WAIT_MS, () => done(`no answer within ${WAIT_MS / 1000} s`));
    socket.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    socket.on('data', (data: Buffer) => {
      got += data.toString();
      if (got.includes('\r\n')) done(got.startsWith('+PONG') ? undefined : got.trim());
    });
    socket.on('close', () => done('it closed the connection'));
  });
}

/** Undefined when PostgreSQL opens a session and answers a query; otherwise why not. */
async function askPostgres(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: WAIT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** One line per service that does not answer. */
export async function missingServices(): Promise<string[]> {
  const [postgres, redis] = await Promise.all([askPostgres(POSTGRES_URL), askRedis(REDIS_URL)]);
  const lines: string[] = [];
  if (postgres !== undefined) lines.push(`the tests need PostgreSQL at ${POSTGRES_URL} (trust auth, database test), which does not answer (${postgres}): start it, or name another with TOOLCHAIN_TEST_POSTGRES`);
  if (redis !== undefined) lines.push(`the tests need Redis at ${REDIS_URL}, which does not answer (${redis}): start redis-server, or name another with TOOLCHAIN_TEST_REDIS`);
  return lines;
}
