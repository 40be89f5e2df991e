// The Categories page. Loaded when first opened (app.js, `LAZY`).

window.categoriesView = (() => {
  'use strict';

  const { h } = dom;

  async function render(main) {
    main.replaceChildren(h('h1', {}, 'Categories'));
    return true;
  }

  return { render };
})();
