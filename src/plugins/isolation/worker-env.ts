// The environment of an isolated plugin's workers: the variables its manifest lists (`env:`, the
// same names its handlers get in ctx.env) and the few a Node program needs to run at all, nothing
// else. Without this a child process inherited every variable of the engine (model API keys, the
// serve token) and a worker thread shared the engine's process.env. Read once, when a worker
// starts; ctx.env is read at each call, so that is where a changed value shows.

/**
 * What any Node program may need: where programs are (PATH, for a handler that starts one), the
 * user's home and temporary folders, the locale and time zone, the certificates TLS trusts, and
 * Windows' system folders.
 */
export const NODE_ESSENTIALS: readonly string[] = Object.freeze([
  'PATH',
  'HOME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'SystemRoot',
  'windir',
]);

export function workerEnvironment(listed: readonly string[], source: Readonly<Record<string, string | undefined>>): Readonly<Record<string, string>> {
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of [...NODE_ESSENTIALS, ...listed]) {
    const value = source[name];
    if (typeof value === 'string') env[name] = value;
  }
  return Object.freeze({ ...env });
}
