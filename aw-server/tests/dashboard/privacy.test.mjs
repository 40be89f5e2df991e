// The Privacy page (views/privacy.js), driven in Chromium against a
// seeded server (server.mjs) holding a few private window titles: rules
// edited in the form, previewed against history before they are saved,
// saved, then applied; the server's refusals beside the rule they name;
// a copy saved elsewhere meanwhile; the server gone in the middle of a
// save. What the page did is read back through the HTTP API.
//
// Run through scripts/test-dashboard, which installs Chromium and builds
// the server.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertAccessible, assertClean, drawn, openPage, shoot, useBrowser } from './page.mjs';
import { HOST, seed, startServer } from './server.mjs';

const WINDOW = `aw-watcher-window_${HOST}`;
const SETTING = '/api/0/settings/privacy_filters';
const PRIVATE = 'Private Browsing - Mozilla Firefox';

useBrowser();

/** The seed, and three windows of the test day one would rather not keep. */
async function seedPrivate(server) {
  await seed(server);
  await server.request('POST', `/api/0/buckets/${WINDOW}/events`, [
    { timestamp: '2026-03-10T13:00:00+05:30', duration: 300, data: { app: 'Firefox', title: PRIVATE } },
    { timestamp: '2026-03-10T13:10:00+05:30', duration: 300, data: { app: 'Firefox', title: PRIVATE } },
    { timestamp: '2026-03-10T13:20:00+05:30', duration: 120, data: { app: 'Firefox', title: 'My Bank - Statement' } },
  ]);
}

const privacyUrl = server => `${server.url}/#/privacy`;

/** The inputs of rule `number` (1-based), by their labels. */
function rule(page, number) {
  const fieldset = page.locator('.privacy-rules > li').nth(number - 1);
  const input = label => fieldset.getByLabel(label, { exact: true });
  return {
    fieldset,
    action: input('Action'),
    field: input('Field'),
    pattern: input('Pattern'),
    replacement: input('Replacement'),
    prefix: input('Bucket prefix'),
    enabled: input('Enabled'),
    error: fieldset.locator('.rule-error'),
  };
}

/** The status line under the form's buttons, once it says something. */
async function status(page) {
  const line = page.locator('.privacy-status p').first();
  await line.waitFor();
  return line.innerText();
}

/** The rows of a counts table: [bucket, examined, deleted, redacted]. */
const countRows = table =>
  table.locator('tbody tr').evaluateAll(rows =>
    rows.map(row => [row.querySelector('th').textContent, ...[...row.querySelectorAll('td')].map(cell => Number(cell.textContent))]),
  );

const titles = async server =>
  (await server.request('GET', `/api/0/buckets/${WINDOW}/events`)).map(event => event.data.title);

describe('the privacy page', () => {
  let server;
  before(async () => {
    server = await startServer();
    await seedPrivate(server);
  });
  after(async () => {
    await server?.stop();
  });

  test('a rule previewed, saved and applied removes the private titles from history', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(privacyUrl(server)));
    assert.equal(await page.locator('main h1').innerText(), 'Privacy rules');
    assert.match(await page.locator('main').innerText(), /No rules: every event is stored as it comes\./);

    await page.getByRole('button', { name: 'Add a rule' }).click();
    const first = rule(page, 1);
    // A new rule drops, looks at the title and is on; its inputs have the focus first.
    assert.ok(await first.action.evaluate(element => element === document.activeElement));
    assert.equal(await first.action.inputValue(), 'drop');
    assert.equal(await first.field.inputValue(), 'title');
    assert.ok(await first.enabled.isChecked());
    assert.ok(await first.replacement.isHidden(), 'a drop rule has no replacement');
    await first.pattern.fill('(?i)private browsing');
    await first.prefix.fill('aw-watcher-window');
    assert.match(await page.locator('.privacy-form').innerText(), /Unsaved changes\./);

    // The preview counts the rules as edited, not yet saved.
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.locator('.privacy-preview');
    await preview.locator('table').waitFor();
    assert.match(await preview.innerText(), /these rules would delete 2 stored events and redact 0\./);
    assert.deepEqual(await countRows(preview.locator('table')), [[WINDOW, 10, 2, 0]]);
    assert.equal(await server.request('GET', SETTING), null);
    // Applying takes the saved rules, so it waits for the save.
    const check = page.getByRole('button', { name: 'Check what applying would change' });
    assert.ok(await check.isDisabled());
    assert.match(await page.locator('#privacy-apply-hint').innerText(), /Save your changes first/);
    await shoot(page, 'privacy-preview-1280-light');
    await assertAccessible(page, 'the privacy page with a preview');

    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(await status(page), /^Saved: the rule applies to every event that comes in from now on\./);
    assert.deepEqual(await server.request('GET', SETTING), [
      { enabled: true, field: 'title', pattern: '(?i)private browsing', action: 'drop', bucket_prefix: 'aw-watcher-window' },
    ]);
    // Saved rules filter what comes in: this one is not stored.
    await server.request('POST', `/api/0/buckets/${WINDOW}/events`, [
      { timestamp: '2026-03-10T13:30:00+05:30', duration: 60, data: { app: 'Firefox', title: PRIVATE } },
    ]);
    assert.equal((await titles(server)).filter(title => title === PRIVATE).length, 2);

    // Applying to history says what it will do, then asks.
    await check.click();
    const result = page.locator('.privacy-apply-result');
    const confirm = result.locator('.confirm');
    await confirm.waitFor();
    assert.equal(
      await confirm.innerText(),
      `Applying the saved rules will delete 2 events and redact 0, in ${WINDOW}. This cannot be undone.`,
    );
    assert.equal((await titles(server)).length, 10, 'nothing is deleted before the confirmation');
    await assertAccessible(page, 'the privacy page asking to apply the rules');
    await page.getByRole('button', { name: 'Yes, delete 2 events and redact 0' }).click();
    await result.getByText('Done: 2 events deleted and 0 redacted.').waitFor();
    const left = await titles(server);
    assert.ok(!left.includes(PRIVATE), left.join(', '));
    assert.equal(left.length, 8);
    await shoot(page, 'privacy-applied-1280-light');
    assertClean(problems);
    await context.close();
  });

  test('rules the server refuses show its message beside them, and nothing is saved', async () => {
    const { page, context, problems } = await openPage({ expectErrors: [SETTING, '/api/0/privacy/apply'] });
    await drawn(page, () => page.goto(privacyUrl(server)));
    const saved = await server.request('GET', SETTING);
    assert.equal(await rule(page, 1).pattern.inputValue(), '(?i)private browsing');
    await page.getByRole('button', { name: 'Add a rule' }).click();
    const second = rule(page, 2);
    assert.equal(await second.fieldset.locator('legend').innerText(), 'Rule 2');

    // An invalid regex, in the server's dialect: refused by the preview and the save.
    await second.pattern.fill('(unclosed');
    await page.getByRole('button', { name: 'Preview' }).click();
    await second.error.waitFor();
    assert.match(await second.error.innerText(), /rule 2: `pattern` is not a valid regular expression[\s\S]*unclosed group/);
    assert.equal(await second.pattern.getAttribute('aria-invalid'), 'true');
    assert.ok(await rule(page, 1).error.isHidden(), 'the message is beside the rule it names');
    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(await status(page), /^The rules were not saved: the server refused rule 2, as it says beside the rule\.$/);
    assert.match(await second.error.innerText(), /rule 2: `pattern` is not a valid regular expression/);
    assert.deepEqual(await server.request('GET', SETTING), saved);
    await shoot(page, 'privacy-refused-1280-light');
    await assertAccessible(page, 'the privacy page with a refused rule');

    // A redaction needs its replacement.
    await second.pattern.fill('Bank');
    await second.action.selectOption('redact');
    assert.ok(await second.replacement.isVisible());
    await page.getByRole('button', { name: 'Save' }).click();
    await second.error.getByText(/rule 2: redact rules need a non-empty `replacement`/).waitFor();
    assert.equal(await second.replacement.getAttribute('aria-invalid'), 'true');
    assert.equal(await second.pattern.getAttribute('aria-invalid'), null);
    assert.deepEqual(await server.request('GET', SETTING), saved);

    await second.replacement.fill('REDACTED');
    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(await status(page), /^Saved: the 2 rules apply/);
    assert.ok(await second.error.isHidden());
    assert.deepEqual((await server.request('GET', SETTING))[1], {
      enabled: true,
      field: 'title',
      pattern: 'Bank',
      action: 'redact',
      replacement: 'REDACTED',
    });
    assertClean(problems);
    await context.close();
  });

  test('rules are reordered and removed from the keyboard, removal asking first', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(privacyUrl(server)));
    const patterns = () => page.locator('.privacy-rules input.pattern').evaluateAll(all => all.map(input => input.value));
    assert.deepEqual(await patterns(), ['(?i)private browsing', 'Bank']);
    const up = page.getByRole('button', { name: 'Move up rule 2' });
    await up.focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await patterns(), ['Bank', '(?i)private browsing']);
    // The focus went with the rule, to the button still usable.
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Move down rule 1');
    assert.deepEqual(
      await page.locator('.privacy-rules legend').allInnerTexts(),
      ['Rule 1', 'Rule 2'],
    );

    await page.getByRole('button', { name: 'Remove rule 2' }).click();
    const ask = page.locator('.rule-actions .confirm');
    assert.equal(await ask.innerText(), 'Remove rule 2? It stops applying once the rules are saved.');
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual(await patterns(), ['Bank', '(?i)private browsing']);
    await page.getByRole('button', { name: 'Remove rule 2' }).click();
    await page.getByRole('button', { name: 'Yes, remove rule 2' }).click();
    assert.deepEqual(await patterns(), ['Bank']);
    assert.match(await page.locator('.privacy-form').innerText(), /Unsaved changes\./);
    // Nothing is saved before Save.
    assert.equal((await server.request('GET', SETTING)).length, 2);
    assertClean(problems);
    await context.close();
  });

  test('a copy saved elsewhere meanwhile is called stale and the edit is kept', async () => {
    const { page, context, problems } = await openPage({ expectErrors: [SETTING] });
    await drawn(page, () => page.goto(privacyUrl(server)));
    await rule(page, 2).pattern.fill('(?i)incognito');
    // Another tab (or aw-webui) saves first.
    const theirs = [{ enabled: false, field: 'app', pattern: 'Steam', action: 'drop' }];
    await server.request('POST', SETTING, theirs);
    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(await status(page), /changed elsewhere[\s\S]*this copy is stale\. Your changes are still here\./);
    assert.equal(await rule(page, 2).pattern.inputValue(), '(?i)incognito');
    assert.deepEqual(await server.request('GET', SETTING), theirs);
    await assertAccessible(page, 'the privacy page with a stale copy');

    // Loading the saved rules shows theirs.
    await drawn(page, () => page.getByRole('button', { name: 'Load the saved rules (drops your changes)' }).click());
    assert.equal(await page.locator('.privacy-rules > li').count(), 1);
    assert.equal(await rule(page, 1).pattern.inputValue(), 'Steam');
    assert.equal(await rule(page, 1).field.inputValue(), 'app');
    assert.ok(!(await rule(page, 1).enabled.isChecked()));

    // Stale again; this time the page's rules are saved over theirs.
    await rule(page, 1).enabled.check();
    await server.request('POST', SETTING, []);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Save mine over them' }).click();
    await page.locator('.privacy-status', { hasText: 'Saved' }).waitFor();
    assert.deepEqual(await server.request('GET', SETTING), [{ ...theirs[0], enabled: true }]);
    assertClean(problems);
    await context.close();
  });

  test('every state draws at phone width and wide, light and dark', async () => {
    await server.request('POST', SETTING, [
      { enabled: true, bucket_prefix: 'aw-watcher-window', field: 'title', pattern: '(?i)(private browsing|incognito)', action: 'drop' },
      { enabled: true, field: 'title', pattern: '(?i)bank', action: 'redact', replacement: 'REDACTED', note: 'kept as it was' },
    ]);
    for (const [width, dark] of [
      [390, false],
      [390, true],
      [1280, false],
      [1280, true],
    ]) {
      const { page, context, problems } = await openPage({ width, dark });
      const suffix = `${width}-${dark ? 'dark' : 'light'}`;
      await drawn(page, () => page.goto(privacyUrl(server)));
      assert.equal(await rule(page, 2).replacement.inputValue(), 'REDACTED');
      await page.getByRole('button', { name: 'Preview' }).click();
      await page.locator('.privacy-preview table').waitFor();
      // The redaction has no bucket prefix: every bucket is looked at.
      assert.deepEqual(await countRows(page.locator('.privacy-preview table')), [
        [`aw-watcher-afk_${HOST}`, 8, 0, 0],
        ['aw-watcher-web-firefox', 2, 0, 0],
        [WINDOW, 8, 0, 1],
      ]);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window at ${width}px`);
      await shoot(page, `privacy-${suffix}`);
      await assertAccessible(page, `the privacy page at ${suffix}`);
      assertClean(problems);
      await context.close();
    }
    // Saving again keeps what the page does not edit.
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(privacyUrl(server)));
    await rule(page, 2).replacement.fill('[bank]');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('.privacy-status', { hasText: 'Saved' }).waitFor();
    assert.deepEqual((await server.request('GET', SETTING))[1], {
      enabled: true,
      field: 'title',
      pattern: '(?i)bank',
      action: 'redact',
      replacement: '[bank]',
      note: 'kept as it was',
    });
    assertClean(problems);
    await context.close();
  });
});

describe('the privacy page when the server stops', () => {
  let server;
  before(async () => {
    server = await startServer();
    await seedPrivate(server);
  });
  after(async () => {
    // Stopped by the test; a second stop would wait for an exit already seen.
    if (!server?.stopped) await server?.stop();
  });

  test('a save the server does not answer says so and keeps the edit', async () => {
    const { page, context, problems } = await openPage({ expectErrors: [SETTING] });
    await drawn(page, () => page.goto(privacyUrl(server)));
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await rule(page, 1).pattern.fill('(?i)private browsing');
    // The server stops while the save is on its way.
    await page.route(`**${SETTING}`, async route => {
      if (route.request().method() === 'POST') {
        await server.stop();
        server.stopped = true;
      }
      await route.continue().catch(() => {});
    });
    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(await status(page), /^The rules were not saved: the server did not answer\. Your changes are still here; try again\.$/);
    assert.equal(await rule(page, 1).pattern.inputValue(), '(?i)private browsing');
    assert.match(await page.locator('.privacy-form').innerText(), /Unsaved changes\./);
    await shoot(page, 'privacy-save-failed-1280-light');
    await assertAccessible(page, 'the privacy page after a failed save');
    assertClean(problems);
    await context.close();
  });
});
