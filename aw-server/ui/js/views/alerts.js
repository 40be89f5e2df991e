// Goals and limits (`#/alerts`): the goals of the `aw-notify` setting
// (the one aw-webui's notification panel and aw-notify read), edited here
// and saved through the settings API (the server refuses what the panel
// would, and says why); and the alerts' status: each goal's time so far,
// the thresholds told, what was sent and what failed, the next digest
// (docs/API.md §3.16). Where messages go is the config's `[alerts]`; an
// admin can send a test message to every channel.

window.alertsView = (() => {
  'use strict';

  const { h } = dom;
  const { ago, formatDateTime } = time;

  const KEY = 'aw-notify';
  const SETTING = `/api/0/settings/${KEY}`;

  /** Whether `who` (`api.access()`) may change settings. */
  const mayManage = who => !who.authenticated || who.scope === 'admin';

  /** "60, 120" as minutes, or null unless each is a positive whole number (the panel's rule). */
  function parseThresholds(text) {
    const parts = text.split(',').map(part => part.trim());
    if (parts.some(part => !/^[1-9]\d*$/.test(part))) return null;
    return parts.map(Number);
  }

  /** "1 h 10 min", "45 min". */
  function minutesText(minutes) {
    const whole = Math.floor(minutes);
    if (whole < 60) return `${whole} min`;
    return whole % 60 ? `${Math.floor(whole / 60)} h ${whole % 60} min` : `${whole / 60} h`;
  }

  async function render(main, _params, isCurrent) {
    const [who, status, settings, setting] = await Promise.all([
      api.access(),
      api.get('/api/0/alerts/status'),
      api.get('/api/0/settings'),
      api.send(SETTING).then(async response => ({ value: await response.json(), etag: response.headers.get('ETag') })),
    ]);
    if (!isCurrent()) return false;
    const admin = mayManage(who);
    // Every category and its parents ("Work" counts "Work > Programming").
    const names = categories
      .effectiveCategories(settings)
      .flatMap(category => category.name.map((_, index) => category.name.slice(0, index + 1).join(' > ')))
      .filter((name, index, all) => all.indexOf(name) === index);
    const stored = setting.value && typeof setting.value === 'object' && !Array.isArray(setting.value) ? setting.value : {};
    let etag = setting.etag;
    let counter = 0;
    let rows = Array.isArray(stored.alerts) ? stored.alerts.map(fromStored) : [];

    const statusCard = h('section', { class: 'card wide', 'aria-labelledby': 'alerts-status-title' });
    const editor = h('section', { class: 'card wide', 'aria-labelledby': 'goals-title' });
    const saved = h('p', { class: 'privacy-status', role: 'status' });
    const list = h('ol', { class: 'privacy-rules' });
    // Kept across redraws of the status, which follow a test.
    const testOutput = h('p', { class: 'action-message', role: 'status' });

    function fromStored(alert) {
      return {
        id: ++counter,
        label: alert.label || '',
        category: alert.category || 'All',
        thresholds: Array.isArray(alert.thresholds_minutes) ? alert.thresholds_minutes.join(', ') : '',
        positive: alert.positive === true,
        period: alert.period === 'week' ? 'week' : 'day',
        hosts: alert.hosts,
      };
    }

    function toStored(row) {
      const alert = {
        category: row.category.trim() || 'All',
        label: row.label.trim() || null,
        thresholds_minutes: parseThresholds(row.thresholds),
        positive: row.positive,
      };
      if (row.period === 'week') alert.period = 'week';
      if (row.hosts) alert.hosts = row.hosts;
      return alert;
    }

    function drawStatus(current) {
      const facts = current.enabled
        ? h(
            'p',
            {},
            `Checked every ${current.check_interval} s over `,
            current.scope === 'all' ? 'all devices' : 'this device',
            current.day ? ` for ${current.day}` : '',
            `; messages go by ${current.channels.join(', ')}.`,
            current.last_check ? [' Last checked ', h('time', { datetime: current.last_check, title: formatDateTime(new Date(current.last_check)) }, ago(current.last_check)), '.'] : '',
          )
        : h(
            'div',
            {},
            h('p', {}, 'Alerts are off: no channel is set. Add one to the server’s config file and restart it, for example:'),
            h('pre', { class: 'config' }, '[alerts]\nntfy_url = "https://ntfy.sh/my-topic"\nsmtp_url = "smtp://me@mail.example:587"\nemail_from = "me@mail.example"\nemail_to = "me@mail.example"\ndigest = "daily"'),
          );
      const goals = current.goals.length
        ? h(
            'table',
            { class: 'status-table goals' },
            h('caption', {}, 'Today'),
            h('thead', {}, h('tr', {}, ['Goal', 'Category', 'So far', 'Thresholds'].map(name => h('th', { scope: 'col' }, name)))),
            h(
              'tbody',
              {},
              current.goals.map(goal =>
                h(
                  'tr',
                  { 'data-goal': goal.label },
                  h('th', { scope: 'row' }, goal.label, ' ', h('span', { class: 'muted' }, goal.positive ? '(goal)' : '(limit)')),
                  h('td', {}, goal.category, goal.known_category ? '' : h('span', { class: 'problem' }, ' (no such category)')),
                  h('td', { class: 'number' }, minutesText(goal.minutes), goal.period === 'week' ? ' this week' : ''),
                  h(
                    'td',
                    {},
                    goal.thresholds_minutes.map((minutes, index) => [
                      index ? ', ' : '',
                      goal.fired.includes(minutes) ? h('strong', { title: 'told' }, `${minutesText(minutes)} ✓`) : minutesText(minutes),
                    ]),
                  ),
                ),
              ),
            ),
          )
        : null;
      const problems = current.problems.length
        ? h('ul', { class: 'problems' }, current.problems.map(problem => h('li', { class: 'problem' }, problem)))
        : null;
      const sent = current.sent.length
        ? h(
            'table',
            { class: 'status-table sent' },
            h('caption', {}, 'Sent'),
            h('thead', {}, h('tr', {}, ['When', 'Channel', 'Message', 'Tries'].map(name => h('th', { scope: 'col' }, name)))),
            h(
              'tbody',
              {},
              current.sent.slice(0, 10).map(item =>
                h(
                  'tr',
                  {},
                  h('td', {}, h('time', { datetime: item.at, title: formatDateTime(new Date(item.at)) }, ago(item.at))),
                  h('td', {}, item.channel),
                  h('td', {}, item.title),
                  h('td', { class: 'number' }, String(item.attempts)),
                ),
              ),
            ),
          )
        : null;
      const failures = current.failures.length
        ? h(
            'div',
            {},
            h('h3', {}, 'Failed tries'),
            h('ul', {}, current.failures.slice(0, 5).map(item => h('li', { class: 'problem' }, `${item.channel}: ${item.error}${item.given_up ? ' (given up)' : ''}`))),
          )
        : null;
      const pending = current.pending.length
        ? h('p', {}, `${dom.count(current.pending.length, 'message')} waiting to be tried again.`)
        : null;
      const digest = current.digest
        ? h(
            'p',
            {},
            `A ${current.digest.period} digest at ${current.digest.time}`,
            current.digest.next ? [', next ', h('time', { datetime: current.digest.next }, formatDateTime(new Date(current.digest.next)))] : '',
            current.digest.last_sent ? `; the last was of ${current.digest.last_sent}` : '',
            '.',
          )
        : null;
      const testButton =
        admin && current.enabled
          ? h('div', { class: 'button-row' }, h('button', { type: 'button', onclick: () => sendTest(testOutput) }, 'Send a test message'), testOutput)
          : null;
      dom.replace(
        statusCard,
        h('h1', { id: 'alerts-status-title' }, 'Alerts'),
        facts,
        problems,
        goals,
        sent,
        pending,
        failures,
        digest,
        testButton,
      );
    }

    async function sendTest(output) {
      output.textContent = 'Sending…';
      try {
        const answer = await api.sendJson('POST', '/api/0/alerts/test', {}).then(response => response.json());
        if (!isCurrent()) return;
        output.textContent = answer.channels
          .map(outcome => (outcome.delivered ? `${outcome.channel}: sent` : `${outcome.channel}: not sent (${outcome.error}); tried again later`))
          .join('. ');
      } catch (error) {
        if (isCurrent()) output.textContent = `Could not send: ${dom.why(error)}`;
      }
      await refreshStatus();
    }

    async function refreshStatus() {
      try {
        const current = await api.get('/api/0/alerts/status');
        if (isCurrent()) drawStatus(current);
      } catch {
        // The page stays as it was.
      }
    }

    function drawRows() {
      dom.replace(list, rows.map(goalRow));
      if (rows.length === 0) list.append(h('li', { class: 'empty' }, 'No goals yet.'));
    }

    function goalRow(row) {
      const id = name => `goal-${row.id}-${name}`;
      const error = h('p', { class: 'field-error', id: id('error') });
      const thresholds = h('input', {
        id: id('thresholds'),
        value: row.thresholds,
        inputmode: 'numeric',
        autocomplete: 'off',
        'aria-describedby': `${id('thresholds-hint')} ${id('error')}`,
        disabled: !admin,
        oninput: event => {
          row.thresholds = event.target.value;
          const ok = parseThresholds(row.thresholds) !== null;
          event.target.toggleAttribute('aria-invalid', !ok);
          error.textContent = ok ? '' : 'Whole minutes above zero, separated by commas: 60, 120';
        },
      });
      const category = h(
        'select',
        { id: id('category'), disabled: !admin, onchange: event => { row.category = event.target.value; } },
        ['All', ...names.filter(name => name !== 'All')].map(name => h('option', { value: name, selected: name === row.category }, name === 'All' ? 'All activity' : name)),
        names.includes(row.category) || row.category === 'All' ? null : h('option', { value: row.category, selected: true }, `${row.category} (no such category)`),
      );
      return h(
        'li',
        { class: 'rule goal' },
        h(
          'fieldset',
          {},
          h('legend', {}, row.label || row.category || 'New goal'),
          h(
            'div',
            { class: 'fields' },
            h('div', { class: 'field' }, h('label', { for: id('label') }, 'Name'), h('input', { id: id('label'), value: row.label, autocomplete: 'off', disabled: !admin, oninput: event => { row.label = event.target.value; } })),
            h('div', { class: 'field' }, h('label', { for: id('category') }, 'Category'), category),
            h(
              'div',
              { class: 'field' },
              h('label', { for: id('kind') }, 'Kind'),
              h(
                'select',
                { id: id('kind'), disabled: !admin, onchange: event => { row.positive = event.target.value === 'goal'; } },
                h('option', { value: 'limit', selected: !row.positive }, 'Limit: at most'),
                h('option', { value: 'goal', selected: row.positive }, 'Goal: at least'),
              ),
            ),
            h(
              'div',
              { class: 'field' },
              h('label', { for: id('thresholds') }, 'Minutes'),
              thresholds,
              h('small', { id: id('thresholds-hint') }, 'Each told once when reached: 60, 120'),
              error,
            ),
            h(
              'div',
              { class: 'field' },
              h('label', { for: id('period') }, 'Per'),
              h(
                'select',
                { id: id('period'), disabled: !admin, onchange: event => { row.period = event.target.value; } },
                h('option', { value: 'day', selected: row.period === 'day' }, 'day'),
                h('option', { value: 'week', selected: row.period === 'week' }, 'week'),
              ),
            ),
          ),
          admin
            ? h('div', { class: 'button-row' }, h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${row.label || row.category}`, onclick: () => { rows = rows.filter(other => other !== row); drawRows(); } }, 'Remove'))
            : null,
        ),
      );
    }

    async function save(event) {
      event.preventDefault();
      const bad = rows.find(row => parseThresholds(row.thresholds) === null);
      if (bad) {
        saved.textContent = `“${bad.label || bad.category}”: the minutes must be whole numbers above zero, separated by commas.`;
        document.getElementById(`goal-${bad.id}-thresholds`)?.focus();
        return;
      }
      const value = { ...stored, alerts: rows.map(toStored) };
      saved.textContent = 'Saving…';
      try {
        const headers = { 'Content-Type': 'application/json' };
        if (etag) headers['If-Match'] = etag;
        const response = await api.send(SETTING, { method: 'POST', body: JSON.stringify(value), headers });
        await response.text();
        etag = response.headers.get('ETag');
        Object.assign(stored, value);
        if (!isCurrent()) return;
        saved.textContent = `Saved ${dom.count(rows.length, 'goal')}. The server checks them within ${status.check_interval} s.`;
      } catch (error) {
        if (isCurrent()) saved.textContent = `Not saved: ${dom.why(error)}`;
      }
      setTimeout(refreshStatus, 1500);
    }

    drawStatus(status);
    drawRows();
    dom.replace(
      editor,
      h('h2', { id: 'goals-title' }, 'Goals and limits'),
      h(
        'p',
        { class: 'muted' },
        'A limit is told when the time of its category (its subcategories included) passes each number of minutes, a goal when it reaches it; ' +
          'each once a day (or week). Messages name the category and the time, never window titles. ' +
          'These are the goals aw-notify and aw-webui’s notification settings use too.',
      ),
      h(
        'form',
        { class: 'privacy-form', onsubmit: save },
        list,
        admin
          ? h(
              'div',
              { class: 'button-row actions' },
              h('button', { type: 'button', onclick: () => { rows.push({ id: ++counter, label: '', category: 'All', thresholds: '60', positive: false, period: 'day' }); drawRows(); document.getElementById(`goal-${counter}-label`)?.focus(); } }, 'Add a goal'),
              h('button', { type: 'submit', class: 'primary' }, 'Save goals'),
            )
          : h('p', { class: 'muted' }, `Changing goals needs an admin token; this dashboard was opened with a ${who.scope} token.`),
        saved,
      ),
    );
    main.replaceChildren(h('div', { class: 'cards' }, statusCard, editor));
    return true;
  }

  return { render, parseThresholds };
})();
