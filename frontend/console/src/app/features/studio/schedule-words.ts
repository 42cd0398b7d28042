/** A template's cron schedule in words for the gallery, next to the expression itself. Pure. */

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const isNumber = (field: string) => /^\d+$/.test(field);
const pad = (n: number) => String(n).padStart(2, '0');

function dayNames(field: string): string | null {
  if (field === '1-5') return 'weekday';
  if (field === '0,6' || field === '6,0') return 'Saturday and Sunday';
  const days = field.split(',').map((part) => (isNumber(part) ? DAYS[Number(part) % 7] : undefined));
  if (days.some((day) => day === undefined)) return null;
  return days.length === 1 ? days[0]! : `${days.slice(0, -1).join(', ')} and ${days.at(-1)!}`;
}

function step(field: string): number | null {
  const match = /^\*\/(\d+)$/.exec(field);
  return match ? Number(match[1]) : null;
}

/**
 * "Every weekday at 09:00", "Every 15 minutes", "Started on demand" (no schedule). Expressions
 * it has no words for answer null: the page then shows only the expression.
 */
export function scheduleInWords(cron: string | null): string | null {
  if (cron === null || cron.trim() === '') return 'Started on demand';
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return null;
  const [minute, hour, dayOfMonth, month, dayOfWeek] = fields as [string, string, string, string, string];
  if (month !== '*') return null;

  const minutes = step(minute);
  if (minutes !== null && hour === '*' && dayOfMonth === '*' && dayOfWeek === '*') return minutes === 1 ? 'Every minute' : `Every ${minutes} minutes`;
  if (minute === '*' && hour === '*' && dayOfMonth === '*' && dayOfWeek === '*') return 'Every minute';
  if (!isNumber(minute)) return null;

  const hours = step(hour);
  if (hours !== null && dayOfMonth === '*' && dayOfWeek === '*') return `${hours === 1 ? 'Every hour' : `Every ${hours} hours`} at minute ${Number(minute)}`;
  if (hour === '*' && dayOfMonth === '*' && dayOfWeek === '*') return Number(minute) === 0 ? 'Every hour, on the hour' : `Every hour at minute ${Number(minute)}`;
  if (!isNumber(hour)) return null;

  const at = `at ${pad(Number(hour))}:${pad(Number(minute))}`;
  if (dayOfMonth === '*' && dayOfWeek === '*') return `Every day ${at}`;
  if (dayOfMonth === '*') {
    const days = dayNames(dayOfWeek);
    return days ? `Every ${days} ${at}` : null;
  }
  if (isNumber(dayOfMonth) && dayOfWeek === '*') return `On day ${Number(dayOfMonth)} of every month ${at}`;
  return null;
}
