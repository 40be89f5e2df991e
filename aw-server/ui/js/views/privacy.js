// The Privacy page. Loaded when first opened (app.js, `LAZY`).

window.privacyView = (() => {
  'use strict';

  const { h } = dom;

  async function render(main) {
    main.replaceChildren(h('h1', {}, 'Privacy'));
    return true;
  }

  return { render };
})();
