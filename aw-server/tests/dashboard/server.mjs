// Starts the aw-server binary on a free port with its own database, config
// and home folder, seeds it through the HTTP API, as a watcher would, and
// launches the Chromium the tests and the draw-time benchmark drive.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

/** The time zone of the server, of Chromium and of the seeded data. */
export const TZ = 'Asia/Kolkata';

/** Debian's Chromium, as scripts/test-dashboard installs it. */
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/**
 * Headless Chromium in the pinned time zone, with the flags this machine's
 * closed network needs (no background or component requests).
 */
export async function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
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
}
/** Local times of the seed are written with this offset (Kolkata has no DST). */
const OFFSET = '+05:30';
export const HOST = 'testhost';

/**
 * A running server: `url`, `request()`, `stop()`. `dbPath`: an existing
 * database to serve (kept), instead of a new one (removed on stop).
 * `config`: more of config.toml (`[sync]`, `[retention]`...), after the
 * API key's section; `args`: more flags (`--device-id`).
 * AW_WEBPATH=DIR serves the pages of DIR (`--webpath`) instead of those
 * embedded in the binary, to try a change of them without a build; they
 * are then served as any UI folder, without the built-in dashboard's
 * `Content-Security-Policy` and `Link` headers.
 */
export async function startServer({ apiKey = null, dbPath = null, config: extra = '', args = [] } = {}) {
  const binary = process.env.AW_SERVER_BIN;
  if (!binary) throw new Error('AW_SERVER_BIN is not set: run this through scripts/test-dashboard');
  const home = mkdtempSync(join(tmpdir(), 'aw-dashboard-'));
  const config = join(home, 'config.toml');
  writeFileSync(config, (apiKey ? `[auth]\napi_key = "${apiKey}"\n` : '') + extra);
  const child = spawn(
    binary,
    [
      '--port',
      '0',
      '--dbpath',
      dbPath || join(home, 'test.db'),
      '--config',
      config,
      ...(process.env.AW_WEBPATH ? ['--webpath', process.env.AW_WEBPATH] : []),
      ...args,
    ],
    {
      env: {
        ...process.env,
        TZ,
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        XDG_DATA_HOME: join(home, 'data'),
        XDG_CACHE_HOME: join(home, 'cache'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), 60_000);
    child.stderr.on('data', chunk => {
      log += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on('exit', code => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${log}`));
    });
  });
  child.removeAllListeners('exit');
  const headers = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
  async function request(method, path, body) {
    const response = await fetch(url + path, {
      method,
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  }
  async function stop() {
    const exited = new Promise(resolve => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    rmSync(home, { recursive: true, force: true });
  }
  return { url, request, stop, log: () => log };
}

const at = (date, time) => `${date}T${time}${OFFSET}`;
const event = (date, time, duration, data) => ({ timestamp: at(date, time), duration, data });

/**
 * Seeds a host's window, AFK and Firefox buckets; the expected figures of
 * the tests follow from these events (see dashboard.test.mjs).
 */
export async function seed(server) {
  const bucket = (id, type, hostname) =>
    server.request('POST', `/api/0/buckets/${id}`, { client: 'test', type, hostname });
  const events = (id, list) => server.request('POST', `/api/0/buckets/${id}/events`, list);
  const windowId = `aw-watcher-window_${HOST}`;
  const afkId = `aw-watcher-afk_${HOST}`;
  const webId = 'aw-watcher-web-firefox';
  await bucket(windowId, 'currentwindow', HOST);
  await bucket(afkId, 'afkstatus', HOST);
  await bucket(webId, 'web.tab.current', HOST);
  const code = title => ({ app: 'Code', title });
  await events(windowId, [
    // Friday of the week before.
    event('2026-03-06', '14:00:00', 3600, code('notes.md - Code')),
    // Sunday.
    event('2026-03-08', '10:00:00', 300, code('notes.md - Code')),
    // Monday: 1000 s, and 600 s after midnight that still belong to Monday
    // (days start at 04:00).
    event('2026-03-09', '15:00:00', 1000, code('main.rs - Code')),
    event('2026-03-10', '03:00:00', 600, code('main.rs - Code')),
    // Tuesday, the day of the tests.
    event('2026-03-10', '09:00:00', 3723, code('main.rs - Code')),
    event('2026-03-10', '10:30:00', 1800, { app: 'Firefox', title: 'YouTube - Mozilla Firefox' }),
    // Half of it away from the keyboard (12:00-12:30 and after 12:45).
    event('2026-03-10', '11:30:00', 4500, { app: 'Terminal', title: 'bash' }),
  ]);
  await events(afkId, [
    event('2026-03-06', '13:00:00', 4 * 3600, { status: 'not-afk' }),
    event('2026-03-08', '09:00:00', 3 * 3600, { status: 'not-afk' }),
    event('2026-03-09', '14:00:00', 3 * 3600, { status: 'not-afk' }),
    event('2026-03-10', '02:00:00', 2 * 3600, { status: 'not-afk' }),
    event('2026-03-10', '08:00:00', 4 * 3600, { status: 'not-afk' }),
    event('2026-03-10', '12:00:00', 1800, { status: 'afk' }),
    event('2026-03-10', '12:30:00', 900, { status: 'not-afk' }),
    event('2026-03-10', '12:45:00', 3600, { status: 'afk' }),
  ]);
  await events(webId, [
    event('2026-03-10', '10:30:00', 1200, { url: 'https://www.youtube.com/watch?v=1', title: 'YouTube', audible: true }),
    event('2026-03-10', '10:50:00', 600, { url: 'https://docs.rs/rocket', title: 'rocket - Rust', audible: false }),
  ]);
  // Category sets as aw-webui writes them: "base" and "extra" are active
  // and merged in the order of category_sets (base wins for a name both
  // define); "unused" is not active; the legacy `classes` is ignored.
  const category = (name, regex) => ({ name, rule: { type: 'regex', regex } });
  await server.request('POST', '/api/0/settings/category_sets', [
    { id: 'base', categories: [category(['Work', 'Programming'], 'Code'), category(['Media', 'Video'], 'YouTube')] },
    { id: 'unused', categories: [category(['Ignored'], 'Code|Firefox|Terminal')] },
    { id: 'extra', categories: [category(['Work', 'Programming'], 'NOTHING'), category(['Shell'], 'Terminal')] },
  ]);
  await server.request('POST', '/api/0/settings/active_set_ids', ['extra', 'base']);
  await server.request('POST', '/api/0/settings/classes', [category(['Legacy'], 'Code')]);
  await server.request('POST', '/api/0/settings/startOfDay', '04:00');
}

/** The hosts of `seedDevices`, most recently active first. */
export const DEVICES = ['laptop', 'desktop'];

/**
 * Seeds a hub holding two devices' buckets, as forwarding leaves them:
 * each host's window and AFK buckets, and the laptop's Firefox bucket
 * (its watcher reported no host name; the laptop forwarded it under its
 * own). On the test day (2026-03-10) the laptop is active 1h 40m
 * (Code 1h, Firefox 30m, Terminal 10m; the last at 14:00, after the
 * desktop's last event), the desktop 1h (Code 25m, Firefox 15m, Terminal
 * 20m of its 30m, the rest away). Both had Firefox in front at 10:30-10:45,
 * when the laptop's browser bucket says YouTube: counted for the desktop
 * too, that would be 15m of YouTube too many.
 */
export async function seedDevices(server) {
  const bucket = (id, type, hostname) =>
    server.request('POST', `/api/0/buckets/${id}`, { client: 'test', type, hostname });
  const events = (id, list) => server.request('POST', `/api/0/buckets/${id}/events`, list);
  const day = '2026-03-10';
  const window = (app, title) => ({ app, title });
  const youtube = window('Firefox', 'YouTube - Mozilla Firefox');
  const [laptop, desktop] = DEVICES;
  for (const host of DEVICES) {
    await bucket(`aw-watcher-window_${host}`, 'currentwindow', host);
    await bucket(`aw-watcher-afk_${host}`, 'afkstatus', host);
  }
  await bucket('aw-watcher-web-firefox', 'web.tab.current', laptop);
  await events(`aw-watcher-window_${laptop}`, [
    event(day, '09:00:00', 3600, window('Code', 'main.rs - Code')),
    event(day, '10:30:00', 1800, youtube),
    event(day, '14:00:00', 600, window('Terminal', 'bash')),
  ]);
  await events(`aw-watcher-afk_${laptop}`, [event(day, '08:00:00', 7 * 3600, { status: 'not-afk' })]);
  await events(`aw-watcher-window_${desktop}`, [
    event(day, '09:30:00', 1500, window('Code', 'lib.rs - Code')),
    event(day, '10:30:00', 900, youtube),
    event(day, '11:00:00', 1800, window('Terminal', 'zsh')),
  ]);
  await events(`aw-watcher-afk_${desktop}`, [
    event(day, '09:00:00', 8400, { status: 'not-afk' }),
    event(day, '11:20:00', 3600, { status: 'afk' }),
  ]);
  await events('aw-watcher-web-firefox', [
    event(day, '10:30:00', 1200, { url: 'https://www.youtube.com/watch?v=1', title: 'YouTube', audible: true }),
    event(day, '10:50:00', 600, { url: 'https://docs.rs/rocket', title: 'rocket - Rust', audible: false }),
  ]);
  const category = (name, regex) => ({ name, rule: { type: 'regex', regex } });
  await server.request('POST', '/api/0/settings/category_sets', [
    {
      id: 'base',
      categories: [
        category(['Work', 'Programming'], 'Code'),
        category(['Media', 'Video'], 'YouTube'),
        category(['Shell'], 'Terminal'),
      ],
    },
  ]);
  await server.request('POST', '/api/0/settings/active_set_ids', ['base']);
  await server.request('POST', '/api/0/settings/startOfDay', '04:00');
}
