// The dashboard's pure scripts under Node, no browser: which categories'
// colours apply for the settings, periods from startOfDay/startOfWeek, and
// how durations read. The browser test (dashboard.test.mjs) covers them
// end to end on one configuration; these cover the other branches.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { defined, loadScripts } from './scripts.mjs';

loadScripts('dom.js', 'time.js', 'categories.js', 'charts.js');
const { categoryColor, effectiveCategories } = defined('categories');
const time = defined('time');

process.env.TZ = 'Asia/Kolkata';

const category = (name, regex) => ({ name, rule: { type: 'regex', regex } });
const names = categories => categories.map(c => c.name.join('>'));

test('active category sets merge in the order of category_sets, first name wins', () => {
  const settings = {
    category_sets: [
      { id: 'a', categories: [category(['Work'], 'A'), category(['Fun'], 'A')] },
      { id: 'b', categories: [category(['Work'], 'B'), category(['Chat'], 'B')] },
      { id: 'c', categories: [category(['Never'], 'C')] },
    ],
    active_set_ids: ['b', 'a'],
    classes: [category(['Legacy'], 'L')],
  };
  const merged = effectiveCategories(settings);
  assert.deepEqual(names(merged), ['Work', 'Fun', 'Chat']);
  assert.equal(merged[0].rule.regex, 'A');
});

test('without an active set that exists, the first set is used', () => {
  const sets = [
    { id: 'a', categories: [category(['A'], 'a')] },
    { id: 'b', categories: [category(['B'], 'b')] },
  ];
  assert.deepEqual(names(effectiveCategories({ category_sets: sets, active_set_ids: ['gone'] })), ['A']);
  assert.deepEqual(names(effectiveCategories({ category_sets: sets })), ['A']);
});

test('without sets the legacy classes are used, else the colours of the defaults', () => {
  assert.deepEqual(names(effectiveCategories({ classes: [category(['Legacy'], 'L')] })), ['Legacy']);
  assert.deepEqual(names(effectiveCategories({ category_sets: [], classes: [] })), []);
  const defaults = effectiveCategories({});
  assert.equal(categoryColor(defaults, ['Media', 'Games']), '#F80');
  // A child without a colour of its own takes its parent's.
  assert.equal(categoryColor(defaults, ['Work', 'Programming', 'ActivityWatch']), '#0F0');
  assert.equal(categoryColor(defaults, ['Uncategorized']), '#CCC');
  assert.equal(categoryColor([], ['Uncategorized']), '#CCC');
  // Any other name gets a colour of the palette, the same each time.
  assert.equal(categoryColor([], ['Elsewhere']), categoryColor(defaults, ['Elsewhere']));
});

test('days start at startOfDay, weeks on startOfWeek', () => {
  const offset = time.dayOffset('04:00');
  assert.equal(offset, 240);
  assert.equal(time.dayOffset('00:00'), 0);
  assert.equal(time.dayOffset(undefined), 240, "aw-webui's default");
  // Read as the server reads it (summary/calendar.rs), out of range as the default.
  assert.equal(time.dayOffset(' 5:7 '), 307);
  assert.equal(time.dayOffset('24:00'), 240);
  assert.equal(time.dayOffset('04:60'), 240);
  const day = time.parseDateKey('2026-03-10');
  const monday = time.periodFirstDate('week', day, time.weekStartDay('Monday'));
  const sunday = time.periodFirstDate('week', day, time.weekStartDay('Sunday'));
  assert.equal(time.dateKey(monday), '2026-03-09');
  assert.equal(time.dateKey(sunday), '2026-03-08');
  // A period is sent as its first date and the first date after it.
  const month = time.periodFirstDate('month', day, 1);
  assert.equal(time.dateKey(month), '2026-03-01');
  assert.equal(time.dateKey(time.shiftDate('month', month, 1)), '2026-04-01');
  assert.equal(time.dateKey(time.shiftDate('week', monday, 1)), '2026-03-16');
  assert.equal(time.dateKey(time.shiftDate('day', day, 1)), '2026-03-11');
  assert.equal(time.dateKey(time.shiftDate('month', time.parseDateKey('2026-01-31'), 1)), '2026-02-01');
  // 03:59 still belongs to the day before.
  assert.equal(time.dateKey(time.logicalToday(offset, new Date(2026, 2, 10, 3, 59))), '2026-03-09');
  assert.equal(time.dateKey(time.logicalToday(offset, new Date(2026, 2, 10, 4, 0))), '2026-03-10');
  assert.equal(time.parseDateKey('2026-02-30'), null);
});

test("the browser's time zone is kept with its offsets, and asked again when they change", () => {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const stored = new Map();
  globalThis.localStorage = {
    getItem: key => stored.get(key) ?? null,
    setItem: (key, value) => stored.set(key, String(value)),
  };
  try {
    assert.equal(time.zoneName(), zone);
    const kept = JSON.parse(stored.get('aw-time-zone'));
    assert.equal(kept.zone, zone);
    // While the offsets are those kept, the kept name is used without Intl.
    stored.set('aw-time-zone', JSON.stringify({ ...kept, zone: 'Kept/Zone' }));
    assert.equal(time.zoneName(), 'Kept/Zone');
    stored.set('aw-time-zone', JSON.stringify({ offsets: '0,60', zone: 'Kept/Zone' }));
    assert.equal(time.zoneName(), zone);
    stored.set('aw-time-zone', '{not json');
    assert.equal(time.zoneName(), zone);
  } finally {
    delete globalThis.localStorage;
  }
  // Without storage at all.
  assert.equal(time.zoneName(), zone);
});

test('durations read in whole seconds, zero parts left out', () => {
  assert.equal(time.formatDuration(3723), '1h 2m 3s');
  assert.equal(time.formatDuration(13560), '3h 46m');
  assert.equal(time.formatDuration(59.6), '1m');
  assert.equal(time.formatDuration(0), '0s');
  assert.equal(time.formatDuration(-5), '0s');
  assert.equal(time.isoDuration(3723), 'PT1H2M3S');
});

test('dates and times are written in English with a 24-hour clock, without Intl', () => {
  const afternoon = new Date(2026, 2, 10, 14, 5);
  const morning = new Date(2026, 0, 4, 9, 7);
  assert.equal(time.formatTime(afternoon), '14:05');
  assert.equal(time.formatTime(morning), '09:07');
  assert.equal(time.formatDate(afternoon), 'Tue, 10 Mar 2026');
  assert.equal(time.formatDateTime(morning), '4 Jan 2026, 09:07');
  assert.equal(time.weekdayShort(morning), 'Sun');
  const monday = time.weekStartDay('Monday');
  assert.equal(time.periodTitle('day', afternoon, monday), 'Tue, 10 Mar 2026');
  assert.equal(time.periodTitle('week', afternoon, monday), 'Week of Mon, 9 Mar 2026');
  assert.equal(time.periodTitle('week', afternoon, time.weekStartDay('Sunday')), 'Week of Sun, 8 Mar 2026');
  assert.equal(time.periodTitle('month', afternoon, monday), 'March 2026');
});
