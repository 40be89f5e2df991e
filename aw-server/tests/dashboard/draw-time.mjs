// How long the built-in dashboard takes to draw a day on a long history:
// from navigation start to the moment the day view's last figure is on
// the page (app.js records `performance.now()` then, as `awDrawnAt`).
// Each day is loaded from a fresh browser context each time (empty
// cache: fetching the page and its modules included) and then again and
// again in one context (cached files revalidated). Run by
// scripts/bench-dashboard.
//
//   node draw-time.mjs DB HOST DATE [DATE...]

import { TZ, launchChromium, startServer } from './server.mjs';

const [dbPath, host, ...dates] = process.argv.slice(2);
const LOADS = Number(process.env.LOADS || 15);
const server = await startServer({ dbPath });
const browser = await launchChromium();
console.log(`Chromium ${browser.version()}, ${LOADS} loads per day after one warm-up`);
const median = values => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
/** Loads the day `LOADS + 1` times; `fresh`: a new context (empty cache) each time. */
async function measure(date, fresh) {
  const times = [];
  const dataTimes = [];
  let active = '';
  let size = 0;
  let context = null;
  let page = null;
  for (let load = 0; load <= LOADS; load++) {
    if (fresh || !context) {
      await context?.close();
      context = await browser.newContext({ timezoneId: TZ, locale: 'en-GB', viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
    } else {
      await page.goto('about:blank');
    }
    await page.goto(`${server.url}/#/activity/${encodeURIComponent(host)}/day/${date}`);
    await page.waitForFunction(() => (document.body?.dataset.drawn ?? '').startsWith('activity:'), null, {
      timeout: 60_000,
    });
    const [drawnAt, dataAt, queryBytes] = await page.evaluate(() => [
      window.awDrawnAt,
      performance.getEntriesByName('aw-data').at(-1)?.startTime ?? NaN,
      performance.getEntriesByType('resource').find(e => e.name.includes('/api/0/query/'))?.decodedBodySize,
    ]);
    active = await page.locator('.card.summary .total').innerText();
    if (load > 0) {
      times.push(drawnAt);
      dataTimes.push(dataAt);
      size = queryBytes;
    }
  }
  await context.close();
  const fixed = times.map(t => t.toFixed(1)).join(' ');
  console.log(
    `${date}, ${fresh ? 'empty cache' : 'cached (304s)'}: active ${active}; draw time median ` +
      `${median(times).toFixed(1)} ms, min ${Math.min(...times).toFixed(1)}, max ` +
      `${Math.max(...times).toFixed(1)} (all: ${fixed}); the data was in at a median ` +
      `${median(dataTimes).toFixed(1)} ms (query answer ${size} bytes)`,
  );
}

try {
  for (const date of dates) {
    await measure(date, true);
    await measure(date, false);
  }
} finally {
  await browser.close();
  await server.stop();
}
