// Building DOM nodes without a framework or innerHTML: every text goes in
// as text, so names from events (window titles, URLs) are never parsed as
// markup. And loading the scripts of the parts not loaded with the page.

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

  /** Scripts asked for, by path: the promise of their loading. */
  const scripts = new Map();

  /**
   * Runs the script at `path` once, as the listed ones run (a classic
   * script, one global scope); the promise settles when it has run. A
   * failed load is forgotten, so that asking again retries. For the parts
   * of the dashboard loaded when first needed (app.js's `LAZY` views).
   */
  function script(path) {
    if (!scripts.has(path)) {
      scripts.set(
        path,
        new Promise((resolve, reject) => {
          const element = document.createElement('script');
          element.src = path;
          element.onload = resolve;
          element.onerror = () => {
            scripts.delete(path);
            element.remove();
            reject(new Error(`Could not load ${path}: is the server still running?`));
          };
          document.head.append(element);
        }),
      );
    }
    return scripts.get(path);
  }

  /** Style sheets asked for, by path: the promise of their loading. */
  const sheets = new Map();

  /**
   * Loads the style sheet at `path` once (as `script` loads a script), so
   * what only the pages loaded later use stays out of the first view's
   * style sheet.
   */
  function stylesheet(path) {
    if (!sheets.has(path)) {
      sheets.set(
        path,
        new Promise((resolve, reject) => {
          const element = document.createElement('link');
          element.rel = 'stylesheet';
          element.href = path;
          element.onload = resolve;
          element.onerror = () => {
            sheets.delete(path);
            element.remove();
            reject(new Error(`Could not load ${path}: is the server still running?`));
          };
          document.head.append(element);
        }),
      );
    }
    return sheets.get(path);
  }

  return { h, svg, replace, script, stylesheet };
})();
