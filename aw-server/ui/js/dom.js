// Building DOM nodes without a framework or innerHTML: every text goes in
// as text, so names from events (window titles, URLs) are never parsed as
// markup. And loading the scripts of the parts not loaded with the page,
// and two texts those parts share (`count`, `why`).

const dom = (() => {
  'use strict';

  /**
   * h('a', {href: '#/', class: 'x', onclick: f}, 'text', child, [more])
   * Attributes starting with "on" become listeners; `null`/`false` ones are
   * left out; children may be strings, nodes, arrays or null.
   */
  function h(tag, attributes = {}, ...children) {
    const element = document.createElement(tag);
    setAttributes(element, attributes);
    append(element, children);
    return element;
  }

  /** The same for SVG elements. */
  function svg(tag, attributes = {}, ...children) {
    const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
    setAttributes(element, attributes);
    append(element, children);
    return element;
  }

  function setAttributes(element, attributes) {
    for (const [name, value] of Object.entries(attributes)) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith('on') && typeof value === 'function') {
        element.addEventListener(name.slice(2), value);
      } else {
        element.setAttribute(name, value === true ? '' : String(value));
      }
    }
  }

  function append(element, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      element.append(child instanceof Node ? child : String(child));
    }
  }

  /** Replaces the children of `element`. */
  function replace(element, ...children) {
    element.replaceChildren();
    append(element, children);
  }

  /** Files asked for (scripts, style sheets), by path: their loading. */
  const loaded = new Map();

  /**
   * Adds the element `make()` answers for `path` to the page once; the
   * promise settles when it has loaded. A failed load is forgotten, so that
   * asking again retries.
   */
  function loadOnce(path, make) {
    if (!loaded.has(path)) {
      loaded.set(
        path,
        new Promise((resolve, reject) => {
          const element = make();
          element.onload = resolve;
          element.onerror = () => {
            loaded.delete(path);
            element.remove();
            reject(new Error(`Could not load ${path}: is the server still running?`));
          };
          document.head.append(element);
        }),
      );
    }
    return loaded.get(path);
  }

  /**
   * Runs the script at `path` once, as the listed ones run (a classic
   * script, one global scope), for the parts of the dashboard loaded when
   * first needed (app.js's `LAZY` views).
   */
  const script = path => loadOnce(path, () => h('script', { src: path }));

  /** Loads the style sheet at `path` once: the styles of those parts. */
  const stylesheet = path => loadOnce(path, () => h('link', { rel: 'stylesheet', href: path }));

  /** "1 event", "3 events". */
  const count = (n, noun) => `${n.toLocaleString('en')} ${noun}${n === 1 ? '' : 's'}`;

  /**
   * Why a request failed: the server's message (an `api.ApiError`, api.js
   * being loaded by the time a request fails), or that it did not answer
   * (the browser says "Failed to fetch").
   */
  const why = error => (error instanceof api.ApiError ? error.message : 'the server did not answer');

  return { h, svg, replace, script, stylesheet, count, why };
})();
