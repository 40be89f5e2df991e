// How long the built-in dashboard takes to draw a day on a long history:
// from navigation start to the frame that shows the day view's last
// figure on screen (the Element Timing render time of the view's
// headings, which app.js marks; the view is inserted at once, so one frame
// paints it all). Each line also gives when the view was complete in the
// page (app.js's `awDrawnAt`), when the day's summary was asked for (a
// query program before #41) and when the view had its answer (the
// `aw-data` mark). Run by scripts/bench-dashboard.
//
//   node draw-time.mjs DB HOST DATE [DATE...]
//
// Each day is loaded in three ways (MODES=first,cached,cold to choose):
// - first: a first visit, in a new tab of a running browser whose HTTP
//   cache was just cleared (the page and its scripts fetched anew);
// - cached: the same tab again (files revalidated, 304s);
// - cold: a fresh browser context each time, as a browser's first page
//   with a new profile (its network stack and caches set up from nothing).
// LOADS=n: loads per day and mode (15), after one warm-up. Each load
// starts SETTLE_MS (300) after the last one's tab or context was closed:
// tearing down its renderer took the two cores while the next load ran,
// adding tens of milliseconds that no visit in a browser would see.
// BEFORE_BIN=path and/or BEFORE_WEBPATH=dir: also serve the database (a
// copy of it) with that binary and/or those pages (`--webpath`, see
// server.mjs) and alternate the loads between the two servers, so that
// both see the same phases of a busy machine; each line then says
// "after" or "before".

import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { TZ, launchChromium, startServer } from './server.mjs';

const [dbPath, host, ...dates] = process.argv.slice(2);
const LOADS = Number(process.env.LOADS || 15);
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 300);
const before = process.env.BEFORE_BIN || process.env.BEFORE_WEBPATH;
const servers = [{ name: before ? 'after' : '', server: await startServer({ dbPath }) }];
let copyDir = null;
if (before) {
  copyDir = mkdtempSync(join(tmpdir(), 'aw-draw-time-'));
  const copy = join(copyDir, 'before.db');
  copyFileSync(dbPath, copy);
  const saved = { bin: process.env.AW_SERVER_BIN, webpath: process.env.AW_WEBPATH };
  process.env.AW_SERVER_BIN = process.env.BEFORE_BIN || saved.bin;
  if (process.env.BEFORE_WEBPATH) process.env.AW_WEBPATH = process.env.BEFORE_WEBPATH;
  servers.push({ name: 'before', server: await startServer({ dbPath: copy }) });
  process.env.AW_SERVER_BIN = saved.bin;
  if (saved.webpath === undefined) delete process.env.AW_WEBPATH;
  else process.env.AW_WEBPATH = saved.webpath;
}
const browser = await launchChromium();
console.log(`Chromium ${browser.version()}, ${LOADS} loads per day after one warm-up`);
const median = values => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const newContext = () =>
  browser.newContext({ timezoneId: TZ, locale: 'en-GB', viewport: { width: 1280, height: 900 } });

/**
 * One load of the day; `state` holds the server's context and pages between
 * loads. `mode`: "cold" (a fresh browser context: a new profile, nothing
 * warmed up), "first" (a new tab of a running browser with its HTTP cache
 * cleared: a first visit) or "cached" (the same tab again, files
 * revalidated).
 */
async function load(state, url, mode) {
  if (mode === 'cold' || !state.context) {
    await state.context?.close();
    state.context = await newContext();
    // Stays open: the browser's other tab, which clears its cache.
    state.keeper = await state.context.newPage();
    state.cdp = await state.context.newCDPSession(state.keeper);
    state.page = null;
  }
  if (mode === 'cached' && state.page) {
    await state.page.goto('about:blank');
  } else {
    await state.page?.close();
    await state.cdp.send('Network.clearBrowserCache');
    state.page = await state.context.newPage();
  }
  const page = state.page;
  // The machine settles first: the tab or context closed just before is
  // still being torn down, and the last load's server may still be
  // freeing its answer.
  await new Promise(resolve => setTimeout(resolve, SETTLE_MS));
  // Nothing runs in the page until it has drawn: Playwright's own script,
  // which evaluating anything injects, would take the page's main thread
  // while it works. app.js asks for /api/0/info (the footer) only once the
  // first view is drawn, so that request, seen from outside, says when.
  const footer = page.waitForRequest(request => request.url().endsWith('/api/0/info'), { timeout: 60_000 });
  await page.goto(url, { waitUntil: 'commit' });
  await footer;
  await page.waitForFunction(() => (document.body?.dataset.drawn ?? '').startsWith('activity:'), null, {
    timeout: 60_000,
  });
  const [drawnAt, paintedAt, dataAt, queryAt, queryBytes] = await page.evaluate(async () => {
    // The day's figures: its summary (a query program before #41).
    const query = performance
      .getEntriesByType('resource')
      .find(e => e.name.includes('/api/0/summary?') || e.name.includes('/api/0/query/'));
    // When the view was painted: the last Element Timing entry of the
    // headings app.js marks in the drawn view (one frame shows it all).
    const painted = await new Promise(resolve => {
      new PerformanceObserver(list => {
        const times = list
          .getEntries()
          .filter(e => e.identifier === 'aw-view')
          .map(e => e.renderTime || e.loadTime);
        if (times.length) resolve(Math.max(...times));
      }).observe({ type: 'element', buffered: true });
      setTimeout(() => resolve(NaN), 5_000);
    });
    return [
      window.awDrawnAt,
      painted,
      performance.getEntriesByName('aw-data').at(-1)?.startTime ?? NaN,
      query?.startTime ?? NaN,
      query?.decodedBodySize,
    ];
  });
  const active = await page.locator('.card.summary .total').innerText();
  return { drawnAt, paintedAt, dataAt, queryAt, queryBytes, active };
}

const MODES = {
  first: 'first visit (new tab, empty cache)',
  cached: 'cached (same tab, 304s)',
  cold: 'cold (fresh browser context)',
};

/** Loads the day `LOADS + 1` times per server in `mode` (see `load`). */
async function measure(date, mode) {
  const runs = servers.map(() => ({ drawn: [], painted: [], data: [], query: [], active: '', size: 0, state: {} }));
  for (let round = 0; round <= LOADS; round++) {
    // Alternate which server goes first.
    const order = servers.map((_, index) => index);
    if (round % 2) order.reverse();
    for (const index of order) {
      const url = `${servers[index].server.url}/#/activity/${encodeURIComponent(host)}/day/${date}`;
      const result = await load(runs[index].state, url, mode);
      const run = runs[index];
      run.active = result.active;
      if (round > 0) {
        run.drawn.push(result.drawnAt);
        run.painted.push(result.paintedAt);
        run.data.push(result.dataAt);
        run.query.push(result.queryAt);
        run.size = result.queryBytes;
      }
    }
  }
  for (const [index, run] of runs.entries()) {
    await run.state.context.close();
    const name = servers[index].name ? ` [${servers[index].name}]` : '';
    const ms = value => `${value.toFixed(1)} ms`;
    console.log(
      `${date}, ${MODES[mode]}${name}: active ${run.active}; painted at a median ${ms(median(run.painted))} ` +
        `(min ${ms(Math.min(...run.painted))}, max ${ms(Math.max(...run.painted))}; all: ` +
        `${run.painted.map(t => t.toFixed(1)).join(' ')}); in the page at ${ms(median(run.drawn))}; ` +
        `the request was sent at ${ms(median(run.query))} and its answer was in at ${ms(median(run.data))} ` +
        `(${run.size} bytes)`,
    );
  }
}

try {
  for (const date of dates) {
    for (const mode of (process.env.MODES || 'first,cached,cold').split(',')) await measure(date, mode);
  }
} finally {
  await browser.close();
  for (const { server } of servers) await server.stop();
  if (copyDir) rmSync(copyDir, { recursive: true, force: true });
}
