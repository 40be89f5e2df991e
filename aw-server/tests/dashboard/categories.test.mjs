// The Categories page: its pure edits of the list (category-edits.js)
// under Node, then the page (views/categories.js) in Chromium against a
// seeded server (see server.mjs `seed`: the categories edited are those of
// the set "base", and the set "extra" is active too). What is saved is
// read back through the settings API, in aw-webui's format.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';

import { assertAccessible, assertClean, drawn, openPage, shoot, useBrowser } from './page.mjs';
import { defined, loadScripts } from './scripts.mjs';
import { HOST, seed, startServer } from './server.mjs';

loadScripts('categories.js', 'category-edits.js');
const model = defined('categoryEdits');

const DAY = '2026-03-10';
const regex = (name, pattern) => ({ name, rule: { type: 'regex', regex: pattern } });
/** The sets `seed` stores. */
const SEEDED_SETS = [
  { id: 'base', categories: [regex(['Work', 'Programming'], 'Code'), regex(['Media', 'Video'], 'YouTube')] },
  { id: 'unused', categories: [regex(['Ignored'], 'Code|Firefox|Terminal')] },
  { id: 'extra', categories: [regex(['Work', 'Programming'], 'NOTHING'), regex(['Shell'], 'Terminal')] },
];

describe('editing the list', () => {
  const list = () => [
    { id: 4, name: ['Work'], rule: { type: null }, data: { color: '#0F0' }, depth: 0, extra: 'kept' },
    { id: 7, name: ['Work', 'Programming'], rule: { type: 'regex', regex: 'Code', select_keys: ['app'] }, depth: 1 },
    { id: 2, name: ['Work', 'Docs'], rule: { type: 'regex', regex: 'notes' } },
    { name: ['Media', 'Video'], rule: { type: 'regex', regex: 'YouTube' } },
    { name: ['Docs'], rule: { type: 'none' } },
    'not a category',
  ];

  test('renaming moves the subcategories along, keeps unknown fields and refuses a taken name', () => {
    const { list: renamed, path } = model.rename(list(), ['Work'], ' Job ');
    assert.deepEqual(path, ['Job']);
    assert.deepEqual(renamed[0], { id: 4, name: ['Job'], rule: { type: null }, data: { color: '#0F0' }, depth: 0, extra: 'kept' });
    assert.deepEqual(renamed[1].name, ['Job', 'Programming']);
    assert.deepEqual(renamed[1].rule, { type: 'regex', regex: 'Code', select_keys: ['app'] });
    assert.equal(renamed[1].depth, 1);
    assert.deepEqual(renamed[2].name, ['Job', 'Docs']);
    assert.equal(renamed[5], 'not a category');
    assert.deepEqual(model.rename(list(), ['Work', 'Docs'], 'Programming'), {
      error: '“Programming” already exists under “Work”.',
    });
    assert.deepEqual(model.rename(list(), ['Media'], 'Docs'), { error: '“Docs” already exists at the top level.' });
    assert.deepEqual(model.rename(list(), ['Media'], '  '), { error: 'A name cannot be empty.' });
    // An implied parent is renamed through its subcategories.
    assert.deepEqual(model.rename(list(), ['Media'], 'Fun').list[3].name, ['Fun', 'Video']);
  });

  test('moving refuses its own subtree and a taken name, and updates the depth aw-webui stored', () => {
    const moved = model.move(list(), ['Work', 'Programming'], ['Media']);
    assert.deepEqual(moved.path, ['Media', 'Programming']);
    assert.equal(moved.list[1].depth, 1);
    assert.equal(model.move(list(), ['Work', 'Programming'], []).list[1].depth, 0);
    assert.match(model.move(list(), ['Work'], ['Work', 'Docs']).error, /cannot move into itself/);
    assert.deepEqual(model.move(list(), ['Work', 'Docs'], []), { error: '“Docs” already exists at the top level.' });
  });

  test('deleting takes the subcategories along or moves them up, unless a name is taken there', () => {
    const names = result => result.list.filter(c => c.name).map(c => c.name.join('>'));
    assert.deepEqual(names(model.remove(list(), ['Work'], 'all')), ['Media>Video', 'Docs']);
    assert.deepEqual(model.remove(list(), ['Work'], 'lift'), {
      error: 'Cannot move the subcategories up: “Docs” already exists at the top level.',
    });
    assert.deepEqual(names(model.remove(list(), ['Media'], 'lift')), ['Work', 'Work>Programming', 'Work>Docs', 'Video', 'Docs']);
    const lifted = model.remove(list(), ['Work', 'Programming'], 'lift');
    assert.equal(lifted.list.length, 5);
  });

  test('new categories get a free name and an id above every other; implied parents become categories when given a colour', () => {
    const { list: added, path } = model.add(list(), ['Work'], 'Docs');
    assert.deepEqual(path, ['Work', 'Docs (2)']);
    assert.deepEqual(added.at(-1), { id: 8, name: ['Work', 'Docs (2)'], rule: { type: 'none' } });
    const colored = model.setColor(list(), ['Media'], '#123456');
    assert.deepEqual(colored[3], { id: 8, name: ['Media'], rule: { type: null }, data: { color: '#123456' } });
    assert.deepEqual(colored[4].name, ['Media', 'Video']);
  });

  test('rules: an empty regex is no rule, ignore_case is written once asked for, other fields stay', () => {
    const set = (regex, ignoreCase, path = ['Work', 'Programming']) =>
      model.setRule(list(), path, regex, ignoreCase).find(c => c.name && c.name.join() === path.join()).rule;
    assert.deepEqual(set('Code|Terminal', false), { type: 'regex', regex: 'Code|Terminal', select_keys: ['app'] });
    assert.deepEqual(set('Code', true), { type: 'regex', regex: 'Code', select_keys: ['app'], ignore_case: true });
    assert.deepEqual(set('', false), { type: 'none', select_keys: ['app'] });
    assert.deepEqual(set('', false, ['Work']), { type: null });
    assert.deepEqual(set('x', false, ['Work']), { type: 'regex', regex: 'x' });
  });

  test("a regex matching a title exactly escapes the server's metacharacters", () => {
    assert.equal(model.exactRegex('main.rs - Code'), '^main\\.rs - Code$');
    assert.equal(model.exactRegex('a+b (c) [d] {e} ^$|*?\\'), '^a\\+b \\(c\\) \\[d\\] \\{e\\} \\^\\$\\|\\*\\?\\\\$');
  });

  test("the server's refusal of a rule is matched to its category, quotes in names included", () => {
    const categories = [regex(['Work', "Bob's: notes"], '('), regex(['Work'], 'x')];
    assert.deepEqual(model.ruleErrorOf("categories: category 'Work > Bob's: notes': regex parse error", categories), {
      key: JSON.stringify(['Work', "Bob's: notes"]),
      message: 'regex parse error',
    });
    assert.equal(model.ruleErrorOf('tz: bad', categories), null);
  });

  test('the set edited is the first active one of category_sets, saved back with the others unchanged', () => {
    const settings = { category_sets: SEEDED_SETS, active_set_ids: ['extra', 'base'] };
    const draft = model.draftOf('category_sets', SEEDED_SETS, '"e"', settings);
    assert.equal(draft.setIndex, 0);
    const edited = [...draft.list, regex(['Shell'], 'bash')];
    const value = model.valueOf(draft, edited);
    assert.deepEqual(value[0], { id: 'base', categories: edited });
    assert.deepEqual(value.slice(1), SEEDED_SETS.slice(1));
    // The preview applies the other active set too; the edited set's name wins.
    const names = model.effectiveOf(draft, edited).map(c => `${c.name.join('>')}:${c.rule.regex}`);
    assert.deepEqual(names, ['Work>Programming:Code', 'Media>Video:YouTube', 'Shell:bash']);
    assert.equal(model.draftOf('category_sets', SEEDED_SETS, null, { active_set_ids: ['gone'] }).setIndex, 0);
    assert.equal(model.draftOf('category_sets', SEEDED_SETS, null, { active_set_ids: ['unused'] }).setIndex, 1);
    const defaults = model.draftOf('classes', null, null, {});
    assert.ok(defaults.fromDefaults);
    assert.deepEqual(defaults.list.find(c => c.name.join('>') === 'Media>Video'), {
      name: ['Media', 'Video'],
      rule: { type: 'regex', regex: 'YouTube|Plex|VLC' },
      data: { color: '#F33' },
    });
    assert.deepEqual(model.valueOf(defaults, defaults.list), defaults.list);
  });
});

useBrowser();

const dayUrl = server => `${server.url}/#/activity/${HOST}/day/${DAY}`;
const pageUrl = server => `${server.url}/#/categories/day/${DAY}`;

/** The tree's row of a category path. */
const row = (page, path) => page.locator(`li[data-path='${JSON.stringify(path)}'] > .cat-row`);

/** Opens the editor of `path`. */
async function select(page, path) {
  await row(page, path).locator('.cat-name').click();
  await page.locator('#cat-editor').waitFor();
  assert.equal(await page.locator('#cat-editor').getAttribute('aria-label'), `Edit ${path.join(' > ')}`);
}

/** Waits for the preview of the categories as they are now. */
async function previewed(page, state = 'ready') {
  await page.locator(`#preview[data-state="${state}"]`).waitFor({ timeout: 30_000 });
}

/** The preview's table: [category, as edited, share, as saved]. */
async function previewRows(page) {
  return page
    .locator('table.cat-shares tbody tr')
    .evaluateAll(rows => rows.map(tr => [...tr.children].map(cell => cell.textContent.trim())));
}

/** Saves, and waits for the page to say how it went. */
async function save(page, outcome = 'saved') {
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator(`#cat-status[data-state="${outcome}"]`).waitFor({ timeout: 30_000 });
  return page.locator('#cat-status').innerText();
}

const baseSet = async server => (await server.request('GET', '/api/0/settings/category_sets'))[0];

async function cardRows(page, title) {
  const card = page.locator('section.card', { has: page.locator('h2', { hasText: title }) });
  return card.locator('.top-list li').evaluateAll(items =>
    items.map(item => [item.querySelector('.label').textContent, item.querySelector('time').textContent]),
  );
}

describe('the Categories page', () => {
  let server;
  before(async () => {
    server = await startServer();
    await seed(server);
  });
  after(async () => {
    await server?.stop();
  });
  // Each test starts from the seeded categories.
  beforeEach(async () => {
    await server.request('POST', '/api/0/settings/category_sets', SEEDED_SETS);
  });

  test("a category made from a title in the day view's top list, once saved, changes its top categories", async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(dayUrl(server)));
    assert.deepEqual(await cardRows(page, 'Top categories'), [
      ['Work > Programming', '1h 2m 3s'],
      ['Shell', '45m'],
      ['Media > Video', '30m'],
    ]);
    // By keyboard: the list of titles gets its links, then the link of "bash".
    const titles = page.locator('section.card', { has: page.locator('h2', { hasText: 'Top window titles' }) });
    assert.equal(await page.locator('.make-category').count(), 0, 'no links until asked for');
    await titles.getByRole('button', { name: 'Make a category of one of these…' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Make a category of main.rs - Code' }).waitFor();
    assert.ok(
      await page.getByRole('link', { name: 'Make a category of main.rs - Code' }).evaluate(link => link === document.activeElement),
      'the first link has the focus',
    );
    assert.equal(await titles.locator('.make-category').count(), 3);
    await assertAccessible(page, 'the day view with its "Make a category" links');
    await page.getByRole('link', { name: 'Make a category of bash' }).focus();
    await drawn(page, () => page.keyboard.press('Enter'));
    assert.match(await page.locator('.cat-notice').innerText(), /New category “bash” for the window title “bash”, not saved yet/);
    assert.equal(await page.locator('#cat-name').inputValue(), 'bash');
    assert.ok(await page.locator('#cat-name').evaluate(input => input === document.activeElement));
    assert.equal(await page.locator('#cat-regex').inputValue(), '^bash$');
    assert.equal(await page.locator('#preview-period').innerText(), 'Tue, 10 Mar 2026');
    assert.match(page.url(), /#\/categories\/day\/2026-03-10$/);
    await previewed(page);
    // At the top level it ties with "Shell" of the other active set, which
    // comes later and wins: the page says so.
    assert.match(await page.locator('.cat-matches').innerText(), /Nothing in this period is in “bash” itself/);
    await page.getByLabel('Parent').selectOption({ label: 'Work' });
    await page.getByRole('button', { name: 'Move' }).click();
    await previewed(page);
    assert.deepEqual(await previewRows(page), [
      ['Work > Programming', '1h 2m 3s', '45%', '1h 2m 3s'],
      ['Work > bash', '45m', '33%', '0s'],
      ['Media > Video', '30m', '22%', '30m'],
      ['Shell', '0s', '0%', '45m'],
    ]);
    const matches = page.locator('.cat-matches');
    assert.match(await matches.locator('h3').innerText(), /What “Work > bash” matches/);
    const lists = await matches.locator('.top-list').evaluateAll(all =>
      all.map(list => [...list.querySelectorAll('li')].map(li => [li.querySelector('.label').textContent, li.querySelector('time').textContent])),
    );
    assert.deepEqual(lists, [[['bash', '45m']], [['Terminal', '45m']]]);
    assert.equal(await page.locator('#uncategorized-now').innerText(), '0%');
    await shoot(page, 'categories-new-1280-light');
    await assertAccessible(page, 'a new category from a title');

    assert.match(await save(page), /^Saved at \d\d:\d\d/);
    assert.equal(await page.locator('.cat-unsaved').innerText(), 'No unsaved changes');
    const sets = await server.request('GET', '/api/0/settings/category_sets');
    assert.deepEqual(sets.slice(1), SEEDED_SETS.slice(1));
    assert.deepEqual(sets[0].categories.slice(0, 2), SEEDED_SETS[0].categories);
    const { id, ...added } = sets[0].categories[2];
    assert.ok(Number.isInteger(id), `a new category has an integer id, not ${id}`);
    assert.deepEqual(added, { name: ['Work', 'bash'], rule: { type: 'regex', regex: '^bash$', ignore_case: false } });
    assert.equal(sets[0].categories.length, 3);

    await drawn(page, () => page.goto(dayUrl(server)));
    assert.deepEqual(await cardRows(page, 'Top categories'), [
      ['Work > Programming', '1h 2m 3s'],
      ['Work > bash', '45m'],
      ['Media > Video', '30m'],
    ]);
    assertClean(problems);
    await context.close();
  });

  test('tree edits: add a subcategory, rename (subcategories follow), move, colour, delete both ways; saved and read back', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(pageUrl(server)));
    await previewed(page);
    // "Work" and "Media" are implied by their subcategories.
    assert.match(await row(page, ['Work']).innerText(), /no rule: implied by its subcategories/);

    await select(page, ['Work']);
    await page.getByRole('button', { name: 'Add a subcategory' }).click();
    assert.ok(await page.locator('#cat-name').evaluate(input => input === document.activeElement));
    await page.locator('#cat-name').fill('Docs');
    await page.locator('#cat-name').press('Enter');
    await row(page, ['Work', 'Docs']).waitFor();
    assert.match(await page.locator('#cat-status').innerText(), /Renamed “Work > New category” to “Work > Docs”/);
    await page.getByLabel('Rule: a regex').fill('notes\\.md');
    await previewed(page);
    assert.match(await row(page, ['Work', 'Docs']).innerText(), /notes\\\.md/);

    await select(page, ['Work']);
    await page.locator('#cat-name').fill('Job');
    await page.getByRole('button', { name: 'Rename' }).click();
    await row(page, ['Job', 'Programming']).waitFor();
    await row(page, ['Job', 'Docs']).waitFor();
    assert.equal(await row(page, ['Work']).count(), 0);

    await select(page, ['Job', 'Docs']);
    await page.getByLabel('Parent').selectOption({ label: 'Media' });
    await page.getByRole('button', { name: 'Move' }).click();
    await row(page, ['Media', 'Docs']).waitFor();

    await select(page, ['Media', 'Video']);
    await page.locator('#cat-color').fill('#123456');
    assert.match(await row(page, ['Media', 'Video']).locator('.cat-color').innerText(), /#123456$/);

    // "Media" has two subcategories: moved up to the top level.
    await select(page, ['Media']);
    await page.getByRole('button', { name: 'Delete…' }).click();
    const confirm = page.locator('#cat-delete-confirm');
    assert.match(await confirm.innerText(), /“Media” has 2 subcategories\. What becomes of them\?/);
    await assertAccessible(page, 'the confirmation of a delete');
    await confirm.getByRole('button', { name: 'Move them up to the top level' }).click();
    await row(page, ['Video']).waitFor();
    await row(page, ['Docs']).waitFor();
    assert.equal(await row(page, ['Media']).count(), 0);

    // "Job" has one: deleted with it.
    await select(page, ['Job']);
    await page.getByRole('button', { name: 'Delete…' }).click();
    await confirm.getByRole('button', { name: 'Delete it too' }).click();
    await page.locator('#cat-status', { hasText: 'Deleted “Job” and its 1 subcategory' }).waitFor();
    assert.equal(await row(page, ['Job', 'Programming']).count(), 0);
    await previewed(page);
    // Code's hour is uncategorized now; the other views still count it.
    assert.equal(await page.locator('#uncategorized-now').innerText(), '45%');
    assert.equal(await page.locator('#uncategorized-saved').innerText(), '0%');
    await assertAccessible(page, 'the tree after the edits');

    await save(page);
    const base = await baseSet(server);
    assert.deepEqual(base, {
      id: 'base',
      categories: [
        { name: ['Video'], rule: { type: 'regex', regex: 'YouTube' }, data: { color: '#123456' } },
        { id: 2, name: ['Docs'], rule: { type: 'regex', regex: 'notes\\.md' } },
      ],
    });
    assert.deepEqual(await server.request('GET', '/api/0/settings/active_set_ids'), ['extra', 'base']);
    assertClean(problems);
    await context.close();
  });

  test('an invalid regex is shown next to its rule with the server’s message, and nothing is saved', async () => {
    const { page, context, problems } = await openPage({ expectErrors: ['/api/0/summary'] });
    await drawn(page, () => page.goto(pageUrl(server)));
    await previewed(page);
    await select(page, ['Work', 'Programming']);
    await page.getByLabel('Rule: a regex').fill('(unclosed');
    await previewed(page, 'invalid');
    const message = await page.locator('#cat-regex-msg').innerText();
    assert.match(message, /^The server refuses this regex: [\s\S]*unclosed/);
    assert.equal(await page.getByLabel('Rule: a regex').getAttribute('aria-invalid'), 'true');
    assert.match(await page.locator('#preview').innerText(), /No preview: the server refuses the regex of “Work > Programming”/);

    assert.match(await save(page, 'invalid'), /Not saved: the server refuses the regex of “Work > Programming”/);
    assert.match(await page.locator('#cat-regex-msg').innerText(), /unclosed/);
    assert.deepEqual(await server.request('GET', '/api/0/settings/category_sets'), SEEDED_SETS);
    await shoot(page, 'categories-invalid-1280-light');
    await assertAccessible(page, 'an invalid regex');

    // Corrected, the message goes.
    await page.getByLabel('Rule: a regex').fill('Code|Terminal');
    await previewed(page);
    assert.equal(await page.locator('#cat-regex-msg').innerText(), '');
    assert.equal(await page.getByLabel('Rule: a regex').getAttribute('aria-invalid'), null);
    assertClean(problems);
    await context.close();
  });

  test('a rename to a name taken at that level is refused beside the field; the preview covers a week', async () => {
    const { page, context, problems } = await openPage();
    await drawn(page, () => page.goto(pageUrl(server)));
    await select(page, ['Media']);
    await page.locator('#cat-name').fill('Work');
    await page.getByRole('button', { name: 'Rename' }).click();
    assert.equal(await page.locator('#cat-name-msg').innerText(), '“Work” already exists at the top level.');
    assert.equal(await page.locator('#cat-name').getAttribute('aria-invalid'), 'true');
    assert.equal(await row(page, ['Media']).count(), 1);
    assert.equal(await page.getByRole('button', { name: 'Save changes' }).isDisabled(), true);
    await assertAccessible(page, 'a refused rename');
    assert.deepEqual(await server.request('GET', '/api/0/settings/category_sets'), SEEDED_SETS);
    // The preview's period: the week (from Monday) holds Monday's Code too.
    await page.getByRole('button', { name: 'Week', exact: true }).click();
    await previewed(page);
    assert.equal(await page.locator('#preview-period').innerText(), 'Week of Mon, 9 Mar 2026');
    assert.match(page.url(), /#\/categories\/week\/2026-03-10$/);
    assert.deepEqual(await previewRows(page), [
      ['Work > Programming', '1h 28m 43s', '54%', '1h 28m 43s'],
      ['Shell', '45m', '27%', '45m'],
      ['Media > Video', '30m', '18%', '30m'],
    ]);
    assertClean(problems);
    await context.close();
  });

  test('when the server stops before a save, the page says the save failed and keeps the edit', async () => {
    // A server of its own, to stop.
    const server = await startServer();
    await seed(server);
    const { page, context, problems } = await openPage({ expectErrors: ['/api/0/'] });
    await drawn(page, () => page.goto(pageUrl(server)));
    await previewed(page);
    await page.getByRole('button', { name: 'Add a top-level category' }).click();
    await page.locator('#cat-name').fill('Offline edit');
    await page.locator('#cat-name').press('Enter');
    await row(page, ['Offline edit']).waitFor();
    await previewed(page);
    await server.stop();
    const said = await save(page, 'failed');
    assert.match(said, /^The save failed: the server could not be reached .*Your changes are still here/);
    assert.equal(await row(page, ['Offline edit']).count(), 1);
    assert.equal(await page.locator('#cat-name').inputValue(), 'Offline edit');
    assert.equal(await page.locator('.cat-unsaved').innerText(), 'Unsaved changes');
    assert.equal(await page.getByRole('button', { name: 'Save changes' }).isEnabled(), true);
    await assertAccessible(page, 'a failed save');
    assertClean(problems);
    await context.close();
  });

  test('two tabs: the second save is told its copy was stale, and the first save stays', async () => {
    const a = await openPage();
    const b = await openPage({ expectErrors: ['/api/0/settings/category_sets'] });
    for (const { page } of [a, b]) {
      await drawn(page, () => page.goto(pageUrl(server)));
      await previewed(page);
    }
    const addNamed = async (page, name) => {
      await page.getByRole('button', { name: 'Add a top-level category' }).click();
      await page.locator('#cat-name').fill(name);
      await page.locator('#cat-name').press('Enter');
      await row(page, [name]).waitFor();
    };
    await addNamed(a.page, 'From A');
    await save(a.page);
    await addNamed(b.page, 'From B');
    const said = await save(b.page, 'stale');
    assert.match(said, /Not saved: this copy was stale\. The categories were saved elsewhere .* that save is kept/);
    const names = (await baseSet(server)).categories.map(c => c.name.join(' > '));
    assert.deepEqual(names, ['Work > Programming', 'Media > Video', 'From A']);
    // B's edit is still on its page until B chooses to load the latest.
    assert.equal(await row(b.page, ['From B']).count(), 1);
    await assertAccessible(b.page, 'a stale copy');
    await drawn(b.page, () => b.page.getByRole('button', { name: 'Load the latest (drops the changes made here)' }).click());
    await row(b.page, ['From A']).waitFor();
    assert.equal(await row(b.page, ['From B']).count(), 0);
    assert.equal(await b.page.locator('.cat-unsaved').innerText(), 'No unsaved changes');
    for (const { problems, context } of [a, b]) {
      assertClean(problems);
      await context.close();
    }
  });

  test('phone and desktop widths, light and dark: screenshots and accessibility', async () => {
    for (const [width, dark] of [
      [390, false],
      [390, true],
      [1280, false],
      [1280, true],
    ]) {
      const { page, context, problems } = await openPage({ width, dark });
      const suffix = `${width}-${dark ? 'dark' : 'light'}`;
      await drawn(page, () => page.goto(pageUrl(server)));
      await previewed(page);
      await select(page, ['Work', 'Programming']);
      assert.match(await page.locator('.cat-matches').innerText(), /main\.rs - Code/);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window at ${width}px`);
      await shoot(page, `categories-${suffix}`);
      await assertAccessible(page, `the categories page at ${suffix}`);
      assertClean(problems);
      await context.close();
    }
  });
});
