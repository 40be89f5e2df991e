// The preview of the Categories page (views/categories.js): time as the
// edited categories would count it, beside the figures as saved, for a
// day, week or month, and what the selected category matches. Loaded with
// that page, before it (app.js `LAZY`).
//
// It asks `POST /api/0/summary` with the edited categories (the answer of
// `GET`, computed with them), which also refuses an invalid regex (400,
// naming the category): the refusal is then shown beside the rule
// (category-editor.js `showRefusal`) instead of a preview.
//
// The functions take the page's state (views/categories.js `render`);
// `create` adds the preview's own part, `state.preview`.

const categoryPreview = (() => {
  'use strict';

  const { h } = dom;
  const { duration, topList } = charts;
  const { keyOf, pretty, effectiveOf } = categoryEdits;
  const { swatch, refusalOf, showRefusal, clearRefusal } = categoryEditor;

  /** The lengths of period the preview offers. */
  const KINDS = ['day', 'week', 'month'];
  /** Title rows asked for by the preview: the selected category's titles are found among them. */
  const TITLE_ROWS = 1000;
  /** Rows of the preview's lists. */
  const ROWS = 8;

  const queryOf = params => new URLSearchParams(Object.entries(params)).toString();

  /** `GET /api/0/summary`'s answer computed with `list` instead of the saved categories. */
  async function summaryWith(params, list) {
    return (await api.sendJson('POST', `/api/0/summary?${queryOf(params)}`, { categories: list })).json();
  }

  /** The page's address for a period. */
  const periodHref = ({ kind, date }) => `#/categories/${kind}/${time.dateKey(date)}`;

  /** The summary's parameters for the period of the page. */
  function periodParams(state) {
    const { kind, date } = state.period;
    const first = time.periodFirstDate(kind, date, state.weekStart);
    return {
      start: time.dateKey(first),
      end: time.dateKey(time.shiftDate(kind, first, 1)),
      by: 'category,title',
      tz: state.tz,
      limit: TITLE_ROWS,
    };
  }

  // ----- The section and its period -----

  /** The preview's section, empty until `drawPeriod` and `schedule`; its parts go to `state.preview`. */
  function create(state) {
    const preview = {
      section: h('section', { class: 'card cat-preview', id: 'preview', 'aria-labelledby': 'preview-title' }),
      body: h('div', { class: 'cat-preview-body' }),
      matches: h('div', { class: 'cat-matches' }),
      title: h('h3', { id: 'preview-period' }),
      ...periodButtons(state),
      /** The pending request's timer. */
      timer: null,
      /** Requests made: only the answer of the last one is drawn. */
      asked: 0,
      /** `[edited, saved]`: the answers the preview last drew. */
      answers: null,
      /** Answers of GET /api/0/summary (the categories as saved), by period. */
      saved: new Map(),
    };
    state.preview = preview;
    dom.replace(
      preview.section,
      h('h2', { id: 'preview-title' }, 'Preview'),
      h(
        'p',
        { class: 'muted' },
        'Time as the categories would count it once saved; “as saved” is what the other views show now.',
      ),
      h(
        'div',
        { class: 'cat-period' },
        h('div', { class: 'kinds', role: 'group', 'aria-label': 'Period length' }, preview.kindButtons),
        h('div', { class: 'stepper' }, preview.previous, preview.title, preview.next, preview.today),
      ),
      preview.body,
      preview.matches,
    );
    return preview.section;
  }

  /** The buttons that pick the period: its length, the one before or after, today's. */
  function periodButtons(state) {
    return {
      kindButtons: KINDS.map(kind =>
        h(
          'button',
          { type: 'button', 'data-key': kind[0], onclick: () => setPeriod(state, kind, state.period.date) },
          kind[0].toUpperCase() + kind.slice(1),
        ),
      ),
      previous: h('button', { type: 'button', class: 'step', id: 'previous', onclick: () => step(state, -1) }, '‹'),
      next: h('button', { type: 'button', class: 'step', id: 'next', onclick: () => step(state, 1) }, '›'),
      today: h(
        'button',
        { type: 'button', class: 'today', onclick: () => setPeriod(state, state.period.kind, time.logicalToday(state.offset)) },
        'Today',
      ),
    };
  }

  /** The period's title and the state of its buttons. */
  function drawPeriod(state) {
    const { kind, date } = state.period;
    const { kindButtons, title, previous, next } = state.preview;
    const first = time.periodFirstDate(kind, date, state.weekStart);
    const units = { day: 'day', week: 'week', month: 'month' };
    kindButtons.forEach((button, index) => button.setAttribute('aria-pressed', String(KINDS[index] === kind)));
    title.textContent = time.periodTitle(kind, first, state.weekStart);
    previous.setAttribute('aria-label', `Previous ${units[kind]}`);
    next.setAttribute('aria-label', `Next ${units[kind]}`);
    next.disabled =
      time.periodFirstDate(kind, time.shiftDate(kind, first, 1), state.weekStart) > time.logicalToday(state.offset);
  }

  function setPeriod(state, kind, date) {
    state.period = { kind, date };
    history.replaceState(history.state, '', periodHref(state.period));
    drawPeriod(state);
    schedule(state, 0);
  }

  /** To the period before (-1) or after (1), not past today's. */
  function step(state, direction) {
    if (direction > 0 && state.preview.next.disabled) return;
    const { kind, date } = state.period;
    setPeriod(state, kind, time.shiftDate(kind, time.periodFirstDate(kind, date, state.weekStart), direction));
  }

  // ----- Asking -----

  /** Marks the section `pending`, `loading`, `ready`, `invalid` or `error`. */
  function showState(preview, name) {
    preview.section.dataset.state = name;
    preview.section.setAttribute('aria-busy', String(name === 'pending' || name === 'loading'));
  }

  /** Asks again after `delay` ms, unless asked again before. */
  function schedule(state, delay) {
    const preview = state.preview;
    clearTimeout(preview.timer);
    showState(preview, 'pending');
    preview.timer = setTimeout(() => run(state), delay);
  }

  /** The answer with the categories as saved, asked once per period. */
  async function savedAnswer(preview, params) {
    const key = queryOf(params);
    if (!preview.saved.has(key)) {
      const answer = api.summary(params).catch(error => ({ error }));
      preview.saved.set(key, answer);
    }
    return preview.saved.get(key);
  }

  /** Forgets the answers as saved, once the categories saved have changed. */
  function forgetSaved(state) {
    state.preview.saved.clear();
  }

  async function run(state) {
    if (!state.isCurrent()) return;
    const preview = state.preview;
    const mine = ++preview.asked;
    showState(preview, 'loading');
    const params = periodParams(state);
    const list = state.draft.list;
    try {
      const [edited, saved] = await Promise.all([
        summaryWith(params, effectiveOf(state.draft, list)),
        savedAnswer(preview, params),
      ]);
      if (mine !== preview.asked || !state.isCurrent()) return;
      if (state.ruleError) clearRefusal(state);
      preview.answers = [edited, saved];
      drawPreview(state, edited, saved);
      showState(preview, 'ready');
    } catch (error) {
      if (mine !== preview.asked || !state.isCurrent()) return;
      preview.answers = null;
      const found = refusalOf(error, list);
      if (found) showRefused(state, found);
      else showFailed(preview, error);
    }
  }

  /** No preview: the server refuses the rule `found`. */
  function showRefused(state, found) {
    const preview = state.preview;
    state.ruleError = found;
    showRefusal(state);
    dom.replace(
      preview.body,
      h(
        'p',
        { class: 'field-error', role: 'alert' },
        `No preview: the server refuses the regex of “${pretty(JSON.parse(found.key))}”. `,
        state.selected && keyOf(state.selected) === found.key
          ? null
          : h('button', { type: 'button', onclick: () => state.actions.showRuleError(found) }, 'Show it'),
      ),
    );
    preview.matches.replaceChildren();
    showState(preview, 'invalid');
  }

  function showFailed(preview, error) {
    dom.replace(preview.body, h('p', { class: 'field-error', role: 'alert' }, `No preview: ${error.message}`));
    preview.matches.replaceChildren();
    showState(preview, 'error');
  }

  // ----- Drawing the answers -----

  const percent = (part, whole) => {
    if (!whole || !part) return '0%';
    const value = (100 * part) / whole;
    return value < 1 ? '<1%' : `${Math.round(value)}%`;
  };

  /** The seconds an answer counts as Uncategorized. */
  const uncategorized = answer => {
    const row = (answer.category || []).find(r => keyOf(r.category) === keyOf(['Uncategorized']));
    return row ? row.duration : 0;
  };

  /** Draws the last answers again (the colours changed), if there are any. */
  function redraw(state) {
    if (state.preview.answers) drawPreview(state, ...state.preview.answers);
  }

  function drawPreview(state, edited, saved) {
    const { body } = state.preview;
    const savedOk = saved && !saved.error;
    if (edited.duration === 0) {
      dom.replace(body, h('p', { class: 'empty' }, 'No activity in this period.'));
      drawMatches(state);
      return;
    }
    dom.replace(
      body,
      uncategorizedShares(edited, saved, savedOk),
      savedOk ? null : h('p', { class: 'field-error' }, `The figures as saved are missing: ${saved.error.message}`),
      sharesTable(effectiveOf(state.draft, state.draft.list), edited, saved, savedOk),
    );
    drawMatches(state);
  }

  /** "Uncategorized: 12% (1h 5m) as edited; 20% (1h 48m) as saved". */
  function uncategorizedShares(edited, saved, savedOk) {
    return h(
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
  }

  /** The top categories as edited, and those the edits leave empty, with their time as saved. */
  function sharesTable(effective, edited, saved, savedOk) {
    const savedBy = new Map(savedOk ? saved.category.map(row => [keyOf(row.category), row.duration]) : []);
    const shown = edited.category.slice(0, 10);
    const gone = savedOk
      ? saved.category.filter(row => !edited.category.some(other => keyOf(other.category) === keyOf(row.category))).slice(0, 5)
      : [];
    const row = (path, seconds) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row', 'data-label': 'Category' }, swatch(categories.categoryColor(effective, path)), ' ', pretty(path)),
        h('td', { class: 'number', 'data-label': 'As edited' }, duration(seconds)),
        h('td', { class: 'number', 'data-label': 'Share' }, percent(seconds, edited.duration)),
        h('td', { class: 'number', 'data-label': 'As saved' }, savedOk ? duration(savedBy.get(keyOf(path)) || 0) : '?'),
      );
    return h(
      'table',
      { class: 'cat-shares', 'aria-label': 'Top categories' },
      h('thead', {}, h('tr', {}, ['Category', 'As edited', 'Share', 'As saved'].map(name => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, shown.map(r => row(r.category, r.duration)), gone.map(r => row(r.category, 0))),
    );
  }

  /** The titles and applications the selected category matches, from the last preview. */
  function drawMatches(state) {
    const { matches, answers } = state.preview;
    if (!answers) {
      matches.replaceChildren();
      return;
    }
    const [edited] = answers;
    if (!state.selected) {
      dom.replace(matches, h('p', { class: 'muted' }, 'Select a category to see the window titles and applications it matches.'));
      return;
    }
    const key = keyOf(state.selected);
    const rows = (edited.title || []).filter(row => row.category && keyOf(row.category) === key);
    const name = pretty(state.selected);
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
        : matchLists(edited, rows),
    );
  }

  /** The top window titles and applications of `rows`, the title rows of one category. */
  function matchLists(edited, rows) {
    const apps = new Map();
    for (const row of rows) apps.set(row.app, (apps.get(row.app) || 0) + row.duration);
    return [
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
    ];
  }

  return { KINDS, summaryWith, periodHref, periodParams, create, drawPeriod, schedule, forgetSaved, redraw, drawMatches };
})();
