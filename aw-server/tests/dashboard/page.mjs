// What every browser test file shares: one Chromium for the file, pages
// that record every problem, waiting for a view to draw, screenshots, and
// the accessibility check (axe-core, pinned in package.json).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';

import { CHROMIUM, TZ, launchChromium } from './server.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const SHOTS = join(ROOT, 'target', 'dashboard-screenshots');

let browser;

/** Starts Chromium before the calling file's tests and closes it after. */
export function useBrowser() {
  before(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`Chromium not found at ${CHROMIUM}: scripts/test-dashboard installs it`);
    }
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
    console.log(`# Chromium ${browser.version()}`);
  });
  after(async () => {
    await browser?.close();
  });
}

/**
 * A page in a fresh context that records every console error, page error,
 * failed request and error response in `problems`. `expectErrors` lists
 * the URL parts whose error answers a test provokes on purpose.
 */
export async function openPage({ width = 1280, dark = false, expectErrors = [] } = {}) {
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    colorScheme: dark ? 'dark' : 'light',
    timezoneId: TZ,
    locale: 'en-GB',
    acceptDownloads: true,
  });
  const page = await context.newPage();
  const problems = [];
  const expected = text => expectErrors.some(part => text.includes(part));
  page.on('console', message => {
    // Chromium logs each error answer once more on the console.
    if (message.type() === 'error' && !expected(message.location()?.url ?? '') && !expected(message.text())) {
      problems.push(`console: ${message.text()}`);
    }
  });
  page.on('pageerror', error => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', request => {
    if (!expected(request.url())) {
      problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
    }
  });
  page.on('response', response => {
    if (response.status() >= 400 && !expected(response.url())) {
      problems.push(`HTTP ${response.status()}: ${response.url()}`);
    }
  });
  return { page, context, problems };
}

/** Runs `action` and waits until the dashboard has drawn a new view. */
export async function drawn(page, action) {
  const before = await page.evaluate(() => document.body?.dataset.drawn ?? '');
  await action();
  await page.waitForFunction(
    previous => {
      const now = document.body?.dataset.drawn ?? '';
      return now !== previous && now !== '';
    },
    before,
    { timeout: 30_000 },
  );
  const state = await page.evaluate(() => document.body.dataset.drawn);
  if (state.startsWith('error')) {
    const text = await page.locator('main').innerText();
    throw new Error(`the dashboard drew an error: ${text}`);
  }
}

export async function shoot(page, name) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

export function assertClean(problems) {
  assert.deepEqual(problems, [], 'console errors or failed requests');
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core on the page as it is and fails on any serious or critical
 * violation, naming the rule and the elements. The page's content
 * security policy refuses added script tags, so axe is evaluated in it.
 */
export async function assertAccessible(page, label) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter(violation => ['serious', 'critical'].includes(violation.impact))
      .map(violation => ({
        rule: violation.id,
        impact: violation.impact,
        help: violation.help,
        nodes: violation.nodes.slice(0, 5).map(node => node.target.join(' ')),
      }));
  });
  assert.deepEqual(violations, [], `axe-core found serious or critical violations on ${label}`);
}
