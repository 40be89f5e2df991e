// The Status page (#/status) against a server with `[sync]` and
// `[retention]` in its config: a sync pass made from the page with the
// copy another device pushed into the shared folder, a snapshot, a vacuum
// after deletes, retention's last run and the watchers, silent ones first;
// each read back through the HTTP API. Also that the managing pages load
// only when first opened, and the page (and the top navigation) at phone
// width, light and dark.
//
// Run through scripts/test-dashboard, as dashboard.test.mjs.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { assertAccessible, assertClean, drawn, openPage, shoot, useBrowser } from './page.mjs';
import { HOST, TZ, seed, startServer } from './server.mjs';

/** The device ids of the two servers sharing the sync folder. */
const LAPTOP = 'laptop-device';
const DESK = 'desk-device';
/** The other device's one watcher, whose events this server pulls. */
const DESK_BUCKET = 'aw-watcher-window_desk';
const DESK_EVENTS = 3;

useBrowser();

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "28 Nov 2026, 14:05": a time of the API as the page writes it, in the tests' zone. */
function localTime(value) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone: TZ,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(new Date(value))
      .map(part => [part.type, part.value]),
  );
  return `${Number(parts.day)} ${MONTHS[parts.month - 1]} ${parts.year}, ${parts.hour}:${parts.minute}`;
}

/** A size as the page writes it: "86 kB", "1.6 MB". */
const SIZE = '[\\d.]+ [kMG]?B';

/** The `<time datetime>` of an API time, to the millisecond. */
const isoOf = value => new Date(value).toISOString();

/** A card of the page, by its heading. */
const cardOf = (page, title) => page.getByRole('region', { name: title, exact: true });

/** A card's facts: `{name: {text, times: [datetime...], sizes: {name: bytes}}}`. */
function factsOf(page, title) {
  return cardOf(page, title)
    .locator('dl.facts')
    .first()
    .evaluate(list =>
      Object.fromEntries(
        [...list.querySelectorAll('dt')].map(term => {
          const value = term.nextElementSibling;
          return [
            term.textContent,
            {
              text: value.textContent,
              times: [...value.querySelectorAll('time')].map(element => element.getAttribute('datetime')),
              sizes: Object.fromEntries(
                [...value.querySelectorAll('data[data-size]')].map(data => [data.dataset.size, Number(data.value)]),
              ),
            },
          ];
        }),
      ),
    );
}

/**
 * A table's rows as objects by column (the cells' data-label), each cell
 * `{text, time, size}`: its text, its `<time datetime>`, its `<data value>`.
 */
const tableRows = locator =>
  locator.locator('tbody tr').evaluateAll(rows =>
    rows.map(row =>
      Object.fromEntries(
        [...row.children].map(cell => [
          cell.dataset.label,
          {
            text: cell.textContent,
            time: cell.querySelector('time')?.getAttribute('datetime') ?? null,
            size: cell.querySelector('data')?.value ?? null,
          },
        ]),
      ),
    ),
  );

describe('a server with [sync] and [retention]', () => {
  let folder;
  let desk;
  let server;
  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'aw-dashboard-sync-'));
    const sync = `[sync]\nfolder = "${folder}"\n`;
    // Another device: its copy in the shared folder is what this server pulls.
    desk = await startServer({ config: sync, args: ['--device-id', DESK] });
    await desk.request('POST', `/api/0/buckets/${DESK_BUCKET}`, {
      client: 'test',
      type: 'currentwindow',
      hostname: 'desk',
    });
    await desk.request(
      'POST',
      `/api/0/buckets/${DESK_BUCKET}/events`,
      Array.from({ length: DESK_EVENTS }, (_, n) => ({
        timestamp: `2026-03-10T${String(9 + n).padStart(2, '0')}:00:00+05:30`,
        duration: 600,
        data: { app: 'Code', title: `desk ${n}` },
      })),
    );
    await desk.request('POST', '/api/0/sync/run?mode=push');
    await desk.stop();
    desk = null;
    server = await startServer({
      config: `${sync}\n[retention]\nkeep_days = 3650\n`,
      args: ['--device-id', LAPTOP],
    });
    await seed(server);
  });
  after(async () => {
    await desk?.stop();
    await server?.stop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  test('"Sync now" makes a pass, and the page shows it: when, and what came from each device', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(`${server.url}/#/status`));
    const before = await factsOf(page, 'Sync through a shared folder');
    assert.equal(before.Folder.text, folder);
    assert.equal(before.Passes.text, '0 finished, 0 failed since the server started');
    assert.equal(before['Last pass'].text, 'none since the server started');
    assert.match(before.Schedule.text, /^off: passes run only when asked for/);

    await page.getByRole('button', { name: 'Sync now' }).click();
    const sync = cardOf(page, 'Sync through a shared folder');
    // Said once the facts are drawn again from the status the pass left.
    await sync.locator('.action-message.done').waitFor({ timeout: 30_000 });
    assert.match(
      await sync.locator('.action-message').innerText(),
      new RegExp(`^Synced: ${DESK_EVENTS} new events from 1 device, \\d+ events pushed\\.$`),
    );

    const status = await server.request('GET', '/api/0/sync/status');
    const pass = status.last_pass;
    assert.equal(status.passes, 1);
    const [source] = pass.pull.sources;
    assert.equal(source.device, DESK);
    assert.equal(source.inserted, DESK_EVENTS);
    const after = await factsOf(page, 'Sync through a shared folder');
    assert.equal(after.Passes.text, '1 finished, 0 failed since the server started');
    assert.equal(after.State.text, 'ok');
    // When: "just now", the local time, and the exact time in datetime.
    assert.deepEqual(after['Last pass'].times, [isoOf(pass.finished)]);
    assert.match(after['Last pass'].text, new RegExp(`^just now \\(${localTime(pass.finished)}\\), took \\d+ ms$`));
    // What came from each device, as the status says.
    const rows = await tableRows(sync.locator('table.pulled'));
    const columns = ['Device', 'File', 'New', 'Updated', 'Deleted', 'Already here', 'Dropped by privacy filters'];
    assert.deepEqual(
      rows.map(row => columns.map(column => row[column].text)),
      pass.pull.sources.map(item => [
        item.device,
        item.file,
        ...[item.inserted, item.updated, item.deleted, item.skipped, item.dropped].map(String),
      ]),
    );
    assert.equal(rows[0].File.text, `${DESK}/test.db`);
    assert.equal(
      await sync.locator('.pushed').innerText(),
      `Pushed ${pass.push.buckets} buckets to ${pass.push.file}: ${pass.push.written} events written, 0 deleted.`,
    );
    assert.equal(pass.push.file, join(folder, LAPTOP, 'test.db'));
    await assertAccessible(page, 'the status page after a sync pass');
    await shoot(page, 'status-after-sync-1280-light');
    assertClean(problems);
    await context.close();
  });

  test('a snapshot taken from the page is listed, as /api/0/backup/status lists it', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(`${server.url}/#/status`));
    const card = cardOf(page, 'Snapshots of the database');
    assert.match(await card.innerText(), /No snapshots in the folder yet\./);
    await page.getByRole('button', { name: 'Take a snapshot now' }).click();
    await card.locator('.action-message.done').waitFor({ timeout: 30_000 });
    await card.locator('table.snapshots').waitFor();

    const backup = await server.request('GET', '/api/0/backup/status');
    assert.equal(backup.snapshots.length, 1);
    const [snapshot] = backup.snapshots;
    const name = basename(snapshot.path);
    assert.match(
      await card.locator('.action-message').innerText(),
      new RegExp(`^Snapshot written: ${name}, ${SIZE}, in \\d`),
    );
    const rows = await tableRows(card.locator('table.snapshots'));
    assert.deepEqual(
      rows.map(row => [row.File.text, row.Taken.time, row.Kind.text, Number(row.Size.size)]),
      [[name, isoOf(snapshot.time), 'asked for', snapshot.bytes]],
    );
    assert.match(name, /^aw-server-manual-/);
    assert.match(rows[0].Taken.text, new RegExp(`^just now \\(${localTime(snapshot.time)}\\)$`));
    const facts = await factsOf(page, 'Snapshots of the database');
    assert.equal(facts.Folder.text, backup.dir);
    assert.match(facts.Last.text, new RegExp(`^ok, just now \\(${localTime(backup.last.time)}\\), asked for, ${SIZE}$`));
    assert.deepEqual(facts.Last.times, [isoOf(backup.last.time)]);
    assert.match(facts.Schedule.text, /^off: snapshots only when asked for/);
    await assertAccessible(page, 'the status page after a snapshot');
    assertClean(problems);
    await context.close();
  });

  test('after deletes the page shows what a vacuum gives back; it asks first, then says the sizes', async () => {
    // Many events in a bucket no other test looks at, then deleted.
    await server.request('POST', '/api/0/buckets/bulk', { client: 'test', type: 'test.bulk', hostname: 'elsewhere' });
    const bulk = Array.from({ length: 3000 }, (_, n) => ({
      timestamp: new Date(Date.UTC(2025, 0, 1) + n * 60_000).toISOString(),
      duration: 50,
      data: { title: `bulk row ${n}, with enough text to fill some pages of the database file` },
    }));
    await server.request('POST', '/api/0/buckets/bulk/events', bulk);
    await server.request('DELETE', '/api/0/buckets/bulk');
    const database = await server.request('GET', '/api/0/database/status');
    assert.ok(database.reclaimable > 0, `nothing reclaimable after the deletes: ${JSON.stringify(database)}`);

    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(`${server.url}/#/status`));
    const card = cardOf(page, 'The database');
    const before = await factsOf(page, 'The database');
    assert.deepEqual(before.Reclaimable.sizes, { reclaimable: database.reclaimable });
    // The size of the file and its WAL moves as the WAL is copied back
    // into the file: shown, not compared.
    assert.ok(before.Size.sizes.size > 0);
    assert.match(before.Size.text, new RegExp(`^${SIZE} with its write-ahead log$`));
    assert.match(before.Reclaimable.text, new RegExp(`^${SIZE} a vacuum would give back$`));
    // The cache of finished periods, as the database status gives it.
    const cache = (await server.request('GET', '/api/0/database/status')).cache;
    assert.ok(cache, 'the cache is on by default');
    assert.match(
      before.Cache.text,
      new RegExp(`^[\\d,]+ answers?, ${SIZE} of ${SIZE}; [\\d,]+ hits?, [\\d,]+ miss(es)? since the start$`),
    );
    assert.equal(Number(before.Cache.sizes['cache-limit']), cache.max_bytes);
    assert.match(before['Pre-warm'].text, /^(nothing remembered from before|computing the days asked for before: \d+ of \d+|[\d,]+ periods? asked for before computed again, in [\d.]+ s of CPU)$/);

    // It asks first, saying what it does; Cancel leaves it.
    await page.getByRole('button', { name: 'Vacuum', exact: true }).click();
    const question = await card.locator('.confirm').innerText();
    assert.match(
      question,
      new RegExp(
        'rebuilds the database file: the watchers’ writes wait while it runs, and it needs free disk space ' +
          `about the file’s size \\(${SIZE}\\)\\. It gives back about ${SIZE}\\.`,
      ),
    );
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Yes, vacuum');
    await assertAccessible(page, 'the vacuum question');
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await card.locator('.confirm').count(), 0);
    assert.equal((await server.request('GET', '/api/0/database/status')).reclaimable, database.reclaimable);

    await page.getByRole('button', { name: 'Vacuum', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, vacuum' }).click();
    await card.locator('.action-message.done').waitFor({ timeout: 30_000 });
    const sizes = await card.locator('.action-message data[data-size]').evaluateAll(all =>
      Object.fromEntries(all.map(element => [element.dataset.size, Number(element.value)])),
    );
    assert.ok(sizes['size-after'] < sizes['size-before'], JSON.stringify(sizes));
    assert.match(
      await card.locator('.action-message').innerText(),
      new RegExp(`^Vacuumed: ${SIZE} before, ${SIZE} after \\(${SIZE} given back\\)\\.$`),
    );
    // The facts are drawn again: less to give back now.
    const now = await server.request('GET', '/api/0/database/status');
    assert.ok(now.reclaimable < database.reclaimable);
    assert.deepEqual((await factsOf(page, 'The database')).Reclaimable.sizes, { reclaimable: now.reclaimable });
    await assertAccessible(page, 'the status page after a vacuum');
    await shoot(page, 'status-after-vacuum-1280-light');
    assertClean(problems);
    await context.close();
  });

  test("retention's last run is shown: when, its cutoff and what it deleted", async () => {
    // The first run is at start; wait for it to be recorded.
    let retention = await server.request('GET', '/api/0/retention/status');
    for (let tries = 0; !retention.last_run && tries < 100; tries++) {
      await new Promise(resolve => setTimeout(resolve, 100));
      retention = await server.request('GET', '/api/0/retention/status');
    }
    assert.ok(retention.enabled && retention.last_run, JSON.stringify(retention));
    const run = retention.last_run;

    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(`${server.url}/#/status`));
    const card = cardOf(page, 'Retention');
    assert.match(
      await card.innerText(),
      /Events that ended more than 3,650 days ago are deleted, when the server starts and once a day\./,
    );
    const facts = await factsOf(page, 'Retention');
    assert.equal(facts.State.text, 'ok');
    assert.deepEqual(facts['Last run'].times, [isoOf(run.finished), isoOf(run.cutoff)]);
    assert.equal(
      facts['Last run'].text.replace(/^.*?\(/, '('),
      `(${localTime(run.finished)}): deleted ${run.deleted} events that ended before ${localTime(run.cutoff)}`,
    );
    // Once a day: the next run is in a day less the time since the first.
    assert.deepEqual(facts['Next run'].times, [isoOf(retention.next_run)]);
    assert.match(facts['Next run'].text, new RegExp(`^in 23 hours \\(${localTime(retention.next_run)}\\)$`));
    await assertAccessible(page, 'the retention card');
    assertClean(problems);
    await context.close();
  });

  test('the watchers are listed by when they last sent data, the silent ones first', async () => {
    // One watcher sending now, one bucket that never got data.
    const live = `aw-watcher-afk_${HOST}-phone`;
    await server.request('POST', `/api/0/buckets/${live}`, { client: 'test', type: 'afkstatus', hostname: 'phone' });
    await server.request('POST', `/api/0/buckets/${live}/heartbeat?pulsetime=60`, {
      timestamp: new Date().toISOString(),
      duration: 0,
      data: { status: 'not-afk' },
    });
    const empty = 'aw-watcher-window_new-laptop';
    await server.request('POST', `/api/0/buckets/${empty}`, {
      client: 'test',
      type: 'currentwindow',
      hostname: 'new-laptop',
    });

    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(`${server.url}/#/status`));
    const rows = await tableRows(cardOf(page, 'Watchers').locator('table.watchers'));
    const buckets = Object.values(await server.request('GET', '/api/0/buckets/'));
    const end = bucket => (bucket.metadata?.end ? new Date(bucket.metadata.end).getTime() : -Infinity);
    const expected = buckets.sort((a, b) => end(a) - end(b) || a.id.localeCompare(b.id));
    assert.deepEqual(
      rows.map(row => [row.Bucket.text, row.Host.text, row['Last data'].time]),
      expected.map(bucket => [bucket.id, bucket.hostname, bucket.metadata?.end ? isoOf(bucket.metadata.end) : null]),
    );
    // The words say it, not only the colour.
    const states = rows.map(row => row.State.text);
    assert.equal(states[0], 'no data');
    assert.equal(rows[0]['Last data'].text, 'never');
    assert.equal(states.at(-1), 'sending');
    assert.equal(rows.at(-1).Bucket.text, live);
    assert.deepEqual(new Set(states.slice(1, -1)), new Set(['silent']));
    // The pulled copy of the other device's watcher is one of them.
    const ids = rows.map(row => row.Bucket.text);
    assert.ok(ids.includes(`${DESK_BUCKET}-synced-from-desk`), ids.join(' '));
    assert.match(rows[1]['Last data'].text, /^\d+ days ago \(\d+ \w{3} 2026, \d\d:\d\d\)$/);
    assertClean(problems);
    await context.close();
  });

  test('the managing pages load when first opened, and once', async () => {
    const { page, context, problems } = await openPage();
    const scripts = [];
    page.on('request', request => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith('/js/')) scripts.push(path.slice('/js/'.length));
      if (path === '/css/manage.css') scripts.push('manage.css');
    });
    // The Categories page's edits of the list are a script of their own, loaded with it.
    const lazy = ['views/categories.js', 'category-edits.js', 'views/privacy.js', 'views/status.js'];
    // So is the managing pages' style sheet, loaded with the first of them.
    lazy.push('manage.css');
    const asked = name => scripts.filter(script => script === name).length;
    await drawn(page, () => page.goto(`${server.url}/#/activity`));
    for (const name of lazy) assert.equal(asked(name), 0, `${name} was loaded with the day view`);
    const status = page.locator('header nav').getByRole('link', { name: 'Status' });
    const activity = page.locator('header nav').getByRole('link', { name: 'Activity' });
    await drawn(page, () => status.click());
    assert.equal(await page.locator('main h1').innerText(), 'Status');
    assert.equal(asked('views/status.js'), 1);
    await drawn(page, () => activity.click());
    await drawn(page, () => status.click());
    await drawn(page, () => page.goBack());
    await drawn(page, () => page.goForward());
    assert.equal(await page.locator('main h1').innerText(), 'Status');
    assert.deepEqual(
      lazy.map(name => [name, asked(name)]),
      [
        ['views/categories.js', 0],
        ['category-edits.js', 0],
        ['views/privacy.js', 0],
        ['views/status.js', 1],
        ['manage.css', 1],
      ],
    );
    // The Categories page brings its edits first, once.
    const categories = page.locator('header nav').getByRole('link', { name: 'Categories' });
    await drawn(page, () => categories.click());
    assert.equal(await page.locator('main h1').innerText(), 'Categories');
    await page.locator('#preview[data-state="ready"]').waitFor({ timeout: 30_000 });
    await drawn(page, () => status.click());
    await drawn(page, () => categories.click());
    assert.deepEqual(
      lazy.map(name => [name, asked(name)]),
      [
        ['views/categories.js', 1],
        ['category-edits.js', 1],
        ['views/privacy.js', 0],
        ['views/status.js', 1],
        ['manage.css', 1],
      ],
    );
    assert.ok(scripts.indexOf('category-edits.js') < scripts.indexOf('views/categories.js'), scripts.join(' '));
    await page.locator('#preview[data-state="ready"]').waitFor({ timeout: 30_000 });
    assertClean(problems);
    await context.close();
  });

  test('phone width and dark mode: the page and the top navigation fit, and pass axe', async () => {
    for (const [width, dark] of [
      [390, false],
      [390, true],
      [1280, false],
      [1280, true],
    ]) {
      const suffix = `${width}-${dark ? 'dark' : 'light'}`;
      const { page, context, problems } = await openPage({ width, dark });
      await drawn(page, () => page.goto(`${server.url}/#/status`));
      // The Tokens link shows once the access answer came (this server has no key: all may).
      await page.getByRole('link', { name: 'Tokens', exact: true }).waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window at ${suffix}`);
      // Every link of the navigation is on screen, in at most two rows.
      const links = await page.locator('header nav a:visible').evaluateAll(all =>
        all.map(link => {
          const box = link.getBoundingClientRect();
          return { name: link.textContent, left: box.left, right: box.right, top: Math.round(box.top) };
        }),
      );
      assert.deepEqual(
        links.map(link => link.name),
        ['Activity', 'Search', 'Categories', 'Privacy', 'Buckets', 'Hosts', 'Alerts', 'Status', 'Tokens', 'About'],
      );
      for (const link of links) {
        assert.ok(link.left >= 0 && link.right <= width, `${link.name} is off screen at ${suffix}`);
      }
      const rows = new Set(links.map(link => link.top)).size;
      assert.ok(rows <= (width < 700 ? 2 : 1), `the navigation wraps into ${rows} rows at ${suffix}`);
      await shoot(page, `status-${suffix}`);
      await assertAccessible(page, `the status page at ${suffix}`);
      assertClean(problems);
      await context.close();
    }
  });

  test('as a hub, the page names the devices that forward to it and when each last sent', async () => {
    const before = await openPage();
    await drawn(before.page, () => before.page.goto(`${server.url}/#/status`));
    // No device forwards yet: no card.
    assert.equal(await cardOf(before.page, 'Devices forwarding here').count(), 0);
    assertClean(before.problems);
    await before.context.close();
    // A device forwards a bucket, as its server does.
    const sent = await server.request('POST', '/api/0/forward/phone-device', {
      bucket: { id: 'aw-watcher-window_phone', type: 'currentwindow', client: 'aw-watcher-window', hostname: 'phone' },
      after: 0,
      events: [{ id: 1, start: '2026-03-10T09:00:00Z', end: '2026-03-10T09:05:00Z', data: { app: 'Maps' } }],
      tail: [],
      high_water: 1,
      count: 1,
    });
    const devices = await server.request('GET', '/api/0/forward');
    assert.equal(devices.length, 1);
    assert.equal(devices[0].received, sent.received);
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(`${server.url}/#/status`));
    const card = cardOf(page, 'Devices forwarding here');
    const rows = await tableRows(card.locator('table.devices'));
    assert.deepEqual(
      rows.map(row => [row.Device.text, row.Hosts.text, row.Buckets.text, row['Last received'].time]),
      [['phone-device', 'phone', 'aw-watcher-window_phone', isoOf(sent.received)]],
    );
    assert.match(rows[0]['Last received'].text, /^just now \(/);
    await assertAccessible(page, 'the status page of a hub');
    assertClean(problems);
    await context.close();
  });
});

describe('a server without [sync] or [retention], forwarding to a hub that does not answer', () => {
  /** Nothing listens on the discard port. */
  const HUB = 'http://127.0.0.1:9';
  let server;
  before(async () => {
    server = await startServer({ config: `[hub]\nurl = "${HUB}"\ntoken = "awt_${'0'.repeat(64)}"\n` });
  });
  after(async () => {
    await server?.stop();
  });

  test('the page says how to configure sync and retention, and offers no sync it would refuse', async () => {
    const refused = await fetch(`${server.url}/api/0/sync/run`, { method: 'POST' });
    await refused.body?.cancel();
    assert.equal(refused.status, 409);
    const { page, context, problems } = await openPage({ width: 390 });
    await drawn(page, () => page.goto(`${server.url}/#/status`));
    const sync = cardOf(page, 'Sync through a shared folder');
    assert.match(await sync.innerText(), /Not configured: this server has no \[sync\] section in its config file\./);
    assert.match(await sync.locator('pre').innerText(), /^\[sync\]\nenabled = true\nfolder = /);
    assert.equal(await page.getByRole('button', { name: 'Sync now' }).count(), 0);
    assert.match(
      await cardOf(page, 'Retention').innerText(),
      /Off: every event is kept\.[\s\S]*\[retention\]\nkeep_days = 365/,
    );
    assert.match(await cardOf(page, 'Watchers').innerText(), /No buckets yet/);
    await shoot(page, 'status-unconfigured-390-light');
    await assertAccessible(page, 'the status page of a server without [sync]');
    assertClean(problems);
    await context.close();
  });

  test("the hub's failures are shown, and a pass asked for that fails says why beside its button", async () => {
    // The first pass runs at start, and fails.
    let hub = (await server.request('GET', '/api/0/sync/status')).hub;
    for (let tries = 0; hub.failures === 0 && tries < 100; tries++) {
      await new Promise(resolve => setTimeout(resolve, 100));
      hub = (await server.request('GET', '/api/0/sync/status')).hub;
    }
    assert.ok(hub.failures > 0, JSON.stringify(hub));
    const { page, context, problems } = await openPage({ expectErrors: ['/api/0/sync/run'] });
    await drawn(page, () => page.goto(`${server.url}/#/status`));
    const card = cardOf(page, 'Forwarding to a hub');
    const facts = await factsOf(page, 'Forwarding to a hub');
    assert.equal(facts.State.text, 'failed');
    assert.equal(facts.Hub.text, HUB);
    assert.equal(facts.Schedule.text, 'a pass every minute');
    assert.match(facts.Passes.text, /^0 finished, [1-9]\d* failed since the server started$/);
    assert.match(
      await card.locator('p.problem').innerText(),
      new RegExp(`^Failed .*: the hub at ${HUB} did not answer`),
    );

    await page.getByRole('button', { name: 'Forward now' }).click();
    const message = card.locator('.action-message.problem');
    await message.waitFor({ timeout: 30_000 });
    assert.match(await message.innerText(), new RegExp(`^Forwarding failed: the hub at ${HUB} did not answer`));
    await assertAccessible(page, 'a failed forwarding pass');
    await shoot(page, 'status-hub-failed-1280-light');
    assertClean(problems);
    await context.close();
  });
});
