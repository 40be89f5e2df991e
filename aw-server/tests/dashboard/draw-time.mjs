// How long the built-in dashboard takes to draw a day on a long history:
// from navigation start to the moment the day view's last figure is on
// the page (app.js records `performance.now()` then, as `awDrawnAt`).
// Each load is a fresh browser context (empty cache), so it includes
// fetching the page and its modules. Run by scripts/bench-dashboard.
//
//   node draw-time.mjs DB HOST DATE [DATE...]

import { chromium } from 'playwright-core';

import { TZ, startServer } from './server.mjs';

const [dbPath, host, ...dates] = process.argv.slice(2);
const LOADS = Number(process.env.LOADS || 15);
const server = await startServer({ dbPath });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  env: { ...process.env, TZ },
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
console.log(`Chromium ${browser.version()}, ${LOADS} loads per day after one warm-up`);
const median = values => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
try {
  for (const date of dates) {
    const times = [];
    let active = '';
    for (let load = 0; load <= LOADS; load++) {
      const context = await browser.newContext({ timezoneId: TZ, locale: 'en-GB', viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${server.url}/#/activity/${encodeURIComponent(host)}/day/${date}`);
      await page.waitForFunction(() => (document.body?.dataset.drawn ?? '').startsWith('activity:'), null, {
        timeout: 60_000,
      });
      const drawnAt = await page.evaluate(() => window.awDrawnAt);
      active = await page.locator('.card.summary .total').innerText();
      if (load > 0) times.push(drawnAt);
      await context.close();
    }
    const fixed = times.map(t => t.toFixed(1)).join(' ');
    console.log(
      `${date}: active ${active}; draw time median ${median(times).toFixed(1)} ms, ` +
        `min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)} (all: ${fixed})`,
    );
  }
} finally {
  await browser.close();
  await server.stop();
}
