// The user's categories, read from the settings aw-webui writes, so both
// UIs classify time the same way:
//
// - `category_sets` (named lists of categories) with `active_set_ids`: the
//   active sets, taken in the order of `category_sets`, are merged; a name
//   seen in an earlier set wins. With no active id that exists, the first
//   set is used. This is aw-webui's `loadCategories` and
//   `computeEffectiveClasses` (src/util/classes.ts, src/stores/categories.ts).
// - else the older flat `classes` list;
// - else aw-webui's default categories (below).
//
// Parents a category names but nobody defined are added without a rule,
// and categories without a rule type are not sent to `categorize`.

const categories = (() => {
  'use strict';

  const rule = (regex, ignoreCase = false) =>
    ignoreCase ? { type: 'regex', regex, ignore_case: true } : { type: 'regex', regex };

  /** aw-webui's defaults: [name path, rule, color]. */
  const DEFAULTS = [
    [['Work'], rule('Google Docs|libreoffice|ReText'), '#0F0'],
    [['Work', 'Programming'], rule('GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite')],
    [['Work', 'Programming', 'ActivityWatch'], rule('ActivityWatch|aw-', true)],
    [['Work', 'Image'], rule('GIMP|Inkscape')],
    [['Work', 'Video'], rule('Kdenlive')],
    [['Work', 'Audio'], rule('Audacity')],
    [['Work', '3D'], rule('Blender')],
    [['Media'], { type: 'none' }, '#F33'],
    [['Media', 'Games'], rule('Minecraft|RimWorld'), '#F80'],
    [['Media', 'Video'], rule('YouTube|Plex|VLC'), '#F33'],
    [['Media', 'Social Media'], rule('reddit|Facebook|Twitter|Instagram|devRant', true), '#FCC400'],
    [['Media', 'Music'], rule('Spotify|Deezer', true), '#A8FC00'],
    [['Comms'], { type: 'none' }, '#9FF'],
    [
      ['Comms', 'IM'],
      rule('Messenger|Telegram|Signal|WhatsApp|Rambox|Slack|Riot|Element|Discord|Nheko|NeoChat|Mattermost'),
    ],
    [['Comms', 'Email'], rule('Gmail|Thunderbird|mutt|alpine')],
    [['Uncategorized'], { type: null }, '#CCC'],
  ];

  function defaultCategories() {
    return DEFAULTS.map(([name, categoryRule, color]) => ({
      name,
      rule: { ...categoryRule },
      ...(color ? { data: { color } } : {}),
    }));
  }

  const isCategory = c => c && Array.isArray(c.name) && c.name.length > 0 && c.rule;

  /** The effective category list for a settings object. */
  function effectiveCategories(settings) {
    const sets = Array.isArray(settings.category_sets)
      ? settings.category_sets.filter(set => set && Array.isArray(set.categories))
      : [];
    let categories;
    if (sets.length > 0) {
      let active = Array.isArray(settings.active_set_ids) ? settings.active_set_ids : [];
      active = active.filter(id => sets.some(set => set.id === id));
      if (active.length === 0) active = [sets[0].id];
      const seen = new Set();
      categories = [];
      for (const set of sets.filter(set => active.includes(set.id))) {
        for (const category of set.categories) {
          if (!isCategory(category)) continue;
          const key = JSON.stringify(category.name);
          if (seen.has(key)) continue;
          seen.add(key);
          categories.push(category);
        }
      }
    } else if (Array.isArray(settings.classes)) {
      categories = settings.classes.filter(isCategory);
    } else {
      categories = defaultCategories();
    }
    return withParents(categories);
  }

  function withParents(categories) {
    const all = [...categories];
    const names = new Set(all.map(c => JSON.stringify(c.name)));
    for (let i = 0; i < all.length; i++) {
      const name = all[i].name;
      if (name.length < 2) continue;
      const parent = name.slice(0, -1);
      const key = JSON.stringify(parent);
      if (!names.has(key)) {
        names.add(key);
        all.push({ name: parent, rule: { type: null } });
      }
    }
    return all;
  }

  /** The `[name, rule]` pairs `categorize` takes. */
  function categoryRules(categories) {
    return categories
      .filter(c => c.rule && c.rule.type !== null && c.rule.type !== undefined)
      .map(c => [c.name, c.rule]);
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

  return { defaultCategories, effectiveCategories, categoryRules, categoryColor };
})();
