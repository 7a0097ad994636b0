import { toolError } from '../lib/tool-context.js';

// local_time: the wall-clock time in an IANA zone, through Intl (no network, no tz database of
// our own). `at` picks the instant (default: now), which makes answers reproducible.

interface Args {
  readonly timezone: string;
  readonly hour12?: boolean;
  /** An ISO 8601 timestamp; default now. */
  readonly at?: string;
}

export interface LocalTime {
  /** The zone's canonical name as Intl knows it ("Asia/Tokyo", "UTC"). */
  readonly timezone: string;
  /** "14:05", or "2:05 PM" with hour12. */
  readonly time: string;
  /** "2025-03-04". */
  readonly date: string;
  readonly weekday: string;
  /** Local time with its offset: "2025-03-04T14:05:09+09:00". */
  readonly iso: string;
  /** "+09:00", "-03:30", "+00:00". */
  readonly utc_offset: string;
}

export default async function localTime(args: Args): Promise<LocalTime> {
  const zone = typeof args.timezone === 'string' ? args.timezone.trim() : '';
  let format: Intl.DateTimeFormat;
  try {
    if (zone === '') throw new RangeError('empty');
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
    });
  } catch {
    throw toolError('BAD_TIMEZONE', `"${zone}" is not an IANA time zone; use a name such as "Europe/Paris", "Asia/Tokyo" or "UTC"`);
  }
  const instant = args.at === undefined ? new Date() : new Date(args.at);
  if (Number.isNaN(instant.getTime())) throw toolError('BAD_TIMESTAMP', `"${args.at}" is not an ISO 8601 timestamp such as "2025-03-04T05:05:00Z"`);
  instant.setUTCMilliseconds(0);
  const parts: Record<string, string> = {};
  for (const p of format.formatToParts(instant)) parts[p.type] = p.value;
  const [year, month, day, hour, minute, second] = ['year', 'month', 'day', 'hour', 'minute', 'second'].map((k) => Number(parts[k]));
  const wall = Date.UTC(year!, month! - 1, day!, hour!, minute!, second!);
  const offset = Math.round((wall - instant.getTime()) / 60_000);
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  const clock = `${parts.hour}:${parts.minute}`;
  const utc_offset = `${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return {
    timezone: format.resolvedOptions().timeZone,
    time: args.hour12 ? twelveHour(hour!, parts.minute ?? '00') : clock,
    date,
    weekday: parts.weekday ?? '',
    iso: `${date}T${clock}:${parts.second}${utc_offset}`,
    utc_offset,
  };
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function twelveHour(hour: number, minute: string): string {
  return `${hour % 12 === 0 ? 12 : hour % 12}:${minute} ${hour < 12 ? 'AM' : 'PM'}`;
}
