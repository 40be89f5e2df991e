// The server's API tokens (`#/tokens`), for an admin: each token's name,
// scope, hosts and dates; a form to add one, whose value is shown once;
// and revoking one. The list never holds a token's value: the server
// gives it only in the answer that created the token.
//
// Anyone else is told that managing tokens needs an admin token, without
// asking for the list (the server would refuse it with a 403).

const tokensView = (() => {
  'use strict';

  const { h } = dom;
  const { ago, formatDateTime } = time;

  /** The scopes a token may have, as the form offers them. */
  const SCOPES = [
    ['read', 'Read: sees all data and runs queries'],
    ['write', 'Write: watchers of the listed hosts send data'],
    ['admin', 'Admin: everything, tokens included'],
  ];

  /** Token names the server takes (it checks them too). */
  const NAME_PATTERN = '[A-Za-z0-9._\\-]+';

  /**
   * Whether `who` (`api.access()`) may manage tokens: an admin token or
   * the config's API key, or anyone on a server without credentials.
   */
  const mayManage = who => !who.authenticated || who.scope === 'admin';

  async function render(main, _params, isCurrent) {
    const who = await api.access();
    if (!isCurrent()) return false;
    if (!mayManage(who)) {
      main.replaceChildren(needsAdmin(who));
      return true;
    }
    const tokens = await api.tokens();
    if (!isCurrent()) return false;

    // A server without credentials is open to anyone; its first token
    // closes it, to this dashboard too.
    const wasOpen = !who.authenticated;
    const list = h('section', { class: 'card wide', 'aria-labelledby': 'tokens-title' });
    const status = h('p', { class: 'muted', role: 'status' });
    const created = h('div');
    // The token whose value `created` shows, to hide it once revoked.
    let shown = null;

    async function refresh() {
      try {
        const fresh = await api.tokens();
        if (isCurrent()) drawList(fresh);
      } catch (error) {
        if (!isCurrent()) return;
        status.textContent =
          error instanceof api.ApiError && error.status === 401
            ? `Open this dashboard with an admin token to go on (the server answered: ${error.message}).`
            : `Could not reload the tokens: ${error.message}`;
      }
    }

    function drawList(all) {
      dom.replace(
        list,
        h('h1', { id: 'tokens-title' }, `API tokens (${all.length})`),
        h(
          'p',
          { class: 'muted' },
          'Clients send a token as the header ',
          h('code', {}, 'Authorization: Bearer TOKEN'),
          '. A read token sees all data, a write token lets the watchers of its hosts send data, ' +
            'an admin token may do everything; the API key of the config file is an admin token too.',
        ),
        all.length === 0
          ? h('p', { class: 'empty' }, 'No tokens yet.')
          : h(
              'table',
              { class: 'tokens' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Name', 'Scope', 'Hosts', 'Created', 'Last used', 'Expires', ''].map(name =>
                    h('th', { scope: 'col' }, name),
                  ),
                ),
              ),
              h('tbody', {}, all.map(row)),
            ),
      );
    }

    function row(token) {
      const expired = token.expires && new Date(token.expires).getTime() <= Date.now();
      return h(
        'tr',
        { class: expired ? 'stale' : null },
        h('th', { scope: 'row', 'data-label': 'Name' }, h('code', {}, token.name)),
        h('td', { 'data-label': 'Scope' }, token.scope),
        h('td', { 'data-label': 'Hosts' }, token.hosts.length ? token.hosts.join(', ') : '–'),
        h('td', { 'data-label': 'Created' }, dateTime(token.created)),
        h(
          'td',
          { 'data-label': 'Last used' },
          token.last_used
            ? h('time', { datetime: token.last_used, title: formatDateTime(new Date(token.last_used)) }, ago(token.last_used))
            : 'never',
        ),
        h(
          'td',
          { 'data-label': 'Expires', class: 'expires' },
          token.expires ? [dateTime(token.expires), expired ? ' (expired)' : ''] : 'never',
        ),
        revokeCell(token),
      );
    }

    /** "Revoke", which asks again before it does. */
    function revokeCell(token) {
      const cell = h('td', { class: 'actions' });
      const idle = () =>
        dom.replace(
          cell,
          h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${token.name}`, onclick: ask }, 'Revoke'),
        );
      function ask() {
        const yes = h(
          'button',
          { type: 'button', class: 'danger', 'aria-label': `Yes, revoke ${token.name}`, onclick: revoke },
          'Yes, revoke',
        );
        dom.replace(
          cell,
          h('span', { class: 'confirm' }, `Revoke ${token.name}? Clients using it are refused from then on. `),
          yes,
          ' ',
          h('button', { type: 'button', onclick: idle }, 'Cancel'),
        );
        yes.focus();
      }
      async function revoke() {
        for (const button of cell.querySelectorAll('button')) button.disabled = true;
        status.textContent = '';
        try {
          await api.revokeToken(token.name);
          if (!isCurrent()) return;
          status.textContent = `Revoked ${token.name}.`;
          if (shown === token.name) {
            created.replaceChildren();
            shown = null;
          }
        } catch (error) {
          if (!isCurrent()) return;
          status.textContent = `Could not revoke ${token.name}: ${error.message}`;
        }
        await refresh();
      }
      idle();
      return cell;
    }

    // The form to add a token.
    const name = h('input', {
      id: 'token-name',
      name: 'name',
      required: true,
      maxlength: 64,
      pattern: NAME_PATTERN,
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': 'token-name-hint',
    });
    const scope = h(
      'select',
      { id: 'token-scope', name: 'scope', 'aria-describedby': 'token-scope-hint' },
      SCOPES.map(([value, label]) => h('option', { value }, label)),
    );
    const hosts = h('input', {
      id: 'token-hosts',
      name: 'hosts',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': 'token-hosts-hint',
    });
    const expires = h('input', {
      id: 'token-expires',
      name: 'expires',
      type: 'date',
      min: time.dateKey(time.shiftDate('day', new Date(), 1)),
      'aria-describedby': 'token-expires-hint',
    });
    const field = (input, label, hint, hintId) =>
      h(
        'div',
        { class: 'field' },
        h('label', { for: input.id }, label),
        input,
        h('small', { id: hintId }, hint),
      );
    const hostsField = field(hosts, 'Hosts', 'The host names its watchers send data for, separated by commas.', 'token-hosts-hint');
    const submit = h('button', { type: 'submit', class: 'primary' }, 'Add token');
    // Hosts are asked for (and required) only for a write token.
    const showHosts = () => {
      const write = scope.value === 'write';
      hostsField.hidden = !write;
      hosts.required = write;
    };
    scope.addEventListener('change', showHosts);
    showHosts();

    async function add(event) {
      event.preventDefault();
      const expiry = time.parseDateKey(expires.value);
      const spec = {
        name: name.value.trim(),
        scope: scope.value,
        hosts: scope.value === 'write' ? hosts.value.split(/[\s,]+/).filter(Boolean) : [],
        // From the start of the chosen day here, rather than in UTC (what
        // the server reads a bare date as).
        expires: expiry ? expiry.toISOString() : null,
      };
      submit.disabled = true;
      status.textContent = '';
      try {
        const token = await api.addToken(spec);
        if (!isCurrent()) return;
        form.reset();
        showHosts();
        showCreated(token);
        await refresh();
      } catch (error) {
        if (isCurrent()) status.textContent = `Could not add the token: ${error.message}`;
      } finally {
        submit.disabled = false;
      }
    }

    const form = h(
      'form',
      { class: 'add-token', onsubmit: add },
      h(
        'div',
        { class: 'fields' },
        field(name, 'Name', 'Up to 64 letters, digits, dots, dashes and underscores.', 'token-name-hint'),
        field(scope, 'Scope', 'What the token may do.', 'token-scope-hint'),
        hostsField,
        field(expires, 'Expires', 'Optional: the token is refused from the start of this day.', 'token-expires-hint'),
      ),
      submit,
    );

    /** Shows the value of the token just added, the only time it is known. */
    function showCreated(token) {
      shown = token.name;
      const value = h('code', { class: 'secret' }, token.token);
      const copied = h('span', { class: 'muted', role: 'status' });
      const copy = h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            try {
              await navigator.clipboard.writeText(token.token);
              copied.textContent = 'Copied.';
            } catch {
              // No clipboard here (a page not served over https nor from
              // this machine): select the value to copy by hand.
              getSelection().selectAllChildren(value);
              copied.textContent = 'Selected: copy it with Ctrl+C.';
            }
          },
        },
        'Copy',
      );
      const box = h(
        'div',
        { class: 'new-token', tabindex: '-1' },
        h('h2', {}, `New ${token.scope} token “${token.name}”`),
        h('p', {}, h('strong', {}, 'Copy it now: it will not be shown again.')),
        h('div', { class: 'token-row' }, value, copy, copied),
        !wasOpen
          ? null
          : h(
              'p',
              {},
              'From now on this server needs a token for every request. ',
              token.scope === 'admin'
                ? h('a', { href: `/?token=${encodeURIComponent(token.token)}#/tokens` }, 'Open the dashboard with this token')
                : 'Open the dashboard with an admin token, as /?token=KEY',
              '.',
            ),
      );
      created.replaceChildren(box);
      box.focus();
    }

    drawList(tokens);
    main.replaceChildren(
      h(
        'div',
        { class: 'cards' },
        list,
        h(
          'section',
          { class: 'card wide', 'aria-labelledby': 'add-token-title' },
          h('h2', { id: 'add-token-title' }, 'Add a token'),
          wasOpen
            ? h(
                'p',
                {},
                h('strong', {}, 'This server has no API key or token yet'),
                ', so anyone who can reach it may use it. Once it has a token, every request needs one, ' +
                  'this dashboard’s too: add an admin token first and keep it.',
              )
            : null,
          form,
          status,
          created,
        ),
      ),
    );
    return true;
  }

  /** What someone without an admin token sees instead. */
  function needsAdmin(who) {
    const named = who.name ? ` “${who.name}”` : '';
    return h(
      'section',
      { class: 'card notice' },
      h('h1', {}, 'API tokens'),
      h(
        'p',
        {},
        `Managing tokens needs an admin token; this dashboard was opened with the ${who.scope} token${named}.`,
      ),
      h(
        'p',
        {},
        'Open it with an admin token, as ',
        h('code', {}, `${location.origin}/?token=KEY`),
        '; it is kept for this browser tab only.',
      ),
    );
  }

  /** A time of the API as the pages write it, exact in `datetime`. */
  function dateTime(value) {
    return h('time', { datetime: value }, formatDateTime(new Date(value)));
  }

  return { render, mayManage };
})();
