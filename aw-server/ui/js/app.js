// The entry point: reads the API key from the address, routes `#/...`
// addresses to views and handles the keyboard shortcuts.
//
// Routes: `#/activity/<host>/<day|week|month>/<YYYY-MM-DD>` (every part
// optional; host `*` is all devices), `#/search/<period>/<text>`,
// `#/categories`, `#/privacy`, `#/status`, `#/hosts`, `#/alerts`, `#/buckets`, `#/tokens` (linked
// for admins only), `#/groups[/<YYYY-MM-DD>]` (linked on a server that hosts several people),
// `#/people` (linked for the server administrator of a server that hosts several people),
// `#/about`.
//
// It is the last of the dashboard's scripts, which index.html lists in
// order; each file defines one name (`api`, `dom`, `activityView`...) that
// the later ones use. The server's build joins them into the one file it
// serves (aw-server/src/ui_scripts.rs), so the first view's requests start
// as soon as that file has arrived. The managing pages are not listed
// there: each is a script of its own under js/views/ (with any script
// only it uses, such as category-edits.js), loaded the first time its
// route is opened (`LAZY`), so the first view's figure does not grow with
// them.

(() => {
  'use strict';

  const { h } = dom;

  const VIEWS = {
    activity: activityView,
    buckets: bucketsView,
    tokens: tokensView,
    search: searchView,
    about: aboutView,
  };

  /**
   * Views loaded when first opened: route → [scripts, the name the last
   * defines]. The scripts run in order, as the listed ones do (classic
   * scripts, one global scope), after all of them; an earlier one holds
   * what only its view uses (category-edits.js, the Categories page's
   * editor and preview). The last defines its view as a property of
   * `window` (`window.statusView = ...`): a top-level `const` of a script
   * is not one, and the policy forbids `eval`.
   */
  const LAZY = {
    categories: [
      ['js/category-edits.js', 'js/views/category-editor.js', 'js/views/category-preview.js', 'js/views/categories.js'],
      'categoriesView',
    ],
    privacy: [['js/views/privacy.js'], 'privacyView'],
    status: [['js/views/status.js'], 'statusView'],
    hosts: [['js/views/hosts.js'], 'hostsView'],
    alerts: [['js/views/alerts.js'], 'alertsView'],
    groups: [['js/views/groups.js'], 'groupsView'],
    people: [['js/views/people.js'], 'peopleView'],
  };

  /** The style sheet of the lazy views (and the day view's range form). */
  const MANAGE_CSS = 'css/manage.css';

  /** The view of route `name`, loading its scripts first if it is lazy. */
  async function viewOf(name) {
    if (VIEWS[name]) return VIEWS[name];
    const [paths, global] = LAZY[name];
    await dom.stylesheet(MANAGE_CSS);
    for (const path of paths) await dom.script(path);
    VIEWS[name] = window[global];
    return VIEWS[name];
  }

  let generation = 0;

  function parseRoute() {
    const parts = location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter(Boolean)
      .map(part => {
        try {
          return decodeURIComponent(part);
        } catch {
          return part;
        }
      });
    const name = VIEWS[parts[0]] || LAZY[parts[0]] ? parts[0] : 'activity';
    return { name, params: parts.slice(1) };
  }

  async function show() {
    const current = ++generation;
    const isCurrent = () => current === generation;
    const { name, params } = parseRoute();
    const main = document.getElementById('main');
    for (const link of document.querySelectorAll('[data-nav]')) {
      link.toggleAttribute('aria-current', link.dataset.nav === name);
      if (link.dataset.nav === name) link.setAttribute('aria-current', 'page');
    }
    main.setAttribute('aria-busy', 'true');
    try {
      const view = await viewOf(name);
      if (!isCurrent()) return;
      if (await view.render(main, params, isCurrent)) {
        document.title = `${main.querySelector('h1')?.textContent || name} · ActivityWatch`;
        // Read by the browser tests and the draw-time benchmark; the
        // benchmark takes when the headings were painted (Element Timing).
        for (const heading of main.querySelectorAll('h1, h2')) heading.setAttribute('elementtiming', 'aw-view');
        performance.mark('aw-drawn');
        document.body.dataset.drawn = `${name}:${current}`;
        window.awDrawnAt = performance.now();
      }
    } catch (error) {
      if (!isCurrent()) return;
      // A refusal for the key's scope is explained by what the key is.
      const forbidden = error instanceof api.ApiError && error.status === 403;
      const who = forbidden ? await api.access().catch(() => null) : null;
      if (!isCurrent()) return;
      main.replaceChildren(errorBox(error, who));
      document.body.dataset.drawn = `error:${current}`;
    } finally {
      if (isCurrent()) main.removeAttribute('aria-busy');
    }
  }

  /** The error of a view; `who` is `api.access()` after a 403, if known. */
  function errorBox(error, who) {
    const status = error instanceof api.ApiError ? error.status : null;
    const howToGiveKey = kind =>
      h(
        'p',
        {},
        `Open the dashboard with ${kind} in the address, as `,
        h('code', {}, `${location.origin}/?token=KEY`),
        '; it is kept for this browser tab only.',
      );
    if (status === 403) {
      // A write token is for watchers: reading the data may be refused too.
      const watcherToken = who && who.scope === 'write';
      if (who && who.scope === 'server') {
        return h(
          'section',
          { class: 'card notice', role: 'alert' },
          h('h1', {}, 'This is the server administrator’s key'),
          h('p', {}, 'It manages the people this server hosts and reads none of their data. ', h('a', { href: '#/people' }, 'See the people'), '.'),
        );
      }
      return h(
        'section',
        { class: 'card notice error', role: 'alert' },
        h('h1', {}, watcherToken ? 'A write token cannot open the dashboard' : 'This needs an admin token'),
        h('p', {}, error.message),
        watcherToken
          ? h(
              'p',
              {},
              'Write tokens are for watchers sending data. The dashboard needs a read token to show ' +
                'the data, or an admin token to manage the server as well.',
            )
          : null,
        howToGiveKey(watcherToken ? 'a read or admin token' : 'an admin token'),
      );
    }
    const needsKey = status === 401;
    return h(
      'section',
      { class: 'card notice error', role: 'alert' },
      h('h1', {}, needsKey ? 'This server needs an API key' : 'Could not load the data'),
      h('p', {}, error.message),
      needsKey ? howToGiveKey('the key') : null,
    );
  }

  /** Shows the links the key may follow; answers who it is (null: unknown). */
  async function navigation() {
    let who;
    try {
      who = await api.access();
    } catch {
      return null; // Said by the views' own errors, if it matters.
    }
    document.querySelector('[data-nav="tokens"]').hidden = !tokensView.mayManage(who);
    // Groups are for a server that hosts several people: the key names one.
    document.querySelector('[data-nav="groups"]').hidden = !who.user;
    // People are the server administrator's, who reads nobody's data.
    document.querySelector('[data-nav="people"]').hidden = who.scope !== 'server';
    return who;
  }

  /** Shortcuts: ← and → step through periods, d / w / m pick one, t is today. */
  function onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && target.closest('input, select, textarea, button')) return;
    const click = selector => {
      const element = document.querySelector(selector);
      if (element) {
        event.preventDefault();
        element.click();
      }
    };
    if (event.key === 'ArrowLeft') click('#previous');
    else if (event.key === 'ArrowRight') click('#next');
    else if (event.key === 't') click('.stepper .today');
    else if (['d', 'w', 'm'].includes(event.key)) click(`.kinds [data-key="${event.key}"]`);
  }

  async function footer() {
    const element = document.getElementById('footer');
    try {
      const info = await api.info();
      element.replaceChildren(
        `aw-server ${info.version} on ${info.hostname}`,
        info.testing ? ' (testing)' : '',
        ' · ',
        h('a', { href: '#/about' }, 'About'),
        ' · ',
        h('a', { href: '/api/0/info' }, 'API'),
      );
    } catch {
      element.replaceChildren(h('a', { href: '#/about' }, 'About'));
    }
  }

  /**
   * A banner above the views when the database file was found damaged:
   * salvaged at this start (what came back, where the damaged file is), or
   * damaged while serving (new data is not saved until a restart).
   */
  async function databaseNotice() {
    let status;
    try {
      status = await api.database();
    } catch {
      return; // Said by the views' own errors, if it matters.
    }
    if (status.healthy && !status.salvage) return;
    const parts = [];
    if (status.damage) {
      parts.push(
        h('h2', {}, 'The database file is damaged'),
        h('p', {}, `New data is not being saved. Restart the server to salvage what can still be read, or restore a snapshot. (${status.damage})`),
      );
    }
    const salvage = status.salvage;
    if (salvage) {
      const listed = salvage.buckets.every(bucket => bucket.claimed !== null)
        ? salvage.buckets.reduce((sum, bucket) => sum + bucket.claimed, 0)
        : null;
      parts.push(
        h('h2', {}, 'The database was damaged and has been salvaged'),
        h(
          'p',
          {},
          `${salvage.events.toLocaleString('en')} events came back`,
          listed === null ? '' : ` of the ${listed.toLocaleString('en')} the damaged file listed`,
          '. The damaged file is kept at ',
          h('code', {}, salvage.damaged),
          '. A snapshot may hold more: ',
          h('code', {}, 'aw-server backup --list'),
          ', then ',
          h('code', {}, 'aw-server restore FILE'),
          ' with the server stopped.',
        ),
      );
    }
    const banner = h('section', { id: 'database-notice', class: 'card notice error', role: 'alert' }, ...parts);
    document.getElementById('database-notice')?.remove();
    document.getElementById('main').before(banner);
  }

  api.loadToken();
  // The two answers an activity view needs before it can ask for its summary.
  // Without an API key the server has the browser preload them with the
  // page (its `Link` header), and these requests take the preloaded
  // answers; every view takes them, or the browser warns of unused preloads.
  // (Not for the People page: the server administrator's key reads neither.)
  if (parseRoute().name !== 'people') api.prefetch(['/api/0/settings', '/api/0/buckets/']);
  window.addEventListener('hashchange', show);
  document.addEventListener('keydown', onKey);
  // The footer, what the key may do and the database's status wait for
  // the first view, whose requests matter more; the server administrator
  // holds no data, so has no database to be told about.
  show().finally(async () => {
    footer();
    const who = await navigation();
    if (who?.scope !== 'server') databaseNotice();
  });
})();
