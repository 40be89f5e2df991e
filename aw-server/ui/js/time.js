// Periods (day, week, month) in the browser's time zone, shaped by the
// `startOfDay` ("04:00") and `startOfWeek` ("Monday") settings as aw-webui
// reads them, and how durations and times are written. Where a day starts
// and ends in time the server decides (/api/0/summary, given the zone);
// these pick which dates a view covers.

const time = (() => {
  'use strict';

  const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const pad = n => String(n).padStart(2, '0');

  /**
   * Minutes after midnight at which a day starts ("04:00" -> 240); as the
   * server reads the setting (aw-summary/src/calendar.rs), so both
   * agree on which day "today" is.
   */
  function dayOffset(startOfDay) {
    const match = /^(\d{1,2}):(\d{1,2})$/.exec(String(startOfDay || '').trim());
    const [hours, minutes] = match ? [Number(match[1]), Number(match[2])] : [];
    if (!match || hours > 23 || minutes > 59) return 4 * 60; // aw-webui's default, "04:00"
    return hours * 60 + minutes;
  }

  const ZONE_STORAGE = 'aw-time-zone';

  /**
   * The browser's IANA time zone ("Europe/Berlin"), in which the server
   * cuts days and hours for the views. Only Intl knows it, and a tab's
   * first use of Intl costs 15-20 ms (see below), so the name is kept in
   * localStorage with the zone's UTC offsets in January and July of this
   * year, and asked again when those change.
   */
  function zoneName() {
    const year = new Date().getFullYear();
    const offsets = [0, 6].map(month => new Date(year, month, 1).getTimezoneOffset()).join(',');
    try {
      const kept = JSON.parse(localStorage.getItem(ZONE_STORAGE) || 'null');
      if (kept && kept.offsets === offsets && typeof kept.zone === 'string') return kept.zone;
    } catch {
      // No storage (or not ours): ask Intl.
    }
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    try {
      localStorage.setItem(ZONE_STORAGE, JSON.stringify({ zone, offsets }));
    } catch {
      // Not kept: asked again next time.
    }
    return zone;
  }

  /** 0 (Sunday) .. 6 for a weekday name; Monday unless it names another. */
  function weekStartDay(startOfWeek) {
    const index = WEEKDAYS.indexOf(String(startOfWeek || ''));
    return index === -1 ? 1 : index;
  }

  /** "2026-11-20" for a local date. */
  function dateKey(date) {
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  }

  /** The local calendar date of a key, at midnight; null if malformed. */
  function parseDateKey(key) {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(key || '');
    if (!match) return null;
    const date = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
    return dateKey(date) === key ? date : null;
  }

  /** The date of the day `now` belongs to, days starting at `offset`. */
  function logicalToday(offset, now = new Date()) {
    const date = new Date(now.getFullYear(), now.getMonth(), now.getDate());
    if (now.getHours() * 60 + now.getMinutes() < offset) date.setDate(date.getDate() - 1);
    return date;
  }

  /** The first date of the `kind` ("day", "week", "month") holding `date`. */
  function periodFirstDate(kind, date, weekStart) {
    const first = new Date(date.getFullYear(), date.getMonth(), date.getDate());
    if (kind === 'week') first.setDate(first.getDate() - ((first.getDay() - weekStart + 7) % 7));
    if (kind === 'month') first.setDate(1);
    return first;
  }

  /** The date one period before (-1) or after (+1). */
  function shiftDate(kind, date, step) {
    const shifted = new Date(date);
    if (kind === 'day') shifted.setDate(shifted.getDate() + step);
    if (kind === 'week') shifted.setDate(shifted.getDate() + 7 * step);
    if (kind === 'month') shifted.setMonth(shifted.getMonth() + step, 1);
    return shifted;
  }

  /** "3h 46m", "1h 2m 3s", "45s": whole seconds, zero parts left out. */
  function formatDuration(seconds) {
    let rest = Math.round(Math.max(0, Number(seconds) || 0));
    const hours = Math.floor(rest / 3600);
    rest -= hours * 3600;
    const minutes = Math.floor(rest / 60);
    rest -= minutes * 60;
    const parts = [];
    if (hours) parts.push(`${hours}h`);
    if (minutes) parts.push(`${minutes}m`);
    if (rest || parts.length === 0) parts.push(`${rest}s`);
    return parts.join(' ');
  }

  /** "PT1H2M3S", for `<time datetime>`. */
  function isoDuration(seconds) {
    const total = Math.round(Math.max(0, Number(seconds) || 0));
    return `PT${Math.floor(total / 3600)}H${Math.floor((total % 3600) / 60)}M${total % 60}S`;
  }

  /**
   * "5 minutes", "2 hours", "1 day": `seconds` in the largest whole unit
   * (seconds below a minute), the number written by `number`.
   */
  function span(seconds, number = String) {
    const units = [
      ['day', 86400],
      ['hour', 3600],
      ['minute', 60],
    ];
    for (const [name, size] of units) {
      if (seconds >= size) {
        const count = Math.floor(seconds / size);
        return `${number(count)} ${name}${count === 1 ? '' : 's'}`;
      }
    }
    return `${number(seconds)} second${seconds === 1 ? '' : 's'}`;
  }

  /** "5 minutes ago", "2 days ago", "just now" (also for a time to come). */
  function ago(timestamp, now = Date.now()) {
    const seconds = Math.round((now - new Date(timestamp).getTime()) / 1000);
    if (!(seconds >= 60)) return 'just now';
    return `${span(seconds)} ago`;
  }

  // Dates and times are written by hand, in English (as the rest of the
  // pages) with a 24-hour clock, rather than with Intl.DateTimeFormat: a
  // page's first use of Intl (any of its formats, or localeCompare) loads
  // the locale data, 15-20 ms of main-thread time in a fresh tab here, more
  // than building the whole day view.
  const MONTHS = [
    'January',
    'February',
    'March',
    'April',
    'May',
    'June',
    'July',
    'August',
    'September',
    'October',
    'November',
    'December',
  ];
  /** "Tue", the short name of a date's weekday. */
  const weekdayShort = date => WEEKDAYS[date.getDay()].slice(0, 3);

  /** "Tue, 30 Dec 2025" */
  const formatDate = date =>
    `${weekdayShort(date)}, ${date.getDate()} ${MONTHS[date.getMonth()].slice(0, 3)} ${date.getFullYear()}`;

  /** "14:05" */
  const formatTime = date => `${pad(date.getHours())}:${pad(date.getMinutes())}`;

  /** "30 Dec 2025, 14:05" */
  const formatDateTime = date =>
    `${date.getDate()} ${MONTHS[date.getMonth()].slice(0, 3)} ${date.getFullYear()}, ${formatTime(date)}`;

  /** The heading of a period: "Tue, 30 Dec 2025", "Week of Mon, 29 Dec 2025", "December 2025". */
  function periodTitle(kind, date, weekStart) {
    if (kind === 'month') return `${MONTHS[date.getMonth()]} ${date.getFullYear()}`;
    if (kind === 'week') return `Week of ${formatDate(periodFirstDate('week', date, weekStart))}`;
    return formatDate(date);
  }

  return { dayOffset, zoneName, weekStartDay, dateKey, parseDateKey, logicalToday, periodFirstDate, shiftDate, formatDuration, isoDuration, span, ago, weekdayShort, formatDate, formatTime, formatDateTime, periodTitle };
})();
