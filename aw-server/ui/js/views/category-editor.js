// The editor of the Categories page (views/categories.js): the form
// opened under the selected category of the tree, to rename it, give it a
// rule and a colour, move it or delete it. Also how a category's rule and
// colour read, in the tree and here, and where a rule the server refuses
// is shown (`showRefusal`). Loaded with that page, before it (app.js
// `LAZY`).
//
// The functions take the page's state (views/categories.js `render`);
// an edit of the list ends in one of its `actions`, which draw the tree
// and the preview again.

const categoryEditor = (() => {
  'use strict';

  const { h } = dom;
  const {
    keyOf,
    startsWith,
    parentOf,
    lastOf,
    pretty,
    treeOf,
    levelName,
    rename,
    move,
    remove,
    add,
    setRule,
    setColor,
    regexOf,
    ruleErrorOf,
  } = categoryEdits;

  // ----- How a category reads -----

  /** The square of a colour, beside a category's name. */
  function swatch(color) {
    const element = h('span', { class: 'swatch', 'aria-hidden': 'true' });
    element.style.backgroundColor = color;
    return element;
  }

  /** A colour and where it comes from (`info` of the page's `colorInfo`). */
  function colorText(info) {
    if (info.from === 'own') return info.color;
    if (info.from === 'auto') return `${info.color} (automatic)`;
    return `${info.color} (from ${pretty(info.from)})`;
  }

  /** A node's rule as the tree shows it, or that it has none. */
  function ruleText(node) {
    if (!node.category) return h('span', { class: 'muted' }, 'no rule: implied by its subcategories');
    const regex = regexOf(node.category);
    if (!regex) return h('span', { class: 'muted' }, 'no rule');
    return [h('code', {}, regex), node.category.rule.ignore_case ? h('span', { class: 'muted' }, ' · any case') : null];
  }

  /** What the rule cell of a tree row holds. */
  const ruleCell = node => [h('span', { class: 'visually-hidden' }, 'Rule: '), ruleText(node)];

  /** What the colour cell of a tree row holds. */
  const colorCell = info => [swatch(info.color), h('span', { class: 'visually-hidden' }, 'Colour: '), colorText(info)];

  // ----- A rule the server refuses -----

  const refusalText = message => ['The server refuses this regex: ', h('code', {}, message)];

  /** The refusal under a row of the tree, for a category whose editor is closed. */
  const rowError = message => h('p', { class: 'field-error cat-row-error' }, refusalText(message));

  /** The category whose rule a failed request refused (`{key, message}`), if it was that. */
  function refusalOf(error, list) {
    return error instanceof api.ApiError && error.status === 400 ? ruleErrorOf(error.message, list) : null;
  }

  // The refused rule is shown and cleared in place rather than by drawing
  // the tree again, which would take the field from under the user's
  // typing.

  /** Shows `state.ruleError` beside its field (the editor's, or the rule in the tree). */
  function showRefusal(state) {
    clearRefusal(state, false);
    const { ruleError } = state;
    const selected = state.selected && keyOf(state.selected) === ruleError.key;
    if (selected) {
      const message = document.getElementById('cat-regex-msg');
      if (message) dom.replace(message, refusalText(ruleError.message));
      document.getElementById('cat-regex')?.setAttribute('aria-invalid', 'true');
    } else {
      const row = state.tree.querySelector(`li[data-path="${CSS.escape(ruleError.key)}"] > .cat-row`);
      row?.append(rowError(ruleError.message));
    }
  }

  /** Removes the refusal shown; `forget` drops `state.ruleError` too. */
  function clearRefusal(state, forget = true) {
    if (forget) state.ruleError = null;
    for (const element of state.tree.querySelectorAll('.cat-row-error')) element.remove();
    document.getElementById('cat-regex-msg')?.replaceChildren();
    document.getElementById('cat-regex')?.removeAttribute('aria-invalid');
  }

  // ----- The editor -----

  /**
   * The editor of the tree's `node`, drawn in colour `info`; `error`: the
   * server's refusal of its rule, if any.
   */
  function draw(state, node, info, error) {
    const path = node.path;
    const { roots, byKey } = treeOf(state.draft.list);
    const deleteBox = h('div', { class: 'cat-confirm', id: 'cat-delete-confirm', hidden: state.confirming !== 'delete' });
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
      nameForm(state, path),
      ruleField(state, node, error),
      colorField(state, path, info),
      parentForm(state, path, roots),
      h(
        'div',
        { class: 'cat-inline cat-editor-actions' },
        h('button', { type: 'button', id: 'cat-add-child', onclick: () => addCategory(state, path) }, 'Add a subcategory'),
        h(
          'button',
          { type: 'button', id: 'cat-delete', class: 'danger', onclick: () => askDelete(state, path, byKey, deleteBox) },
          'Delete…',
        ),
      ),
      deleteBox,
    );
    if (state.confirming === 'delete') queueMicrotask(() => askDelete(state, path, byKey, deleteBox, false));
    return box;
  }

  /** Says `text` under the field `id` (none: clears it), marking the field invalid while it says something. */
  function fieldMessage(id, text) {
    const element = document.getElementById(`${id}-msg`);
    const input = document.getElementById(id);
    if (element) element.textContent = text || '';
    if (input && text) input.setAttribute('aria-invalid', 'true');
    else if (input) input.removeAttribute('aria-invalid');
  }

  /** Adds a new category under `parent` (`[]`: at the top level) and opens its editor. */
  function addCategory(state, parent) {
    const result = add(state.draft.list, parent);
    state.actions.changed(result.list, {
      selected: result.path,
      focus: 'cat-name',
      message: `Added “${pretty(result.path)}” (not saved yet): name it and give it a rule.`,
    });
  }

  function nameForm(state, path) {
    const name = h('input', {
      id: 'cat-name',
      value: lastOf(path),
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': 'cat-name-msg',
    });
    return h(
      'form',
      {
        class: 'field',
        onsubmit: event => {
          event.preventDefault();
          renameTo(state, path, name.value);
        },
      },
      h('label', { for: 'cat-name' }, 'Name'),
      h('div', { class: 'cat-inline' }, name, h('button', { type: 'submit' }, 'Rename')),
      h('p', { id: 'cat-name-msg', class: 'field-error', 'aria-live': 'polite' }),
    );
  }

  function renameTo(state, path, name) {
    const result = rename(state.draft.list, path, name);
    if (result.error) return fieldMessage('cat-name', result.error);
    if (result.list === state.draft.list) return fieldMessage('cat-name', '');
    state.actions.changed(result.list, {
      selected: result.path,
      focus: 'cat-name',
      message: `Renamed “${pretty(path)}” to “${pretty(result.path)}” (not saved yet).`,
    });
  }

  function ruleField(state, node, error) {
    const path = node.path;
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
    const onRule = () => editRule(state, path, regex.value, ignoreCase.checked);
    regex.addEventListener('input', onRule);
    ignoreCase.addEventListener('change', onRule);
    return h(
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
      h('p', { id: 'cat-regex-msg', class: 'field-error', 'aria-live': 'polite' }, error ? refusalText(error) : null),
    );
  }

  /** A keystroke in the rule: the list and the tree's row change, the tree is not drawn again. */
  function editRule(state, path, regex, ignoreCase) {
    state.draft.list = setRule(state.draft.list, path, regex, ignoreCase);
    const row = state.tree.querySelector(`li[data-path="${CSS.escape(keyOf(path))}"] > .cat-row .cat-rule`);
    const now = treeOf(state.draft.list).byKey.get(keyOf(path));
    if (row && now) dom.replace(row, ruleCell(now));
    state.actions.ruleEdited();
  }

  function colorField(state, path, info) {
    const picker = h('input', { id: 'cat-color', type: 'color', value: hexOf(info.color), 'aria-describedby': 'cat-color-text' });
    const colorLabel = h('span', { id: 'cat-color-text' }, colorText(info));
    picker.addEventListener('input', () => {
      state.draft.list = setColor(state.draft.list, path, picker.value);
      colorLabel.textContent = picker.value;
      state.actions.colorEdited();
    });
    // The tree is drawn again once the choice is made, for the button below.
    picker.addEventListener('change', () => state.actions.redraw('cat-color'));
    return h(
      'div',
      { class: 'field' },
      h('label', { for: 'cat-color' }, 'Colour'),
      h('div', { class: 'cat-inline' }, picker, colorLabel, info.from === 'own' ? ownColorButton(state, path) : null),
    );
  }

  /** Drops the category's own colour. */
  function ownColorButton(state, path) {
    return h(
      'button',
      {
        type: 'button',
        onclick: () =>
          state.actions.changed(setColor(state.draft.list, path, null), {
            focus: 'cat-color',
            message: `“${pretty(path)}” has no colour of its own now (not saved yet).`,
            preview: false,
          }),
      },
      path.length > 1 ? 'Use the parent’s colour' : 'Remove its colour',
    );
  }

  /** The form that moves the category under another; `roots`: the tree. */
  function parentForm(state, path, roots) {
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
    return h(
      'form',
      {
        class: 'field',
        onsubmit: event => {
          event.preventDefault();
          moveUnder(state, path, JSON.parse(parentSelect.value));
        },
      },
      h('label', { for: 'cat-parent' }, 'Parent'),
      h('div', { class: 'cat-inline' }, parentSelect, h('button', { type: 'submit' }, 'Move')),
      h('p', { id: 'cat-parent-msg', class: 'field-error', 'aria-live': 'polite' }),
    );
  }

  function moveUnder(state, path, parent) {
    const result = move(state.draft.list, path, parent);
    if (result.error) return fieldMessage('cat-parent', result.error);
    if (result.list === state.draft.list) return fieldMessage('cat-parent', 'It is there already.');
    state.actions.changed(result.list, {
      selected: result.path,
      focus: 'cat-parent',
      message: `Moved “${lastOf(path)}” ${levelName(parentOf(result.path))} (not saved yet).`,
    });
  }

  // ----- Deleting -----

  /** How many subcategories `path` has among the tree's `byKey`. */
  function subcategoryCount(byKey, path) {
    return [...byKey.keys()].filter(key => {
      const other = JSON.parse(key);
      return other.length > path.length && startsWith(other, path);
    }).length;
  }

  /** Where "Move them up" puts the subcategories. */
  const upOf = path => (path.length > 1 ? `under “${pretty(parentOf(path))}”` : 'to the top level');

  const subcategories = count => `subcategor${count === 1 ? 'y' : 'ies'}`;

  /** Asks in `box` to confirm the deletion of `path`; `focus` puts the focus on its first button. */
  function askDelete(state, path, byKey, box, focus = true) {
    state.confirming = 'delete';
    const count = subcategoryCount(byKey, path);
    const them = count === 1 ? 'it' : 'them';
    const yes = (label, mode) => deleteButton(state, path, box, { count, mode }, label);
    dom.replace(
      box,
      count === 0
        ? [h('p', {}, `Delete “${pretty(path)}”?`), yes(`Delete “${lastOf(path)}”`, 'all')]
        : [
            h('p', {}, `“${pretty(path)}” has ${count} ${subcategories(count)}. What becomes of ${them}?`),
            yes(`Delete ${them} too`, 'all'),
            yes(`Move ${them} up ${upOf(path)}`, 'lift'),
          ],
      cancelButton(state, box),
    );
    box.hidden = false;
    if (focus) box.querySelector('button')?.focus();
  }

  /** Deletes `path` with its subcategories (`mode` "all") or moves them up ("lift"). */
  function deleteButton(state, path, box, { count, mode }, label) {
    return h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: () => {
          const result = remove(state.draft.list, path, mode);
          if (result.error) {
            dom.replace(box, h('p', { class: 'field-error' }, result.error), cancelButton(state, box));
            return;
          }
          const parent = parentOf(path);
          const rest =
            count === 0 ? '' : mode === 'all' ? ` and its ${count} ${subcategories(count)}` : `; its subcategories moved ${upOf(path)}`;
          state.actions.changed(result.list, {
            selected: null,
            focus: parent.length && treeOf(result.list).byKey.has(keyOf(parent)) ? parent : 'cat-add',
            message: `Deleted “${pretty(path)}”${rest} (not saved yet).`,
          });
        },
      },
      label,
    );
  }

  function cancelButton(state, box) {
    return h(
      'button',
      {
        type: 'button',
        onclick: () => {
          state.confirming = null;
          box.hidden = true;
          document.getElementById('cat-delete')?.focus();
        },
      },
      'Cancel',
    );
  }

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

  return { draw, addCategory, swatch, ruleCell, colorCell, rowError, refusalOf, showRefusal, clearRefusal };
})();
