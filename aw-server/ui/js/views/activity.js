// The activity of one host over a day, week or month: active time, top
// applications, window titles, categories and browser domains, an
// hour-by-hour (day) or day-by-day (week, month) chart and the day's
// timeline.

const activityView = (() => {
  'use strict';

  const { categoryColor, categoryRules, effectiveCategories } = categories;
  const { columns, duration, secondsPerRange, timeline, topList } = charts;
  const { h } = dom;
  const { durationQuery, hostBuckets, summaryQuery } = queries;

  const KINDS = ['day', 'week', 'month'];

  /** `#/activity/<host>/<kind>/<date>` */
  function activityHref(host, kind, date) {
    return `#/activity/${encodeURIComponent(host)}/${kind}/${time.dateKey(date)}`;
  }

  /** The hosts with window data, most recently active first. */
  function hostsOf(buckets) {
    return Object.values(buckets)
      .filter(b => b.type === 'currentwindow' && b.hostname)
      // Plain comparison: the ISO times sort as text, and localeCompare would
      // load the locale data (see time.js) before the query is sent.
      .map(b => [String(b.last_updated || ''), b.hostname])
      .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
      .map(([, hostname]) => hostname)
      .filter((host, index, all) => all.indexOf(host) === index);
  }

  /**
   * Draws the view for `params` (`[host, kind, date]` from the address) into
   * `main`; `isCurrent()` turns false when the user navigated away meanwhile.
   */
  async function render(main, params, isCurrent) {
    const [settings, buckets] = await Promise.all([api.settings(), api.buckets()]);
    if (!isCurrent()) return false;
    const offset = time.dayOffset(settings.startOfDay ?? '04:00');
    const weekStart = time.weekStartDay(settings.startOfWeek);
    const hosts = hostsOf(buckets);
    if (hosts.length === 0) {
      main.replaceChildren(
        h(
          'section',
          { class: 'card notice' },
          h('h1', {}, 'No activity yet'),
          h(
            'p',
            {},
            'No window watcher has sent data to this server. Start aw-watcher-window and ' +
              'aw-watcher-afk (or the ActivityWatch bundle) and come back in a minute.',
          ),
          h('p', {}, h('a', { href: '#/buckets' }, 'See the buckets')),
        ),
      );
      return true;
    }
    let [host, kind, key] = params;
    const date = time.parseDateKey(key) || time.logicalToday(offset);
    if (!hosts.includes(host)) host = hosts[0];
    if (!KINDS.includes(kind)) kind = 'day';
    const periodDate = time.periodFirstDate(kind, date, weekStart);
    const range = time.periodRange(kind, periodDate, weekStart, offset);

    const categories = effectiveCategories(settings);
    const rules = categoryRules(categories);
    const colors = new Map();
    const colorOf = name => {
      const key = name.join('>');
      if (!colors.has(key)) colors.set(key, categoryColor(categories, name));
      return colors.get(key);
    };
    const sources = hostBuckets(buckets, host);
    const isDay = kind === 'day';
    const dayRanges = isDay ? [] : time.dayRanges(kind, periodDate, weekStart, offset);
    const answers = Promise.all([
      api.query([range], summaryQuery(sources, rules, { timeline: isDay })),
      isDay ? Promise.resolve([]) : api.query(dayRanges, durationQuery(sources, rules)),
    ]);
    // Built while the queries run.
    const header = toolbar(hosts, host, kind, periodDate, weekStart, offset);
    const [[summary], perDay] = await answers;
    if (!isCurrent()) return false;
    // With app.js's "aw-drawn": how long building the view took.
    performance.mark('aw-data');

    let chart;
    if (isDay) {
      const hours = time.hourRanges(periodDate, offset);
      const seconds = secondsPerRange(summary.events, hours);
      chart = card(
        'Hour by hour',
        columns(
          hours.map(([from], index) => ({
            label: from.getHours() % 3 === 0 ? String(from.getHours()).padStart(2, '0') : '',
            title: time.formatTime(from),
            seconds: seconds[index],
          })),
          3600,
          'Active time per hour',
        ),
        'wide',
      );
    } else {
      const longest = Math.max(3600, ...perDay);
      chart = card(
        'Day by day',
        columns(
          dayRanges.map(([from], index) => ({
            label: kind === 'week' ? time.weekdayShort(from) : from.getDate(),
            title: time.formatDate(from),
            seconds: perDay[index],
          })),
          longest,
          'Active time per day',
        ),
        'wide',
      );
    }

    main.replaceChildren(
      header,
      h(
        'div',
        { class: 'cards' },
        card('Active time', summaryFacts(summary, perDay, host, sources, isDay), 'wide summary'),
        chart,
        isDay ? card('Timeline', timeline(summary.events, range, colorOf), 'wide') : null,
        card(
          'Top applications',
          topList(summary.apps.map(e => ({ label: e.data.app, seconds: e.duration }))),
        ),
        card(
          'Top window titles',
          topList(
            summary.titles.map(e => ({
              label: e.data.title || '(no title)',
              title: `${e.data.app}: ${e.data.title}`,
              seconds: e.duration,
            })),
          ),
        ),
        card(
          'Top categories',
          topList(
            summary.categories.map(e => {
              const name = e.data.$category || ['Uncategorized'];
              return { label: name.join(' > '), seconds: e.duration, color: colorOf(name) };
            }),
          ),
        ),
        card(
          'Top browser domains',
          topList(
            summary.domains.map(e => ({ label: e.data.$domain || '(no domain)', seconds: e.duration })),
            {
              empty:
                sources.browsers.length === 0
                  ? 'No browser watcher data for this host.'
                  : 'No browsing in this period.',
            },
          ),
        ),
      ),
    );
    return true;
  }

  /** The total and a few facts beside it. */
  function summaryFacts(summary, perDay, host, sources, isDay) {
    const facts = [h('p', { class: 'total' }, duration(summary.duration))];
    const fact = (label, value) => h('p', { class: 'fact' }, h('span', { class: 'muted' }, label), ' ', value);
    if (isDay && summary.events.length > 0) {
      const first = new Date(summary.events[0].timestamp);
      const last = new Date(
        Math.max(...summary.events.map(e => new Date(e.timestamp).getTime() + e.duration * 1000)),
      );
      facts.push(fact('Active from', `${time.formatTime(first)} to ${time.formatTime(last)}`));
    }
    if (!isDay) {
      const activeDays = perDay.filter(seconds => seconds > 0).length;
      facts.push(fact('Active days', `${activeDays} of ${perDay.length}`));
      if (activeDays > 0) facts.push(fact('Per active day', duration(summary.duration / activeDays)));
    }
    facts.push(fact('Host', host));
    if (!sources.afk) facts.push(h('p', { class: 'fact muted' }, 'No AFK data: all window time is counted.'));
    return h('div', { class: 'facts-row' }, facts);
  }

  function card(title, content, extra = '') {
    return h('section', { class: `card ${extra}` }, h('h2', {}, title), content);
  }

  function toolbar(hosts, host, kind, date, weekStart, offset) {
    const today = time.logicalToday(offset);
    const previous = time.shiftDate(kind, date, -1);
    const next = time.shiftDate(kind, date, 1);
    const isFuture = time.periodFirstDate(kind, next, weekStart) > today;
    const units = { day: 'day', week: 'week', month: 'month' };
    return h(
      'div',
      { class: 'toolbar' },
      h(
        'nav',
        { class: 'kinds', 'aria-label': 'Period length' },
        KINDS.map(each =>
          h(
            'a',
            {
              href: activityHref(host, each, date),
              'aria-current': each === kind ? 'page' : null,
              'data-key': each[0],
            },
            each[0].toUpperCase() + each.slice(1),
          ),
        ),
      ),
      h(
        'div',
        { class: 'stepper' },
        h(
          'a',
          {
            href: activityHref(host, kind, previous),
            class: 'step',
            id: 'previous',
            'aria-label': `Previous ${units[kind]}`,
            title: `Previous ${units[kind]} (←)`,
          },
          '‹',
        ),
        h('h1', { id: 'period-title' }, time.periodTitle(kind, date, weekStart)),
        isFuture
          ? h('span', { class: 'step disabled', 'aria-hidden': 'true' }, '›')
          : h(
              'a',
              {
                href: activityHref(host, kind, next),
                class: 'step',
                id: 'next',
                'aria-label': `Next ${units[kind]}`,
                title: `Next ${units[kind]} (→)`,
              },
              '›',
            ),
        h('a', { href: activityHref(host, kind, today), class: 'today', title: 'Today (t)' }, 'Today'),
      ),
      hosts.length > 1
        ? h(
            'label',
            { class: 'host' },
            'Host ',
            h(
              'select',
              {
                onchange: event => {
                  location.hash = activityHref(event.target.value, kind, date);
                },
              },
              hosts.map(each => h('option', { value: each, selected: each === host }, each)),
            ),
          )
        : h('span', { class: 'host muted' }, host),
    );
  }

  return { KINDS, activityHref, render };
})();
