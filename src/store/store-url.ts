import { ToolchainError } from '../common/errors.js';

// Store URLs in messages: the accepted forms, and never a password.

export const STORE_URL_FORMS = 'memory:, sqlite:FILE, postgres://USER@HOST:PORT/DB[?schema=NAME] or redis://HOST:PORT[/DB][?prefix=P]';

export function badUrl(url: string, why: string): ToolchainError {
  return new ToolchainError('STORE_URL', `store '${redact(url)}': ${why}; expected ${STORE_URL_FORMS}`);
}

/** A URL without its password, for messages and RunStore.url. */
export function redact(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return String(url).replace(/\/\/([^/@:]*):[^/@]*@/, '//$1:***@');
  }
  if (parsed.password === '') return parsed.href;
  const copy = new URL(parsed.href);
  copy.password = '***';
  return copy.href;
}

/** Takes one option out of a URL's query (the rest go to the driver's library), refusing duplicates. */
export function takeOption(url: URL, name: string, display: string): string | undefined {
  const values = url.searchParams.getAll(name);
  if (values.length > 1) throw badUrl(display, `?${name}= given ${values.length} times`);
  url.searchParams.delete(name);
  return values[0];
}
