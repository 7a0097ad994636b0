import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openStore, type StoreOptions } from '../../src/store/index.js';
import { REPO } from '../fixtures/store/spawn-child.js';

// Opening a store from its URL: what is accepted, what is refused and how, what is loaded.

const FORMS = 'expected memory:, sqlite:FILE, postgres://USER@HOST:PORT/DB[?schema=NAME] or redis://HOST:PORT[/DB][?prefix=P]';

describe('openStore', () => {
  it.each([
    ['mysql://localhost/db', "store 'mysql://localhost/db': unknown kind of store; " + FORMS],
    ['sqlte:runs.db', "store 'sqlte:runs.db': unknown kind of store (did you mean 'sqlite:'?); " + FORMS],
    ['runs.db', "store 'runs.db': unknown kind of store; " + FORMS],
    ['', "store '': unknown kind of store; " + FORMS],
    ['sqlite:', "store 'sqlite:': sqlite: needs a file name, as in sqlite:.toolchain/runs.db; " + FORMS],
    ['memory:x', "store 'memory:x': memory: takes nothing after the colon; " + FORMS],
    ['postgres://u:secret@[bad/db', "store 'postgres://u:***@[bad/db': not a valid URL; " + FORMS],
    ['postgres://u@h/db?schema=my-schema', "store 'postgres://u@h/db?schema=my-schema': ?schema= must be a plain identifier (letters, digits, _), got 'my-schema'; " + FORMS],
    ['redis://h?prefix=a&prefix=b', "store 'redis://h?prefix=a&prefix=b': ?prefix= given 2 times; " + FORMS],
    ['redis://h?prefix=', "store 'redis://h?prefix=': ?prefix= needs a value, as in ?prefix=myapp; " + FORMS],
  ])('refuses %j with STORE_URL', async (url, message) => {
    await expect(openStore(url)).rejects.toMatchObject({ code: 'STORE_URL', message });
  });

  it('refuses an unknown durability with USAGE', async () => {
    await expect(openStore('memory:', { durability: 'fast' } as unknown as StoreOptions)).rejects.toMatchObject({
      code: 'USAGE',
      message: `durability: expected 'none', 'normal' or 'full', got "fast"`,
    });
  });

  it('reports an unreachable PostgreSQL with STORE_UNAVAILABLE, without its password', async () => {
    const error = await openStore('postgres://postgres:secret@127.0.0.1:1/test').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect((error as Error).message).toMatch(/^postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/test: cannot open it: connect ECONNREFUSED 127\.0\.0\.1:1/);
  });

  it('reports a PostgreSQL database that does not exist with STORE_UNAVAILABLE', async () => {
    await expect(openStore('postgres://postgres@127.0.0.1:5432/no_such_database_here')).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringMatching(/cannot open it: database "no_such_database_here" does not exist/),
    });
  });

  it('reports an unreachable Redis with STORE_UNAVAILABLE, without its password', async () => {
    const error = await openStore('redis://:secret@127.0.0.1:1').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect((error as Error).message).toMatch(/^redis:\/\/:\*\*\*@127\.0\.0\.1:1: cannot open it: connect ECONNREFUSED 127\.0\.0\.1:1/);
  });

  it('loads a database library only for a store of its kind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolchain-lazy-'));
    const loaded = async (url: string): Promise<unknown> => {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'jiti/register', join(REPO, 'test/fixtures/store/loaded-drivers.ts'), url], { cwd: REPO });
      return JSON.parse(stdout);
    };
    try {
      const [memory, sqlite] = await Promise.all([loaded('memory:'), loaded(`sqlite:${join(dir, 'runs.db')}`)]);
      expect(memory).toEqual([]);
      expect(sqlite).toEqual(['better-sqlite3']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
