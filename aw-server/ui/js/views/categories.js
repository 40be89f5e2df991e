// The Categories page (`#/categories`): the categories in force, edited
// as a tree and saved through the settings API into the setting they were
// read from, in aw-webui's format, so aw-webui reads them unchanged. The
// edits of the list, and which setting holds it, are category-edits.js
// (`categoryEdits`, loaded before this file: app.js `LAZY`); this file
// draws the page, asks the server and shows the preview.
//
// Edits stay on this page (and across a visit to another view) until
// "Save changes", which sends `If-Match` with the setting's ETag, so a
// save made meanwhile elsewhere (another tab, aw-webui) is refused (412)
// rather than overwritten.
//
// Rules are checked by the server only: the preview asks
// `POST /api/0/summary` with the edited categories (the answer of `GET`,
// computed with them), which also refuses an invalid regex (400, naming
// the category), so a rule the server cannot run is never saved. The
// browser's RegExp is another dialect and is not used.
//
// Routes: `#/categories[/<day|week|month>/<YYYY-MM-DD>]`, the preview's
// period (today by default), and `#/categories/new/<app|title>/<text>`
// followed by the same optional period (the activity view's "Make a
// category of …" links): a new category whose regex matches that text
// exactly.

window.categoriesView = (() => {
  'use strict';

  const { h } = dom;
  const { duration, topList } = charts;
  const {
    keyOf,
    named,
    startsWith,
    parentOf,
    lastOf,
    pretty,
    clone,
    treeOf,
    levelName,
    rename,
    move,
    remove,
    add,
    exactRegex,
    setRule,
    setColor,
    regexOf,
    sourceKey,
    isSet,
    draftOf,
    valueOf,
    effectiveOf,
    dirty,
    ruleErrorOf,
  } = categoryEdits;

  const KINDS = ['day', 'week', 'month'];
  /** Title rows asked for by the preview: the selected category's titles are found among them. */
  const TITLE_ROWS = 1000;
  /** Rows of the preview's lists. */
  const ROWS = 8;
  /** Pause after the last keystroke in a rule before the preview asks again. */
  const DEBOUNCE_MS = 300;

  // Requests of this page.

  /** A setting with its ETag: `{value, etag}`. */
  async function readSetting(key) {
    const response = await api.send(`/api/0/settings/${encodeURIComponent(key)}`);
    const etag = response.headers.get('ETag');
    return { value: await response.json(), etag };
  }

  /** Stores a setting if it is still the version `etag` names; answers the new ETag. */
  async function writeSetting(key, value, etag) {
    const headers = { 'Content-Type': 'application/json' };
    if (etag) headers['If-Match'] = etag;
    const response = await api.send(`/api/0/settings/${encodeURIComponent(key)}`, {
      method: 'POST',
      body: JSON.stringify(value),
      headers,
    });
    await response.text();
    return response.headers.get('ETag');
  }

  const queryOf = params => new URLSearchParams(Object.entries(params)).toString();

  /** `GET /api/0/summary`'s answer computed with `list` instead of the saved categories. */
  async function summaryWith(params, list) {
    return (await api.sendJson('POST', `/api/0/summary?${queryOf(params)}`, { categories: list })).json();
  }

  /** Edits not saved yet, kept while the user looks at another view. */
  let kept = null;
  // Closing or reloading the tab would lose them: the browser asks first.
  window.addEventListener('beforeunload', event => {
    if (kept && dirty(kept.draft)) event.preventDefault();
  });

  async function render(main, params, isCurrent) {
    const settings = await api.settings();
    if (!isCurrent()) return false;
    const offset = time.dayOffset(settings.startOfDay ?? '04:00');
    const weekStart = time.weekStartDay(settings.startOfWeek);

    let draft;
    let restored = false;
    if (kept && dirty(kept.draft)) {
      ({ draft } = kept);
      restored = true;
    } else {
      let key = sourceKey(settings);
      let read = await readSetting(key);
      if (key === 'category_sets' && !(Array.isArray(read.value) && read.value.some(isSet))) {
        key = 'classes';
        read = await readSetting(key);
      }
      if (!isCurrent()) return false;
      draft = draftOf(key, read.value, read.etag, settings);
    }
    kept = { draft, selected: restored ? kept.selected : null };

    const page = {
      draft,
      selected: kept.selected,
      period: { kind: 'day', date: time.logicalToday(offset) },
      notice: restored ? 'Your unsaved changes from before are still here.' : null,
    };

    // A category made from an application or a window title.
    let focusName = false;
    const made = params[0] === 'new' && ['app', 'title'].includes(params[1]) && params[2];
    const [kind, date] = made ? params.slice(3) : params;
    if (KINDS.includes(kind)) page.period.kind = kind;
    page.period.date = time.parseDateKey(date) || page.period.date;
    if (made) {
      const text = params[2];
      const added = add(draft.list, [], text.trim() || text, { type: 'regex', regex: exactRegex(text), ignore_case: false });
      draft.list = added.list;
      page.selected = added.path;
      page.notice = `New category “${lastOf(added.path)}” for the ${
        params[1] === 'app' ? 'application' : 'window title'
      } “${text}”, not saved yet: check the preview, name it or move it, then save.`;
      focusName = true;
    }
    // The period stays in the address; a category made from the address
    // does not, so that reloading the page does not make it again.
    history.replaceState(history.state, '', periodHref(page.period));

    drawPage(main, page, { offset, weekStart, isCurrent });
    if (focusName) document.getElementById('cat-name')?.focus();
    return true;
  }

  /** Builds the page and wires its controls; `page` is its state. */
  function drawPage(main, page, { offset, weekStart, isCurrent }) {
    const { draft } = page;
    const tz = time.zoneName();
    let ruleError = null; // {key, message} from the server
    let confirming = null; // 'delete' while the editor asks to confirm one
    let lastAnswers = null;

    // ----- The tree and its editor -----

    const tree = h('ul', { class: 'cat-tree', 'aria-labelledby': 'cat-title' });
    const status = h('p', { id: 'cat-status', class: 'cat-status', role: 'status' });
    const saveButton = h('button', { type: 'button', class: 'primary', id: 'cat-save', onclick: save }, 'Save changes');
    const discardButton = h('button', { type: 'button', id: 'cat-discard', onclick: askDiscard }, 'Discard changes');
    const unsaved = h('span', { class: 'cat-unsaved' });
    const discardBox = h('div', { class: 'cat-confirm', hidden: true });

    function say(text, state = 'info', ...extra) {
      status.dataset.state = state;
      status.classList.toggle('error', ['failed', 'stale', 'invalid'].includes(state));
      dom.replace(status, text, ...extra);
    }

    function refreshDirty() {
      const changed = dirty(draft);
      saveButton.disabled = !changed;
      discardButton.disabled = !changed;
      unsaved.textContent = changed ? 'Unsaved changes' : 'No unsaved changes';
      unsaved.classList.toggle('changed', changed);
    }

    /** The colour a path is drawn with, and where it comes from. */
    function colorInfo(effective, path) {
      const own = draft.list.find(c => named(c) && keyOf(c.name) === keyOf(path));
      if (own && own.data && own.data.color) return { color: own.data.color, from: 'own' };
      const color = categories.categoryColor(effective, path);
      for (let length = path.length - 1; length > 0; length--) {
        const parent = path.slice(0, length);
        const found = effective.find(c => keyOf(c.name) === keyOf(parent));
        if (found && found.data && found.data.color) return { color, from: parent };
      }
      return { color, from: 'auto' };
    }

    function colorText(info) {
      if (info.from === 'own') return info.color;
      if (info.from === 'auto') return `${info.color} (automatic)`;
      return `${info.color} (from ${pretty(info.from)})`;
    }

    function swatch(color) {
      const element = h('span', { class: 'swatch', 'aria-hidden': 'true' });
      element.style.backgroundColor = color;
      return element;
    }

    function ruleText(node) {
      if (!node.category) return h('span', { class: 'muted' }, 'no rule: implied by its subcategories');
      const regex = regexOf(node.category);
      if (!regex) return h('span', { class: 'muted' }, 'no rule');
      return [h('code', {}, regex), node.category.rule.ignore_case ? h('span', { class: 'muted' }, ' · any case') : null];
    }

    const rowError = message => h('p', { class: 'field-error cat-row-error' }, 'The server refuses this regex: ', h('code', {}, message));

    function drawTree(focus = null) {
      const { roots, byKey } = treeOf(draft.list);
      if (page.selected && !byKey.has(keyOf(page.selected))) page.selected = null;
      kept.selected = page.selected;
      const effective = effectiveOf(draft, draft.list);
      const item = node => {
        const key = keyOf(node.path);
        const selected = page.selected && keyOf(page.selected) === key;
        const info = colorInfo(effective, node.path);
        const error = ruleError && ruleError.key === key ? ruleError.message : null;
        return h(
          'li',
          { 'data-path': key },
          h(
            'div',
            { class: `cat-row${selected ? ' selected' : ''}` },
            h(
              'button',
              {
                type: 'button',
                class: 'cat-name',
                'aria-expanded': selected ? 'true' : 'false',
                'aria-controls': selected ? 'cat-editor' : null,
                title: `Edit ${pretty(node.path)}`,
                onclick: () => select(selected ? null : node.path),
              },
              lastOf(node.path),
            ),
            h('span', { class: 'cat-rule' }, h('span', { class: 'visually-hidden' }, 'Rule: '), ruleText(node)),
            h('span', { class: 'cat-color' }, swatch(info.color), h('span', { class: 'visually-hidden' }, 'Colour: '), colorText(info)),
            error && !selected ? rowError(error) : null,
          ),
          selected ? editor(node, info, error) : null,
          node.children.length ? h('ul', {}, node.children.map(item)) : null,
        );
      };
      if (roots.length) dom.replace(tree, roots.map(item));
      else dom.replace(tree, h('li', { class: 'empty' }, 'No categories in this list yet.'));
      refreshDirty();
      // `focus`: the id of a field of the editor, or the path of a name.
      if (typeof focus === 'string') document.getElementById(focus)?.focus();
      else if (Array.isArray(focus)) {
        const selector = `li[data-path="${CSS.escape(keyOf(focus))}"] > .cat-row .cat-name`;
        tree.querySelector(selector)?.focus();
      }
    }

    function select(path) {
      const closed = page.selected;
      page.selected = path;
      confirming = null;
      // Into the editor opened, or back on the name of the one closed.
      drawTree(path ? 'cat-name' : closed);
      drawMatches();
    }

    /** Applies a change of the list: redraws, says what happened, previews if the rules changed. */
    function changed(list, { selected = page.selected, focus = null, message = null, preview = true } = {}) {
      draft.list = list;
      page.selected = selected;
      confirming = null;
      drawTree(focus);
      if (message) say(message);
      if (preview) schedulePreview(0);
      else drawMatches();
    }

    function fieldMessage(id, text) {
      const element = document.getElementById(`${id}-msg`);
      const input = document.getElementById(id);
      if (element) element.textContent = text || '';
      if (input && text) input.setAttribute('aria-invalid', 'true');
      else if (input) input.removeAttribute('aria-invalid');
    }

    /** The editor of the selected node. */
    function editor(node, info, error) {
      const path = node.path;
      const name = h('input', {
        id: 'cat-name',
        value: lastOf(path),
        autocomplete: 'off',
        spellcheck: 'false',
        'aria-describedby': 'cat-name-msg',
      });
      const renameForm = h(
        'form',
        {
          class: 'field',
          onsubmit: event => {
            event.preventDefault();
            const result = rename(draft.list, path, name.value);
            if (result.error) return fieldMessage('cat-name', result.error);
            if (result.list === draft.list) return fieldMessage('cat-name', '');
            changed(result.list, {
              selected: result.path,
              focus: 'cat-name',
              message: `Renamed “${pretty(path)}” to “${pretty(result.path)}” (not saved yet).`,
            });
          },
        },
        h('label', { for: 'cat-name' }, 'Name'),
        h('div', { class: 'cat-inline' }, name, h('button', { type: 'submit' }, 'Rename')),
        h('p', { id: 'cat-name-msg', class: 'field-error', 'aria-live': 'polite' }),
      );

      const regex = h('input', {
        id: 'cat-regex',
        class: 'cat-regex',
        value: regexOf(node.category),
        autocomplete: 'off',
        spellcheck: 'false',
        'aria-describedby': 'cat-regex-msg cat-regex-hint',
        'aria-invalid': error ? 'true' : null,
      });
      const ignoreCase = h('input', {
        id: 'cat-ignore-case',
        type: 'checkbox',
        checked: Boolean(node.category && node.category.rule && node.category.rule.ignore_case),
      });
      const onRule = () => {
        draft.list = setRule(draft.list, path, regex.value, ignoreCase.checked);
        const row = tree.querySelector(`li[data-path="${CSS.escape(keyOf(path))}"] > .cat-row .cat-rule`);
        const now = treeOf(draft.list).byKey.get(keyOf(path));
        if (row && now) dom.replace(row, h('span', { class: 'visually-hidden' }, 'Rule: '), ruleText(now));
        refreshDirty();
        schedulePreview(DEBOUNCE_MS);
      };
      regex.addEventListener('input', onRule);
      ignoreCase.addEventListener('change', onRule);
      const ruleField = h(
        'div',
        { class: 'field' },
        h('label', { for: 'cat-regex' }, 'Rule: a regex matched against application names and window titles'),
        regex,
        h('label', { class: 'cat-check' }, ignoreCase, ' Ignore case'),
        h(
          'small',
          { id: 'cat-regex-hint' },
          'The server checks it (its regex syntax) and the preview shows what it matches. ' +
            'Empty: no rule of its own; the category then only holds its subcategories.',
        ),
        h('p', { id: 'cat-regex-msg', class: 'field-error', 'aria-live': 'polite' }, error ? ['The server refuses this regex: ', h('code', {}, error)] : null),
      );

      const picker = h('input', { id: 'cat-color', type: 'color', value: hexOf(info.color), 'aria-describedby': 'cat-color-text' });
      const colorLabel = h('span', { id: 'cat-color-text' }, colorText(info));
      picker.addEventListener('input', () => {
        draft.list = setColor(draft.list, path, picker.value);
        colorLabel.textContent = picker.value;
        refreshColors();
      });
      // The tree is drawn again once the choice is made, for the button below.
      picker.addEventListener('change', () => drawTree('cat-color'));
      const colorField = h(
        'div',
        { class: 'field' },
        h('label', { for: 'cat-color' }, 'Colour'),
        h(
          'div',
          { class: 'cat-inline' },
          picker,
          colorLabel,
          info.from === 'own'
            ? h(
                'button',
                {
                  type: 'button',
                  onclick: () =>
                    changed(setColor(draft.list, path, null), {
                      focus: 'cat-color',
                      message: `“${pretty(path)}” has no colour of its own now (not saved yet).`,
                      preview: false,
                    }),
                },
                path.length > 1 ? 'Use the parent’s colour' : 'Remove its colour',
              )
            : null,
        ),
      );

      const { roots, byKey } = treeOf(draft.list);
      const walk = nodes => nodes.flatMap(other => [other.path, ...walk(other.children)]);
      const parents = walk(roots).filter(other => !startsWith(other, path));
      const parentSelect = h(
        'select',
        { id: 'cat-parent', 'aria-describedby': 'cat-parent-msg' },
        h('option', { value: '[]', selected: path.length === 1 }, '(top level)'),
        parents.map(other =>
          h('option', { value: keyOf(other), selected: keyOf(other) === keyOf(parentOf(path)) }, pretty(other)),
        ),
      );
      const moveForm = h(
        'form',
        {
          class: 'field',
          onsubmit: event => {
            event.preventDefault();
            const result = move(draft.list, path, JSON.parse(parentSelect.value));
            if (result.error) return fieldMessage('cat-parent', result.error);
            if (result.list === draft.list) return fieldMessage('cat-parent', 'It is there already.');
            changed(result.list, {
              selected: result.path,
              focus: 'cat-parent',
              message: `Moved “${lastOf(path)}” ${levelName(parentOf(result.path))} (not saved yet).`,
            });
          },
        },
        h('label', { for: 'cat-parent' }, 'Parent'),
        h('div', { class: 'cat-inline' }, parentSelect, h('button', { type: 'submit' }, 'Move')),
        h('p', { id: 'cat-parent-msg', class: 'field-error', 'aria-live': 'polite' }),
      );

      const deleteBox = h('div', { class: 'cat-confirm', id: 'cat-delete-confirm', hidden: confirming !== 'delete' });
      const askDelete = (focus = true) => {
        confirming = 'delete';
        const count = [...byKey.keys()].filter(key => {
          const other = JSON.parse(key);
          return other.length > path.length && startsWith(other, path);
        }).length;
        const up = path.length > 1 ? `under “${pretty(parentOf(path))}”` : 'to the top level';
        const yes = (label, mode) =>
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: () => {
                const result = remove(draft.list, path, mode);
                if (result.error) {
                  dom.replace(deleteBox, h('p', { class: 'field-error' }, result.error), cancel());
                  return;
                }
                const parent = parentOf(path);
                changed(result.list, {
                  selected: null,
                  focus: parent.length && treeOf(result.list).byKey.has(keyOf(parent)) ? parent : 'cat-add',
                  message: `Deleted “${pretty(path)}”${
                    count === 0 ? '' : mode === 'all' ? ` and its ${count} subcategor${count === 1 ? 'y' : 'ies'}` : `; its subcategories moved ${up}`
                  } (not saved yet).`,
                });
              },
            },
            label,
          );
        const cancel = () =>
          h(
            'button',
            {
              type: 'button',
              onclick: () => {
                confirming = null;
                deleteBox.hidden = true;
                document.getElementById('cat-delete')?.focus();
              },
            },
            'Cancel',
          );
        dom.replace(
          deleteBox,
          count === 0
            ? [h('p', {}, `Delete “${pretty(path)}”?`), yes(`Delete “${lastOf(path)}”`, 'all')]
            : [
                h(
                  'p',
                  {},
                  `“${pretty(path)}” has ${count} subcategor${count === 1 ? 'y' : 'ies'}. What becomes of ${
                    count === 1 ? 'it' : 'them'
                  }?`,
                ),
                yes(`Delete ${count === 1 ? 'it' : 'them'} too`, 'all'),
                yes(`Move ${count === 1 ? 'it' : 'them'} up ${up}`, 'lift'),
              ],
          cancel(),
        );
        deleteBox.hidden = false;
        if (focus) deleteBox.querySelector('button')?.focus();
      };

      const box = h(
        'div',
        { id: 'cat-editor', class: 'cat-editor', role: 'group', 'aria-label': `Edit ${pretty(path)}` },
        node.category
          ? null
          : h(
              'p',
              { class: 'muted' },
              'Not a category of its own: its subcategories imply it. A rule or a colour makes it one.',
            ),
        renameForm,
        ruleField,
        colorField,
        moveForm,
        h(
          'div',
          { class: 'cat-inline cat-editor-actions' },
          h(
            'button',
            {
              type: 'button',
              id: 'cat-add-child',
              onclick: () => {
                const result = add(draft.list, path);
                changed(result.list, {
                  selected: result.path,
                  focus: 'cat-name',
                  message: `Added “${pretty(result.path)}” (not saved yet): name it and give it a rule.`,
                });
              },
            },
            'Add a subcategory',
          ),
          h('button', { type: 'button', id: 'cat-delete', class: 'danger', onclick: () => askDelete() }, 'Delete…'),
        ),
        deleteBox,
      );
      if (confirming === 'delete') queueMicrotask(() => askDelete(false));
      return box;
    }

    /** Repaints the swatches after a colour change, without drawing the tree again. */
    function refreshColors() {
      const effective = effectiveOf(draft, draft.list);
      for (const item of tree.querySelectorAll('li[data-path]')) {
        const path = JSON.parse(item.dataset.path);
        const info = colorInfo(effective, path);
        const cell = item.querySelector(':scope > .cat-row .cat-color');
        if (cell) dom.replace(cell, swatch(info.color), h('span', { class: 'visually-hidden' }, 'Colour: '), colorText(info));
      }
      refreshDirty();
      if (lastAnswers) drawPreview(...lastAnswers);
    }

    function askDiscard() {
      dom.replace(
        discardBox,
        h('p', {}, 'Drop every change made since the categories were last saved?'),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () => {
              discardBox.hidden = true;
              changed(clone(draft.saved), { focus: 'cat-add', message: 'Changes dropped: the categories are as saved.' });
            },
          },
          'Drop the changes',
        ),
        h(
          'button',
          {
            type: 'button',
            onclick: () => {
              discardBox.hidden = true;
              discardButton.focus();
            },
          },
          'Keep them',
        ),
      );
      discardBox.hidden = false;
      discardBox.querySelector('button').focus();
    }

    // ----- Saving -----

    let saving = false;

    /** Tells of a refused rule: beside it in the tree, and on the page. */
    function showRuleError(found) {
      ruleError = found;
      page.selected = JSON.parse(found.key);
      drawTree('cat-regex');
      drawMatches();
    }

    async function save() {
      if (saving) return;
      saving = true;
      saveButton.disabled = true;
      const list = draft.list;
      say('Checking the rules with the server…', 'saving');
      try {
        try {
          await summaryWith(periodParams(), effectiveOf(draft, list));
        } catch (error) {
          if (!isCurrent()) return;
          const found = error instanceof api.ApiError && error.status === 400 ? ruleErrorOf(error.message, list) : null;
          if (found) {
            showRuleError(found);
            say(`Not saved: the server refuses the regex of “${pretty(JSON.parse(found.key))}”. Correct it, then save.`, 'invalid');
          } else if (error instanceof api.ApiError && error.status === 400) {
            say(`Not saved: the server refuses these categories: ${error.message}`, 'invalid');
          } else {
            failed(error);
          }
          return;
        }
        if (!isCurrent()) return;
        say('Saving…', 'saving');
        const value = valueOf(draft, list);
        try {
          const etag = await writeSetting(draft.key, value, draft.etag);
          if (!isCurrent()) return;
          draft.etag = etag;
          draft.stored = clone(value);
          draft.saved = clone(list);
          draft.fromDefaults = false;
          savedAnswers.clear();
          say(`Saved at ${time.formatTime(new Date())}: the other views count with these categories now.`, 'saved');
          drawSource();
          schedulePreview(0);
        } catch (error) {
          if (!isCurrent()) return;
          if (error instanceof api.ApiError && error.status === 412) stale();
          else failed(error);
        }
      } finally {
        saving = false;
        refreshDirty();
      }
    }

    function failed(error) {
      const reason =
        error instanceof api.ApiError
          ? `the server answered: ${error.message}`
          : `the server could not be reached (${error.message})`;
      say(`The save failed: ${reason}. Your changes are still here; save again once the server is back.`, 'failed');
    }

    function stale() {
      say(
        'Not saved: this copy was stale. The categories were saved elsewhere (another tab or aw-webui) after ' +
          'this page read them; that save is kept. Your changes are still on this page only. ',
        'stale',
        h(
          'button',
          {
            type: 'button',
            id: 'cat-reload',
            onclick: () => {
              kept = null;
              // The same address again draws the page anew, from the server.
              window.dispatchEvent(new HashChangeEvent('hashchange'));
            },
          },
          'Load the latest (drops the changes made here)',
        ),
      );
    }

    // ----- The preview -----

    const preview = h('section', { class: 'card cat-preview', id: 'preview', 'aria-labelledby': 'preview-title' });
    const previewBody = h('div', { class: 'cat-preview-body' });
    const matches = h('div', { class: 'cat-matches' });
    const periodTitle = h('h3', { id: 'preview-period' });
    const kindButtons = KINDS.map(kind =>
      h(
        'button',
        { type: 'button', 'data-key': kind[0], onclick: () => setPeriod(kind, page.period.date) },
        kind[0].toUpperCase() + kind.slice(1),
      ),
    );
    const previous = h('button', { type: 'button', class: 'step', id: 'previous', onclick: () => step(-1) }, '‹');
    const next = h('button', { type: 'button', class: 'step', id: 'next', onclick: () => step(1) }, '›');
    const today = h(
      'button',
      { type: 'button', class: 'today', onclick: () => setPeriod(page.period.kind, time.logicalToday(offset)) },
      'Today',
    );
    let timer = null;
    let asked = 0;
    /** Answers of GET /api/0/summary (the categories as saved), by period. */
    const savedAnswers = new Map();

    function periodParams() {
      const first = time.periodFirstDate(page.period.kind, page.period.date, weekStart);
      return {
        start: time.dateKey(first),
        end: time.dateKey(time.shiftDate(page.period.kind, first, 1)),
        by: 'category,title',
        tz,
        limit: TITLE_ROWS,
      };
    }

    function drawPeriod() {
      const { kind, date } = page.period;
      const first = time.periodFirstDate(kind, date, weekStart);
      const units = { day: 'day', week: 'week', month: 'month' };
      kindButtons.forEach((button, index) => button.setAttribute('aria-pressed', String(KINDS[index] === kind)));
      periodTitle.textContent = time.periodTitle(kind, first, weekStart);
      previous.setAttribute('aria-label', `Previous ${units[kind]}`);
      next.setAttribute('aria-label', `Next ${units[kind]}`);
      next.disabled = time.periodFirstDate(kind, time.shiftDate(kind, first, 1), weekStart) > time.logicalToday(offset);
    }

    function setPeriod(kind, date) {
      page.period = { kind, date };
      history.replaceState(history.state, '', periodHref(page.period));
      drawPeriod();
      schedulePreview(0);
    }

    function step(direction) {
      if (direction > 0 && next.disabled) return;
      setPeriod(page.period.kind, time.shiftDate(page.period.kind, time.periodFirstDate(page.period.kind, page.period.date, weekStart), direction));
    }

    function previewState(state) {
      preview.dataset.state = state;
      preview.setAttribute('aria-busy', String(state === 'pending' || state === 'loading'));
    }

    function schedulePreview(delay) {
      clearTimeout(timer);
      previewState('pending');
      timer = setTimeout(runPreview, delay);
    }

    async function savedAnswer(params) {
      const key = queryOf(params);
      if (!savedAnswers.has(key)) {
        const answer = api.summary(params).catch(error => ({ error }));
        savedAnswers.set(key, answer);
      }
      return savedAnswers.get(key);
    }

    async function runPreview() {
      if (!isCurrent()) return;
      const mine = ++asked;
      previewState('loading');
      const params = periodParams();
      const list = draft.list;
      try {
        const [edited, saved] = await Promise.all([summaryWith(params, effectiveOf(draft, list)), savedAnswer(params)]);
        if (mine !== asked || !isCurrent()) return;
        if (ruleError) clearRuleErrorInPlace();
        lastAnswers = [edited, saved];
        drawPreview(edited, saved);
        previewState('ready');
      } catch (error) {
        if (mine !== asked || !isCurrent()) return;
        lastAnswers = null;
        const found = error instanceof api.ApiError && error.status === 400 ? ruleErrorOf(error.message, list) : null;
        if (found) {
          ruleError = found;
          showRuleErrorInPlace();
          dom.replace(
            previewBody,
            h(
              'p',
              { class: 'field-error', role: 'alert' },
              `No preview: the server refuses the regex of “${pretty(JSON.parse(found.key))}”. `,
              page.selected && keyOf(page.selected) === found.key
                ? null
                : h('button', { type: 'button', onclick: () => showRuleError(found) }, 'Show it'),
            ),
          );
          matches.replaceChildren();
          previewState('invalid');
        } else {
          dom.replace(previewBody, h('p', { class: 'field-error', role: 'alert' }, `No preview: ${error.message}`));
          matches.replaceChildren();
          previewState('error');
        }
      }
    }

    // The refused rule is shown and cleared in place rather than by
    // drawing the tree again, which would take the field from under the
    // user's typing.

    /** Shows the refused rule beside its field (the editor's, or the rule in the tree). */
    function showRuleErrorInPlace() {
      clearRuleErrorInPlace(false);
      const selected = page.selected && keyOf(page.selected) === ruleError.key;
      if (selected) {
        const message = document.getElementById('cat-regex-msg');
        if (message) dom.replace(message, 'The server refuses this regex: ', h('code', {}, ruleError.message));
        document.getElementById('cat-regex')?.setAttribute('aria-invalid', 'true');
      } else {
        const row = tree.querySelector(`li[data-path="${CSS.escape(ruleError.key)}"] > .cat-row`);
        row?.append(rowError(ruleError.message));
      }
    }

    function clearRuleErrorInPlace(forget = true) {
      if (forget) ruleError = null;
      for (const element of tree.querySelectorAll('.cat-row-error')) element.remove();
      const message = document.getElementById('cat-regex-msg');
      if (message) message.replaceChildren();
      document.getElementById('cat-regex')?.removeAttribute('aria-invalid');
    }

    const percent = (part, whole) => {
      if (!whole || !part) return '0%';
      const value = (100 * part) / whole;
      return value < 1 ? '<1%' : `${Math.round(value)}%`;
    };

    function drawPreview(edited, saved) {
      const effective = effectiveOf(draft, draft.list);
      const uncategorized = answer => {
        const row = (answer.category || []).find(r => keyOf(r.category) === keyOf(['Uncategorized']));
        return row ? row.duration : 0;
      };
      const savedOk = saved && !saved.error;
      const facts = h(
        'p',
        { class: 'cat-uncategorized' },
        h('strong', {}, 'Uncategorized: '),
        h('span', { id: 'uncategorized-now' }, percent(uncategorized(edited), edited.duration)),
        ' (',
        duration(uncategorized(edited)),
        ') as edited; ',
        h('span', { id: 'uncategorized-saved' }, savedOk ? percent(uncategorized(saved), saved.duration) : '?'),
        savedOk ? [' (', duration(uncategorized(saved)), ')'] : null,
        ' as saved',
      );
      if (edited.duration === 0) {
        dom.replace(previewBody, h('p', { class: 'empty' }, 'No activity in this period.'));
        drawMatches();
        return;
      }
      const savedBy = new Map(savedOk ? saved.category.map(row => [keyOf(row.category), row.duration]) : []);
      const shown = edited.category.slice(0, 10);
      const gone = savedOk
        ? saved.category.filter(row => !edited.category.some(other => keyOf(other.category) === keyOf(row.category))).slice(0, 5)
        : [];
      const row = (path, seconds) =>
        h(
          'tr',
          {},
          h(
            'th',
            { scope: 'row', 'data-label': 'Category' },
            swatch(categories.categoryColor(effective, path)),
            ' ',
            pretty(path),
          ),
          h('td', { class: 'number', 'data-label': 'As edited' }, duration(seconds)),
          h('td', { class: 'number', 'data-label': 'Share' }, percent(seconds, edited.duration)),
          h(
            'td',
            { class: 'number', 'data-label': 'As saved' },
            savedOk ? duration(savedBy.get(keyOf(path)) || 0) : '?',
          ),
        );
      dom.replace(
        previewBody,
        facts,
        savedOk ? null : h('p', { class: 'field-error' }, `The figures as saved are missing: ${saved.error.message}`),
        h(
          'table',
          { class: 'cat-shares', 'aria-label': 'Top categories' },
          h('thead', {}, h('tr', {}, ['Category', 'As edited', 'Share', 'As saved'].map(name => h('th', { scope: 'col' }, name)))),
          h('tbody', {}, shown.map(r => row(r.category, r.duration)), gone.map(r => row(r.category, 0))),
        ),
      );
      drawMatches();
    }

    /** The titles and applications the selected category matches, from the last preview. */
    function drawMatches() {
      if (!lastAnswers) {
        matches.replaceChildren();
        return;
      }
      const [edited] = lastAnswers;
      if (!page.selected) {
        dom.replace(matches, h('p', { class: 'muted' }, 'Select a category to see the window titles and applications it matches.'));
        return;
      }
      const key = keyOf(page.selected);
      const rows = (edited.title || []).filter(row => row.category && keyOf(row.category) === key);
      const apps = new Map();
      for (const row of rows) apps.set(row.app, (apps.get(row.app) || 0) + row.duration);
      const name = pretty(page.selected);
      dom.replace(
        matches,
        h('h3', { id: 'matches-title' }, `What “${name}” matches`),
        rows.length === 0
          ? h(
              'p',
              { class: 'empty' },
              `Nothing in this period is in “${name}” itself. Where several rules match, the deepest category ` +
                'wins, and of equally deep ones the one listed later (those of another active set come after ' +
                'these): a subcategory wins over a top-level category.',
            )
          : [
              h('h4', {}, 'Top window titles'),
              topList(
                rows.map(row => ({ label: row.key || '(no title)', title: `${row.app}: ${row.key}`, seconds: row.duration })),
                { limit: ROWS },
              ),
              h('h4', {}, 'Top applications'),
              topList(
                [...apps].sort((a, b) => b[1] - a[1]).map(([app, seconds]) => ({ label: app || '(no application)', seconds })),
                { limit: ROWS },
              ),
              (edited.title || []).length >= TITLE_ROWS
                ? h('p', { class: 'muted' }, `Counted over the ${TITLE_ROWS.toLocaleString('en')} longest window titles of the period.`)
                : null,
            ],
      );
    }

    // ----- The page -----

    const source = h('p', { class: 'muted cat-source' });
    function drawSource() {
      const parts = [];
      if (draft.key === 'category_sets') {
        const setName = set => `“${set.name || set.id}”`;
        parts.push('These are the categories of the set ', setName(draft.stored[draft.setIndex]), ' (setting ', h('code', {}, 'category_sets'), ').');
        const active = Array.isArray(draft.activeIds) ? draft.activeIds : [];
        const others = draft.stored.filter((set, index) => isSet(set) && index !== draft.setIndex && active.includes(set.id));
        if (others.length) {
          parts.push(
            ' Also active, and applied in the preview but not edited here: ',
            others.map(setName).join(', '),
            '; where both name a category, the earlier set’s applies.',
          );
        }
      } else if (draft.fromDefaults) {
        parts.push("No categories are saved yet: these are aw-webui's defaults. Saving them stores them in the setting ", h('code', {}, 'classes'), '.');
      } else {
        parts.push('These are the categories of the setting ', h('code', {}, 'classes'), '.');
      }
      dom.replace(source, parts);
    }
    drawSource();

    const others = draft.list.filter(c => !named(c)).length;
    main.replaceChildren(
      h(
        'div',
        { class: 'cat-layout' },
        h(
          'section',
          { class: 'card cat-edit', 'aria-labelledby': 'cat-title' },
          h('h1', { id: 'cat-title' }, 'Categories'),
          source,
          others ? h('p', { class: 'muted' }, `${others} entries of the list are not categories; they are kept as they are.`) : null,
          page.notice ? h('p', { class: 'cat-notice' }, page.notice) : null,
          h(
            'div',
            { class: 'cat-toolbar' },
            h(
              'button',
              {
                type: 'button',
                id: 'cat-add',
                onclick: () => {
                  const result = add(draft.list, []);
                  changed(result.list, {
                    selected: result.path,
                    focus: 'cat-name',
                    message: `Added “${pretty(result.path)}” (not saved yet): name it and give it a rule.`,
                  });
                },
              },
              'Add a top-level category',
            ),
            saveButton,
            discardButton,
            unsaved,
          ),
          discardBox,
          status,
          h('p', { class: 'muted hint' }, 'Select a category’s name to edit it. Time goes to the deepest category whose rule matches.'),
          tree,
        ),
        preview,
      ),
    );
    dom.replace(
      preview,
      h('h2', { id: 'preview-title' }, 'Preview'),
      h(
        'p',
        { class: 'muted' },
        'Time as the categories would count it once saved; “as saved” is what the other views show now.',
      ),
      h(
        'div',
        { class: 'cat-period' },
        h('div', { class: 'kinds', role: 'group', 'aria-label': 'Period length' }, kindButtons),
        h('div', { class: 'stepper' }, previous, periodTitle, next, today),
      ),
      previewBody,
      matches,
    );
    drawPeriod();
    drawTree();
    schedulePreview(0);
  }

  const periodHref = ({ kind, date }) => `#/categories/${kind}/${time.dateKey(date)}`;

  /** `#rrggbb` for `<input type=color>`, from any colour CSS reads. */
  function hexOf(color) {
    const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(color);
    if (short) return `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}`.toLowerCase();
    if (/^#[0-9a-f]{6}$/i.test(color)) return color.toLowerCase();
    const probe = h('span');
    probe.style.color = color;
    document.body.append(probe);
    const rgb = getComputedStyle(probe).color.match(/\d+/g) || [0, 0, 0];
    probe.remove();
    return `#${rgb.slice(0, 3).map(n => Number(n).toString(16).padStart(2, '0')).join('')}`;
  }

  return { render };
})();
