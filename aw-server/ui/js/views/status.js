// What the server does in the background and what it last did (`#/status`):
// sync through a shared folder and forwarding to a hub, snapshots,
// retention, the database file, and when each watcher last sent data.
// Each part says its state in words ("failed", "silent"), its times as
// "3 minutes ago" with the exact local time, and offers its action: sync
// now, take a snapshot, vacuum (after a confirmation: it rebuilds the file).
//
// Loaded when first opened (app.js, `LAZY`). Its requests are its own,
// made here with `api.get` and `api.send`; the answers are those of
// docs/API.md §3.9 (sync), §3.10 (retention, vacuum), §3.11 (snapshots),
// §3.12 (hub) and the database's status.

window.statusView = (() => {
  'use strict';

  const { h } = dom;
  const { span, ago, formatDateTime } = time;

  /** A watcher whose last data is older than this is silent, as on the Buckets page. */
  const SILENT_MS = 15 * 60 * 1000;

  /** What the page shows, by part: the GET answering it. */
  const SOURCES = {
    sync: '/api/0/sync/status',
    backup: '/api/0/backup/status',
    retention: '/api/0/retention/status',
    database: '/api/0/database/status',
    buckets: '/api/0/buckets/',
    devices: '/api/0/forward',
  };

  /** The columns of a pass's pulled files. */
  const PULLED = ['Device', 'File', 'New', 'Updated', 'Deleted', 'Already here', 'Dropped by privacy filters'];

  const MODES = {
    both: 'both: pull the other devices’ copies, then push this device’s',
    pull: 'pull: read the other devices’ copies only',
    push: 'push: write this device’s copy only',
  };

  async function render(main, _params, isCurrent) {
    const [who, answers] = await Promise.all([api.access(), loadAll()]);
    // A missing key or a scope that may not read is app.js's to explain.
    for (const answer of Object.values(answers)) {
      if (answer.error instanceof api.ApiError && [401, 403].includes(answer.error.status)) throw answer.error;
    }
    if (!isCurrent()) return false;
    // Reading needs a read token; the actions need an admin token.
    const admin = tokensView.mayManage(who);

    // After an action, every part is drawn again from fresh answers; the
    // actions and their messages stay, and so does the focus.
    const refresh = async () => {
      const fresh = await loadAll();
      if (isCurrent()) drawAll(fresh);
    };
    const parts = [
      syncPart(answers.sync, admin, refresh),
      hubPart(admin, refresh),
      devicesPart(),
      databasePart(admin, refresh),
      retentionPart(),
      backupPart(answers.database, admin, refresh),
      watchersPart(),
    ];
    const drawAll = fresh => {
      for (const part of parts) part.draw(fresh);
    };
    drawAll(answers);
    const reload = h(
      'button',
      { type: 'button', onclick: () => window.dispatchEvent(new HashChangeEvent('hashchange')) },
      'Reload',
    );
    main.replaceChildren(
      h('div', { class: 'heading-row status-head' }, h('h1', {}, 'Status'), reload),
      h(
        'p',
        { class: 'muted status-intro' },
        'What this server does in the background and what it last did, since it started. ',
        admin ? null : 'Running these needs an admin token; this dashboard was opened with a read token.',
      ),
      h('div', { class: 'cards status' }, parts.map(part => part.element)),
    );
    return true;
  }

  /** Every source's answer as `{value}` or `{error}`, each on its own. */
  async function loadAll() {
    const names = Object.keys(SOURCES);
    const settled = await Promise.allSettled(names.map(name => api.get(SOURCES[name])));
    return Object.fromEntries(
      names.map((name, index) => {
        const result = settled[index];
        return [name, result.status === 'fulfilled' ? { value: result.value } : { error: result.reason }];
      }),
    );
  }

  // The parts. Each is a card, `element`, and `draw(answers)`, which draws
  // its facts again (never its action, so the focus stays).

  function syncPart(first, admin, refresh) {
    const body = h('div');
    const configured = first.value && first.value.configured;
    const action =
      configured && admin
        ? actionArea({
            label: 'Sync now',
            hint: 'Runs a pass with the configured folder and mode now, whether or not the schedule is on.',
            busy: 'Syncing…',
            run: async () => {
              const mode = (first.value && first.value.mode) || 'both';
              const report = await postJson(`/api/0/sync/run?mode=${encodeURIComponent(mode)}`);
              return ['Synced: ', passSummary(report), '.'];
            },
            refresh,
            failed: 'The sync pass failed',
          })
        : null;
    const element = card('sync', 'Sync through a shared folder', body, action);
    return {
      element,
      draw(answers) {
        const answer = answers.sync;
        if (answer.error) return dom.replace(body, failedToLoad('the sync status', answer.error));
        const status = answer.value;
        if (!status.configured) return dom.replace(body, syncHowTo());
        const last = status.last_pass;
        dom.replace(
          body,
          facts(
            ['State', stateOf(status, 'a pass is running now')],
            [
              'Schedule',
              status.enabled
                ? `a pass every ${every(status.interval_seconds)}`
                : 'off: passes run only when asked for (enabled = false)',
            ],
            ['Next pass', status.next_pass ? when(status.next_pass) : 'none scheduled'],
            ['Folder', h('code', {}, status.folder)],
            ['Mode', MODES[status.mode] || status.mode],
            ['Buckets', status.buckets && status.buckets.length ? status.buckets.join(', ') : 'all'],
            ['Passes', `${count(status.passes)} finished, ${count(status.failures)} failed since the server started`],
            [
              'Last pass',
              last
                ? [when(last.finished), `, took ${milliseconds(last.duration_ms)}`]
                : 'none since the server started',
            ],
          ),
          lastError(status),
          last ? passDetails(last) : null,
        );
      },
    };
  }

  /** The `[sync]` section to add, for a server without one. */
  function syncHowTo() {
    return [
      h(
        'p',
        {},
        h('strong', {}, 'Not configured'),
        ': this server has no ',
        h('code', {}, '[sync]'),
        ' section in its config file.',
      ),
      h(
        'p',
        {},
        'To sync with your other devices through a folder that Syncthing, a cloud drive or another folder-sync tool ' +
          'keeps equal on each of them, add this to the server’s ',
        h('code', {}, 'config.toml'),
        ' with that folder, then restart the server:',
      ),
      h(
        'pre',
        { class: 'config' },
        h(
          'code',
          {},
          '[sync]\nenabled = true\nfolder = "/home/me/ActivityWatchSync"\n# seconds between passes\ninterval = 300\n' +
            'mode = "both"',
        ),
      ),
      h(
        'p',
        { class: 'muted' },
        'With enabled = false, passes run only when asked for: here, or with ',
        h('code', {}, 'aw-server sync'),
        '.',
      ),
    ];
  }

  /** What a pass pulled, file by file, what it did not read and why, and what it pushed. */
  function passDetails(pass) {
    const pull = pass.pull;
    const push = pass.push;
    const numberCell = (label, value) => h('td', { 'data-label': label, class: 'number' }, count(value));
    return h(
      'div',
      { class: 'pass' },
      h('h3', {}, 'Last pass'),
      pass.buckets ? h('p', {}, `Limited to the buckets ${pass.buckets.join(', ')}.`) : null,
      pass.start ? h('p', {}, 'Events that ended before ', when(pass.start), ' left out.') : null,
      pull === null || pull === undefined
        ? null
        : pull.sources.length === 0
          ? h('p', { class: 'empty' }, 'Pulled nothing: no other device’s copy in the folder was read.')
          : h(
              'table',
              { class: 'status-table pulled' },
              h('caption', {}, `Pulled from ${counted(pull.sources.length, 'device')}`),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  PULLED.map(name => h('th', { scope: 'col' }, name)),
                ),
              ),
              h(
                'tbody',
                {},
                pull.sources.map(source =>
                  h(
                    'tr',
                    {},
                    h('th', { scope: 'row', 'data-label': 'Device' }, h('code', {}, source.device)),
                    h('td', { 'data-label': 'File' }, h('code', {}, source.file)),
                    numberCell('New', source.inserted),
                    numberCell('Updated', source.updated),
                    numberCell('Deleted', source.deleted),
                    numberCell('Already here', source.skipped),
                    numberCell('Dropped by privacy filters', source.dropped),
                  ),
                ),
              ),
            ),
      pull && pull.skipped.length
        ? h(
            'div',
            { class: 'skipped' },
            h('p', {}, `Not read, ${counted(pull.skipped.length, 'file')} (tried again on the next pass):`),
            h('ul', {}, pull.skipped.map(skipped => h('li', {}, h('code', {}, skipped.name), ': ', skipped.reason))),
          )
        : null,
      push
        ? h(
            'p',
            { class: 'pushed' },
            `Pushed ${counted(push.buckets, 'bucket')} to `,
            h('code', {}, push.file),
            `: ${counted(push.written, 'event')} written, ${count(push.deleted)} deleted.`,
          )
        : null,
    );
  }

  /** One line for a pass just made: counts pulled and pushed. */
  function passSummary(pass) {
    const parts = [];
    if (pass.pull) {
      const inserted = pass.pull.sources.reduce((sum, source) => sum + source.inserted, 0);
      const files = pass.pull.sources.length;
      parts.push(`${counted(inserted, 'new event')} from ${counted(files, 'device')}`);
      if (pass.pull.skipped.length) parts.push(`${counted(pass.pull.skipped.length, 'file')} not read`);
    }
    if (pass.push) parts.push(`${counted(pass.push.written, 'event')} pushed`);
    return parts.join(', ');
  }

  /** Forwarding to a hub (`hub` of the sync status), shown when configured. */
  function hubPart(admin, refresh) {
    const body = h('div');
    const action = admin
      ? actionArea({
          label: 'Forward now',
          hint: 'Sends what is new to the hub now; after the hub refused the token, tries again.',
          busy: 'Forwarding…',
          run: async () => {
            const pass = await postJson('/api/0/sync/run?mode=hub');
            return [`Forwarded: ${counted(pass.sent, 'new event')} sent in ${counted(pass.chunks, 'chunk')}.`];
          },
          refresh,
          failed: 'Forwarding failed',
        })
      : null;
    const element = card('hub', 'Forwarding to a hub', body, action);
    return {
      element,
      draw(answers) {
        const hub = answers.sync.value && answers.sync.value.hub;
        element.hidden = !hub;
        if (!hub) return;
        const last = hub.last_pass;
        dom.replace(
          body,
          facts(
            ['State', hub.stopped ? problem('stopped') : stateOf(hub, 'a pass is running now')],
            hub.stopped ? ['Why', hub.stopped] : null,
            ['Hub', h('code', {}, hub.url)],
            ['Schedule', `a pass every ${every(hub.interval_seconds)}`],
            ['Next pass', hub.next_pass && !hub.stopped ? when(hub.next_pass) : 'none scheduled'],
            ['Passes', `${count(hub.passes)} finished, ${count(hub.failures)} failed since the server started`],
            [
              'Last pass',
              last
                ? [
                    when(last.finished),
                    `, took ${milliseconds(last.duration_ms)}: ${counted(last.buckets, 'bucket')}, ` +
                      `${counted(last.sent, 'new event')} sent, ${count(last.compared)} compared, ` +
                      `${counted(last.chunks, 'chunk')}, ${counted(last.forgotten, 'deleted bucket')} forgotten`,
                  ]
                : 'none since the server started',
            ],
            ...(last && last.skipped ? last.skipped : []).map(skipped => [
              problem('Skipped'),
              [h('code', {}, skipped.bucket), `: ${skipped.reason}`],
            ]),
          ),
          lastError(hub),
        );
      },
    };
  }

  /** Healthy or damaged, and a salvage at this start, in words. */
  function databaseState(database) {
    if (!database.healthy) return problem('damaged: see the notice above');
    if (!database.salvage) return 'healthy';
    return [
      'healthy: salvaged at this start from a damaged file, kept at ',
      h('code', {}, database.salvage.damaged),
      ' (see the notice above)',
    ];
  }

  /** The devices that forward to this server (as a hub), shown when there are any. */
  function devicesPart() {
    const body = h('div');
    const element = card('devices', 'Devices forwarding here', body, null);
    return {
      element,
      draw(answers) {
        const answer = answers.devices;
        const devices = answer.value || [];
        element.hidden = !answer.error && devices.length === 0;
        if (answer.error) return dom.replace(body, failedToLoad('the forwarding devices', answer.error));
        dom.replace(
          body,
          h(
            'table',
            { class: 'status-table devices' },
            h('caption', {}, `${counted(devices.length, 'device')} forward their buckets to this server`),
            h(
              'thead',
              {},
              h('tr', {}, ['Device', 'Hosts', 'Buckets', 'Last received'].map(name => h('th', { scope: 'col' }, name))),
            ),
            h(
              'tbody',
              {},
              devices.map(device =>
                h(
                  'tr',
                  {},
                  h('th', { scope: 'row', 'data-label': 'Device' }, h('code', {}, device.device)),
                  h('td', { 'data-label': 'Hosts' }, device.hosts.join(', ') || '–'),
                  h('td', { 'data-label': 'Buckets' }, device.buckets.map(bucket => bucket.target).join(', ')),
                  h('td', { 'data-label': 'Last received' }, device.received ? when(device.received) : 'never'),
                ),
              ),
            ),
          ),
        );
      },
    };
  }

  // The answers of finished periods kept in memory (docs/API.md §3.6).
  function cacheState(cache) {
    return [
      dom.count(cache.entries, 'answer'),
      ', ',
      bytes(cache.bytes, 'cache'),
      ' of ',
      bytes(cache.max_bytes, 'cache-limit'),
      h(
        'span',
        { class: 'muted' },
        `; ${dom.count(cache.hits, 'hit')}, ${count(cache.misses)} ${cache.misses === 1 ? 'miss' : 'misses'} since the start`,
      ),
    ];
  }

  function prewarmState(prewarm) {
    if (!prewarm.finished) return `computing the days asked for before: ${prewarm.done} of ${prewarm.total}`;
    if (prewarm.total === 0) return 'nothing remembered from before';
    return `${dom.count(prewarm.total, 'period')} asked for before computed again, in ${prewarm.cpu_seconds.toFixed(1)} s of CPU`;
  }

  function databasePart(admin, refresh) {
    const body = h('div');
    let latest = null;
    const action = admin
      ? actionArea({
          label: 'Vacuum',
          hint: null,
          busy: 'Vacuuming: writes wait until it is done…',
          confirm: () => {
            const database = latest || {};
            return [
              'Vacuum now? It rebuilds the database file: the watchers’ writes wait while it runs, ' +
                'and it needs free disk space about the file’s size',
              known(database.size) ? [' (', bytes(database.size), ')'] : '',
              '.',
              known(database.reclaimable) ? [' It gives back about ', bytes(database.reclaimable), '.'] : '',
              ' ',
            ];
          },
          confirmLabel: 'Yes, vacuum',
          run: async () => {
            const answer = await postJson('/api/0/vacuum');
            const given = answer.size_before - answer.size_after;
            return [
              'Vacuumed: ',
              bytes(answer.size_before, 'size-before'),
              ' before, ',
              bytes(answer.size_after, 'size-after'),
              ' after (',
              bytes(Math.max(0, given)),
              ' given back).',
            ];
          },
          refresh,
          failed: 'The vacuum failed',
        })
      : null;
    const element = card('database', 'The database', body, action, true);
    return {
      element,
      draw(answers) {
        const answer = answers.database;
        if (answer.error) return dom.replace(body, failedToLoad('the database status', answer.error));
        const database = (latest = answer.value);
        dom.replace(
          body,
          facts(
            ['State', databaseState(database)],
            ['File', h('code', {}, database.path)],
            known(database.size)
              ? ['Size', [bytes(database.size, 'size'), h('span', { class: 'muted' }, ' with its write-ahead log')]]
              : null,
            known(database.reclaimable)
              ? [
                  'Reclaimable',
                  [bytes(database.reclaimable, 'reclaimable'), h('span', { class: 'muted' }, ' a vacuum would give back')],
                ]
              : null,
            database.cache ? ['Cache', cacheState(database.cache)] : ['Cache', 'off'],
            database.cache && database.cache.prewarm.enabled ? ['Pre-warm', prewarmState(database.cache.prewarm)] : null,
          ),
          admin
            ? h(
                'p',
                { class: 'muted' },
                'A vacuum gives the space of deleted events back to the file system by rebuilding the file. ' +
                  'Deleting a range, applying privacy rules and retention give most of it back by themselves.',
              )
            : null,
        );
      },
    };
  }

  function retentionPart() {
    const body = h('div');
    const element = card('retention', 'Retention', body, null, true);
    return {
      element,
      draw(answers) {
        const answer = answers.retention;
        if (answer.error) return dom.replace(body, failedToLoad('the retention status', answer.error));
        const retention = answer.value;
        if (!retention.enabled) {
          return dom.replace(
            body,
            h('p', {}, h('strong', {}, 'Off'), ': every event is kept.'),
            h(
              'p',
              {},
              'To delete events that ended more than some days ago (at start and once a day), ' +
                'add this to the server’s ',
              h('code', {}, 'config.toml'),
              ' and restart it:',
            ),
            h('pre', { class: 'config' }, h('code', {}, '[retention]\nkeep_days = 365')),
          );
        }
        const run = retention.last_run;
        dom.replace(
          body,
          h(
            'p',
            {},
            `Events that ended more than ${counted(retention.keep_days, 'day')} ago are deleted, ` +
              'when the server starts and once a day.',
          ),
          facts(
            ['State', stateOf({ ...retention, last_pass: run }, 'a run is going on now')],
            [
              'Last run',
              run
                ? [
                    when(run.finished),
                    `: deleted ${counted(run.deleted, 'event')} that ended before `,
                    exact(run.cutoff),
                  ]
                : 'none since the server started',
            ],
            ['Next run', retention.next_run ? when(retention.next_run) : 'none scheduled'],
          ),
          lastError(retention),
        );
      },
    };
  }

  function backupPart(firstDatabase, admin, refresh) {
    const body = h('div');
    const size = firstDatabase.value && firstDatabase.value.size;
    const action = admin
      ? actionArea({
          label: 'Take a snapshot now',
          hint: [
            'Writes a consistent copy of the database',
            known(size) ? [' (about ', bytes(size), ')'] : '',
            ' into the folder while the server goes on serving.',
          ],
          busy: 'Writing the snapshot…',
          run: async () => {
            const snapshot = await postJson('/api/0/backup');
            return [
              'Snapshot written: ',
              h('code', {}, baseName(snapshot.path)),
              ', ',
              bytes(snapshot.bytes),
              `, in ${milliseconds(snapshot.duration_ms)}.`,
              snapshot.removed && snapshot.removed.length
                ? ` Rotation removed ${snapshot.removed.map(baseName).join(', ')}.`
                : '',
            ];
          },
          refresh,
          failed: 'The snapshot failed',
        })
      : null;
    const element = card('backup', 'Snapshots of the database', body, action);
    return {
      element,
      draw(answers) {
        const answer = answers.backup;
        if (answer.error) return dom.replace(body, failedToLoad('the snapshots', answer.error));
        const backup = answer.value;
        const last = backup.last;
        const snapshots = [...backup.snapshots].reverse();
        dom.replace(
          body,
          facts(
            ['Folder', h('code', {}, backup.dir)],
            [
              'Schedule',
              backup.enabled
                ? `a snapshot every ${every(backup.interval_seconds)}; after each, the newest of each of the last ` +
                  `${counted(backup.keep_daily, 'day')} and ${counted(backup.keep_weekly, 'week')} stay, ` +
                  'and older snapshots are removed'
                : [
                    'off: snapshots only when asked for (',
                    h('code', {}, '[backup] enabled = true'),
                    ' in config.toml turns it on)',
                  ],
            ],
            backup.enabled ? ['Next', backup.next ? when(backup.next) : 'none scheduled'] : null,
            backup.running ? ['State', 'a snapshot is being written now'] : null,
            [
              'Last',
              last
                ? [
                    last.outcome === 'ok' ? 'ok' : problem('failed'),
                    ', ',
                    when(last.time),
                    last.scheduled ? ', scheduled' : ', asked for',
                    last.bytes ? [', ', bytes(last.bytes)] : '',
                    last.error ? `: ${last.error}` : '',
                    last.removed && last.removed.length ? `; removed ${last.removed.map(baseName).join(', ')}` : '',
                  ]
                : 'none since the server started',
            ],
          ),
          snapshots.length === 0
            ? h('p', { class: 'empty' }, 'No snapshots in the folder yet.')
            : h(
                'table',
                { class: 'status-table snapshots' },
                h('caption', {}, `${counted(snapshots.length, 'snapshot')} in the folder, newest first`),
                h(
                  'thead',
                  {},
                  h('tr', {}, ['File', 'Taken', 'Kind', 'Size'].map(name => h('th', { scope: 'col' }, name))),
                ),
                h(
                  'tbody',
                  {},
                  snapshots.map(snapshot =>
                    h(
                      'tr',
                      {},
                      h('th', { scope: 'row', 'data-label': 'File' }, h('code', {}, baseName(snapshot.path))),
                      h('td', { 'data-label': 'Taken' }, when(snapshot.time)),
                      h('td', { 'data-label': 'Kind' }, snapshot.manual ? 'asked for' : 'scheduled'),
                      h('td', { 'data-label': 'Size', class: 'number' }, bytes(snapshot.bytes)),
                    ),
                  ),
                ),
              ),
          admin
            ? h(
                'p',
                { class: 'muted' },
                `A snapshot taken here is kept apart from the scheduled ones: the newest ` +
                  `${counted(backup.keep_manual, 'snapshot')} asked for stay.`,
              )
            : null,
        );
      },
    };
  }

  /** Every bucket with when it last got data, the silent ones first. */
  function watchersPart() {
    const body = h('div');
    const element = card('watchers', 'Watchers', body, null);
    return {
      element,
      draw(answers) {
        const answer = answers.buckets;
        if (answer.error) return dom.replace(body, failedToLoad('the buckets', answer.error));
        const now = Date.now();
        const rows = Object.values(answer.value)
          .map(bucket => {
            const last = bucket.metadata && bucket.metadata.end;
            return { bucket, last, at: last ? new Date(last).getTime() : -Infinity };
          })
          // Never sent data, then the longest silent; the id breaks ties.
          .sort((a, b) => a.at - b.at || a.bucket.id.localeCompare(b.bucket.id));
        dom.replace(
          body,
          h(
            'p',
            { class: 'muted' },
            'When each bucket last got data, the silent ones first: a watcher that stopped sending ' +
              'for more than 15 minutes is marked silent. Counts and exports are on the ',
            h('a', { href: '#/buckets' }, 'Buckets page'),
            '.',
          ),
          rows.length === 0
            ? h('p', { class: 'empty' }, 'No buckets yet: no watcher has sent data to this server.')
            : h(
                'table',
                { class: 'status-table watchers' },
                h(
                  'thead',
                  {},
                  h('tr', {}, ['Bucket', 'Host', 'Last data', 'State'].map(name => h('th', { scope: 'col' }, name))),
                ),
                h(
                  'tbody',
                  {},
                  rows.map(({ bucket, last, at }) => {
                    const state = !last ? 'no data' : now - at > SILENT_MS ? 'silent' : 'sending';
                    return h(
                      'tr',
                      { class: state === 'sending' ? null : 'stale' },
                      h('th', { scope: 'row', 'data-label': 'Bucket' }, h('code', {}, bucket.id)),
                      h('td', { 'data-label': 'Host' }, bucket.hostname),
                      h('td', { 'data-label': 'Last data' }, last ? when(last) : 'never'),
                      h('td', { 'data-label': 'State', class: 'state' }, state),
                    );
                  }),
                ),
              ),
        );
      },
    };
  }

  // Building blocks.

  /**
   * A card: its heading, the facts `body` and, if any, its action below;
   * `half` ones share a row from tablets up.
   */
  function card(name, title, body, action, half = false) {
    return h(
      'section',
      { class: `card ${half ? '' : 'wide '}status-${name}`, 'aria-labelledby': `status-${name}-title` },
      h('h2', { id: `status-${name}-title` }, title),
      body,
      action ? action.element : null,
    );
  }

  /**
   * A button, what it does, and where its outcome is said. With `confirm`
   * it asks first, in the page: the question, "Yes" and "Cancel". `run`
   * answers the outcome to show; `refresh` draws the page again after it,
   * failed or not (it never throws: a part whose status could not be read
   * says so in its card).
   */
  function actionArea({ label, hint, busy, confirm, confirmLabel, run, refresh, failed }) {
    const controls = h('div', { class: 'action-controls' });
    const message = h('p', { class: 'action-message', role: 'status' });
    const element = h('div', { class: 'action' }, hint ? h('p', { class: 'muted' }, hint) : null, controls, message);

    function idle(focus) {
      const button = h(
        'button',
        { type: 'button', class: confirm ? 'danger' : 'primary', onclick: confirm ? ask : go },
        label,
      );
      dom.replace(controls, button);
      if (focus) button.focus();
    }

    function ask() {
      message.replaceChildren();
      const yes = h('button', { type: 'button', class: 'danger', onclick: go }, confirmLabel);
      dom.replace(
        controls,
        h('p', { class: 'confirm' }, confirm()),
        h(
          'div',
          { class: 'confirm-buttons' },
          yes,
          h('button', { type: 'button', onclick: () => idle(true) }, 'Cancel'),
        ),
      );
      yes.focus();
    }

    async function go() {
      const hadFocus = controls.contains(document.activeElement);
      for (const button of controls.querySelectorAll('button')) button.disabled = true;
      message.className = 'action-message';
      dom.replace(message, busy);
      let outcome;
      let failure = null;
      try {
        outcome = await run();
      } catch (error) {
        failure = error;
      }
      // The outcome is said once the page shows what it changed.
      await refresh();
      message.className = failure ? 'action-message problem' : 'action-message done';
      if (failure) dom.replace(message, h('strong', {}, failed), `: ${failure.message}`);
      else dom.replace(message, outcome);
      idle(hadFocus);
    }

    idle(false);
    return { element };
  }

  /** POSTs to `path` with no body; answers the JSON answer. */
  async function postJson(path) {
    return (await api.send(path, { method: 'POST' })).json();
  }

  /** A definition list of `[name, value]` rows; null rows are left out. */
  function facts(...rows) {
    return h(
      'dl',
      { class: 'facts' },
      rows.filter(Boolean).map(([name, value]) => [h('dt', {}, name), h('dd', {}, value)]),
    );
  }

  /** "ok", "failed" or what runs, in words. */
  function stateOf(status, runningText) {
    if (status.running) return runningText;
    if (status.last_error) return problem('failed');
    if (status.last_pass) return 'ok';
    return 'nothing run since the server started';
  }

  /** A state that needs attention, said in a word and shown in the warning colour. */
  function problem(text) {
    return h('strong', { class: 'problem' }, text);
  }

  /** The last failure, if the last pass failed. */
  function lastError(status) {
    if (!status.last_error) return null;
    return h(
      'p',
      { class: 'problem' },
      h('strong', {}, 'Failed'),
      status.last_error_at ? [' ', when(status.last_error_at)] : '',
      `: ${status.last_error}`,
    );
  }

  function failedToLoad(what, error) {
    return h('p', { class: 'problem' }, h('strong', {}, 'Could not load'), ` ${what}: ${error.message}`);
  }

  /** "3 minutes ago (28 Nov 2026, 14:05)", exact in `datetime`. */
  function when(timestamp) {
    const date = new Date(timestamp);
    return h('time', { datetime: date.toISOString() }, `${relative(date)} (${formatDateTime(date)})`);
  }

  /** "28 Nov 2026, 14:05", exact in `datetime`. */
  function exact(timestamp) {
    const date = new Date(timestamp);
    return h('time', { datetime: date.toISOString() }, formatDateTime(date));
  }

  /** "3 minutes ago", or "in 5 minutes" for a time to come. */
  function relative(date, now = Date.now()) {
    const seconds = Math.round((date.getTime() - now) / 1000);
    if (seconds <= 0) return ago(date, now);
    if (seconds < 60) return 'in less than a minute';
    return `in ${span(seconds, count)}`;
  }

  /** "minute", "5 minutes", "24 hours", "3 days", "90 seconds": an interval of the config, in seconds. */
  function every(seconds) {
    const whole = (size, name) => (seconds === size ? name : `${count(seconds / size)} ${name}s`);
    if (seconds >= 2 * 86400 && seconds % 86400 === 0) return whole(86400, 'day');
    if (seconds >= 3600 && seconds % 3600 === 0) return whole(3600, 'hour');
    if (seconds >= 60 && seconds % 60 === 0) return whole(60, 'minute');
    return whole(1, 'second');
  }

  /** "41 ms", "1.5 s". */
  function milliseconds(value) {
    return value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(1)} s`;
  }

  /**
   * "4.2 MB" (powers of 1000, as disks are sold), exact in `<data value>`;
   * `name` marks it for reading back (`data-size`).
   */
  function bytes(value, name) {
    const units = ['kB', 'MB', 'GB', 'TB'];
    let text = `${count(value)} B`;
    let scaled = value;
    for (const unit of units) {
      if (scaled < 1000) break;
      scaled /= 1000;
      text = `${scaled < 10 ? scaled.toFixed(1) : Math.round(scaled)} ${unit}`;
    }
    return h('data', { value, 'data-size': name || null }, text);
  }

  /** Whether the server gave a value (`reclaimable` is null when it could not count it). */
  const known = value => value !== undefined && value !== null;
  /** "1,234". */
  const count = value => Number(value).toLocaleString('en');
  /** "1 event", "3 new events". */
  const counted = (value, words) => `${count(value)} ${value === 1 ? words : `${words}s`}`;
  const baseName = path => String(path).split(/[\\/]/).pop();

  return { render };
})();
