const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** The hour and minute a description names ("at 8", "at 4:30 pm", "at 16:00"), or null. */
function timeOf(prompt: string): { hour: number; minute: number } | null {
  const match = /\bat (\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?/i.exec(prompt);
  if (!match) return null;
  let hour = Number(match[1]);
  const minute = match[2] ? Number(match[2]) : 0;
  const half = match[3]?.toLowerCase().startsWith('p') ? 'pm' : match[3] ? 'am' : null;
  if (half === 'pm' && hour < 12) hour += 12;
  if (half === 'am' && hour === 12) hour = 0;
  if (hour > 23 || minute > 59) return null;
  return { hour, minute };
}

/**
 * The cron expression a plain-words schedule stands for ("every 15 minutes", "hourly", "every
 * weekday at 8", "every friday at 4 pm", "daily at 7:30", "weekly"), or null when the
 * description names none. Nine in the morning when a day is named without a time.
 */
export function cronFromWords(prompt: string): string | null {
  const text = prompt.toLowerCase();
  const minutes = /\bevery (\d{1,2}) ?(?:minutes|mins?)\b/.exec(text);
  if (minutes) {
    const n = Number(minutes[1]);
    if (n >= 1 && n <= 59) return n === 1 ? '* * * * *' : `*/${n} * * * *`;
  }
  if (/\bevery minute\b/.test(text)) return '* * * * *';
  const hours = /\bevery (\d{1,2}) ?hours?\b/.exec(text);
  if (hours && Number(hours[1]) >= 1 && Number(hours[1]) <= 23) return `0 */${Number(hours[1])} * * *`;
  if (/\b(hourly|every hour)\b/.test(text)) return '0 * * * *';
  const at = timeOf(text) ?? { hour: 9, minute: 0 };
  const time = `${at.minute} ${at.hour}`;
  if (/\b(weekdays?|every weekday|business days?|working days?|monday (?:to|through|-) friday)\b/.test(text)) return `${time} * * 1-5`;
  const day = DAYS.findIndex((name) => new RegExp(`\\b(every|each|on) ${name}s?\\b|\\b${name}s\\b`).test(text));
  if (day >= 0) return `${time} * * ${day}`;
  if (/\b(daily|every day|each day|every morning|each morning|every evening|nightly|every night)\b/.test(text)) {
    if (timeOf(text)) return `${time} * * *`;
    if (/\b(evening|nightly|night)\b/.test(text)) return '0 18 * * *';
    return '0 9 * * *';
  }
  if (/\b(weekly|every week|once a week)\b/.test(text)) return `${time} * * 1`;
  if (/\b(monthly|every month|once a month)\b/.test(text)) return `${time} 1 * *`;
  return null;
}

/** Whether a description says the worker is started by hand only. */
export function onDemandOnly(prompt: string): boolean {
  return /\b(on demand|when (?:i|we|someone) (?:ask|start|run)|manually|by hand)\b/i.test(prompt);
}
