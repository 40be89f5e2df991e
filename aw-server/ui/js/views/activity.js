// The activity of one host over a day, week or month: active time, top
// applications, window titles, categories and browser domains, an
// hour-by-hour (day) or day-by-day (week, month) chart and the day's
// timeline. On a server holding several hosts' buckets, "All devices"
// adds the hosts up: each host's figures are queried as for that host
// alone and summed; the top lists keep a row per host.

const activityView = (() => {
  'use strict';

  const { categoryColor, categoryRules, effectiveCategories } = categories;
  const { columns, duration, secondsPerRange, timeline, topList } = charts;
  const { h } = dom;
  const { devicesBuckets, durationQuery, hostBuckets, summaryQuery } = queries;

  const KINDS = ['day', 'week', 'month'];

  /** The host part of the address for all devices: no host name has a `*`. */
  const ALL = '*';

  /** `#/activity/<host>/<kind>/<date>`, `host` being `ALL` for all devices. */
  function activityHref(host, kind, date) {
    return `#/activity/${encodeURIComponent(host)}/${kind}/${time.dateKey(date)}`;
  }

  /** The hosts with window data, most recently active first. */
  function hostsOf(buckets) {
    return Object.values(buckets)
      .filter(b => b.type === 'currentwindow' && b.hostname && b.hostname !== ALL)
      // Plain comparison: the ISO times sort as text, and localeCompare would
      // load the locale data (see time.js) before the query is sent. This
      // server leaves `last_updated` out; the end of the last event says it.
      .map(b => [String(b.last_updated || (b.metadata && b.metadata.end) || ''), b.hostname])
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
    const all = host === ALL && hosts.length > 1;
    if (!all && !hosts.includes(host)) host = hosts[0];
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
    const shown = all ? hosts : [host];
    const sources = all ? devicesBuckets(buckets, hosts) : [hostBuckets(buckets, host)];
    const isDay = kind === 'day';
    const dayRanges = isDay ? [] : time.dayRanges(kind, periodDate, weekStart, offset);
    // The queries of each host, all at once.
    const answers = Promise.all(
      sources.map(each =>
        Promise.all([
          api.query([range], summaryQuery(each, rules, { timeline: isDay })),
          isDay ? Promise.resolve([]) : api.query(dayRanges, durationQuery(each, rules)),
        ]),
      ),
    );
    // Built while the queries run.
    const header = toolbar(hosts, all ? ALL : host, kind, periodDate, weekStart, offset);
    const answered = await answers;
    if (!isCurrent()) return false;
    const devices = shown.map((name, index) => {
      const [[summary], perDay] = answered[index];
      return { host: name, sources: sources[index], summary, perDay };
    });
    const summary = combined(devices);
    const perDay = dayRanges.map((_, index) => devices.reduce((sum, device) => sum + device.perDay[index], 0));
    // With app.js's "aw-drawn": how long building the view took.
    performance.mark('aw-data');

    let chart;
    if (isDay) {
      const hours = time.hourRanges(periodDate, offset);
      const seconds = secondsPerRange(summary.events, hours);
      // Above an hour only when hosts were active at the same time.
      const longest = Math.max(3600, ...seconds);
      chart = card(
        'Hour by hour',
        columns(
          hours.map(([from], index) => ({
            label: from.getHours() % 3 === 0 ? String(from.getHours()).padStart(2, '0') : '',
            title: time.formatTime(from),
            seconds: seconds[index],
          })),
          longest,
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
        card('Active time', summaryFacts(summary, perDay, devices, isDay), 'wide summary'),
        chart,
        isDay ? card('Timeline', timelines(devices, summary, range, colorOf), 'wide') : null,
        card(
          'Top applications',
          topList(summary.apps.map(e => ({ label: withHost(e.data.app, e), seconds: e.duration }))),
        ),
        card(
          'Top window titles',
          topList(
            summary.titles.map(e => ({
              label: withHost(e.data.title || '(no title)', e),
              title: withHost(`${e.data.app}: ${e.data.title}`, e),
              seconds: e.duration,
            })),
          ),
        ),
        card(
          'Top categories',
          topList(
            summary.categories.map(e => {
              const name = e.data.$category || ['Uncategorized'];
              return { label: withHost(name.join(' > '), e), seconds: e.duration, color: colorOf(name) };
            }),
          ),
        ),
        card(
          'Top browser domains',
          topList(
            summary.domains.map(e => ({
              label: withHost(e.data.$domain || '(no domain)', e),
              seconds: e.duration,
            })),
            {
              empty: devices.every(device => device.sources.browsers.length === 0)
                ? `No browser watcher data for ${all ? 'these hosts' : 'this host'}.`
                : 'No browsing in this period.',
            },
          ),
        ),
      ),
    );
    return true;
  }

  /**
   * The summary of `devices` (`{host, summary}`) as one: durations added,
   * the rows of the top lists ranked together, each naming its `host`, and
   * the events of every host in time order. One device's summary is its own.
   */
  function combined(devices) {
    if (devices.length === 1) return devices[0].summary;
    const rows = list =>
      devices
        .flatMap(({ host, summary }) => summary[list].map(event => ({ ...event, host })))
        .sort((a, b) => b.duration - a.duration);
    const events = devices
      .flatMap(({ summary }) => summary.events)
      .map(event => [Date.parse(event.timestamp), event])
      .sort(([a], [b]) => a - b)
      .map(([, event]) => event);
    return {
      duration: devices.reduce((sum, { summary }) => sum + summary.duration, 0),
      apps: rows('apps'),
      titles: rows('titles'),
      categories: rows('categories'),
      domains: rows('domains'),
      events,
    };
  }

  /** A row's label, naming its host in the view of all devices ("Code — laptop"). */
  function withHost(label, row) {
    return row.host ? `${label} — ${row.host}` : label;
  }

  /** The day's timeline; for all devices, one per host, as their times may overlap. */
  function timelines(devices, summary, range, colorOf) {
    if (devices.length === 1) return timeline(summary.events, range, colorOf);
    return devices.map(({ host, summary: own }) =>
      h('div', { class: 'timeline-host' }, h('h3', {}, host), timeline(own.events, range, colorOf)),
    );
  }

  /** The total and a few facts beside it: each host's time, for all devices. */
  function summaryFacts(summary, perDay, devices, isDay) {
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
    if (devices.length === 1) {
      facts.push(fact('Host', devices[0].host));
    } else {
      for (const device of devices) facts.push(fact(device.host, duration(device.summary.duration)));
    }
    const withoutAfk = devices.filter(device => !device.sources.afk).map(device => device.host);
    if (withoutAfk.length > 0) {
      const which = devices.length === 1 ? '' : ` for ${withoutAfk.join(', ')}`;
      facts.push(h('p', { class: 'fact muted' }, `No AFK data${which}: all window time is counted.`));
    }
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
              [ALL, ...hosts].map(each =>
                h('option', { value: each, selected: each === host }, each === ALL ? 'All devices' : each),
              ),
            ),
          )
        : h('span', { class: 'host muted' }, host),
    );
  }

  return { KINDS, activityHref, render };
})();
