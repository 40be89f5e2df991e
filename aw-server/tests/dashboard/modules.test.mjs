// The dashboard's pure scripts under Node, no browser: how categories are
// chosen from the settings, periods from startOfDay/startOfWeek, and how
// durations read. The browser test (dashboard.test.mjs) covers them
// end to end on one configuration; these cover the other branches.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { defined, loadScripts } from './scripts.mjs';

loadScripts('dom.js', 'time.js', 'categories.js', 'charts.js', 'queries.js');
const { categoryRules, defaultCategories, effectiveCategories } = defined('categories');
const { secondsPerRange } = defined('charts');
const { devicesBuckets, hostBuckets, summaryQuery } = defined('queries');
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

test('without sets the legacy classes are used, else the defaults', () => {
  assert.deepEqual(names(effectiveCategories({ classes: [category(['Legacy'], 'L')] })), ['Legacy']);
  assert.deepEqual(names(effectiveCategories({ category_sets: [], classes: [] })), []);
  const defaults = effectiveCategories({});
  assert.deepEqual(names(defaults), names(defaultCategories()));
  assert.ok(names(defaults).includes('Work>Programming>ActivityWatch'));
});

test('missing parents are added without a rule and not sent to categorize', () => {
  const categories = effectiveCategories({ classes: [category(['Work', 'Code', 'Rust'], 'rs')] });
  assert.deepEqual(names(categories), ['Work>Code>Rust', 'Work>Code', 'Work']);
  assert.deepEqual(categoryRules(categories), [[['Work', 'Code', 'Rust'], { type: 'regex', regex: 'rs' }]]);
  // Uncategorized (type null) is left out, "none" rules are kept.
  const rules = categoryRules(defaultCategories());
  assert.ok(!rules.some(([name]) => name[0] === 'Uncategorized'));
  assert.ok(rules.some(([name, rule]) => name[0] === 'Media' && rule.type === 'none'));
});

test('rules reach the query with single backslashes, as aw-webui writes them', () => {
  const buckets = {
    w: { id: 'aw-watcher-window_h', type: 'currentwindow', hostname: 'h' },
    a: { id: 'aw-watcher-afk_h', type: 'afkstatus', hostname: 'h' },
    b: { id: 'aw-watcher-web-chrome_h', type: 'web.tab.current', hostname: 'h' },
    o: { id: 'aw-watcher-window_other', type: 'currentwindow', hostname: 'other' },
  };
  const sources = hostBuckets(buckets, 'h');
  assert.deepEqual(sources, {
    window: 'aw-watcher-window_h',
    afk: 'aw-watcher-afk_h',
    browsers: [{ id: 'aw-watcher-web-chrome_h', browser: 'chrome' }],
  });
  const program = summaryQuery(sources, [[['Code'], { type: 'regex', regex: '\\bvim\\b' }]], { timeline: true });
  assert.ok(program.includes('categorize(events, [[["Code"],{"type":"regex","regex":"\\bvim\\b"}]])'), program);
  assert.ok(program.includes('query_bucket("aw-watcher-afk_h")'));
  assert.ok(program.includes('query_bucket("aw-watcher-web-chrome_h")'));
});

test('for all devices, a browser bucket without a host goes with the first host only', () => {
  const buckets = {
    lw: { id: 'aw-watcher-window_laptop', type: 'currentwindow', hostname: 'laptop' },
    dw: { id: 'aw-watcher-window_desktop', type: 'currentwindow', hostname: 'desktop' },
    da: { id: 'aw-watcher-afk_desktop', type: 'afkstatus', hostname: 'desktop' },
    ff: { id: 'aw-watcher-web-firefox', type: 'web.tab.current', hostname: 'unknown' },
    ch: { id: 'aw-watcher-web-chrome', type: 'web.tab.current', hostname: '' },
    dc: { id: 'aw-watcher-web-chrome_desktop', type: 'web.tab.current', hostname: 'desktop' },
  };
  const hostless = [
    { id: 'aw-watcher-web-firefox', browser: 'firefox' },
    { id: 'aw-watcher-web-chrome', browser: 'chrome' },
  ];
  const own = { id: 'aw-watcher-web-chrome_desktop', browser: 'chrome' };
  // The view of one host reads them all.
  assert.deepEqual(hostBuckets(buckets, 'desktop').browsers, [...hostless, own]);
  assert.deepEqual(devicesBuckets(buckets, ['laptop', 'desktop']), [
    { window: 'aw-watcher-window_laptop', afk: undefined, browsers: hostless },
    { window: 'aw-watcher-window_desktop', afk: 'aw-watcher-afk_desktop', browsers: [own] },
  ]);
});

test('days start at startOfDay, weeks on startOfWeek', () => {
  const offset = time.dayOffset('04:00');
  assert.equal(offset, 240);
  assert.equal(time.dayOffset('00:00'), 0);
  assert.equal(time.dayOffset(undefined), 240, "aw-webui's default");
  const day = time.parseDateKey('2026-03-10');
  const [start, end] = time.periodRange('day', day, 1, offset);
  assert.equal(start.toISOString(), '2026-03-09T22:30:00.000Z'); // 04:00 in Kolkata
  assert.equal(end.toISOString(), '2026-03-10T22:30:00.000Z');
  const monday = time.periodFirstDate('week', day, time.weekStartDay('Monday'));
  const sunday = time.periodFirstDate('week', day, time.weekStartDay('Sunday'));
  assert.equal(time.dateKey(monday), '2026-03-09');
  assert.equal(time.dateKey(sunday), '2026-03-08');
  assert.equal(time.periodDates('month', day, 1).length, 31);
  assert.equal(time.dateKey(time.shiftDate('month', time.parseDateKey('2026-01-31'), 1)), '2026-02-01');
  // 03:59 still belongs to the day before.
  assert.equal(time.dateKey(time.logicalToday(offset, new Date(2026, 2, 10, 3, 59))), '2026-03-09');
  assert.equal(time.dateKey(time.logicalToday(offset, new Date(2026, 2, 10, 4, 0))), '2026-03-10');
  assert.equal(time.parseDateKey('2026-02-30'), null);
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

test('seconds per hour: each event is split over the hours it overlaps', () => {
  const day = time.parseDateKey('2026-03-10');
  const hours = time.hourRanges(day, time.dayOffset('04:00'));
  assert.equal(hours.length, 24);
  const at = (hour, minute) => new Date(2026, 2, 10, hour, minute).toISOString();
  const events = [
    { timestamp: at(3, 0), duration: 3600 }, // 03:00-04:00: the day before
    { timestamp: at(3, 30), duration: 3600 }, // 30 min of 04:00-05:00
    { timestamp: at(5, 50), duration: 1200 }, // 10 min each in 05:00 and 06:00
    { timestamp: at(7, 0), duration: 0 },
    { timestamp: at(9, 15), duration: 3 * 3600 }, // 45 min, 2 h, 15 min
    { timestamp: new Date(2026, 2, 11, 3, 30).toISOString(), duration: 3600 }, // 30 min of the last hour
  ];
  const seconds = secondsPerRange(events, hours);
  const expected = new Array(24).fill(0);
  expected[0] = 1800;
  expected[1] = 600;
  expected[2] = 600;
  expected[5] = 2700;
  expected[6] = 3600;
  expected[7] = 3600;
  expected[8] = 900;
  expected[23] = 1800;
  assert.deepEqual(seconds, expected);
});
