// The activity of one host over a day, week or month: active time, top
// applications, window titles, categories and browser domains, an
// hour-by-hour (day) or day-by-day (week, month) chart and the day's
// timeline. Every figure is the server's /api/0/summary, asked for in the
// browser's time zone, so the view, the API and the `report` command count
// alike; the view picks the dates and draws. On a server holding several
// hosts' buckets, "All devices" is one summary of them all: the sum (a
// browser bucket without a host of its own counted once), each host's
// total beside it and a timeline per host.

const activityView = (() => {
  'use strict';

  const { categoryColor, effectiveCategories } = categories;
  const { columns, duration, timeline, topList } = charts;
  const { h } = dom;

  const KINDS = ['day', 'week', 'month'];

  /** The host part of the address for all devices: no host name has a `*`. */
  const ALL = '*';

  /** Rows of each top list. */
  const ROWS = 10;

  /** `#/activity/<host>/<kind>/<date>`, `host` being `ALL` for all devices. */
  function activityHref(host, kind, date) {
    return `#/activity/${encodeURIComponent(host)}/${kind}/${time.dateKey(date)}`;
  }

  /** The hosts with window data, most recently active first. */
  function hostsOf(buckets) {
    return Object.values(buckets)
      .filter(b => b.type === 'currentwindow' && b.hostname && b.hostname !== ALL)
      // Plain comparison: the ISO times sort as text, and localeCompare would
      // load the locale data (see time.js) before the summary is asked for. This
      // server leaves `last_updated` out; the end of the last event says it.
      .map(b => [String(b.last_updated || (b.metadata && b.metadata.end) || ''), b.hostname])
      .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
      .map(([, hostname]) => hostname)
      .filter((host, index, all) => all.indexOf(host) === index);
  }

  /**
   * Whether any of `hosts` has a bucket of `type`; a browser bucket without
   * a host name of its own counts for every host, as the server reads it.
   */
  function hasBucket(buckets, hosts, type) {
    const hostless = b => type === 'web.tab.current' && (!b.hostname || b.hostname === 'unknown');
    return Object.values(buckets).some(b => b.type === type && (hosts.includes(b.hostname) || hostless(b)));
  }

  /**
   * Draws the view for `params` (`[host, kind, date]` from the address) into
   * `main`; `isCurrent()` turns false when the user navigated away meanwhile.
   */
  async function render(main, params, isCurrent) {
    const answers = Promise.all([api.settings(), api.buckets()]);
    // While those arrive.
    const tz = time.zoneName();
    const [settings, buckets] = await answers;
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
    const isDay = kind === 'day';
    const by = ['app', 'title', 'category', 'domain', ...(isDay ? ['hour', 'events'] : ['day'])];
    // The period as dates: the server starts each day at startOfDay in `tz`.
    // Without a host it sums them all (`host` gives each one's total).
    const asked = api.summary({
      start: time.dateKey(periodDate),
      end: time.dateKey(time.shiftDate(kind, periodDate, 1)),
      by: (all ? [...by, 'host'] : by).join(','),
      host: all ? null : host,
      tz,
      limit: ROWS,
    });
    // Built while the server counts.
    const header = toolbar(hosts, all ? ALL : host, kind, periodDate, weekStart, offset);
    const categories = effectiveCategories(settings);
    const colors = new Map();
    const colorOf = name => {
      const key = name.join('>');
      if (!colors.has(key)) colors.set(key, categoryColor(categories, name));
      return colors.get(key);
    };
    const summary = await asked;
    if (!isCurrent()) return false;
    // With app.js's "aw-drawn": how long building the view took.
    performance.mark('aw-data');
    const shown = summary.hosts;

    let chart;
    if (isDay) {
      // The hours of the local clock from the one the day starts in.
      const first = new Date(summary.start).getHours();
      const hours = [...summary.hour.slice(first), ...summary.hour.slice(0, first)];
      // Above an hour only when hosts were active at the same time.
      const longest = Math.max(3600, ...hours.map(row => row.duration));
      chart = card(
        'Hour by hour',
        columns(
          hours.map(row => ({
            label: Number.parseInt(row.key, 10) % 3 === 0 ? row.key.slice(0, 2) : '',
            title: row.key,
            seconds: row.duration,
          })),
          longest,
          'Active time per hour',
        ),
        'wide',
      );
    } else {
      const longest = Math.max(3600, ...summary.day.map(row => row.duration));
      chart = card(
        'Day by day',
        columns(
          summary.day.map(row => {
            const day = time.parseDateKey(row.date);
            return {
              label: kind === 'week' ? time.weekdayShort(day) : day.getDate(),
              title: time.formatDate(day),
              seconds: row.duration,
            };
          }),
          longest,
          'Active time per day',
          { hours: true },
        ),
        'wide',
      );
    }

    // Opens the Categories page with a new category for an application or
    // a window title, previewed over this period.
    const makeCategory = (field, text) =>
      text
        ? h(
            'a',
            {
              class: 'make-category',
              href: `#/categories/new/${field}/${encodeURIComponent(text)}/${kind}/${time.dateKey(periodDate)}`,
              'aria-label': `Make a category of ${text}`,
            },
            h('span', { 'aria-hidden': 'true' }, '+ '),
            'category',
          )
        : null;
    // A top list whose rows get their "Make a category of …" links when
    // asked: drawn with every first view, they made it paint later.
    const categorizable = (rows, field) => {
      const list = topList(rows, { limit: ROWS });
      if (!rows.length) return list;
      const opener = h(
        'button',
        {
          type: 'button',
          class: 'make-categories',
          onclick: () => {
            const linked = topList(
              rows.map(row => ({ ...row, action: makeCategory(field, row.text) })),
              { limit: ROWS },
            );
            list.replaceWith(linked);
            opener.remove();
            linked.querySelector('.make-category')?.focus();
          },
        },
        'Make a category of one of these…',
      );
      return [list, opener];
    };
    const range = [new Date(summary.start), new Date(summary.end)];
    main.replaceChildren(
      header,
      h(
        'div',
        { class: 'cards' },
        card('Active time', summaryFacts(summary, buckets, all), 'wide summary'),
        chart,
        isDay ? card('Timeline', [timelines(summary, all, range, colorOf), rangeTool(buckets, shown, range)], 'wide') : null,
        card(
          'Top applications',
          categorizable(
            summary.app.map(row => ({ label: row.key, seconds: row.duration, text: row.key })),
            'app',
          ),
        ),
        card(
          'Top window titles',
          categorizable(
            summary.title.map(row => ({
              label: row.key || '(no title)',
              title: `${row.app}: ${row.key}`,
              seconds: row.duration,
              text: row.key,
            })),
            'title',
          ),
        ),
        card(
          'Top categories',
          topList(
            summary.category.map(row => ({ label: row.key, seconds: row.duration, color: colorOf(row.category) })),
            { limit: ROWS },
          ),
        ),
        card(
          'Top browser domains',
          topList(
            summary.domain.map(row => ({ label: row.key || '(no domain)', seconds: row.duration })),
            {
              limit: ROWS,
              empty: hasBucket(buckets, shown, 'web.tab.current')
                ? 'No browsing in this period.'
                : `No browser watcher data for ${all ? 'these hosts' : 'this host'}.`,
            },
          ),
        ),
      ),
    );
    return true;
  }

  /** The day's timeline; for all devices, one per host, as their times may overlap. */
  function timelines(summary, all, range, colorOf) {
    if (!all) return timeline(summary.events, range, colorOf);
    const byHost = new Map(summary.hosts.map(host => [host, []]));
    for (const event of summary.events) byHost.get(event.host)?.push(event);
    return [...byHost].map(([host, events]) =>
      h('div', { class: 'timeline-host' }, h('h3', {}, host), timeline(events, range, colorOf)),
    );
  }

  /**
   * "Delete a time range…" under the day's timeline. Its form
   * (views/range.js) is loaded when first opened, so that this view's
   * script does not grow with it.
   */
  function rangeTool(buckets, hosts, day) {
    const slot = h('div', { class: 'range-tool' });
    const problem = h('p', { class: 'error-text', role: 'alert' });
    const opener = h(
      'button',
      {
        type: 'button',
        onclick: async () => {
          opener.disabled = true;
          problem.textContent = '';
          try {
            await dom.stylesheet('css/manage.css');
            await dom.script('js/views/range.js');
            window.rangeDelete.open(slot, { opener, day, buckets, hosts });
          } catch (error) {
            problem.textContent = error.message;
          } finally {
            opener.disabled = false;
          }
        },
      },
      'Delete a time range…',
    );
    slot.append(opener, problem);
    return slot;
  }

  /** The total and a few facts beside it: each host's time, for all devices. */
  function summaryFacts(summary, buckets, all) {
    const facts = [h('p', { class: 'total' }, duration(summary.duration))];
    const fact = (label, value) => h('p', { class: 'fact' }, h('span', { class: 'muted' }, label), ' ', value);
    const events = summary.events;
    if (events && events.length > 0) {
      const first = new Date(events[0].timestamp);
      const last = new Date(Math.max(...events.map(e => Date.parse(e.timestamp) + e.duration * 1000)));
      facts.push(fact('Active from', `${time.formatTime(first)} to ${time.formatTime(last)}`));
    }
    if (summary.day) {
      const activeDays = summary.day.filter(row => row.duration > 0).length;
      facts.push(fact('Active days', `${activeDays} of ${summary.day.length}`));
      if (activeDays > 0) facts.push(fact('Per active day', duration(summary.duration / activeDays)));
    }
    if (all) {
      const seconds = new Map(summary.host.map(row => [row.key, row.duration]));
      for (const host of summary.hosts) facts.push(fact(host, duration(seconds.get(host) || 0)));
    } else {
      facts.push(fact('Host', summary.hosts[0]));
    }
    const withoutAfk = summary.hosts.filter(host => !hasBucket(buckets, [host], 'afkstatus'));
    if (withoutAfk.length > 0) {
      const which = all ? ` for ${withoutAfk.join(', ')}` : '';
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
