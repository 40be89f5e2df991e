// Every bucket with its type, host, event count and the time of its first
// and last event, so a watcher that stopped sending is easy to spot; and
// the export of all buckets or of one.

const bucketsView = (() => {
  'use strict';

  const { h } = dom;
  const { ago, formatDateTime } = time;

  /** A watcher whose last data is older than this is shown as stale. */
  const STALE_MS = 15 * 60 * 1000;

  async function render(main, _params, isCurrent) {
    const buckets = Object.values(await api.buckets()).sort((a, b) => a.id.localeCompare(b.id));
    const counts = await Promise.all(buckets.map(b => api.eventCount(b.id).catch(() => null)));
    if (!isCurrent()) return false;
    const status = h('p', { class: 'muted', role: 'status' });
    const exportButton = (label, path, filename, description) =>
      h(
        'button',
        {
          type: 'button',
          'aria-label': description,
          onclick: async () => {
            status.textContent = '';
            try {
              await api.download(path, filename);
            } catch (error) {
              status.textContent = `Export failed: ${error.message}`;
            }
          },
        },
        label,
      );
    const rows = buckets.map((bucket, index) => {
      const last = bucket.metadata && bucket.metadata.end;
      const first = bucket.metadata && bucket.metadata.start;
      const stale = last && Date.now() - new Date(last).getTime() > STALE_MS;
      return h(
        'tr',
        { class: stale ? 'stale' : null },
        h('th', { scope: 'row', 'data-label': 'Bucket' }, h('code', {}, bucket.id)),
        h('td', { 'data-label': 'Type' }, bucket.type),
        h('td', { 'data-label': 'Host' }, bucket.hostname),
        h('td', { 'data-label': 'Events', class: 'number' }, counts[index] === null ? '?' : counts[index].toLocaleString()),
        h('td', { 'data-label': 'First event' }, first ? formatDateTime(new Date(first)) : '–'),
        h('td', { 'data-label': 'Last event' }, last ? formatDateTime(new Date(last)) : '–'),
        h('td', { 'data-label': 'Last data', class: 'last-data' }, last ? `last data ${ago(last)}` : 'no data'),
        h(
          'td',
          { 'data-label': 'Export' },
          exportButton(
            'Export',
            `/api/0/buckets/${encodeURIComponent(bucket.id)}/export`,
            `aw-bucket-export_${bucket.id}.json`,
            `Export ${bucket.id}`,
          ),
        ),
      );
    });
    main.replaceChildren(
      h(
        'section',
        { class: 'card wide' },
        h(
          'div',
          { class: 'heading-row' },
          h('h1', {}, `Buckets (${buckets.length})`),
          exportButton('Export all', '/api/0/export', 'aw-buckets-export.json', 'Export all buckets'),
        ),
        status,
        buckets.length === 0
          ? h('p', { class: 'empty' }, 'No buckets yet: no watcher has sent data to this server.')
          : h(
              'table',
              { class: 'buckets' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Bucket', 'Type', 'Host', 'Events', 'First event', 'Last event', 'Last data', ''].map(
                    name => h('th', { scope: 'col' }, name),
                  ),
                ),
              ),
              h('tbody', {}, rows),
            ),
      ),
    );
    return true;
  }

  return { render };
})();
