// Groups (`#/groups`), on a server that hosts several people: the groups
// the signed-in person is a member of, with the members' shared totals of
// a week side by side (per category, and apps for those who share them),
// the invitations to them (join, sharing apps or not, or decline), a form
// to make a group and one to invite a person (docs/API.md §3.17). What a
// member shares is the server's to decide; this page shows what it gets.

window.groupsView = (() => {
  'use strict';

  const { h } = dom;

  const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

  /** YYYY-MM-DD of `date` in the browser's zone. */
  const isoDate = date =>
    `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;

  /** "2 h 05 min", "7 min", "0 min". */
  function hours(seconds) {
    const minutes = Math.round(seconds / 60);
    return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
  }

  /** The week ending on `last` (YYYY-MM-DD): `[start, end)` as dates. */
  function week(last) {
    const end = new Date(`${last}T00:00:00`);
    end.setDate(end.getDate() + 1);
    const start = new Date(end);
    start.setDate(start.getDate() - 7);
    return [isoDate(start), isoDate(end)];
  }

  /** Totals of each member per category (or app), summed over the days. */
  function byCategory(member) {
    const sums = {};
    for (const day of member.days) {
      for (const [name, seconds] of Object.entries(day.categories)) sums[name] = (sums[name] || 0) + seconds;
    }
    return sums;
  }

  /** A table of `rows` (names) by members, with each cell's seconds. */
  function sideBySide(caption, members, sumsOf) {
    const sums = members.map(sumsOf);
    const names = [...new Set(sums.flatMap(sum => (sum ? Object.keys(sum) : [])))].sort();
    return h(
      'table',
      { class: 'status-table group-totals' },
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, caption === 'Apps' ? 'App' : 'Category'), members.map(member => h('th', { scope: 'col' }, member.name)))),
      h(
        'tbody',
        {},
        h('tr', { class: 'total' }, h('th', { scope: 'row' }, 'Active'), members.map(member => h('td', { class: 'number' }, hours(member.duration)))),
        names.map(name =>
          h(
            'tr',
            { 'data-row': name },
            h('th', { scope: 'row' }, name),
            sums.map(sum => h('td', { class: 'number' }, sum ? hours(sum[name] || 0) : h('span', { class: 'muted' }, 'not shared'))),
          ),
        ),
      ),
    );
  }

  async function render(main, params, isCurrent) {
    let listed;
    try {
      listed = await api.get('/api/0/groups');
    } catch (error) {
      if (!(error instanceof api.ApiError) || error.status !== 404) throw error;
      if (!isCurrent()) return false;
      main.replaceChildren(
        h('h1', {}, 'Groups'),
        h('section', { class: 'card notice' }, h('p', {}, 'This server serves one person: groups are for a server that hosts several people (docs/API.md §3.17).')),
      );
      return true;
    }
    if (!isCurrent()) return false;
    const who = await api.access();
    if (!isCurrent()) return false;
    const admin = who.scope === 'admin';
    const last = /^\d{4}-\d{2}-\d{2}$/.test(params[0] || '') ? params[0] : isoDate(new Date());
    const [start, end] = week(last);
    const totals = await Promise.all(
      listed.groups.map(group =>
        api.get(`/api/0/groups/${encodeURIComponent(group.name)}/totals?start=${start}&end=${end}&tz=${encodeURIComponent(zone())}`),
      ),
    );
    if (!isCurrent()) return false;
    const said = h('p', { class: 'privacy-status', role: 'status' });

    /** Runs `action`, says what happened, and draws the page again. */
    async function act(action, done) {
      try {
        await action();
        said.textContent = done;
        await render(main, params, isCurrent);
        main.querySelector('.privacy-status').textContent = done;
      } catch (error) {
        said.textContent = error.message;
      }
    }
    // The answer read to its end: a body left unread is a cancelled request to the browser.
    const post = (path, body) => api.sendJson('POST', path, body).then(response => response.text());

    const weekForm = h(
      'form',
      { class: 'cat-inline group-form' },
      h('label', { for: 'group-week' }, 'Week ending'),
      h('input', { id: 'group-week', type: 'date', value: last }),
      h('button', { type: 'submit' }, 'Show'),
    );
    weekForm.addEventListener('submit', event => {
      event.preventDefault();
      location.hash = `#/groups/${weekForm.querySelector('input').value}`;
    });

    const invitations = listed.invitations.map(invitation => {
      const apps = h('input', { type: 'checkbox', id: `apps-${invitation.group}` });
      const join = h('button', { type: 'button' }, `Join ${invitation.group}`);
      const decline = h('button', { type: 'button', class: 'secondary' }, 'Decline');
      join.addEventListener('click', () =>
        act(() => post(`/api/0/groups/${encodeURIComponent(invitation.group)}/join`, { share_apps: apps.checked }), `Joined ${invitation.group}`),
      );
      decline.addEventListener('click', () =>
        act(() => post(`/api/0/groups/${encodeURIComponent(invitation.group)}/leave`), `Declined ${invitation.group}`),
      );
      return h(
        'li',
        { 'data-invitation': invitation.group },
        h('p', {}, `${invitation.invited_by} invited you to `, h('strong', {}, invitation.group), '. Joining shares your time per category each day with its members; nothing else unless you tick the box.'),
        h('p', {}, h('label', { class: 'check' }, apps, 'Share my apps’ totals too')),
        admin ? h('p', {}, join, ' ', decline) : h('p', { class: 'muted' }, 'Joining needs your admin token.'),
      );
    });

    const cards = listed.groups.map((group, index) => {
      const shared = totals[index];
      const invite = h('form', { class: 'cat-inline group-form' });
      const person = h('input', { id: `invite-${group.name}`, required: true, autocomplete: 'off' });
      invite.append(h('label', { for: person.id }, 'Invite a person'), person, h('button', { type: 'submit' }, 'Invite'));
      invite.addEventListener('submit', event => {
        event.preventDefault();
        act(() => post(`/api/0/groups/${encodeURIComponent(group.name)}/invitations`, { user: person.value.trim() }), `Invited ${person.value.trim()} to ${group.name}`);
      });
      const leave = h('button', { type: 'button', class: 'secondary' }, `Leave ${group.name}`);
      leave.addEventListener('click', () => act(() => post(`/api/0/groups/${encodeURIComponent(group.name)}/leave`), `Left ${group.name}`));
      const sharesApps = shared.members.some(member => member.apps);
      return h(
        'section',
        { class: 'card wide', 'data-group': group.name, 'aria-labelledby': `group-${index}` },
        h('h2', { id: `group-${index}` }, group.name),
        h(
          'p',
          {},
          'Members: ',
          group.members.map((member, n) => [n ? ', ' : '', member.name, h('span', { class: 'muted' }, ` (shares ${member.shares.join(' and ')})`)]),
        ),
        sideBySide('Categories', shared.members, byCategory),
        sharesApps ? sideBySide('Apps', shared.members, member => member.apps || null) : null,
        admin ? h('div', {}, invite, h('p', {}, leave)) : null,
      );
    });

    const create = h('form', { class: 'cat-inline group-form' });
    const name = h('input', { id: 'group-name', required: true, autocomplete: 'off' });
    const apps = h('input', { type: 'checkbox', id: 'group-apps' });
    create.append(
      h('label', { for: name.id }, 'Name'),
      name,
      h('label', { class: 'check' }, apps, 'Share my apps’ totals too'),
      h('button', { type: 'submit' }, 'Make the group'),
    );
    create.addEventListener('submit', event => {
      event.preventDefault();
      act(() => post('/api/0/groups', { name: name.value.trim(), share_apps: apps.checked }), `Made ${name.value.trim()}`);
    });

    const parts = [
      h('h1', {}, 'Groups'),
      h('p', { class: 'muted' }, `The week of ${start} to ${last}. Members see each other’s time per category; apps only of those who share them; window titles and addresses never.`),
      weekForm,
      said,
      invitations.length
        ? h('section', { class: 'card wide', 'aria-labelledby': 'invitations-title' }, h('h2', { id: 'invitations-title' }, 'Invitations'), h('ul', { class: 'invitations' }, invitations))
        : null,
      cards.length ? cards : h('p', { class: 'muted' }, 'You are in no group yet.'),
      admin ? h('section', { class: 'card wide', 'aria-labelledby': 'new-group-title' }, h('h2', { id: 'new-group-title' }, 'Make a group'), create) : null,
    ];
    main.replaceChildren(...parts.flat().filter(Boolean));
    return true;
  }

  return { render };
})();
