// The Status page. Loaded when first opened (app.js, `LAZY`).

window.statusView = (() => {
  'use strict';

  const { h } = dom;

  async function render(main) {
    main.replaceChildren(h('h1', {}, 'Status'));
    return true;
  }

  return { render };
})();
