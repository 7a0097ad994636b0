import { Cron } from 'croner';

// Cron expressions and time zones for triggers. The parsing and the calendar arithmetic are
// croner's (a maintained library with daylight-saving rules, never a parser of our own); this
// file only says which field of a bad expression is wrong and what it allows, and turns croner's
// answers into epoch milliseconds.
//
// Daylight saving (croner's rules, which follow Vixie cron): a job with one value in each of its
// seconds, minutes and hours (`30 2 * * *`) is a fixed-time job — in a repeated hour it fires once,
// at the first occurrence; in a skipped hour it fires once, at the first valid time after the jump.
// A job with a wildcard, step, range or list in those fields is an interval job: it fires at each
// real instant that matches (both passes of a repeated hour, none in a skipped one).

const FIELDS_5 = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;
const FIELDS_6 = ['second', ...FIELDS_5] as const;
const ALLOWS: Readonly<Record<string, string>> = {
  second: '0-59 and * , - /',
  minute: '0-59 and * , - /',
  hour: '0-23 and * , - /',
  'day of month': '1-31 and * , - / L W',
  month: '1-12 or JAN-DEC and * , - /',
  'day of week': '0-7 (0 and 7 are Sunday) or SUN-SAT and * , - / L #',
};

export const CRON_RULE = '5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first';

/** A cron expression in a zone, ready to answer fire times. */
export interface CronSchedule {
  /** The first fire times strictly after `after` (epoch ms), at most `count`. */
  next(after: number, count: number): number[];
  /** The newest fire times at or before `upto` (epoch ms), newest first, at most `count`. */
  previous(upto: number, count: number): number[];
}

function make(pattern: string, timezone: string): Cron {
  return new Cron(pattern, { timezone, paused: true, mode: '5-or-6-parts' });
}

/** The schedule, or what is wrong with the expression (which field, what it allows). */
export function parseCron(pattern: string, timezone = 'UTC'): { schedule: CronSchedule } | { problem: string } {
  const fields = pattern.trim().split(/\s+/);
  if (pattern.trim() === '' || (fields.length !== 5 && fields.length !== 6)) {
    return { problem: `cron expression '${pattern}' has ${pattern.trim() === '' ? 0 : fields.length} field(s); write ${CRON_RULE}` };
  }
  let cron: Cron;
  try {
    cron = make(pattern, timezone);
  } catch (error) {
    return { problem: locate(fields, error) };
  }
  return {
    schedule: {
      next(after, count) {
        return cron.nextRuns(count, new Date(after)).map((d) => d.getTime());
      },
      previous(upto, count) {
        return cron.previousRuns(count, new Date(upto + 1)).map((d) => d.getTime());
      },
    },
  };
}

/** Which field croner refused: each field alone, the others wildcards. */
function locate(fields: readonly string[], error: unknown): string {
  const names = fields.length === 6 ? FIELDS_6 : FIELDS_5;
  for (let i = 0; i < fields.length; i++) {
    const probe = fields.map((f, k) => (k === i ? f : '*')).join(' ');
    try {
      make(probe, 'UTC');
    } catch {
      const name = names[i]!;
      return `cron field ${i + 1} (${name}) '${fields[i]}' is not valid: it allows ${ALLOWS[name]}`;
    }
  }
  return `cron expression '${fields.join(' ')}' is not valid: ${error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error)}`;
}

let zones: ReadonlySet<string> | undefined;

/** Every IANA zone name this Node knows, plus UTC (which `supportedValuesOf` leaves out on some builds). */
export function timeZones(): ReadonlySet<string> {
  zones ??= new Set(['UTC', ...Intl.supportedValuesOf('timeZone')]);
  return zones;
}

export function isTimeZone(name: string): boolean {
  if (timeZones().has(name)) return true;
  // Aliases (Etc/UTC, US/Eastern) are accepted by Intl without being listed.
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return /^[A-Za-z]/.test(name); // not an offset such as +01:00: a zone has daylight-saving rules, an offset has none
  } catch {
    return false;
  }
}
