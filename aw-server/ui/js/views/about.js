// What the server says about itself (`/api/0/info`), which the old status
// page showed, and where to go from here.

const aboutView = (() => {
  'use strict';

  const { h } = dom;

  const UI_NAMES = {
    builtin: 'the built-in dashboard',
    'aw-webui-embedded': 'aw-webui, embedded at build time',
    'aw-webui-folder': 'aw-webui from a folder (--webpath)',
  };

  async function render(main, _params, isCurrent) {
    const info = await api.info();
    if (!isCurrent()) return false;
    const row = (name, value) => [h('dt', {}, name), h('dd', {}, value)];
    main.replaceChildren(
      h(
        'section',
        { class: 'card wide' },
        h('h1', {}, 'About this server'),
        h(
          'dl',
          { class: 'facts' },
          row('Version', info.version),
          row('Host name', info.hostname),
          row('Device id', h('code', {}, info.device_id)),
          row('Testing mode', info.testing ? 'yes' : 'no'),
          row('Web UI', UI_NAMES[info.webui] || info.webui || 'unknown'),
        ),
        h(
          'p',
          {},
          'The API: ',
          h('a', { href: '/api/0/info' }, '/api/0/info'),
          ', ',
          h('a', { href: '/api/0/buckets/' }, '/api/0/buckets/'),
          '. This dashboard reads everything through it, as any client would.',
        ),
      ),
    );
    return true;
  }

  return { render };
})();
