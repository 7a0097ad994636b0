import { userInfo } from 'node:os';

// Who is at the command line, for the records that keep a person's name (an approval's decision,
// a trigger's pause) when no --by names them.

export function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
