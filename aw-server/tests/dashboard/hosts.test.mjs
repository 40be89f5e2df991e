// The Hosts page (views/hosts.js) in Chromium: one Mac known by two
// names, each with a few events, merged from the page with the plan shown
// first (and nothing changed until it is confirmed), then renamed with
// the keyboard alone; the aliases the server kept, and a watcher still
// sending the old name, read back through the HTTP API. axe-core on the
// page with a plan, and screenshots.
//
// Run through scripts/test-dashboard, as dashboard.test.mjs.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertAccessible, assertClean, drawn, openPage, shoot, useBrowser } from './page.mjs';
import { startServer } from './server.mjs';

useBrowser();

const WIFI = 'mac.local';
const CABLE = 'mac.fritz.box';

async function seedTwoNames(server) {
  for (const host of [WIFI, CABLE]) {
    for (const [watcher, type] of [['aw-watcher-window', 'currentwindow'], ['aw-watcher-afk', 'afkstatus']]) {
      await server.request('POST', `/api/0/buckets/${watcher}_${host}`, { client: watcher, type, hostname: host });
    }
  }
  // Monday on Wi-Fi, Tuesday on the cable; an hour on both (10:00-11:00).
  const events = (day, app) =>
    Array.from({ length: 4 }, (_, n) => ({
      timestamp: `2026-03-${day}T${String(9 + n).padStart(2, '0')}:00:00+05:30`,
      duration: 1800,
      data: { app, title: `${app} ${n}` },
    }));
  await server.request('POST', `/api/0/buckets/aw-watcher-window_${WIFI}/events`, [
    ...events('09', 'Code'),
    { timestamp: '2026-03-10T10:00:00+05:30', duration: 3600, data: { app: 'Code', title: 'both' } },
  ]);
  await server.request('POST', `/api/0/buckets/aw-watcher-window_${CABLE}/events`, events('10', 'Firefox'));
  await server.request('POST', `/api/0/buckets/aw-watcher-afk_${WIFI}/events`, [
    { timestamp: '2026-03-09T09:00:00+05:30', duration: 7200, data: { status: 'not-afk' } },
  ]);
}

const bucketIds = async server => Object.keys(await server.request('GET', '/api/0/buckets/')).sort();

/** The hosts table's rows: [host, aliases text]. */
const hostRows = page =>
  page.locator('table.hosts tbody tr').evaluateAll(rows =>
    rows.map(row => [row.dataset.host, row.querySelector('[data-label="Aliases"]').textContent.replace(/\s+/g, ' ').trim()]),
  );

describe('the hosts page', () => {
  let server;
  before(async () => {
    server = await startServer();
    await seedTwoNames(server);
  });
  after(async () => {
    await server?.stop();
  });

  test('two names of one machine merged with the plan shown, then renamed by keyboard', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(`${server.url}/#/hosts`));
    assert.equal(await page.locator('main h1').innerText(), 'Hosts (2)');
    assert.deepEqual(await hostRows(page), [[CABLE, '–'], [WIFI, '–']]);

    // The plan first: nothing changes until it is confirmed.
    await page.getByRole('button', { name: `Merge ${WIFI} into another host` }).click();
    assert.equal(await page.getByLabel('Into host').inputValue(), CABLE);
    await page.getByRole('button', { name: 'Show the plan' }).click();
    const plan = page.locator('#change-plan');
    await plan.locator('table').waitFor();
    const text = await plan.innerText();
    assert.match(text, /The plan: merge mac\.local into mac\.fritz\.box/);
    assert.match(text, /aw-watcher-window_mac\.local\s+aw-watcher-window_mac\.fritz\.box\s+merged into it\s+5\s+4 moved whole, 1 cut, 0 dropped \(30 min the other already had\)/);
    assert.match(text, /aw-watcher-afk_mac\.local\s+aw-watcher-afk_mac\.fritz\.box\s+merged into it/);
    assert.match(text, /Nothing has changed yet/);
    assert.equal((await bucketIds(server)).length, 4, 'the plan changed nothing');
    await shoot(page, 'hosts-plan-1280-light');
    await assertAccessible(page, 'the hosts page with a merge plan');

    await page.getByRole('button', { name: 'Merge now' }).click();
    await plan.getByText(`Done: ${WIFI} is now ${CABLE}`).waitFor();
    assert.match(await plan.innerText(), /Snapshot before the change: .*aw-server-manual-/);
    assert.deepEqual(await bucketIds(server), [`aw-watcher-afk_${CABLE}`, `aw-watcher-window_${CABLE}`]);
    await page.locator('main h1', { hasText: 'Hosts (1)' }).waitFor();
    assert.deepEqual(await hostRows(page), [[CABLE, `${WIFI} ×`]]);

    // A rename with the keyboard alone: the row's button, the name, Enter.
    await page.getByRole('button', { name: `Rename ${CABLE}` }).focus();
    await page.keyboard.press('Enter');
    assert.ok(await page.getByLabel('New name').evaluate(element => element === document.activeElement));
    await page.keyboard.type('mac');
    await page.keyboard.press('Enter');
    await plan.getByText(`The plan: rename ${CABLE} to mac`).waitFor();
    assert.ok(await plan.evaluate(element => element === document.activeElement), 'the plan takes the focus');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await plan.getByText(`Done: ${CABLE} is now mac`).waitFor();
    await page.locator('table.hosts tbody tr[data-host="mac"]').waitFor();
    assert.deepEqual(await hostRows(page), [['mac', `${CABLE} × ${WIFI} ×`]]);
    assert.deepEqual(await bucketIds(server), ['aw-watcher-afk_mac', 'aw-watcher-window_mac']);

    // The merged time is the union of both names' (9 + 4 half hours,
    // the shared hour once), and the watcher on Wi-Fi still writes.
    const merged = await server.request('GET', '/api/0/buckets/aw-watcher-window_mac/events?limit=-1');
    assert.equal(merged.reduce((sum, event) => sum + event.duration, 0), 4 * 1800 + 4 * 1800 + 1800);
    await server.request('POST', `/api/0/buckets/aw-watcher-window_${WIFI}/heartbeat?pulsetime=60`, {
      timestamp: '2026-03-11T09:00:00+05:30',
      duration: 0,
      data: { app: 'Code', title: 'still on Wi-Fi' },
    });
    const after = await server.request('GET', '/api/0/buckets/aw-watcher-window_mac/events?limit=1');
    assert.equal(after[0].data.title, 'still on Wi-Fi');
    await shoot(page, 'hosts-after-1280-light');
    await assertAccessible(page, 'the hosts page after a rename');
    assertClean(problems);
    await context.close();
  });
});
