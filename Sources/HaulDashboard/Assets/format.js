// Numbers in human units: sizes in binary units (KiB, MiB, GiB), speeds per second, ETA as m:ss.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** A byte count as "512 B", "1.5 KiB", "12.0 MiB", "1.20 GiB" (three significant digits). */
export function bytes(count) {
  if (!Number.isFinite(count) || count < 0) return '—';
  let value = count;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${value} B`;
  // 1048575 B is "1.00 MiB", not "1024 KiB": round first, then move up a unit if it reached 1024.
  if (Number(value.toFixed(0)) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** A speed in bytes per second as "1.50 MiB/s"; zero is "0 B/s". */
export function speed(bytesPerSecond) {
  return `${bytes(bytesPerSecond)}/s`;
}

/** Seconds as "0:05", "1:02", "1:02:03"; unknown or endless is "—". */
export function duration(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return '—';
  const total = Math.ceil(seconds);
  const s = total % 60;
  const m = Math.floor(total / 60) % 60;
  const h = Math.floor(total / 3600);
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** The time left at the current speed, or NaN when it cannot be told. */
export function remainingSeconds(total, completed, bytesPerSecond) {
  if (!(total > 0) || !(bytesPerSecond > 0) || completed > total) return NaN;
  return (total - completed) / bytesPerSecond;
}

/** Completed as a percentage with one decimal (0–100), or null when the size is unknown. */
export function percent(total, completed) {
  if (!(total > 0)) return null;
  return Math.min(100, Math.floor((completed / total) * 1000) / 10);
}

/**
 * A rate typed by a person ("0", "500K", "2M", "1.5m", "1048576") as bytes per second,
 * or null when it is not one. Suffixes are 1024-based, as haul's --limit-rate.
 */
export function parseRate(text) {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b(?:\/s)?)?\s*$/i.exec(text);
  if (!match) return null;
  const scale = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2].toLowerCase()];
  return Math.round(Number(match[1]) * scale);
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/**
 * A local time with its offset ("2025-06-02T18:00:00+02:00") as the clock it was read on shows it:
 * "Mon 18:00"; null when it is not one.
 */
export function wallClock(text) {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):\d{2}([+-]\d{2}:\d{2})$/.exec(text || '');
  if (!match) return null;
  const weekday = WEEKDAYS[new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))).getUTCDay()];
  return `${weekday} ${match[4]}:${match[5]}`;
}

/** Milliseconds ahead as "in 45 s", "in 12 min", "in 7 h 12 min", "in 2 d 3 h". */
export function until(milliseconds) {
  const seconds = Math.max(0, Math.round(milliseconds / 1000));
  if (seconds < 60) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h ${minutes % 60} min`;
  return `in ${Math.floor(hours / 24)} d ${hours % 24} h`;
}
