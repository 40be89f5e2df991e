// Deleting a time range from the day view (views/range.js), driven in
// Chromium against a seeded server (server.mjs): the range typed or
// dragged across the timeline, the server's dry run per bucket, the
// confirmation, and the events gone from the API afterwards.
//
// Run through scripts/test-dashboard, which installs Chromium and builds
// the server.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertAccessible, assertClean, drawn, openPage, shoot, useBrowser } from './page.mjs';
import { defined, loadScripts } from './scripts.mjs';
import { HOST, seed, startServer } from './server.mjs';

const DAY = '2026-03-10';
const WINDOW = `aw-watcher-window_${HOST}`;
const AFK = `aw-watcher-afk_${HOST}`;
const WEB = 'aw-watcher-web-firefox';

useBrowser();

const dayUrl = server => `${server.url}/#/activity/${HOST}/day/${DAY}`;
const total = page => page.locator('.card.summary .total').innerText();

/** Opens the form under the timeline. */
async function openForm(page) {
  await page.getByRole('button', { name: 'Delete a time range…' }).click();
  await page.getByLabel('From', { exact: true }).waitFor();
}

/** The rows of the dry run's table: [bucket, deleted, trimmed]. */
const previewRows = page =>
  page.locator('table.range-counts tbody tr').evaluateAll(rows =>
    rows.map(row => [row.querySelector('th').textContent, ...[...row.querySelectorAll('td')].map(cell => Number(cell.textContent))]),
  );

/** "HH:MM" to minutes after midnight. */
const minutes = value => {
  const [hours, mins] = value.split(':').map(Number);
  return hours * 60 + mins;
};

test("a time typed is of the day shown: before the day starts, the next morning's; the start as an end, the day's end", () => {
  // range.js defines its name on `window`, as a page's script does; a
  // `window` left in Node would make other code believe it runs in a page.
  globalThis.window = globalThis;
  loadScripts('dom.js', 'time.js', 'views/range.js');
  const { timeOfDay } = defined('rangeDelete');
  delete globalThis.window;
  const day = [new Date(2026, 2, 10, 4, 0), new Date(2026, 2, 11, 4, 0)];
  const at = (value, isEnd = false) => timeOfDay(value, day, isEnd)?.toISOString() ?? null;
  assert.equal(at('10:30'), '2026-03-10T05:00:00.000Z');
  assert.equal(at('03:00'), '2026-03-10T21:30:00.000Z');
  assert.equal(at('03:59:30', true), '2026-03-10T22:29:30.000Z');
  assert.equal(at('04:00'), '2026-03-09T22:30:00.000Z');
  assert.equal(at('04:00', true), '2026-03-10T22:30:00.000Z');
  assert.equal(at(''), null);
  assert.equal(at('noon'), null);
});

describe('deleting a time range from the day view', () => {
  let server;
  before(async () => {
    server = await startServer();
    await seed(server);
  });
  after(async () => {
    await server?.stop();
  });

  test('the form opens at phone width and wide, light and dark; a drag across the timeline picks the range', async () => {
    for (const [width, dark] of [
      [390, false],
      [390, true],
      [1280, false],
      [1280, true],
    ]) {
      const { page, context, problems } = await openPage({ width, dark });
      const suffix = `${width}-${dark ? 'dark' : 'light'}`;
      await drawn(page, () => page.goto(dayUrl(server)));
      await openForm(page);
      // Every bucket of the host, all chosen.
      const boxes = page.locator('.range-buckets input[type=checkbox]');
      assert.deepEqual(await boxes.evaluateAll(all => all.map(box => [box.value, box.checked])), [
        [AFK, true],
        [WEB, true],
        [WINDOW, true],
      ]);
      // Drag from 12:00 to 13:00 across the strip (the day starts at 04:00).
      const strip = page.locator('.timeline-strip');
      await strip.scrollIntoViewIfNeeded();
      const box = await strip.boundingBox();
      const x = hour => box.x + (box.width * (hour - 4)) / 24;
      const y = box.y + box.height / 2;
      await page.mouse.move(x(12), y);
      await page.mouse.down();
      await page.mouse.move(x(12.5), y, { steps: 4 });
      await page.mouse.move(x(13), y, { steps: 4 });
      await page.mouse.up();
      // To the minute, within what a pixel is worth at this width.
      const slack = Math.ceil((24 * 60) / box.width) + 1;
      const from = await page.getByLabel('From', { exact: true }).inputValue();
      const to = await page.getByLabel('To', { exact: true }).inputValue();
      assert.ok(Math.abs(minutes(from) - 12 * 60) <= slack, `dragged from ${from}`);
      assert.ok(Math.abs(minutes(to) - 13 * 60) <= slack, `dragged to ${to}`);
      assert.equal(await page.locator('.timeline-strip .range-selection').count(), 1);
      // What the dry run shows, with the timeline's selection.
      await page.getByLabel('From', { exact: true }).fill('12:00');
      await page.getByLabel('To', { exact: true }).fill('13:00');
      await page.getByRole('button', { name: 'Show what would be deleted' }).click();
      await page.locator('table.range-counts').waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window at ${width}px`);
      await shoot(page, `range-${suffix}`);
      await assertAccessible(page, `the day view with the range form at ${suffix}`);
      // Cancel closes the form, and nothing was deleted.
      await page.getByRole('button', { name: 'Cancel', exact: true }).last().click();
      await page.getByRole('button', { name: 'Cancel', exact: true }).click();
      await page.locator('.range-form').waitFor({ state: 'detached' });
      assert.equal(await page.locator('.timeline-strip .range-selection').count(), 0);
      assert.ok(await page.getByRole('button', { name: 'Delete a time range…' }).isVisible());
      assertClean(problems);
      await context.close();
    }
    const events = await server.request('GET', `/api/0/buckets/${WINDOW}/events`);
    assert.equal(events.length, 7);
  });

  test('a range ending before it starts is refused beside its end, and nothing is asked', async () => {
    const { page, context, problems } = await openPage();
    const deletes = [];
    page.on('request', request => {
      if (request.method() === 'DELETE') deletes.push(request.url());
    });
    await drawn(page, () => page.goto(dayUrl(server)));
    await openForm(page);
    await page.getByLabel('From', { exact: true }).fill('12:00');
    await page.getByLabel('To', { exact: true }).fill('11:00');
    await page.getByRole('button', { name: 'Show what would be deleted' }).click();
    const to = page.getByLabel('To', { exact: true });
    await page.locator('.range-form .error-text', { hasText: 'must end after it starts' }).waitFor();
    assert.equal(await to.getAttribute('aria-invalid'), 'true');
    // The message is read with the field it is about.
    const described = await to.evaluate(input =>
      input
        .getAttribute('aria-describedby')
        .split(' ')
        .map(id => document.getElementById(id).textContent)
        .join(' '),
    );
    assert.match(described, /The range must end after it starts \(12:00\); the day ends at 04:00\./);
    assert.equal(await page.locator('table.range-counts').count(), 0);
    // Without a bucket there is nothing to delete from either.
    await to.fill('13:00');
    for (const box of await page.locator('.range-buckets input[type=checkbox]').all()) await box.uncheck();
    await page.getByRole('button', { name: 'Show what would be deleted' }).click();
    await page.locator('.range-buckets .error-text', { hasText: 'Choose at least one bucket.' }).waitFor();
    assert.deepEqual(deletes, []);
    await shoot(page, 'range-refused-1280-light');
    await assertAccessible(page, 'the range form refusing a range');
    assertClean(problems);
    await context.close();
  });

  test('a range deleted from the day view is gone from the API, and the view draws again without it', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(dayUrl(server)));
    assert.equal(await total(page), '2h 17m 3s');
    await openForm(page);
    // 10:30-11:00: the YouTube window and both browser events inside,
    // the AFK bucket's 08:00-12:00 split around it.
    await page.getByLabel('From', { exact: true }).fill('10:30');
    await page.getByLabel('To', { exact: true }).fill('11:00');
    await page.getByRole('button', { name: 'Show what would be deleted' }).click();
    await page.locator('table.range-counts').waitFor();
    assert.deepEqual(await previewRows(page), [
      [AFK, 0, 1],
      [WEB, 2, 0],
      [WINDOW, 1, 0],
    ]);
    assert.equal(
      await page.locator('.range-form .confirm').innerText(),
      'This will delete 3 events and trim 1 between 10:30 and 11:00 of Tue, 10 Mar 2026. It cannot be undone.',
    );
    // Nothing is gone before the confirmation.
    assert.equal((await server.request('GET', `/api/0/buckets/${WEB}/events`)).length, 2);
    await drawn(page, () => page.getByRole('button', { name: 'Yes, delete 3 events and trim 1' }).click());
    const note = page.locator('.range-done');
    await note.waitFor();
    assert.equal(await note.innerText(), 'Deleted 3 events and trimmed 1 between 10:30 and 11:00 of Tue, 10 Mar 2026.');
    assert.ok(await note.evaluate(element => element === document.activeElement), 'the note has the focus');
    // The view was drawn again: YouTube's half hour is gone.
    assert.equal(await total(page), '1h 47m 3s');
    const apps = await page
      .locator('section.card', { has: page.locator('h2', { hasText: 'Top applications' }) })
      .locator('.top-list .label')
      .allInnerTexts();
    assert.deepEqual(apps, ['Code', 'Terminal']);
    // And so is it from the API.
    const start = encodeURIComponent(`${DAY}T10:30:00+05:30`);
    const end = encodeURIComponent(`${DAY}T11:00:00+05:30`);
    for (const bucket of [WINDOW, WEB]) {
      assert.deepEqual(await server.request('GET', `/api/0/buckets/${bucket}/events?start=${start}&end=${end}`), []);
    }
    assert.equal((await server.request('GET', `/api/0/buckets/${WINDOW}/events`)).length, 6);
    // The AFK event around the range was cut at its edges, not deleted.
    const from = Date.parse(`${DAY}T10:30:00+05:30`);
    const to = Date.parse(`${DAY}T11:00:00+05:30`);
    const afk = await server.request('GET', `/api/0/buckets/${AFK}/events`);
    const overlapping = afk.filter(event => {
      const begins = Date.parse(event.timestamp);
      return begins < to && begins + event.duration * 1000 > from;
    });
    assert.deepEqual(overlapping, []);
    assert.equal(afk.length, 9);
    await shoot(page, 'range-deleted-1280-light');
    await assertAccessible(page, 'the day view after a range was deleted');
    assertClean(problems);
    await context.close();
  });
});
