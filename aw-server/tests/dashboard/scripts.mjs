// The dashboard's scripts under Node, for the tests of their pure parts:
// each is run as the page runs it, a classic script in one global scope,
// in the order given (that of index.html), and the names they define are
// then read back.

import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const JS = new URL('../../ui/js/', import.meta.url);

/** Runs the scripts `files` (paths under ui/js/) in this realm, in order. */
export function loadScripts(...files) {
  for (const file of files) {
    vm.runInThisContext(readFileSync(new URL(file, JS), 'utf8'), { filename: `ui/js/${file}` });
  }
}

/** The value a loaded script gave `name` (`time`, `charts`...). */
export const defined = name => vm.runInThisContext(name);
