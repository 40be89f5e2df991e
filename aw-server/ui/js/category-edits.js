// Edits of a list of categories, without the page: the pure part of the
// Categories page (views/categories.js), kept apart so that the page holds
// only what it draws and asks, and so that these can be tested without a
// browser (tests/dashboard/categories.test.mjs). Loaded with that page,
// before it (app.js `LAZY`), not with the dashboard.
//
// A category is `{id, name: ["Work", "Programming"], rule, data}`; fields
// these functions do not know are kept as they were. Where the list is
// read from and saved to, in aw-webui's format so aw-webui reads it
// unchanged (`draftOf`, `valueOf`):
//
// - `category_sets` when it holds any set: the first set (in its order)
//   whose id is in `active_set_ids`, else the first set; the whole array
//   is saved back with only that set's `categories` changed;
// - else `classes`; else aw-webui's default categories (`DEFAULTS`),
//   saved to `classes`.
//
// Which category an invalid rule belongs to is read from the server's
// refusal (`ruleErrorOf`): rules are checked by the server only.

const categoryEdits = (() => {
  'use strict';

  /** The separator of name paths as the server writes them ("Work > Programming"). */
  const SEP = ' > ';

  /**
   * aw-webui's default categories, as the server applies them when neither
   * setting exists (DEFAULTS in aw-summary/src/categories.rs): the
   * list the page starts from then. (categories.js has only their colours,
   * for the first view's script.)
   */
  const DEFAULTS = [
    [['Work'], 'Google Docs|libreoffice|ReText', false, '#0F0'],
    [['Work', 'Programming'], 'GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite', false, null],
    [['Work', 'Programming', 'ActivityWatch'], 'ActivityWatch|aw-', true, null],
    [['Work', 'Image'], 'GIMP|Inkscape', false, null],
    [['Work', 'Video'], 'Kdenlive', false, null],
    [['Work', 'Audio'], 'Audacity', false, null],
    [['Work', '3D'], 'Blender', false, null],
    [['Media'], null, false, '#F33'],
    [['Media', 'Games'], 'Minecraft|RimWorld', false, '#F80'],
    [['Media', 'Video'], 'YouTube|Plex|VLC', false, '#F33'],
    [['Media', 'Social Media'], 'reddit|Facebook|Twitter|Instagram|devRant', true, '#FCC400'],
    [['Media', 'Music'], 'Spotify|Deezer', true, '#A8FC00'],
    [['Comms'], null, false, '#9FF'],
    [
      ['Comms', 'IM'],
      'Messenger|Telegram|Signal|WhatsApp|Rambox|Slack|Riot|Element|Discord|Nheko|NeoChat|Mattermost',
      false,
      null,
    ],
    [['Comms', 'Email'], 'Gmail|Thunderbird|mutt|alpine', false, null],
  ];

  /** A fresh copy of the default categories, in aw-webui's format. */
  function defaultCategories() {
    const list = DEFAULTS.map(([name, regex, ignoreCase, color]) => {
      let rule = { type: 'none' };
      if (regex !== null) rule = ignoreCase ? { type: 'regex', regex, ignore_case: true } : { type: 'regex', regex };
      const category = { name: [...name], rule };
      if (color) category.data = { color };
      return category;
    });
    list.push({ name: ['Uncategorized'], rule: { type: null }, data: { color: '#CCC' } });
    return list;
  }

  // The list of categories, edited by pure functions that answer a new
  // list (changed categories are copies), so the list as saved stays as
  // it was read and "unsaved changes" is a comparison.

  const keyOf = path => JSON.stringify(path);
  const named = category =>
    category !== null &&
    typeof category === 'object' &&
    Array.isArray(category.name) &&
    category.name.length > 0 &&
    category.name.every(part => typeof part === 'string');
  const startsWith = (path, prefix) => prefix.length <= path.length && prefix.every((part, i) => part === path[i]);
  const parentOf = path => path.slice(0, -1);
  const lastOf = path => path[path.length - 1];
  const pretty = path => path.join(SEP);
  const clone = value => JSON.parse(JSON.stringify(value));

  /**
   * The tree of a list: `{roots, byKey}`, each node `{path, category,
   * children}`. A path that only subcategories name (aw-webui's implied
   * parents) is a node whose `category` is null. Nodes keep the order in
   * which the list first names them; a path named twice shows the first.
   */
  function treeOf(list) {
    const byKey = new Map();
    const roots = [];
    const ensure = path => {
      const key = keyOf(path);
      let node = byKey.get(key);
      if (node) return node;
      node = { path, category: null, children: [] };
      byKey.set(key, node);
      if (path.length === 1) roots.push(node);
      else ensure(parentOf(path)).children.push(node);
      return node;
    };
    for (const category of list) {
      if (!named(category)) continue;
      const node = ensure(category.name);
      if (!node.category) node.category = category;
    }
    return { roots, byKey };
  }

  /** Where a parent path is, in words. */
  const levelName = parent => (parent.length ? `under “${pretty(parent)}”` : 'at the top level');

  /** A category renamed to `name`, with the fields aw-webui derives from the name, if it had them. */
  function withName(category, name) {
    const copy = { ...category, name };
    if ('depth' in category) copy.depth = name.length - 1;
    if ('name_pretty' in category) copy.name_pretty = name.join('>');
    if ('subname' in category) copy.subname = lastOf(name);
    if ('parent' in category) copy.parent = name.length > 1 ? parentOf(name) : null;
    return copy;
  }

  /** The list with every category under `from` (itself included) moved under `to`. */
  function reprefix(list, from, to) {
    return list.map(category =>
      named(category) && startsWith(category.name, from)
        ? withName(category, [...to, ...category.name.slice(from.length)])
        : category,
    );
  }

  /** An integer id larger than every id in the list. */
  function nextId(list) {
    const ids = list.map(c => (c && Number.isInteger(c.id) ? c.id : -1));
    return Math.max(-1, list.length - 1, ...ids) + 1;
  }

  /** A name not yet used under `parent`: `base`, else "base (2)", "base (3)"... */
  function freeName(list, parent, base) {
    const { byKey } = treeOf(list);
    let name = base;
    for (let n = 2; byKey.has(keyOf([...parent, name])); n++) name = `${base} (${n})`;
    return name;
  }

  /** Renames the node at `path` (its subcategories follow): `{list, path}` or `{error}`. */
  function rename(list, path, wanted) {
    const name = String(wanted).trim();
    if (!name) return { error: 'A name cannot be empty.' };
    if (name === lastOf(path)) return { list, path };
    const target = [...parentOf(path), name];
    if (treeOf(list).byKey.has(keyOf(target))) {
      return { error: `“${name}” already exists ${levelName(parentOf(path))}.` };
    }
    return { list: reprefix(list, path, target), path: target };
  }

  /** Moves the node at `path` (with its subcategories) under `parent` (`[]`: the top level). */
  function move(list, path, parent) {
    if (startsWith(parent, path)) return { error: 'A category cannot move into itself or its subcategories.' };
    const target = [...parent, lastOf(path)];
    if (keyOf(target) === keyOf(path)) return { list, path };
    if (treeOf(list).byKey.has(keyOf(target))) {
      return { error: `“${lastOf(path)}” already exists ${levelName(parent)}.` };
    }
    return { list: reprefix(list, path, target), path: target };
  }

  /**
   * Deletes the node at `path`: with its subcategories (`mode` "all"), or
   * moving them up to its parent ("lift"), which is refused when one of
   * their names is already taken there.
   */
  function remove(list, path, mode) {
    if (mode === 'all') return { list: list.filter(c => !(named(c) && startsWith(c.name, path))) };
    const tree = treeOf(list);
    const node = tree.byKey.get(keyOf(path));
    const children = node ? node.children : [];
    const parent = parentOf(path);
    const taken = children.map(child => lastOf(child.path)).filter(name => tree.byKey.has(keyOf([...parent, name])));
    if (taken.length) {
      return {
        error: `Cannot move the subcategories up: ${taken.map(name => `“${name}”`).join(', ')} already ${
          taken.length === 1 ? 'exists' : 'exist'
        } ${levelName(parent)}.`,
      };
    }
    let next = list.filter(c => !(named(c) && keyOf(c.name) === keyOf(path)));
    for (const child of children) next = reprefix(next, child.path, [...parent, lastOf(child.path)]);
    return { list: next };
  }

  /** Adds a category under `parent` named `name` (made free if taken), with `rule`. */
  function add(list, parent, name = 'New category', rule = { type: 'none' }) {
    const path = [...parent, freeName(list, parent, name)];
    return { list: [...list, { id: nextId(list), name: path, rule }], path };
  }

  /** A regex matching exactly `text` (the server's syntax: metacharacters escaped). */
  const exactRegex = text => `^${text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}$`;

  /**
   * Makes an implied parent a category of its own (before its first
   * subcategory, as aw-webui's missing parents are), so it can hold a rule
   * or a colour; the list unchanged if it is one already.
   */
  function materialize(list, path) {
    if (list.some(c => named(c) && keyOf(c.name) === keyOf(path))) return list;
    const category = { id: nextId(list), name: path, rule: { type: null } };
    const at = list.findIndex(c => named(c) && startsWith(c.name, path));
    const next = [...list];
    next.splice(at === -1 ? next.length : at, 0, category);
    return next;
  }

  /** The list with the category at `path` (made one if implied) replaced by `change(category)`. */
  function update(list, path, change) {
    const key = keyOf(path);
    let done = false;
    return materialize(list, path).map(category => {
      if (done || !named(category) || keyOf(category.name) !== key) return category;
      done = true;
      return change(category);
    });
  }

  /**
   * Sets the rule: an empty regex means no rule of its own (`{"type":
   * "none"}`; a rule already without a type is left as it is). Other
   * fields of the rule are kept; `ignore_case` is written once asked for.
   */
  function setRule(list, path, regex, ignoreCase) {
    return update(list, path, category => {
      const rule = category.rule && typeof category.rule === 'object' ? { ...category.rule } : {};
      if (regex === '') {
        if (rule.type !== 'regex') return category;
        delete rule.regex;
        rule.type = 'none';
      } else {
        rule.type = 'regex';
        rule.regex = regex;
      }
      if (ignoreCase || 'ignore_case' in rule) rule.ignore_case = ignoreCase;
      return { ...category, rule };
    });
  }

  /** Sets the colour (`null`: none of its own, the parent's applies). */
  function setColor(list, path, color) {
    return update(list, path, category => {
      const data = { ...(category.data && typeof category.data === 'object' ? category.data : {}) };
      if (color === null) delete data.color;
      else data.color = color;
      return { ...category, data };
    });
  }

  /** The regex of a category's rule, '' for none. */
  const regexOf = category =>
    category && category.rule && category.rule.type === 'regex' && typeof category.rule.regex === 'string'
      ? category.rule.regex
      : '';

  // Where the categories live, and what the server computes with them.

  /** Which setting the categories are read from and saved to, for all the settings. */
  function sourceKey(settings) {
    const sets = settings.category_sets;
    return Array.isArray(sets) && sets.some(isSet) ? 'category_sets' : 'classes';
  }
  const isSet = set => set !== null && typeof set === 'object' && !Array.isArray(set);

  /** The index of the set edited: the first active one, else the first. */
  function editedSet(sets, activeIds) {
    const active = Array.isArray(activeIds) ? activeIds : [];
    const index = sets.findIndex(set => isSet(set) && active.includes(set.id));
    return index === -1 ? sets.findIndex(isSet) : index;
  }

  /**
   * A draft: the setting as read (`stored`, with its `etag`), the
   * categories as saved and as edited (`list`).
   */
  function draftOf(key, stored, etag, settings) {
    const draft = { key, stored, etag, activeIds: settings.active_set_ids, setIndex: null, fromDefaults: false };
    if (key === 'category_sets') {
      draft.setIndex = editedSet(stored, settings.active_set_ids);
      const set = stored[draft.setIndex];
      draft.setId = set.id;
      draft.saved = Array.isArray(set.categories) ? clone(set.categories) : [];
    } else if (Array.isArray(stored)) {
      draft.saved = clone(stored);
    } else {
      draft.saved = defaultCategories();
      draft.fromDefaults = true;
    }
    draft.list = clone(draft.saved);
    return draft;
  }

  /** The value of the setting with `list` in the place the categories were read from. */
  function valueOf(draft, list) {
    if (draft.key !== 'category_sets') return list;
    return draft.stored.map((set, index) => (index === draft.setIndex ? { ...set, categories: list } : set));
  }

  /** The categories the server would apply with `list` saved: other active sets merged in. */
  function effectiveOf(draft, list) {
    if (draft.key === 'category_sets') {
      return categories.effectiveCategories({ category_sets: valueOf(draft, list), active_set_ids: draft.activeIds });
    }
    return categories.effectiveCategories({ classes: list });
  }

  const dirty = draft => keyOf(draft.list) !== keyOf(draft.saved);

  /**
   * The category an invalid rule belongs to, from the server's message
   * `categories: category 'Work > Programming': <error>`: `{key, message}`,
   * matched against the list's own names (a name may hold quotes).
   */
  function ruleErrorOf(message, list) {
    const prefix = 'categories: category \'';
    if (!message.startsWith(prefix)) return null;
    let best = null;
    for (const key of treeOf(list).byKey.keys()) {
      const path = JSON.parse(key);
      const head = `${prefix}${pretty(path)}': `;
      if (message.startsWith(head) && (!best || head.length > best.head.length)) best = { key, head };
    }
    return best ? { key: best.key, message: message.slice(best.head.length) } : null;
  }

  return {
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
    materialize,
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
  };
})();
