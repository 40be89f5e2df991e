// The hosts of this server's buckets (`#/hosts`): each with its buckets,
// events, last data, devices and aliases; for an admin, renaming a host,
// merging one into another (the plan, from the server's dry run, shown
// before anything is changed) and aliases made or ended by hand
// (docs/API.md §3.15). Everything goes through the public API; what a
// change does is the server's answer, never computed here.

window.hostsView = (() => {
  'use strict';

  const { h } = dom;
  const { ago, formatDateTime } = time;

  const path = (host, action) => `/api/0/hosts/${encodeURIComponent(host)}/${action}`;

  /** Whether `who` (`api.access()`) may change hosts: admin, or an open server. */
  const mayManage = who => !who.authenticated || who.scope === 'admin';

  async function render(main, _params, isCurrent) {
    const [who, hosts] = await Promise.all([api.access(), api.get('/api/0/hosts')]);
    if (!isCurrent()) return false;
    const admin = mayManage(who);
    const list = h('section', { class: 'card wide', 'aria-labelledby': 'hosts-title' });
    const status = h('p', { class: 'muted', role: 'status' });
    // The change being planned: its form, then its plan.
    const planner = h('section', { class: 'card wide', 'aria-labelledby': 'change-title', hidden: true });
    let current = hosts;

    async function refresh() {
      try {
        current = await api.get('/api/0/hosts');
        if (isCurrent()) drawList();
      } catch (error) {
        if (isCurrent()) status.textContent = `Could not reload the hosts: ${dom.why(error)}`;
      }
    }

    function drawList() {
      dom.replace(
        list,
        h('h1', { id: 'hosts-title' }, `Hosts (${current.length})`),
        h(
          'p',
          { class: 'muted' },
          'A host is the name a device’s watchers give. One machine with two names (',
          h('code', {}, 'mac.local'),
          ' and ',
          h('code', {}, 'mac.fritz.box'),
          '), or a reinstalled one, can be merged into one host; a rename keeps every event. ' +
            'The old name stays an alias, so a watcher still sending it writes into the new host’s buckets.',
        ),
        current.length === 0
          ? h('p', { class: 'empty' }, 'No buckets yet.')
          : h(
              'table',
              { class: 'tokens hosts' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Host', 'Buckets', 'Events', 'Last data', 'Device', 'Aliases', ''].map(name =>
                    h('th', { scope: 'col' }, name),
                  ),
                ),
              ),
              h('tbody', {}, current.map(row)),
            ),
      );
    }

    function row(host) {
      return h(
        'tr',
        { 'data-host': host.host },
        h('th', { scope: 'row', 'data-label': 'Host' }, h('code', {}, host.host)),
        h(
          'td',
          { 'data-label': 'Buckets' },
          host.buckets.map((id, index) => [index ? h('br') : null, h('code', {}, id)]),
        ),
        h('td', { 'data-label': 'Events' }, host.events.toLocaleString('en')),
        h(
          'td',
          { 'data-label': 'Last data' },
          host.last
            ? h('time', { datetime: host.last, title: formatDateTime(new Date(host.last)) }, ago(host.last))
            : '–',
        ),
        h('td', { 'data-label': 'Device' }, host.device_ids.length ? host.device_ids.map(id => h('code', {}, id)) : '–'),
        h('td', { 'data-label': 'Aliases' }, host.aliases.length ? host.aliases.map(alias => aliasChip(alias)) : '–'),
        h(
          'td',
          { class: 'actions' },
          admin
            ? [
                h('button', { type: 'button', 'aria-label': `Rename ${host.host}`, onclick: () => plan('rename', host.host) }, 'Rename…'),
                ' ',
                current.length > 1
                  ? h('button', { type: 'button', 'aria-label': `Merge ${host.host} into another host`, onclick: () => plan('merge', host.host) }, 'Merge…')
                  : null,
              ]
            : null,
        ),
      );
    }

    /** An alias, with a button that ends it for an admin. */
    function aliasChip(alias) {
      const end = async () => {
        status.textContent = '';
        try {
          const response = await api.send(path(alias, 'alias'), { method: 'DELETE' });
          await response.text();
          if (!isCurrent()) return;
          status.textContent = `“${alias}” is no longer an alias.`;
        } catch (error) {
          if (isCurrent()) status.textContent = `Could not end the alias ${alias}: ${dom.why(error)}`;
        }
        await refresh();
      };
      return h(
        'span',
        { class: 'alias' },
        h('code', {}, alias),
        admin ? [' ', h('button', { type: 'button', class: 'danger', 'aria-label': `End the alias ${alias}`, onclick: end }, '×')] : null,
        ' ',
      );
    }

    /** The form of a rename or merge of `host`, then its plan. */
    function plan(operation, host) {
      const others = current.map(other => other.host).filter(other => other !== host);
      const target =
        operation === 'rename'
          ? h('input', { id: 'change-target', required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'change-target-hint' })
          : h('select', { id: 'change-target', 'aria-describedby': 'change-target-hint' }, others.map(other => h('option', { value: other }, other)));
      const hint =
        operation === 'rename'
          ? 'A name no host has yet (to join an existing host, merge instead).'
          : 'Each bucket goes into this host’s bucket of the same type; where both have data for the same time, this host’s is kept.';
      const show = h('button', { type: 'submit', class: 'primary' }, 'Show the plan');
      const outcome = h('div', { id: 'change-plan', tabindex: '-1' });
      async function ask(event) {
        event.preventDefault();
        const to = target.value.trim();
        show.disabled = true;
        outcome.replaceChildren(h('p', { class: 'muted', role: 'status' }, 'Asking the server for the plan…'));
        try {
          const answer = await send(operation, host, to, true);
          if (!isCurrent()) return;
          drawPlan(outcome, answer, () => confirm(outcome, operation, host, to));
          outcome.focus();
        } catch (error) {
          if (isCurrent()) outcome.replaceChildren(h('p', { class: 'error', role: 'alert' }, `The server refused: ${dom.why(error)}`));
        } finally {
          show.disabled = false;
        }
      }
      dom.replace(
        planner,
        h('h2', { id: 'change-title' }, operation === 'rename' ? `Rename ${host}` : `Merge ${host} into another host`),
        h(
          'form',
          { class: 'add-token', onsubmit: ask },
          h(
            'div',
            { class: 'fields' },
            h(
              'div',
              { class: 'field' },
              h('label', { for: 'change-target' }, operation === 'rename' ? 'New name' : 'Into host'),
              target,
              h('small', { id: 'change-target-hint' }, hint),
            ),
          ),
          show,
          ' ',
          h('button', { type: 'button', onclick: () => { planner.hidden = true; } }, 'Cancel'),
        ),
        outcome,
      );
      planner.hidden = false;
      target.focus();
    }

    function send(operation, host, to, dryRun) {
      const body = operation === 'rename' ? { to, dry_run: dryRun } : { into: to, dry_run: dryRun };
      return api.sendJson('POST', path(host, operation), body).then(response => response.json());
    }

    /** The server's plan (or what it did), per bucket. */
    function drawPlan(outcome, report, proceed) {
      const rows = report.buckets.map(bucket =>
        h(
          'tr',
          {},
          h('th', { scope: 'row', 'data-label': 'Bucket' }, h('code', {}, bucket.from)),
          h('td', { 'data-label': 'Becomes' }, h('code', {}, bucket.to)),
          h('td', { 'data-label': 'How' }, bucket.action === 'merge' ? 'merged into it' : 'renamed'),
          h('td', { 'data-label': 'Events' }, bucket.events.toLocaleString('en')),
          h(
            'td',
            { 'data-label': 'Where both have data' },
            bucket.action === 'merge'
              ? `${bucket.moved.toLocaleString('en')} moved whole, ${bucket.cut.toLocaleString('en')} cut, ${bucket.dropped.toLocaleString('en')} dropped (${duration(bucket.overlap_seconds)} the other already had)`
              : 'kept as they are',
          ),
        ),
      );
      const verb = report.operation === 'rename' ? 'Rename' : 'Merge';
      dom.replace(
        outcome,
        h('h3', {}, report.dry_run ? `The plan: ${verb.toLowerCase()} ${report.from} ${report.operation === 'rename' ? 'to' : 'into'} ${report.to}` : `Done: ${report.from} is now ${report.to}`),
        h(
          'table',
          { class: 'tokens plan' },
          h('thead', {}, h('tr', {}, ['Bucket', 'Becomes', 'How', 'Events', 'Where both have data'].map(name => h('th', { scope: 'col' }, name)))),
          h('tbody', {}, rows),
        ),
        report.dry_run
          ? [
              h(
                'p',
                {},
                `Nothing has changed yet. A snapshot of the database is written first; afterwards “${report.from}” is an alias of “${report.to}”.`,
              ),
              h('button', { type: 'button', class: 'danger', onclick: proceed }, `${verb} now`),
            ]
          : h(
              'p',
              { role: 'status' },
              report.snapshot ? ['Snapshot before the change: ', h('code', {}, report.snapshot), '. '] : `No snapshot: ${report.snapshot_skipped}. `,
              `“${report.from}” is now an alias of “${report.to}”.`,
            ),
      );
    }

    async function confirm(outcome, operation, host, to) {
      for (const button of outcome.querySelectorAll('button')) button.disabled = true;
      outcome.append(h('p', { class: 'muted', role: 'status' }, 'Working…'));
      try {
        const done = await send(operation, host, to, false);
        if (!isCurrent()) return;
        drawPlan(outcome, done, () => {});
        outcome.focus();
        status.textContent = '';
      } catch (error) {
        if (isCurrent()) outcome.append(h('p', { class: 'error', role: 'alert' }, `The server refused: ${dom.why(error)}`));
      }
      await refresh();
    }

    // An alias made by hand: a name of a host that has no buckets of its own.
    const aliasName = h('input', { id: 'alias-name', required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'alias-name-hint' });
    const aliasHost = h('select', { id: 'alias-host' }, hosts.map(host => h('option', { value: host.host }, host.host)));
    async function addAlias(event) {
      event.preventDefault();
      const alias = aliasName.value.trim();
      status.textContent = '';
      try {
        await api.sendJson('PUT', path(alias, 'alias'), { host: aliasHost.value }).then(response => response.json());
        if (!isCurrent()) return;
        status.textContent = `“${alias}” now names ${aliasHost.value}.`;
        aliasName.value = '';
      } catch (error) {
        if (isCurrent()) status.textContent = `Could not add the alias: ${dom.why(error)}`;
      }
      await refresh();
    }

    drawList();
    main.replaceChildren(
      h(
        'div',
        { class: 'cards' },
        list,
        planner,
        admin && hosts.length
          ? h(
              'section',
              { class: 'card wide', 'aria-labelledby': 'alias-title' },
              h('h2', { id: 'alias-title' }, 'Add an alias'),
              h(
                'form',
                { class: 'add-token', onsubmit: addAlias },
                h(
                  'div',
                  { class: 'fields' },
                  h('div', { class: 'field' }, h('label', { for: 'alias-name' }, 'Alias'), aliasName, h('small', { id: 'alias-name-hint' }, 'Another name the machine answers to; it must have no buckets of its own.')),
                  h('div', { class: 'field' }, h('label', { for: 'alias-host' }, 'Host'), aliasHost),
                ),
                h('button', { type: 'submit', class: 'primary' }, 'Add alias'),
              ),
            )
          : null,
        admin ? null : h('p', { class: 'muted' }, `Renaming and merging hosts needs an admin token; this dashboard was opened with a ${who.scope} token.`),
        status,
      ),
    );
    return true;
  }

  /** "1 h 5 min", "40 s". */
  function duration(seconds) {
    const whole = Math.round(seconds);
    if (whole < 60) return `${whole} s`;
    const minutes = Math.round(whole / 60);
    return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  }

  return { render };
})();
