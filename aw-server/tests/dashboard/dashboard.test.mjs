// The built-in dashboard, driven in Debian's Chromium like a user would:
// against a server seeded with known data (server.mjs), the time zone
// pinned for both, asserting on what a person reads. Any console error,
// page error or failed request fails the test. Screenshots of each view
// go to target/dashboard-screenshots/.
//
// Run through scripts/test-dashboard, which installs Chromium and builds
// the server.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { assertAccessible, assertClean, drawn, openPage, shoot, useBrowser } from './page.mjs';
import { DEVICES, HOST, TZ, seed, seedDevices, startServer } from './server.mjs';

const DAY = '2026-03-10';
const API_KEY = 'dashboard-test-key';

/** Seeded figures (see server.mjs). */
const TUESDAY = {
  total: '2h 17m 3s',
  apps: [
    ['Code', '1h 2m 3s'],
    ['Terminal', '45m'],
    ['Firefox', '30m'],
  ],
  titles: [
    ['main.rs - Code', '1h 2m 3s'],
    ['bash', '45m'],
    ['YouTube - Mozilla Firefox', '30m'],
  ],
  categories: [
    ['Work > Programming', '1h 2m 3s'],
    ['Shell', '45m'],
    ['Media > Video', '30m'],
  ],
  domains: [
    ['youtube.com', '20m'],
    ['docs.rs', '10m'],
  ],
};

useBrowser();

/** What a card shows: its rows as [label, duration] pairs. */
async function cardRows(page, title) {
  const card = page.locator('section.card', { has: page.locator('h2', { hasText: title }) });
  return card.locator('.top-list li').evaluateAll(items =>
    items.map(item => [item.querySelector('.label').textContent, item.querySelector('time').textContent]),
  );
}

async function total(page) {
  return page.locator('.card.summary .total').innerText();
}

/** Seconds of a duration as the dashboard writes it ("1h 2m 3s"). */
const seconds = text =>
  [...text.matchAll(/(\d+)([hms])/g)].reduce(
    (sum, [, count, unit]) => sum + Number(count) * { h: 3600, m: 60, s: 1 }[unit],
    0,
  );

/** A card's rows as [label, whole seconds], read from each row's `<time datetime>`. */
async function cardSeconds(page, title) {
  const card = page.locator('section.card', { has: page.locator('h2', { hasText: title }) });
  const rows = await card.locator('.top-list li').evaluateAll(items =>
    items.map(item => [item.querySelector('.label').textContent, item.querySelector('time').getAttribute('datetime')]),
  );
  return rows.map(([label, iso]) => [label, isoSeconds(iso)]);
}

/** "PT1H2M3S" -> 3723. */
function isoSeconds(iso) {
  const [, hours, minutes, secs] = /^PT(\d+)H(\d+)M(\d+)S$/.exec(iso);
  return Number(hours) * 3600 + Number(minutes) * 60 + Number(secs);
}

const dayUrl = (server, date = DAY, kind = 'day') => `${server.url}/#/activity/${HOST}/${kind}/${date}`;

describe('without an API key', () => {
  let server;
  before(async () => {
    server = await startServer();
    await seed(server);
  });
  after(async () => {
    await server?.stop();
  });

  test('the day view shows the seeded durations to the second', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(dayUrl(server)));
    assert.equal(await total(page), TUESDAY.total);
    assert.deepEqual(await cardRows(page, 'Top applications'), TUESDAY.apps);
    assert.deepEqual(await cardRows(page, 'Top window titles'), TUESDAY.titles);
    assert.deepEqual(await cardRows(page, 'Top categories'), TUESDAY.categories);
    assert.deepEqual(await cardRows(page, 'Top browser domains'), TUESDAY.domains);
    assert.match(await page.locator('#period-title').innerText(), /10 Mar 2026/);
    // The hour chart: days start at 04:00, so 09:00 is the sixth column.
    const hours = await page.locator('.columns .column').evaluateAll(columns =>
      columns.map(column => column.getAttribute('aria-label')),
    );
    assert.equal(hours.length, 24);
    assert.equal(hours[0], '04:00: 0s');
    assert.deepEqual(hours.slice(5, 9), ['09:00: 1h', '10:00: 32m 3s', '11:00: 30m', '12:00: 15m']);
    // The timeline: one block per stretch of a category (09:00-10:02 Code,
    // 10:30-11:00 YouTube, 11:30-12:00 and 12:30-12:45 the terminal), each
    // named when pointed at. The strip spans the day from 04:00.
    const strip = page.locator('.timeline-strip');
    assert.match(await strip.getAttribute('aria-label'), /^4 stretches of activity/);
    const box = await strip.boundingBox();
    const pointAt = async (hours, minutes) => {
      const x = box.x + (box.width * (hours - 4 + minutes / 60)) / 24;
      await page.mouse.move(x, box.y + box.height / 2);
      return strip.getAttribute('title');
    };
    assert.equal(await pointAt(9, 30), 'Work > Programming: 09:00–10:02');
    assert.equal(await pointAt(10, 45), 'Media > Video: 10:30–11:00');
    assert.equal(await pointAt(12, 40), 'Shell: 12:30–12:45');
    assert.equal(await pointAt(12, 15), '');
    assert.equal(await pointAt(8, 0), '');
    await page.mouse.move(0, 0);
    await shoot(page, 'day-1280-light');
    await assertAccessible(page, 'day-1280-light');
    assertClean(problems);
    await context.close();
  });

  test("for the seeded day, the dashboard's numbers equal /api/0/summary's to the second", async () => {
    const { page, context, problems } = await openPage();
    const asked = [];
    page.on('request', request => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/0/')) asked.push(url);
    });
    await drawn(page, () => page.goto(dayUrl(server)));
    const answer = await server.request(
      'GET',
      `/api/0/summary?start=${DAY}&end=2026-03-11&host=${HOST}&tz=${encodeURIComponent(TZ)}` +
        '&by=app,title,category,domain,hour',
    );
    const rows = (list, label = row => row.key) => list.slice(0, 10).map(row => [label(row), Math.round(row.duration)]);
    assert.equal(isoSeconds(await page.locator('.card.summary .total time').getAttribute('datetime')), Math.round(answer.duration));
    assert.deepEqual(await cardSeconds(page, 'Top applications'), rows(answer.app));
    assert.deepEqual(await cardSeconds(page, 'Top window titles'), rows(answer.title));
    assert.deepEqual(await cardSeconds(page, 'Top categories'), rows(answer.category));
    assert.deepEqual(await cardSeconds(page, 'Top browser domains'), rows(answer.domain));
    // Each hour of the chart (04:00 first) against the same hour of the local clock.
    const hours = await page.locator('.columns .column').evaluateAll(columns =>
      columns.map(column => column.getAttribute('aria-label').split(': ')),
    );
    assert.equal(hours.length, 24);
    assert.deepEqual(
      Object.fromEntries(hours.map(([hour, text]) => [hour, seconds(text)])),
      Object.fromEntries(answer.hour.map(row => [row.key, Math.round(row.duration)])),
    );
    assert.equal(hours[0][0], '04:00');
    // Not a figure of the seed by accident: these are the ones it gives.
    assert.equal(Math.round(answer.duration), seconds(TUESDAY.total));
    // The page asked the server for its figures, in the browser's time
    // zone, and sent no query program of its own.
    assert.ok(!asked.some(url => url.pathname === '/api/0/query/'), asked.join(' '));
    const summaries = asked.filter(url => url.pathname === '/api/0/summary');
    assert.equal(summaries.length, 1);
    // Chromium names Kolkata by its older name, Asia/Calcutta; the server knows both.
    const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    assert.equal(summaries[0].searchParams.get('tz'), zone);
    assertClean(problems);
    await context.close();
  });

  test('day navigation by keyboard and links honours startOfDay', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(dayUrl(server)));
    // Monday: 1000 s in the afternoon and 600 s at 03:00 on Tuesday.
    await drawn(page, () => page.keyboard.press('ArrowLeft'));
    assert.match(page.url(), /\/day\/2026-03-09$/);
    assert.equal(await total(page), '26m 40s');
    assert.deepEqual(await cardRows(page, 'Top applications'), [['Code', '26m 40s']]);
    await drawn(page, () => page.getByRole('link', { name: 'Next day' }).click());
    assert.equal(await total(page), TUESDAY.total);
    // Tab reaches the period links; Enter follows them.
    await page.locator('.kinds a', { hasText: 'Week' }).focus();
    await drawn(page, () => page.keyboard.press('Enter'));
    assert.match(page.url(), /\/week\/2026-03-10$/);
    assertClean(problems);
    await context.close();
  });

  test('week and month views add up the days, week navigation works', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(dayUrl(server, DAY, 'week')));
    assert.match(await page.locator('#period-title').innerText(), /Week of Mon, 9 Mar 2026/);
    assert.equal(await total(page), '2h 43m 43s');
    assert.deepEqual((await cardRows(page, 'Top applications'))[0], ['Code', '1h 28m 43s']);
    const days = await page.locator('.columns .column').evaluateAll(columns =>
      columns.map(column => column.getAttribute('aria-label')),
    );
    assert.equal(days.length, 7);
    assert.equal(days[0], 'Mon, 9 Mar 2026: 26m 40s');
    assert.equal(days[1], 'Tue, 10 Mar 2026: 2h 17m 3s');
    // An hour scale beside the bars: whole hours up from the longest day.
    assert.deepEqual(await page.locator('.columns-axis .scale span').allInnerTexts(), ['0', '1h', '2h', '3h']);
    const fills = await page.locator('.columns .fill').evaluateAll(all => all.map(fill => fill.style.height));
    assert.equal(Number.parseFloat(fills[1]).toFixed(2), ((100 * 8223) / (3 * 3600)).toFixed(2));
    // Each label and line stands where that many hours of bar would end.
    const geometry = await page.evaluate(() => {
      const slot = document.querySelector('.columns .slot').getBoundingClientRect();
      const middle = box => (box.top + box.bottom) / 2;
      return {
        slot: [slot.top, slot.bottom],
        lines: [...document.querySelectorAll('.columns-plot .gridlines span')].map(line => line.getBoundingClientRect().top),
        labels: [...document.querySelectorAll('.columns-axis .scale span')].map(label => middle(label.getBoundingClientRect())),
      };
    });
    const [top, bottom] = geometry.slot;
    const heightOf = hours => bottom - ((bottom - top) * hours) / 3;
    geometry.lines.forEach((y, n) => assert.ok(Math.abs(y - heightOf(n + 1)) <= 1.5, `line ${n + 1}h at ${y}`));
    geometry.labels.forEach((y, n) => assert.ok(Math.abs(y - heightOf(n)) <= 1.5, `label ${n}h at ${y}`));
    await shoot(page, 'week-1280-light');
    await assertAccessible(page, 'week-1280-light');
    await drawn(page, () => page.getByRole('link', { name: 'Previous week' }).click());
    assert.equal(await total(page), '1h 5m');
    await drawn(page, () => page.keyboard.press('ArrowRight'));
    assert.equal(await total(page), '2h 43m 43s');
    await drawn(page, () => page.keyboard.press('m'));
    assert.match(await page.locator('#period-title').innerText(), /March 2026/);
    assert.equal(await total(page), '3h 48m 43s');
    assert.equal(await page.locator('.columns .column').count(), 31);
    assert.deepEqual(await page.locator('.columns-axis .scale span').allInnerTexts(), ['0', '1h', '2h', '3h']);
    await shoot(page, 'month-1280-light');
    await assertAccessible(page, 'month-1280-light');
    assertClean(problems);
    await context.close();
  });

  test('the buckets page lists counts and the age of the last data, and exports', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(`${server.url}/#/buckets`));
    const rows = await page.locator('table.buckets tbody tr').evaluateAll(trs =>
      trs.map(tr => Object.fromEntries([...tr.children].map(cell => [cell.dataset.label, cell.textContent]))),
    );
    assert.deepEqual(
      rows.map(row => [row.Bucket, row.Type, row.Host, row.Events]),
      [
        [`aw-watcher-afk_${HOST}`, 'afkstatus', HOST, '8'],
        ['aw-watcher-web-firefox', 'web.tab.current', HOST, '2'],
        [`aw-watcher-window_${HOST}`, 'currentwindow', HOST, '7'],
      ],
    );
    for (const row of rows) assert.match(row['Last data'], /^last data \d+ days ago$/);
    assert.match(rows[2]['First event'], /6 Mar 2026/);
    assert.equal(await page.locator('tr.stale').count(), 3, 'stopped watchers stand out');
    await shoot(page, 'buckets-1280-light');
    await assertAccessible(page, 'buckets-1280-light');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: `Export aw-watcher-window_${HOST}` }).click(),
    ]);
    const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
    assert.equal(exported.buckets[`aw-watcher-window_${HOST}`].events.length, 7);
    const [all] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export all buckets' }).click(),
    ]);
    assert.equal(Object.keys(JSON.parse(readFileSync(await all.path(), 'utf8')).buckets).length, 3);
    assertClean(problems);
    await context.close();
  });

  // The search periods end today: the browser's clock is set two days
  // after the seeded day, so "Last 7 days" is 6 to 12 March.
  const SEARCH_NOW = new Date('2026-03-12T12:00:00+05:30');

  test('search finds a seeded title with its active time and links to the days it was seen', async () => {
    const { page, context, problems } = await openPage();
    await page.clock.setFixedTime(SEARCH_NOW);
    await drawn(page, () => page.goto(`${server.url}/#/search`));
    assert.match(await page.locator('main').innerText(), /Type a part of a window title or URL/);
    await page.getByLabel('Title or URL contains').fill('YouTube');
    assert.equal(await page.getByLabel('Period').inputValue(), '7d');
    await drawn(page, () => page.getByLabel('Title or URL contains').press('Enter'));
    const answer = await server.request(
      'GET',
      `/api/0/search?text=YouTube&start=2026-03-06&end=2026-03-13&tz=${encodeURIComponent(TZ)}`,
    );
    const title = answer.matches.find(match => match.kind === 'title');
    assert.equal(title.key, 'YouTube - Mozilla Firefox');
    const row = page.locator('table.results tr', { has: page.locator('th', { hasText: title.key }) });
    const cells = await row.locator('td').allInnerTexts();
    assert.deepEqual(cells.slice(0, 2), ['Window title', 'Firefox']);
    const active = await row.locator('time').innerText();
    assert.equal(active, '30m');
    assert.equal(seconds(active), Math.round(title.duration));
    assert.equal(await page.locator('table.results tbody tr').count(), answer.matches.length);
    await shoot(page, 'search-1280-light');
    await assertAccessible(page, 'search-1280-light');
    await drawn(page, () => row.getByRole('link', { name: 'Tue, 10 Mar 2026' }).click());
    assert.equal(new URL(page.url()).hash, `#/activity/${HOST}/day/${DAY}`);
    assert.equal(await total(page), TUESDAY.total);
    assertClean(problems);
    await context.close();
  });

  test('search at phone width in dark mode, and a text nothing contains', async () => {
    const { page, context, problems } = await openPage({ width: 390, dark: true });
    await page.clock.setFixedTime(SEARCH_NOW);
    await drawn(page, () => page.goto(`${server.url}/#/search/7d/youtube`));
    // The window title and the URL; the tab's title is not listed, its URL matched.
    assert.equal(await page.locator('table.results tbody tr').count(), 2);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window`);
    await shoot(page, 'search-390-dark');
    await assertAccessible(page, 'search-390-dark');
    await page.getByLabel('Title or URL contains').fill('no such window');
    await drawn(page, () => page.getByRole('button', { name: 'Search' }).click());
    assert.match(await page.locator('main').innerText(), /Nothing contains “no such window” in this period\./);
    assertClean(problems);
    await context.close();
  });

  test('phone width and dark mode: every view draws and is screenshotted', async () => {
    for (const [width, dark] of [
      [390, false],
      [390, true],
      [1280, false],
      [1280, true],
    ]) {
      const { page, context, problems } = await openPage({ width, dark });
      const suffix = `${width}-${dark ? 'dark' : 'light'}`;
      await drawn(page, () => page.goto(dayUrl(server)));
      assert.equal(await total(page), TUESDAY.total);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window at ${width}px`);
      await shoot(page, `day-${suffix}`);
      await assertAccessible(page, `the day view at ${suffix}`);
      await drawn(page, () => page.goto(dayUrl(server, DAY, 'week')));
      await shoot(page, `week-${suffix}`);
      await assertAccessible(page, `the week view at ${suffix}`);
      await drawn(page, () => page.goto(`${server.url}/#/buckets`));
      await shoot(page, `buckets-${suffix}`);
      await assertAccessible(page, `the buckets page at ${suffix}`);
      await page.clock.setFixedTime(SEARCH_NOW);
      await drawn(page, () => page.goto(`${server.url}/#/search/7d/youtube`));
      await shoot(page, `search-${suffix}`);
      await assertAccessible(page, `the search page at ${suffix}`);
      await drawn(page, () => page.goto(`${server.url}/#/tokens`));
      await shoot(page, `tokens-open-${suffix}`);
      await assertAccessible(page, `the tokens page at ${suffix}`);
      await drawn(page, () => page.goto(`${server.url}/#/about`));
      assert.match(await page.locator('main').innerText(), /About this server[\s\S]*Web UI/);
      await shoot(page, `about-${suffix}`);
      await assertAccessible(page, `the about page at ${suffix}`);
      assertClean(problems);
      await context.close();
    }
  });

  test('on a server without credentials the Tokens page says the first token closes it', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(dayUrl(server)));
    const link = page.getByRole('link', { name: 'Tokens', exact: true });
    await link.waitFor();
    await drawn(page, () => link.click());
    assert.equal(await page.locator('main h1').innerText(), 'API tokens (0)');
    assert.match(await page.locator('main').innerText(), /no API key or token yet[\s\S]*every request needs one/);
    assertClean(problems);
    await context.close();
  });
});

describe('with an API key', () => {
  let server;
  before(async () => {
    server = await startServer({ apiKey: API_KEY });
    await seed(server);
    await server.request('POST', '/api/0/settings/startOfWeek', 'Sunday');
  });
  after(async () => {
    await server?.stop();
  });

  test('the key from ?token= is sent as a Bearer token and kept for the session', async () => {
    const { page, context, problems } = await openPage();
    const authorizations = new Set();
    page.on('request', request => {
      if (new URL(request.url()).pathname.startsWith('/api/0/') && !request.url().endsWith('/api/0/info')) {
        authorizations.add(request.headers().authorization ?? 'none');
      }
    });
    await drawn(page, () => page.goto(`${server.url}/?token=${API_KEY}#/activity/${HOST}/day/${DAY}`));
    assert.equal(await total(page), TUESDAY.total);
    assert.ok(!page.url().includes('token='), `the key stays in the address: ${page.url()}`);
    // startOfWeek is Sunday on this server: the week holds Sunday's 300 s.
    await drawn(page, () => page.keyboard.press('w'));
    assert.match(await page.locator('#period-title').innerText(), /Week of Sun, 8 Mar 2026/);
    assert.equal(await total(page), '2h 48m 43s');
    await drawn(page, () => page.reload());
    assert.equal(await total(page), '2h 48m 43s');
    assert.deepEqual([...authorizations], [`Bearer ${API_KEY}`]);
    await shoot(page, 'week-with-api-key-1280-light');
    await assertAccessible(page, 'week-with-api-key-1280-light');
    assertClean(problems);
    await context.close();
  });

  test('without the key the page says how to give it', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(dayUrl(server))).catch(() => {});
    await page.locator('[role=alert]').waitFor({ timeout: 30_000 });
    assert.match(await page.locator('main').innerText(), /needs an API key[\s\S]*\?token=KEY/);
    await shoot(page, 'missing-api-key-1280-light');
    await assertAccessible(page, 'missing-api-key-1280-light');
    // The refused API calls are the only problems.
    assert.ok(problems.length > 0);
    for (const problem of problems) assert.match(problem, /401|Unauthorized/);
    await context.close();
  });

  describe('and tokens', () => {
    const READER = 'phone-viewer';
    let reader;
    before(async () => {
      reader = (await server.request('POST', '/api/0/tokens', { name: READER, scope: 'read', hosts: [] })).token;
    });

    /** The rows of the tokens table, by column. */
    const tokenRows = page =>
      page.locator('table.tokens tbody tr').evaluateAll(trs =>
        trs.map(tr => Object.fromEntries([...tr.children].map(cell => [cell.dataset.label, cell.textContent]))),
      );

    /** The status of GET /api/0/buckets/ with `token`, as any client sends it. */
    const bucketsStatus = async token =>
      (await fetch(`${server.url}/api/0/buckets/`, { headers: { Authorization: `Bearer ${token}` } })).status;

    test('a read token shows every view but not the tokens', async () => {
      const { page, context, problems } = await openPage();
      const access = page.waitForResponse(response => new URL(response.url()).pathname === '/api/0/access');
      await drawn(page, () => page.goto(`${server.url}/?token=${reader}#/activity/${HOST}/day/${DAY}`));
      assert.equal(await total(page), TUESDAY.total);
      assert.deepEqual(await cardRows(page, 'Top applications'), TUESDAY.apps);
      assert.deepEqual(await cardRows(page, 'Top categories'), TUESDAY.categories);
      const who = await (await access).json();
      assert.deepEqual([who.scope, who.name], ['read', READER]);
      await drawn(page, () => page.goto(`${server.url}/#/buckets`));
      assert.equal(await page.locator('table.buckets tbody tr').count(), 3);
      // The link was hidden once the access answer came, before this view.
      assert.equal(await page.getByRole('link', { name: 'Tokens' }).count(), 0);
      await drawn(page, () => page.goto(`${server.url}/#/tokens`));
      const text = await page.locator('main').innerText();
      assert.match(text, /needs an admin token/);
      assert.ok(text.includes(READER), text);
      assert.equal(await page.locator('table.tokens, form').count(), 0);
      await shoot(page, 'tokens-read-token-1280-light');
      await assertAccessible(page, 'tokens-read-token-1280-light');
      assertClean(problems);
      await context.close();
    });

    test('a write token is told the dashboard needs a read or admin token', async () => {
      const name = 'laptop-watchers';
      const writer = (await server.request('POST', '/api/0/tokens', { name, scope: 'write', hosts: [HOST] })).token;
      const { page, context, problems } = await openPage();
      await page.goto(`${server.url}/?token=${writer}#/activity/${HOST}/day/${DAY}`);
      await page.locator('[role=alert]').waitFor({ timeout: 30_000 });
      const text = await page.locator('main').innerText();
      assert.match(text, /A write token cannot open the dashboard/);
      // The server's own words, then how to open the dashboard instead.
      assert.match(text, /needs a read or admin token[\s\S]*\?token=KEY/);
      assert.equal(await page.getByRole('link', { name: 'Tokens' }).count(), 0);
      // The refused reads are the only problems.
      assert.ok(problems.length > 0);
      for (const problem of problems) assert.match(problem, /403|Forbidden/);
      await context.close();
      await server.request('DELETE', `/api/0/tokens/${name}`);
    });

    test('an admin lists, adds and revokes tokens, each value shown once', async () => {
      const { page, context, problems } = await openPage();
      await drawn(page, () => page.goto(`${server.url}/?token=${API_KEY}#/activity/${HOST}/day/${DAY}`));
      const link = page.getByRole('link', { name: 'Tokens', exact: true });
      await link.waitFor();
      await drawn(page, () => link.click());
      assert.match(await page.locator('main h1').innerText(), /^API tokens \(1\)$/);
      const [listed] = await tokenRows(page);
      assert.deepEqual([listed.Name, listed.Scope, listed.Hosts, listed.Expires], [READER, 'read', '–', 'never']);
      assert.match(listed.Created, /\d{4}, \d\d:\d\d$/);
      // No token's value anywhere on the page, only names.
      assert.ok(!(await page.content()).includes('awt_'), 'a token value is on the page');

      // The hosts are asked for a write token only.
      const hosts = page.getByLabel('Hosts', { exact: true });
      assert.ok(await hosts.isHidden());
      await page.getByLabel('Scope', { exact: true }).selectOption('write');
      assert.ok(await hosts.isVisible());
      await page.getByLabel('Scope', { exact: true }).selectOption('read');
      assert.ok(await hosts.isHidden());

      await page.getByLabel('Name', { exact: true }).fill('backup-script');
      await page.getByLabel('Expires', { exact: true }).fill('2099-12-31');
      await page.getByRole('button', { name: 'Add token' }).click();
      const box = page.locator('.new-token');
      await box.waitFor();
      assert.match(await box.innerText(), /will not be shown again/);
      const added = await box.locator('code').innerText();
      assert.match(added, /^awt_[0-9a-f]{64}$/);
      assert.equal(await bucketsStatus(added), 200);
      const row = page.locator('table.tokens tbody tr', { hasText: 'backup-script' });
      await row.waitFor();
      const rows = await tokenRows(page);
      assert.deepEqual(
        rows.map(row => [row.Name, row.Scope]),
        [
          ['backup-script', 'read'],
          [READER, 'read'],
        ],
      );
      assert.equal(rows[0].Expires, '31 Dec 2099, 00:00');
      const table = await page.locator('table.tokens').innerText();
      assert.ok(!table.includes('awt_') && !table.includes(reader), table);
      await shoot(page, 'tokens-1280-light');
      await assertAccessible(page, 'tokens-1280-light');

      // Revoking asks first; Cancel keeps the token.
      await page.getByRole('button', { name: 'Revoke backup-script', exact: true }).click();
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('button', { name: 'Revoke backup-script', exact: true }).click();
      await page.getByRole('button', { name: 'Yes, revoke backup-script', exact: true }).click();
      await row.waitFor({ state: 'detached' });
      assert.equal(await box.count(), 0, 'the value of a revoked token is still shown');
      assert.deepEqual((await tokenRows(page)).map(row => row.Name), [READER]);
      assert.equal(await bucketsStatus(added), 401);
      assert.equal(await bucketsStatus(reader), 200);
      assertClean(problems);
      await context.close();

      // At phone width, in dark mode.
      const phone = await openPage({ width: 390, dark: true });
      await drawn(phone.page, () => phone.page.goto(`${server.url}/?token=${API_KEY}#/tokens`));
      assert.deepEqual((await tokenRows(phone.page)).map(row => row.Name), [READER]);
      const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window at 390px`);
      await shoot(phone.page, 'tokens-390-dark');
      await assertAccessible(phone.page, 'tokens-390-dark');
      assertClean(phone.problems);
      await phone.context.close();
    });
  });
});

describe('a hub holding several devices', () => {
  let server;
  before(async () => {
    server = await startServer();
    await seedDevices(server);
  });
  after(async () => {
    await server?.stop();
  });

  test('"All devices" adds up the hosts\' time, each host\'s total and timeline beside it', async () => {
    const [laptop, desktop] = DEVICES;
    const { page, context, problems } = await openPage();
    const hostTotals = {};
    for (const host of DEVICES) {
      await drawn(page, () => page.goto(`${server.url}/#/activity/${host}/day/${DAY}`));
      hostTotals[host] = await total(page);
    }
    assert.deepEqual(hostTotals, { [laptop]: '1h 40m', [desktop]: '1h' });

    // The most recently active host first, all devices before it; the
    // browser bucket without a host name of its own is no host.
    const picker = page.getByLabel('Host');
    assert.deepEqual(await picker.locator('option').allInnerTexts(), ['All devices', laptop, desktop]);
    await drawn(page, () => picker.selectOption({ label: 'All devices' }));
    assert.ok(page.url().endsWith(`#/activity/*/day/${DAY}`), page.url());
    assert.equal(await picker.inputValue(), '*');

    const sum = await total(page);
    assert.equal(sum, '2h 40m');
    assert.equal(seconds(sum), seconds(hostTotals[laptop]) + seconds(hostTotals[desktop]));
    const facts = await page.locator('.card.summary .fact').allInnerTexts();
    assert.ok(facts.includes(`${laptop} 1h 40m`) && facts.includes(`${desktop} 1h`), facts.join(' | '));
    // The top lists are those of the sum, as the total.
    assert.deepEqual(await cardRows(page, 'Top applications'), [
      ['Code', '1h 25m'],
      ['Firefox', '45m'],
      ['Terminal', '30m'],
    ]);
    assert.deepEqual(await cardRows(page, 'Top window titles'), [
      ['main.rs - Code', '1h'],
      ['YouTube - Mozilla Firefox', '45m'],
      ['lib.rs - Code', '25m'],
      ['zsh', '20m'],
      ['bash', '10m'],
    ]);
    assert.deepEqual(await cardRows(page, 'Top categories'), [
      ['Work > Programming', '1h 25m'],
      ['Media > Video', '45m'],
      ['Shell', '30m'],
    ]);
    // The browser time is the laptop's only: its YouTube time is not
    // counted again for the desktop's Firefox.
    assert.deepEqual(await cardRows(page, 'Top browser domains'), [
      ['youtube.com', '20m'],
      ['docs.rs', '10m'],
    ]);
    // The hour chart adds the hosts up: both were busy at 09:00-10:00.
    const hours = await page.locator('.columns .column').evaluateAll(columns =>
      columns.map(column => column.getAttribute('aria-label')),
    );
    assert.deepEqual(hours.slice(5, 8), ['09:00: 1h 25m', '10:00: 45m', '11:00: 20m']);
    // A timeline per host, each of its own events: Code, YouTube and the terminal.
    assert.deepEqual(await page.locator('.timeline-host h3').allInnerTexts(), [laptop, desktop]);
    const strips = await page.locator('.timeline-host .timeline-strip').evaluateAll(all =>
      all.map(strip => strip.getAttribute('aria-label')),
    );
    assert.equal(strips.length, 2);
    for (const label of strips) assert.match(label, /^3 stretches of activity/);
    await shoot(page, 'all-devices-day-1280-light');
    await assertAccessible(page, 'all-devices-day-1280-light');

    // The address keeps the choice, written out or encoded.
    await drawn(page, () => page.keyboard.press('w'));
    assert.ok(page.url().endsWith(`#/activity/*/week/${DAY}`), page.url());
    assert.equal(await total(page), '2h 40m');
    await drawn(page, () => page.goto(`${server.url}/#/activity/%2A/day/${DAY}`));
    assert.equal(await total(page), '2h 40m');
    assert.equal(await picker.inputValue(), '*');
    await drawn(page, () => picker.selectOption(desktop));
    assert.ok(page.url().endsWith(`#/activity/${desktop}/day/${DAY}`), page.url());
    assert.equal(await total(page), '1h');
    assertClean(problems);
    await context.close();

    const phone = await openPage({ width: 390, dark: true });
    await drawn(phone.page, () => phone.page.goto(`${server.url}/#/activity/*/day/${DAY}`));
    assert.equal(await total(phone.page), '2h 40m');
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window at 390px`);
    await shoot(phone.page, 'all-devices-day-390-dark');
    await assertAccessible(phone.page, 'all-devices-day-390-dark');
    assertClean(phone.problems);
    await phone.context.close();
  });
});

describe('a damaged database', () => {
  const PAGE = 4096;
  const TABLE_LEAF = 0x0d;
  let folder;
  let server;
  let lost;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'aw-dashboard-damaged-'));
    const dbPath = join(folder, 'test.db');
    const first = await startServer({ dbPath });
    await seed(first);
    // Enough rows of a bucket no view shows to fill many pages.
    await first.request('POST', '/api/0/buckets/bulk', { client: 'test', type: 'test.bulk', hostname: 'elsewhere' });
    const bulk = Array.from({ length: 3000 }, (_, n) => ({
      timestamp: new Date(Date.UTC(2025, 0, 1) + n * 60_000).toISOString(),
      duration: 50,
      data: { title: `bulk-row ${n} of a bucket no view shows` },
    }));
    await first.request('POST', '/api/0/buckets/bulk/events', bulk);
    await first.stop();
    // Random bytes over one page of the bulk rows, in the middle.
    const file = readFileSync(dbPath);
    const pages = [];
    for (let index = 1; index < file.length / PAGE; index++) {
      const page = file.subarray(index * PAGE, (index + 1) * PAGE);
      if (page[0] === TABLE_LEAF && page.includes('bulk-row')) pages.push(index);
    }
    const index = pages[Math.floor(pages.length / 2)];
    lost = file.readUInt16BE(index * PAGE + 3);
    let state = 12345;
    for (let offset = index * PAGE; offset < (index + 1) * PAGE; offset++) {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      file[offset] = state >> 16;
    }
    writeFileSync(dbPath, file);
    server = await startServer({ dbPath });
  });
  after(async () => {
    await server?.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  test('a salvage at start is announced above the views, which still draw', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(dayUrl(server)));
    assert.equal(await total(page), TUESDAY.total);
    const banner = page.locator('#database-notice');
    await banner.waitFor({ timeout: 30_000 });
    const text = await banner.innerText();
    assert.match(text, /The database was damaged and has been salvaged/);
    const status = await server.request('GET', '/api/0/database/status');
    const events = status.salvage.events.toLocaleString('en');
    assert.ok(text.includes(`${events} events came back`), text);
    assert.ok(text.includes(status.salvage.damaged), text);
    assert.match(text, /aw-server restore FILE/);
    const bulk = status.salvage.buckets.find(bucket => bucket.id === 'bulk');
    assert.equal(bulk.recovered, 3000 - lost);
    await shoot(page, 'salvaged-database-1280-light');
    await assertAccessible(page, 'salvaged-database-1280-light');
    assertClean(problems);
    await context.close();
  });
});
