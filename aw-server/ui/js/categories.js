// The colours of the user's categories. Which category time belongs to,
// the server decides (/api/0/summary, aw-server/src/summary/categories.rs);
// the pages colour the names it answers, with the colours of the same
// category list, read from the settings aw-webui writes:
//
// - `category_sets` (named lists of categories) with `active_set_ids`: the
//   active sets, taken in the order of `category_sets`, are merged; a name
//   seen in an earlier set wins. With no active id that exists, the first
//   set is used. This is aw-webui's `loadCategories` and
//   `computeEffectiveClasses` (src/util/classes.ts, src/stores/categories.ts).
// - else the older flat `classes` list;
// - else aw-webui's default categories (below), which the Categories page
//   (views/categories.js) starts from.

const categories = (() => {
  'use strict';

  /**
   * aw-webui's default categories, as the server applies them when neither
   * setting exists (DEFAULTS in aw-server/src/summary/categories.rs): the
   * list the Categories page starts from, and their colours.
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

  const isCategory = c => c && Array.isArray(c.name) && c.name.length > 0 && c.rule;

  /** The effective category list for a settings object. */
  function effectiveCategories(settings) {
    const sets = Array.isArray(settings.category_sets)
      ? settings.category_sets.filter(set => set && Array.isArray(set.categories))
      : [];
    if (sets.length > 0) {
      let active = Array.isArray(settings.active_set_ids) ? settings.active_set_ids : [];
      active = active.filter(id => sets.some(set => set.id === id));
      if (active.length === 0) active = [sets[0].id];
      const seen = new Set();
      const categories = [];
      for (const set of sets.filter(set => active.includes(set.id))) {
        for (const category of set.categories) {
          if (!isCategory(category)) continue;
          const key = JSON.stringify(category.name);
          if (seen.has(key)) continue;
          seen.add(key);
          categories.push(category);
        }
      }
      return categories;
    }
    if (Array.isArray(settings.classes)) return settings.classes.filter(isCategory);
    return defaultCategories();
  }

  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#ff9da7', '#9c755f'];

  /**
   * A colour per category name: its own `data.color`, else its nearest
   * parent's, else one picked from the name.
   */
  function categoryColor(categories, name) {
    for (let length = name.length; length > 0; length--) {
      const key = JSON.stringify(name.slice(0, length));
      const found = categories.find(c => JSON.stringify(c.name) === key);
      if (found && found.data && found.data.color) return found.data.color;
    }
    if (name.length === 1 && name[0] === 'Uncategorized') return '#CCC';
    let hash = 0;
    for (const char of name.join('>')) hash = (hash * 31 + char.charCodeAt(0)) | 0;
    return PALETTE[Math.abs(hash) % PALETTE.length];
  }

  return { effectiveCategories, categoryColor, defaultCategories };
})();
