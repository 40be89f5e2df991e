// The window titles, URLs and tab titles containing a text over the last
// 7 days, 30 days or year, with their active time and the days they were
// seen, each day linking to its day view: /api/0/search, asked for in the
// browser's time zone as the activity view asks for its summary.
//
// Route: `#/search/<period>/<text>`, the period a key of PERIODS.

const searchView = (() => {
  'use strict';

  const { duration } = charts;
  const { h } = dom;

  /** The periods offered, ending with today (as startOfDay makes it). */
  const PERIODS = { '7d': ['Last 7 days', 7], '30d': ['Last 30 days', 30], '1y': ['Last year', 365] };
  const KINDS = { title: 'Window title', url: 'URL', tab: 'Tab title' };
  const HEADINGS = ['Kind', 'Title or URL', 'App', 'Active', 'First seen', 'Last seen', 'Days'];

  /** Day links shown per match, most recent first; the rest are counted. */
  const DAYS = 7;

  const href = (period, text) => `#/search/${period}/${encodeURIComponent(text)}`;

  async function render(main, params, isCurrent) {
    const period = PERIODS[params[0]] ? params[0] : '7d';
    const text = (params[1] || '').trim();
    const form = searchForm(period, text);
    if (!text) {
      main.replaceChildren(form, h('p', { class: 'muted hint' }, 'Type a part of a window title or URL, then Search.'));
      return true;
    }
    const settings = await api.settings();
    if (!isCurrent()) return false;
    const end = time.logicalToday(time.dayOffset(settings.startOfDay ?? '04:00'));
    end.setDate(end.getDate() + 1);
    const start = new Date(end);
    start.setDate(start.getDate() - PERIODS[period][1]);
    let results;
    try {
      const answer = await api.search({ text, start: time.dateKey(start), end: time.dateKey(end), tz: time.zoneName() });
      results = matches(answer);
    } catch (error) {
      // The server's own words for a refused search; a missing key or
      // scope is app.js's to explain.
      if (!(error instanceof api.ApiError) || [401, 403].includes(error.status)) throw error;
      results = h('p', { class: 'card notice error', role: 'alert' }, error.message);
    }
    if (!isCurrent()) return false;
    main.replaceChildren(form, results);
    return true;
  }

  function searchForm(period, text) {
    const input = h('input', { id: 'search-text', type: 'search', name: 'text', value: text, autocomplete: 'off' });
    const select = h(
      'select',
      { id: 'search-period', name: 'period' },
      Object.entries(PERIODS).map(([key, [label]]) => h('option', { value: key, selected: key === period }, label)),
    );
    const submit = event => {
      event.preventDefault();
      const target = href(select.value, input.value.trim());
      // The same address again searches again.
      if (location.hash === target) window.dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = target;
    };
    return h(
      'form',
      { class: 'card search', role: 'search', onsubmit: submit },
      h('h1', {}, 'Search'),
      h(
        'div',
        { class: 'fields' },
        h('div', { class: 'field' }, h('label', { for: 'search-text' }, 'Title or URL contains'), input),
        h('div', { class: 'field' }, h('label', { for: 'search-period' }, 'Period'), select),
        h('button', { type: 'submit', class: 'primary' }, 'Search'),
      ),
    );
  }

  function matches(answer) {
    if (answer.matches.length === 0) {
      return h('p', { class: 'card empty', role: 'status' }, `Nothing contains “${answer.text}” in this period.`);
    }
    const count = answer.matches.length;
    const cell = (label, ...content) => h('td', { 'data-label': label }, ...content);
    const rows = answer.matches.map(match =>
      h(
        'tr',
        {},
        cell('Kind', KINDS[match.kind] || match.kind),
        h('th', { scope: 'row', 'data-label': 'Title or URL', class: 'key' }, match.key || '(no title)'),
        cell('App', match.app || '–'),
        h('td', { 'data-label': 'Active', class: 'number' }, duration(match.duration)),
        cell('First seen', time.formatDateTime(new Date(match.first))),
        cell('Last seen', time.formatDateTime(new Date(match.last))),
        cell('Days', dayLinks(match)),
      ),
    );
    return h(
      'section',
      { class: 'card wide' },
      h('h2', {}, `${count} match${count === 1 ? '' : 'es'} · `, duration(answer.duration), ' on matching window titles'),
      h(
        'table',
        { class: 'results' },
        h('thead', {}, h('tr', {}, HEADINGS.map(name => h('th', { scope: 'col' }, name)))),
        h('tbody', {}, rows),
      ),
    );
  }

  /** Links to the day view of the days a match was seen, the latest first. */
  function dayLinks(match) {
    const host = match.hosts.length === 1 ? match.hosts[0] : '*';
    const days = [...match.days].sort().reverse();
    const links = days.slice(0, DAYS).map(day => {
      const date = time.parseDateKey(day);
      return h('a', { href: activityView.activityHref(host, 'day', date) }, time.formatDate(date));
    });
    const more = days.length - links.length;
    return h('span', { class: 'days' }, links, more > 0 ? h('span', { class: 'muted' }, `+${more} more`) : null);
  }

  return { render };
})();
