// How long the built-in dashboard takes to draw a day on a long history:
// from navigation start to the moment the day view's last figure is on
// the page (app.js records `performance.now()` then, as `awDrawnAt`).
// Each day is loaded from a fresh browser context each time (empty
// cache: fetching the page and its modules included) and then again and
// again in one context (cached files revalidated). Run by
// scripts/bench-dashboard.
//
//   node draw-time.mjs DB HOST DATE [DATE...]
//
// LOADS=n: loads per day and cache state (15). Each line also gives when
// the day's query was sent and when the view had its answer (the
// `aw-data` mark). BEFORE_BIN=path: also serve the database (a copy of
// it) with this binary and alternate the loads between the two servers,
// so that both see the same phases of a busy machine; each line then
// names the binary.

import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { TZ, launchChromium, startServer } from './server.mjs';

const [dbPath, host, ...dates] = process.argv.slice(2);
const LOADS = Number(process.env.LOADS || 15);
const servers = [{ name: process.env.BEFORE_BIN ? 'AW_SERVER_BIN' : '', server: await startServer({ dbPath }) }];
let copyDir = null;
if (process.env.BEFORE_BIN) {
  copyDir = mkdtempSync(join(tmpdir(), 'aw-draw-time-'));
  const copy = join(copyDir, 'before.db');
  copyFileSync(dbPath, copy);
  const bin = process.env.AW_SERVER_BIN;
  process.env.AW_SERVER_BIN = process.env.BEFORE_BIN;
  servers.push({ name: 'BEFORE_BIN', server: await startServer({ dbPath: copy }) });
  process.env.AW_SERVER_BIN = bin;
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

/** One load of the day; `state` holds the server's context and page between loads. */
async function load(state, url, fresh) {
  if (fresh || !state.context) {
    await state.context?.close();
    state.context = await newContext();
    state.page = await state.context.newPage();
  } else {
    await state.page.goto('about:blank');
  }
  const page = state.page;
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
  const [drawnAt, dataAt, queryAt, queryBytes] = await page.evaluate(() => {
    const query = performance.getEntriesByType('resource').find(e => e.name.includes('/api/0/query/'));
    return [
      window.awDrawnAt,
      performance.getEntriesByName('aw-data').at(-1)?.startTime ?? NaN,
      query?.startTime ?? NaN,
      query?.decodedBodySize,
    ];
  });
  const active = await page.locator('.card.summary .total').innerText();
  return { drawnAt, dataAt, queryAt, queryBytes, active };
}

/** Loads the day `LOADS + 1` times per server; `fresh`: a new context (empty cache) each time. */
async function measure(date, fresh) {
  const runs = servers.map(() => ({ times: [], dataTimes: [], queryTimes: [], active: '', size: 0, state: {} }));
  for (let round = 0; round <= LOADS; round++) {
    // Alternate which server goes first.
    const order = servers.map((_, index) => index);
    if (round % 2) order.reverse();
    for (const index of order) {
      const url = `${servers[index].server.url}/#/activity/${encodeURIComponent(host)}/day/${date}`;
      const result = await load(runs[index].state, url, fresh);
      runs[index].active = result.active;
      if (round > 0) {
        runs[index].times.push(result.drawnAt);
        runs[index].dataTimes.push(result.dataAt);
        runs[index].queryTimes.push(result.queryAt);
        runs[index].size = result.queryBytes;
      }
    }
  }
  for (const [index, run] of runs.entries()) {
    await run.state.context.close();
    const { times, dataTimes, queryTimes } = run;
    const name = servers[index].name ? ` [${servers[index].name}]` : '';
    const fixed = times.map(t => t.toFixed(1)).join(' ');
    console.log(
      `${date}, ${fresh ? 'empty cache' : 'cached (304s)'}${name}: active ${run.active}; draw time median ` +
        `${median(times).toFixed(1)} ms, min ${Math.min(...times).toFixed(1)}, max ` +
        `${Math.max(...times).toFixed(1)} (all: ${fixed}); the query was sent at a median ` +
        `${median(queryTimes).toFixed(1)} ms and its answer was in at ${median(dataTimes).toFixed(1)} ms ` +
        `(${run.size} bytes)`,
    );
  }
}

try {
  for (const date of dates) {
    await measure(date, true);
    await measure(date, false);
  }
} finally {
  await browser.close();
  for (const { server } of servers) await server.stop();
  if (copyDir) rmSync(copyDir, { recursive: true, force: true });
}
