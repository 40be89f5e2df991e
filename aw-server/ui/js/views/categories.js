// The Categories page (`#/categories`): the categories in force, edited
// as a tree and saved through the settings API into the setting they were
// read from, in aw-webui's format, so aw-webui reads them unchanged. This
// file draws the page and its tree, asks for and saves the setting; the
// page's other scripts, loaded before it (app.js `LAZY`), are
// category-edits.js (`categoryEdits`: the edits of the list, and which
// setting holds it), views/category-editor.js (`categoryEditor`: the
// editor of the selected category) and views/category-preview.js
// (`categoryPreview`: the preview).
//
// Edits stay on this page (and across a visit to another view) until
// "Save changes", which sends `If-Match` with the setting's ETag, so a
// save made meanwhile elsewhere (another tab, aw-webui) is refused (412)
// rather than overwritten.
//
// Rules are checked by the server only: the preview and the save ask
// `POST /api/0/summary` with the edited categories, which refuses an
// invalid regex (400, naming the category), so a rule the server cannot
// run is never saved. The browser's RegExp is another dialect and is not
// used.
//
// Routes: `#/categories[/<day|week|month>/<YYYY-MM-DD>]`, the preview's
// period (today by default), and `#/categories/new/<app|title>/<text>`
// followed by the same optional period (the activity view's "Make a
// category of …" links): a new category whose regex matches that text
// exactly.

window.categoriesView = (() => {
  'use strict';

  const { h } = dom;
  const {
    keyOf,
    named,
    lastOf,
    pretty,
    clone,
    treeOf,
    add,
    exactRegex,
    sourceKey,
    isSet,
    draftOf,
    valueOf,
    effectiveOf,
    dirty,
  } = categoryEdits;
  const { ruleCell, colorCell, rowError, refusalOf } = categoryEditor;
  const { KINDS, periodHref } = categoryPreview;

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

  /** The setting that holds the categories: `{key, value, etag}`. */
  async function readStored(settings) {
    let key = sourceKey(settings);
    let read = await readSetting(key);
    if (key === 'category_sets' && !(Array.isArray(read.value) && read.value.some(isSet))) {
      key = 'classes';
      read = await readSetting(key);
    }
    return { key, ...read };
  }

  /** Edits not saved yet, kept while the user looks at another view. */
  let kept = null;
  // Closing or reloading the tab would lose them: the browser asks first.
  window.addEventListener('beforeunload', event => {
    if (kept && dirty(kept.draft)) event.preventDefault();
  });

  /**
   * Draws the page. Its state, passed to the functions of its three
   * scripts:
   *
   * - `draft`: the list being edited and where it is saved (category-edits.js `draftOf`);
   * - `selected`: the path of the category whose editor is open, or null;
   * - `period`: the preview's `{kind, date}`; `offset`, `weekStart`, `tz`: how periods are cut;
   * - `notice`: what the page says first, if anything;
   * - `ruleError`: `{key, message}`, the rule the server last refused;
   * - `confirming`: "delete" while the editor asks to confirm a deletion;
   * - `saving`: while a save is under way;
   * - `tree`, `controls`, `preview`: the page's elements (`preview` also the preview's requests);
   * - `actions`: what the editor and the preview ask of the page;
   * - `isCurrent()`: whether the page is still the one shown.
   */
  async function render(main, params, isCurrent) {
    const settings = await api.settings();
    if (!isCurrent()) return false;
    const offset = time.dayOffset(settings.startOfDay ?? '04:00');

    const restored = Boolean(kept && dirty(kept.draft));
    let draft;
    if (restored) {
      draft = kept.draft;
    } else {
      const stored = await readStored(settings);
      if (!isCurrent()) return false;
      draft = draftOf(stored.key, stored.value, stored.etag, settings);
    }
    kept = { draft, selected: restored ? kept.selected : null };

    // A category made from an application or a window title.
    const made = params[0] === 'new' && ['app', 'title'].includes(params[1]) && params[2];
    const state = {
      draft,
      selected: kept.selected,
      period: periodOf(made ? params.slice(3) : params, offset),
      offset,
      weekStart: time.weekStartDay(settings.startOfWeek),
      tz: time.zoneName(),
      notice: restored ? 'Your unsaved changes from before are still here.' : null,
      ruleError: null,
      confirming: null,
      saving: false,
      isCurrent,
    };
    if (made) addMade(state, params[1], params[2]);
    // The period stays in the address; a category made from the address
    // does not, so that reloading the page does not make it again.
    history.replaceState(history.state, '', periodHref(state.period));

    drawPage(main, state);
    if (made) document.getElementById('cat-name')?.focus();
    return true;
  }

  /** The preview's period from the address's `[kind, date]`: today's day by default. */
  function periodOf([kind, date], offset) {
    return {
      kind: KINDS.includes(kind) ? kind : 'day',
      date: time.parseDateKey(date) || time.logicalToday(offset),
    };
  }

  /** Adds the category of the application or window title (`what`) `text`, selected. */
  function addMade(state, what, text) {
    const added = add(state.draft.list, [], text.trim() || text, { type: 'regex', regex: exactRegex(text), ignore_case: false });
    state.draft.list = added.list;
    state.selected = added.path;
    state.notice = `New category “${lastOf(added.path)}” for the ${
      what === 'app' ? 'application' : 'window title'
    } “${text}”, not saved yet: check the preview, name it or move it, then save.`;
  }

  /** Builds the page into `main` and wires its controls. */
  function drawPage(main, state) {
    state.actions = {
      changed: (list, options) => changed(state, list, options),
      redraw: focus => drawTree(state, focus),
      ruleEdited: () => {
        refreshDirty(state);
        categoryPreview.schedule(state, DEBOUNCE_MS);
      },
      colorEdited: () => refreshColors(state),
      showRuleError: found => showRuleError(state, found),
    };
    state.tree = h('ul', { class: 'cat-tree', 'aria-labelledby': 'cat-title' });
    state.controls = controlsOf(state);
    const preview = categoryPreview.create(state);
    drawSource(state);
    main.replaceChildren(h('div', { class: 'cat-layout' }, editSection(state), preview));
    categoryPreview.drawPeriod(state);
    drawTree(state);
    categoryPreview.schedule(state, 0);
  }

  /** The page's own controls, outside the tree. */
  function controlsOf(state) {
    return {
      status: h('p', { id: 'cat-status', class: 'cat-status', role: 'status' }),
      saveButton: h('button', { type: 'button', class: 'primary', id: 'cat-save', onclick: () => save(state) }, 'Save changes'),
      discardButton: h('button', { type: 'button', id: 'cat-discard', onclick: () => askDiscard(state) }, 'Discard changes'),
      unsaved: h('span', { class: 'cat-unsaved' }),
      discardBox: h('div', { class: 'cat-confirm', hidden: true }),
      source: h('p', { class: 'muted cat-source' }),
    };
  }

  /** The section of the tree, its toolbar and what the page says. */
  function editSection(state) {
    const { controls } = state;
    const others = state.draft.list.filter(c => !named(c)).length;
    return h(
      'section',
      { class: 'card cat-edit', 'aria-labelledby': 'cat-title' },
      h('h1', { id: 'cat-title' }, 'Categories'),
      controls.source,
      others ? h('p', { class: 'muted' }, `${others} entries of the list are not categories; they are kept as they are.`) : null,
      state.notice ? h('p', { class: 'cat-notice' }, state.notice) : null,
      h(
        'div',
        { class: 'cat-toolbar' },
        h(
          'button',
          { type: 'button', id: 'cat-add', onclick: () => categoryEditor.addCategory(state, []) },
          'Add a top-level category',
        ),
        controls.saveButton,
        controls.discardButton,
        controls.unsaved,
      ),
      controls.discardBox,
      controls.status,
      h('p', { class: 'muted hint' }, 'Select a category’s name to edit it. Time goes to the deepest category whose rule matches.'),
      state.tree,
    );
  }

  /** Which setting the categories come from, and what else applies. */
  function drawSource(state) {
    const { draft } = state;
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
    dom.replace(state.controls.source, parts);
  }

  /** Says `text` in the status line; `kind` is its `data-state`. */
  function say(state, text, kind = 'info', ...extra) {
    const { status } = state.controls;
    status.dataset.state = kind;
    status.classList.toggle('error', ['failed', 'stale', 'invalid'].includes(kind));
    dom.replace(status, text, ...extra);
  }

  function refreshDirty(state) {
    const { saveButton, discardButton, unsaved } = state.controls;
    const changed = dirty(state.draft);
    saveButton.disabled = !changed;
    discardButton.disabled = !changed;
    unsaved.textContent = changed ? 'Unsaved changes' : 'No unsaved changes';
    unsaved.classList.toggle('changed', changed);
  }

  // ----- The tree -----

  /** The colour a path is drawn with, and where it comes from. */
  function colorInfo(draft, effective, path) {
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

  /** Draws the tree again; `focus`: the id of a field of the editor, or the path of a name. */
  function drawTree(state, focus = null) {
    const { roots, byKey } = treeOf(state.draft.list);
    if (state.selected && !byKey.has(keyOf(state.selected))) state.selected = null;
    kept.selected = state.selected;
    const effective = effectiveOf(state.draft, state.draft.list);
    if (roots.length) dom.replace(state.tree, roots.map(node => treeItem(state, effective, node)));
    else dom.replace(state.tree, h('li', { class: 'empty' }, 'No categories in this list yet.'));
    refreshDirty(state);
    if (typeof focus === 'string') document.getElementById(focus)?.focus();
    else if (Array.isArray(focus)) {
      const selector = `li[data-path="${CSS.escape(keyOf(focus))}"] > .cat-row .cat-name`;
      state.tree.querySelector(selector)?.focus();
    }
  }

  /** A node of the tree with its subcategories, and the editor under it if selected. */
  function treeItem(state, effective, node) {
    const key = keyOf(node.path);
    const selected = state.selected && keyOf(state.selected) === key;
    const info = colorInfo(state.draft, effective, node.path);
    const error = state.ruleError && state.ruleError.key === key ? state.ruleError.message : null;
    return h(
      'li',
      { 'data-path': key },
      treeRow(state, node, { selected, info, error }),
      selected ? categoryEditor.draw(state, node, info, error) : null,
      node.children.length ? h('ul', {}, node.children.map(child => treeItem(state, effective, child))) : null,
    );
  }

  /** A node's name (the button that opens its editor), its rule and its colour. */
  function treeRow(state, node, { selected, info, error }) {
    return h(
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
          onclick: () => select(state, selected ? null : node.path),
        },
        lastOf(node.path),
      ),
      h('span', { class: 'cat-rule' }, ruleCell(node)),
      h('span', { class: 'cat-color' }, colorCell(info)),
      error && !selected ? rowError(error) : null,
    );
  }

  /** Opens the editor of `path` (null: closes the one open). */
  function select(state, path) {
    const closed = state.selected;
    state.selected = path;
    state.confirming = null;
    // Into the editor opened, or back on the name of the one closed.
    drawTree(state, path ? 'cat-name' : closed);
    categoryPreview.drawMatches(state);
  }

  /** Applies a change of the list: redraws, says what happened, previews if the rules changed. */
  function changed(state, list, { selected = state.selected, focus = null, message = null, preview = true } = {}) {
    state.draft.list = list;
    state.selected = selected;
    state.confirming = null;
    drawTree(state, focus);
    if (message) say(state, message);
    if (preview) categoryPreview.schedule(state, 0);
    else categoryPreview.drawMatches(state);
  }

  /** Repaints the swatches after a colour change, without drawing the tree again. */
  function refreshColors(state) {
    const effective = effectiveOf(state.draft, state.draft.list);
    for (const item of state.tree.querySelectorAll('li[data-path]')) {
      const info = colorInfo(state.draft, effective, JSON.parse(item.dataset.path));
      const cell = item.querySelector(':scope > .cat-row .cat-color');
      if (cell) dom.replace(cell, colorCell(info));
    }
    refreshDirty(state);
    categoryPreview.redraw(state);
  }

  /** Opens the refused rule `found` in the editor. */
  function showRuleError(state, found) {
    state.ruleError = found;
    state.selected = JSON.parse(found.key);
    drawTree(state, 'cat-regex');
    categoryPreview.drawMatches(state);
  }

  // ----- Discarding -----

  function askDiscard(state) {
    const { discardBox, discardButton } = state.controls;
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
            changed(state, clone(state.draft.saved), { focus: 'cat-add', message: 'Changes dropped: the categories are as saved.' });
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

  async function save(state) {
    if (state.saving) return;
    state.saving = true;
    state.controls.saveButton.disabled = true;
    const list = state.draft.list;
    say(state, 'Checking the rules with the server…', 'saving');
    try {
      if (!(await rulesAccepted(state, list))) return;
      if (!state.isCurrent()) return;
      say(state, 'Saving…', 'saving');
      await store(state, list);
    } finally {
      state.saving = false;
      refreshDirty(state);
    }
  }

  /** Whether the server accepts the rules of `list`; if not, says why. */
  async function rulesAccepted(state, list) {
    try {
      await categoryPreview.summaryWith(categoryPreview.periodParams(state), effectiveOf(state.draft, list));
      return true;
    } catch (error) {
      if (state.isCurrent()) notSaved(state, error, list);
      return false;
    }
  }

  /** Says why the rules of `list` were refused, or that the check failed. */
  function notSaved(state, error, list) {
    const found = refusalOf(error, list);
    if (found) {
      showRuleError(state, found);
      say(state, `Not saved: the server refuses the regex of “${pretty(JSON.parse(found.key))}”. Correct it, then save.`, 'invalid');
    } else if (error instanceof api.ApiError && error.status === 400) {
      say(state, `Not saved: the server refuses these categories: ${error.message}`, 'invalid');
    } else {
      failed(state, error);
    }
  }

  /** Stores `list` in the setting it was read from, if nobody saved it meanwhile. */
  async function store(state, list) {
    const { draft } = state;
    const value = valueOf(draft, list);
    try {
      const etag = await writeSetting(draft.key, value, draft.etag);
      if (!state.isCurrent()) return;
      draft.etag = etag;
      draft.stored = clone(value);
      draft.saved = clone(list);
      draft.fromDefaults = false;
      categoryPreview.forgetSaved(state);
      say(state, `Saved at ${time.formatTime(new Date())}: the other views count with these categories now.`, 'saved');
      drawSource(state);
      categoryPreview.schedule(state, 0);
    } catch (error) {
      if (!state.isCurrent()) return;
      if (error instanceof api.ApiError && error.status === 412) stale(state);
      else failed(state, error);
    }
  }

  function failed(state, error) {
    const reason =
      error instanceof api.ApiError
        ? `the server answered: ${error.message}`
        : `the server could not be reached (${error.message})`;
    say(state, `The save failed: ${reason}. Your changes are still here; save again once the server is back.`, 'failed');
  }

  function stale(state) {
    say(
      state,
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

  return { render };
})();
