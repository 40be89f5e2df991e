// The Groups page (views/groups.js) in Chromium, on a server that hosts
// several people: Alice makes a group and invites Bob from the page; Bob
// sees the invitation on his and joins sharing his categories only; Alice
// then sees both columns side by side, and nothing of Bob's apps, titles
// or addresses anywhere on the page; Bob leaves and his column goes. The
// Groups link shows only there. axe-core on the page, and screenshots.
//
// Run through scripts/test-dashboard, as dashboard.test.mjs.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertAccessible, assertClean, drawn, openPage, shoot, useBrowser } from './page.mjs';
import { startServer } from './server.mjs';

useBrowser();

const KEY = 'the-server-administrators-key';
const DAY = '2026-03-10';

/** A request with `token`, answered as JSON (or null). */
async function as(server, token, method, path, body) {
  const response = await fetch(server.url + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/** A person's laptop with an hour of work (and, for Bob, a secret app). */
async function seedDay(server, token, app, title) {
  for (const [id, type] of [['aw-watcher-window_laptop', 'currentwindow'], ['aw-watcher-afk_laptop', 'afkstatus']]) {
    await as(server, token, 'POST', `/api/0/buckets/${id}`, { client: 'test', type, hostname: 'laptop' });
  }
  await as(server, token, 'POST', '/api/0/buckets/aw-watcher-window_laptop/events', [
    { timestamp: `${DAY}T10:00:00+05:30`, duration: 3600, data: { app, title } },
  ]);
  await as(server, token, 'POST', '/api/0/buckets/aw-watcher-afk_laptop/events', [
    { timestamp: `${DAY}T10:00:00+05:30`, duration: 3600, data: { status: 'not-afk' } },
  ]);
}

/** Loads the page again and waits until its view is drawn. */
async function redraw(page) {
  await page.reload();
  await page.waitForFunction(() => (document.body?.dataset.drawn ?? '') !== '');
}

describe('the groups page', () => {
  let server;
  let alice;
  let bob;
  before(async () => {
    server = await startServer({ apiKey: KEY, config: '\n[users]\nenabled = true\n' });
    alice = (await server.request('POST', '/api/0/users', { name: 'alice' })).token;
    bob = (await server.request('POST', '/api/0/users', { name: 'bob' })).token;
    await seedDay(server, alice, 'Code', 'main.rs - Code');
    await seedDay(server, bob, 'zqprivate-app', 'a zqprivate title');
  });
  after(async () => {
    await server?.stop();
  });

  test('a group made and joined from the page shows shared totals side by side, and nothing else', async () => {
    const { page: alicePage, problems } = await openPage();
    await drawn(alicePage, () => alicePage.goto(`${server.url}/?token=${alice}#/groups/${DAY}`));
    assert.equal(await alicePage.locator('main h1').innerText(), 'Groups');
    assert.ok(await alicePage.locator('[data-nav="groups"]').isVisible(), 'the Groups link shows');
    assert.match(await alicePage.locator('main').innerText(), /You are in no group yet/);

    await alicePage.getByLabel('Name').fill('family');
    await alicePage.getByLabel('Share my apps’ totals too').check();
    await alicePage.getByRole('button', { name: 'Make the group' }).click();
    await alicePage.locator('.privacy-status', { hasText: 'Made family' }).waitFor();
    await alicePage.getByLabel('Invite a person').fill('bob');
    await alicePage.getByRole('button', { name: 'Invite' }).click();
    await alicePage.locator('.privacy-status', { hasText: 'Invited bob to family' }).waitFor();
    assert.doesNotMatch(await alicePage.locator('main').innerText(), /bob \(shares/, 'invited is not a member');

    // Bob's page: the invitation, joined without sharing apps.
    const { page: bobPage, problems: bobProblems } = await openPage();
    await drawn(bobPage, () => bobPage.goto(`${server.url}/?token=${bob}#/groups/${DAY}`));
    const invitation = bobPage.locator('[data-invitation="family"]');
    assert.match(await invitation.innerText(), /alice invited you to family/);
    assert.equal(await invitation.getByLabel('Share my apps’ totals too').isChecked(), false);
    await invitation.getByRole('button', { name: 'Join family' }).click();
    await bobPage.locator('.privacy-status', { hasText: 'Joined family' }).waitFor();

    // Alice's page, drawn again: both side by side.
    await redraw(alicePage);
    const card = alicePage.locator('[data-group="family"]');
    const headers = await card.locator('table.group-totals').first().locator('thead th').allInnerTexts();
    assert.deepEqual(headers, ['Category', 'alice', 'bob']);
    const active = await card.locator('table.group-totals').first().locator('tr.total td').allInnerTexts();
    assert.deepEqual(active, ['1 h 00 min', '1 h 00 min']);
    assert.match(await card.innerText(), /bob \(shares categories\)/);
    assert.match(await card.innerText(), /alice \(shares categories and apps\)/);
    // The apps table has Alice's app and says Bob's are not shared.
    const apps = card.locator('table.group-totals').nth(1);
    assert.match(await apps.innerText(), /Code\s+1 h 00 min\s+not shared/);
    const everything = await alicePage.content();
    assert.ok(!everything.includes('zqprivate'), "Bob's app or title on Alice's page");
    await shoot(alicePage, 'groups-1280-light');
    await assertAccessible(alicePage, 'the groups page with two members');

    // Bob leaves: his column goes from Alice's page.
    await redraw(bobPage);
    await bobPage.getByRole('button', { name: 'Leave family' }).click();
    await bobPage.locator('.privacy-status', { hasText: 'Left family' }).waitFor();
    await redraw(alicePage);
    const after = await alicePage.locator('[data-group="family"] table.group-totals').first().locator('thead th').allInnerTexts();
    assert.deepEqual(after, ['Category', 'alice']);
    assertClean(problems);
    assertClean(bobProblems);
  });
});
