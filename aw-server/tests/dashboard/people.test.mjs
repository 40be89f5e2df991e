// The People page (views/people.js) in Chromium, for the server
// administrator of a node behind a proxy with others: this node's people
// and those of the node its `[users] nodes` names, each with their size
// and state, one person shown as being moved once frozen, and a node that
// does not answer shown as down. The People link shows for the server
// administrator only; the default view tells that key what it is.
// axe-core on the page, and a screenshot.
//
// Run through scripts/test-dashboard, as dashboard.test.mjs.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertAccessible, assertClean, drawn, openPage, shoot, useBrowser } from './page.mjs';
import { startServer } from './server.mjs';

useBrowser();

const KEY = 'the-server-administrators-key';
/** Nothing listens there (the discard port, refused on loopback). */
const DOWN = 'http://127.0.0.1:9';

describe('the people page', () => {
  let here;
  let there;
  let alice;
  before(async () => {
    there = await startServer({ apiKey: KEY, config: '\n[users]\nenabled = true\n' });
    await there.request('POST', '/api/0/users', { name: 'bob' });
    await there.request('POST', '/api/0/users', { name: 'carol' });
    here = await startServer({
      apiKey: KEY,
      config: `\n[users]\nenabled = true\nnodes = ["${there.url}", "${DOWN}"]\n`,
    });
    alice = (await here.request('POST', '/api/0/users', { name: 'alice' })).token;
    const response = await fetch(`${here.url}/api/0/buckets/aw-watcher-afk_laptop`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ client: 'test', type: 'afkstatus', hostname: 'laptop' }),
    });
    assert.equal(response.status, 200);
  });
  after(async () => {
    await here?.stop();
    await there?.stop();
  });

  test("every node's people, their sizes and states, and a node that is down", async () => {
    const { page, problems } = await openPage();
    await drawn(page, () => page.goto(`${here.url}/?token=${KEY}#/people`));
    assert.equal(await page.locator('main h1').innerText(), 'People');
    await page.locator('[data-nav="people"]:not([hidden])').waitFor();
    assert.ok(await page.locator('[data-nav="groups"]').isHidden(), 'no Groups for the administrator');
    assert.match(await page.locator('#people-totals').innerText(), /^3 people on 3 nodes, .* in all; 1 not answering/);

    const mine = page.locator('[data-node="here"]');
    assert.equal(await mine.locator('h2').innerText(), 'This node');
    assert.match(await mine.locator('.node-totals').innerText(), /^1 person, /);
    const aliceRow = mine.locator('[data-person="alice"]');
    assert.match(await aliceRow.innerText(), /alice\s+\d+ (KB|MB)\s+laptop\s+.+\s+open/);

    const theirs = page.locator(`[data-node="${there.url}"]`);
    assert.match(await theirs.locator('.node-totals').innerText(), /^2 people, /);
    assert.deepEqual(await theirs.locator('tbody th').allInnerTexts(), ['bob', 'carol']);
    assert.match(await theirs.locator('[data-person="bob"]').innerText(), /bob\s+\d+ (KB|MB)\s+—\s+no data yet\s+(open|closed)/);

    const down = page.locator(`[data-node="${DOWN}"]`);
    assert.match(await down.locator('h2').innerText(), /down/);
    assert.match(await down.innerText(), /did not answer/);
    await assertAccessible(page, 'people');
    await shoot(page, 'people');

    // Frozen for a move: said on the page.
    await here.request('POST', '/api/0/users/alice/freeze');
    // (A reload counts its views from 1 again: wait for one, not a new one.)
    await page.reload();
    await page.waitForFunction(() => (document.body?.dataset.drawn ?? '').startsWith('people:'));
    assert.match(await page.locator('[data-node="here"] [data-person="alice"]').innerText(), /being moved/);
    await here.request('POST', '/api/0/users/alice/thaw');
    assertClean(problems);
  });

  test("the administrator's key on the default view is told what it is", async () => {
    const { page } = await openPage({ expectErrors: ['/api/0/'] });
    await page.goto(`${here.url}/?token=${KEY}`);
    await page.waitForFunction(() => (document.body?.dataset.drawn ?? '').startsWith('error'));
    assert.match(await page.locator('main h1').innerText(), /server administrator’s key/);
    await page.getByRole('link', { name: 'See the people' }).click();
    await page.locator('main h1', { hasText: 'People' }).waitFor();
  });
});
