// The colours of the user's categories. Which category time belongs to,
// the server decides (/api/0/summary, aw-summary/src/categories.rs);
// the pages colour the names it answers, with the colours of the same
// category list, read from the settings aw-webui writes:
//
// - `category_sets` (named lists of categories) with `active_set_ids`: the
//   active sets, taken in the order of `category_sets`, are merged; a name
//   seen in an earlier set wins. With no active id that exists, the first
//   set is used. This is aw-webui's `loadCategories` and
//   `computeEffectiveClasses` (src/util/classes.ts, src/stores/categories.ts).
// - else the older flat `classes` list;
// - else aw-webui's default categories (their colours below; the
//   Categories page's category-edits.js has them whole).

const categories = (() => {
  'use strict';

  /** The colours of aw-webui's default categories: [name path, color]. */
  const DEFAULT_COLORS = [
    [['Work'], '#0F0'],
    [['Media'], '#F33'],
    [['Media', 'Games'], '#F80'],
    [['Media', 'Video'], '#F33'],
    [['Media', 'Social Media'], '#FCC400'],
    [['Media', 'Music'], '#A8FC00'],
    [['Comms'], '#9FF'],
    [['Uncategorized'], '#CCC'],
  ];

  const defaultCategories = () => DEFAULT_COLORS.map(([name, color]) => ({ name, data: { color } }));

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

  return { effectiveCategories, categoryColor };
})();
