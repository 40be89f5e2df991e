// The Alerts page (views/alerts.js) in Chromium, on a server whose
// [alerts] sends to a webhook this test serves: a limit added and saved
// from the page (what the settings API stores checked, and minutes that
// are not whole numbers refused on the page with nothing sent), then data
// that passes the limit: one message at the webhook, and the page showing
// the time, the threshold told and the delivery; a test message from the
// page's button. axe-core on the page, and screenshots.
//
// Run through scripts/test-dashboard, as dashboard.test.mjs.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';

import { assertAccessible, assertClean, drawn, openPage, shoot, useBrowser } from './page.mjs';
import { HOST, startServer } from './server.mjs';

useBrowser();

/** A webhook receiver: every body it got, parsed. */
async function startReceiver() {
  const got = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', chunk => (body += chunk));
    request.on('end', () => {
      got.push(JSON.parse(body));
      response.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
  return { got, url: `http://127.0.0.1:${server.address().port}/hook`, close: () => new Promise(resolve => server.close(resolve)) };
}

async function waitFor(check, what) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`waited for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

describe('the alerts page', () => {
  let server;
  let receiver;
  before(async () => {
    receiver = await startReceiver();
    server = await startServer({
      config: `[alerts]\nwebhook_url = "${receiver.url}"\ncheck_interval = 1\nhosts = "all"\n`,
    });
    for (const [id, type] of [[`aw-watcher-window_${HOST}`, 'currentwindow'], [`aw-watcher-afk_${HOST}`, 'afkstatus']]) {
      await server.request('POST', `/api/0/buckets/${id}`, { client: 'test', type, hostname: HOST });
    }
    await server.request('POST', '/api/0/settings/classes', [
      { name: ['Media', 'Social Media'], rule: { type: 'regex', regex: 'Twitter' } },
      { name: ['Work'], rule: { type: 'regex', regex: 'Code' } },
    ]);
    // A day that began about twelve hours ago (Kolkata's clock), so the
    // last hours are all today's.
    const kolkataHour = Math.floor(((Date.now() / 60_000 + 330) % 1440) / 60);
    await server.request('POST', '/api/0/settings/startOfDay', `${String((kolkataHour + 12) % 24).padStart(2, '0')}:00`);
  });
  after(async () => {
    await server?.stop();
    await receiver?.close();
  });

  test('a limit set from the page is told once when passed, and shown as told', async () => {
    const { page, context, problems } = await openPage({ expectErrors: [] });
    await drawn(page, () => page.goto(`${server.url}/#/alerts`));
    assert.equal(await page.locator('main h1').innerText(), 'Alerts');
    assert.match(await page.locator('main').innerText(), /Checked every 1 s over all devices/);
    assert.match(await page.locator('main').innerText(), /No goals yet/);

    await page.getByRole('button', { name: 'Add a goal' }).click();
    await page.getByLabel('Name').fill('Social media');
    await page.getByLabel('Category').selectOption('Media > Social Media');
    assert.equal(await page.getByLabel('Kind').inputValue(), 'limit');
    // Minutes the panel refuses: said on the page, nothing sent.
    await page.getByLabel('Minutes').fill('60, 0');
    assert.match(await page.locator('.field-error').innerText(), /Whole minutes above zero/);
    await page.getByRole('button', { name: 'Save goals' }).click();
    assert.match(await page.locator('.privacy-status').innerText(), /must be whole numbers above zero/);
    assert.equal(await server.request('GET', '/api/0/settings/aw-notify'), null, 'nothing stored');
    await page.getByLabel('Minutes').fill('60');
    await page.getByRole('button', { name: 'Save goals' }).click();
    await page.locator('.privacy-status', { hasText: 'Saved 1 goal' }).waitFor();
    assert.deepEqual(await server.request('GET', '/api/0/settings/aw-notify'), {
      alerts: [{ category: 'Media > Social Media', label: 'Social media', thresholds_minutes: [60], positive: false }],
    });
    assert.equal(receiver.got.length, 0, 'under the limit: nothing told');

    // 70 minutes of Twitter, ending a minute ago.
    const start = new Date(Date.now() - 71 * 60_000).toISOString();
    await server.request('POST', `/api/0/buckets/aw-watcher-window_${HOST}/events`, [
      { timestamp: start, duration: 4200, data: { app: 'Firefox', title: 'Twitter: a private thought' } },
    ]);
    await server.request('POST', `/api/0/buckets/aw-watcher-afk_${HOST}/events`, [
      { timestamp: start, duration: 4200, data: { status: 'not-afk' } },
    ]);
    await waitFor(() => receiver.got.length > 0, 'the webhook');
    const told = receiver.got[0];
    assert.equal(told.kind, 'limit');
    assert.equal(told.title, 'Time spent: Social media');
    assert.equal(told.details.minutes, 70);
    assert.ok(!JSON.stringify(told).includes('private thought'), 'no window title');

    // Away and back: the page reads the status again.
    await drawn(page, () => page.goto(`${server.url}/#/hosts`));
    await drawn(page, () => page.goto(`${server.url}/#/alerts`));
    const row = page.locator('table.goals tbody tr[data-goal="Social media"]');
    await row.waitFor();
    assert.deepEqual(
      await row.locator('th, td').allInnerTexts(),
      ['Social media (limit)', 'Media > Social Media', '1 h 10 min', '1 h ✓'],
    );
    assert.match(await page.locator('table.sent').innerText(), /webhook\s+Time spent: Social media\s+1/);
    await shoot(page, 'alerts-told-1280-light');
    await assertAccessible(page, 'the alerts page after a limit was told');

    // A test message from the page.
    await page.getByRole('button', { name: 'Send a test message' }).click();
    await page.locator('.action-message', { hasText: 'webhook: sent' }).waitFor();
    assert.equal(receiver.got.at(-1).kind, 'test');
    assert.equal(receiver.got.filter(body => body.kind === 'limit').length, 1, 'the limit once');
    assertClean(problems);
    await context.close();
  });

  test('on a phone the goals stay usable', async () => {
    const { page, context, problems } = await openPage({ width: 390, dark: true });
    await drawn(page, () => page.goto(`${server.url}/#/alerts`));
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window`);
    await shoot(page, 'alerts-390-dark');
    await assertAccessible(page, 'the alerts page on a phone');
    assertClean(problems);
    await context.close();
  });
});
