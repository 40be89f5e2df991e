// People (`#/people`), for the server administrator of a server that
// hosts several people: every node's people (this node's, then those of
// `[users] nodes`), each with their file's size, devices, last data and
// whether their file is open or frozen for a move, and each node's totals
// (docs/API.md §3.18). A node that does not answer is shown as down, with
// why; its people are not guessed.

window.peopleView = (() => {
  'use strict';

  const { h } = dom;

  /** "1.2 GB", "95.8 MB", "4 KB". */
  function size(bytes) {
    if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
    if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
    return `${Math.max(1, Math.round(bytes / 1e3))} KB`;
  }

  function when(timestamp) {
    return timestamp ? new Date(timestamp).toLocaleString() : 'no data yet';
  }

  function nodeCard(node, index) {
    const title = node.url ? node.url : 'This node';
    const id = `node-${index}`;
    if (!node.up) {
      return h(
        'section',
        { class: 'card wide', 'data-node': node.url || 'here', 'aria-labelledby': id },
        h('h2', { id }, title, ': down'),
        h('p', { class: 'error-text' }, `${node.error}. Its people are not listed until it answers.`),
      );
    }
    const rows = node.people.map(person =>
      h(
        'tr',
        { 'data-person': person.name },
        h('th', { scope: 'row', 'data-label': 'Person' }, person.name),
        h('td', { class: 'number', 'data-label': 'Size' }, size(person.bytes)),
        h('td', { 'data-label': 'Devices' }, person.hosts.join(', ') || '—'),
        h('td', { 'data-label': 'Last data' }, when(person.last)),
        h('td', { 'data-label': 'File' }, person.moving ? 'being moved' : person.open ? 'open' : 'closed'),
      ),
    );
    return h(
      'section',
      { class: 'card wide', 'data-node': node.url || 'here', 'aria-labelledby': id },
      h('h2', { id }, title),
      h('p', { class: 'node-totals' }, `${node.people.length} ${node.people.length === 1 ? 'person' : 'people'}, ${size(node.bytes)}`),
      node.people.length
        ? h(
            'table',
            { class: 'status-table' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Person', 'Size', 'Devices', 'Last data', 'File'].map(name => h('th', { scope: 'col' }, name)),
              ),
            ),
            h('tbody', {}, rows),
          )
        : h('p', { class: 'muted' }, 'Nobody here yet: aw-server user add NAME on this node.'),
    );
  }

  async function render(main) {
    const nodes = await api.get('/api/0/nodes');
    const people = nodes.reduce((sum, node) => sum + node.people.length, 0);
    const bytes = nodes.reduce((sum, node) => sum + node.bytes, 0);
    const down = nodes.filter(node => !node.up).length;
    main.replaceChildren(
      h('h1', {}, 'People'),
      h(
        'p',
        { class: 'muted', id: 'people-totals' },
        `${people} ${people === 1 ? 'person' : 'people'} on ${nodes.length} ${nodes.length === 1 ? 'node' : 'nodes'}, ${size(bytes)} in all`,
        down ? `; ${down} not answering` : '',
        '. Add a person with aw-server user add NAME on the node that should hold them; move one with aw-server user move.',
      ),
      h('div', { class: 'cards' }, ...nodes.map(nodeCard)),
    );
    return true;
  }

  return { render };
})();
