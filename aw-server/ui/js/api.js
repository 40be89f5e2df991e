// Every request of the pages goes through here: the public HTTP API of
// this server, with the API key or token (if the server has any) as a
// Bearer token.
//
// The key arrives as aw-webui takes it: `?token=KEY` in the address. It is
// kept in sessionStorage for the tab's session and removed from the
// address bar, so it does not end up in bookmarks or the history. It may
// be the config's API key or a token of the server (views/tokens.js): what
// it may do, the server says (`access`).

const api = (() => {
  'use strict';

  const TOKEN_PARAM = 'token';
  const TOKEN_STORAGE = 'aw-api-token';

  let token = null;

  /** Reads the key from the address (then stores it) or from the session. */
  function loadToken() {
    const url = new URL(window.location.href);
    const fromUrl = (url.searchParams.get(TOKEN_PARAM) || '').trim();
    if (fromUrl) {
      sessionStorage.setItem(TOKEN_STORAGE, fromUrl);
      url.searchParams.delete(TOKEN_PARAM);
      history.replaceState(history.state, '', url.pathname + url.search + url.hash);
      token = fromUrl;
    } else {
      token = (sessionStorage.getItem(TOKEN_STORAGE) || '').trim() || null;
    }
  }

  /**
   * An error answer of the API, with the server's message: 401 without a
   * valid key, 403 when the key's scope does not allow the request.
   */
  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function headers(extra = {}) {
    const all = { Accept: 'application/json', ...extra };
    if (token) all.Authorization = `Bearer ${token}`;
    return all;
  }

  async function send(path, options = {}) {
    const response = await fetch(path, { ...options, headers: headers(options.headers) });
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      try {
        const body = await response.json();
        if (body && body.message) message = body.message;
      } catch {
        // Not JSON: keep the status line.
      }
      throw new ApiError(response.status, message);
    }
    return response;
  }

  /** Answers of requests started early (`prefetch`), by path, used once. */
  const early = new Map();
  let started = false;

  /**
   * Starts GET requests before the page's modules have all loaded (app.js),
   * for the first view to pick up; ignored once the first view asked for
   * anything itself, so an answer is never older than the view.
   */
  function prefetch(paths) {
    if (started) return;
    for (const path of paths) {
      const answer = send(path).then(response => response.json());
      answer.catch(() => {}); // the view that takes it reports the error
      early.set(path, answer);
    }
  }

  /** GET a JSON resource. */
  async function get(path) {
    started = true;
    const answer = early.get(path);
    if (answer) {
      early.delete(path);
      return answer;
    }
    return (await send(path)).json();
  }

  const info = () => get('/api/0/info');
  const database = () => get('/api/0/database/status');
  const buckets = () => get('/api/0/buckets/');
  const settings = () => get('/api/0/settings');
  const eventCount = id =>
    get(`/api/0/buckets/${encodeURIComponent(id)}/events/count`);

  /** Sends `value` as JSON with `method` (POST...); answers the response. */
  function sendJson(method, path, value) {
    return send(path, {
      method,
      body: JSON.stringify(value),
      headers: { 'Content-Type': 'application/json' },
    });
  }

  /**
   * Active time of a period as the server counts it (docs/API.md §3.13),
   * `params` being `{start, end, by, host, tz, limit}`; those null or
   * undefined are left out.
   */
  function summary(params) {
    return get(`/api/0/summary?${queryOf(params)}`);
  }

  /** Titles and URLs containing `params.text` (docs/API.md §3.13), as `summary`. */
  function search(params) {
    return get(`/api/0/search?${queryOf(params)}`);
  }

  function queryOf(params) {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) {
      if (value !== null && value !== undefined) query.set(name, value);
    }
    return query;
  }

  /**
   * Who the key belongs to: `{authenticated, scope, name, hosts}`, the
   * scope "admin", "read" or "write". `authenticated` is false when the
   * server has no key or token at all, and then anyone may do anything.
   */
  const access = () => get('/api/0/access');

  /** The server's tokens, by name, without their values (admin only). */
  const tokens = () => get('/api/0/tokens');

  /**
   * Adds a token, `spec` being `{name, scope, hosts, expires}`; answers it
   * with its value (`token`), which the server shows only this once.
   */
  async function addToken(spec) {
    return (await sendJson('POST', '/api/0/tokens', spec)).json();
  }

  /** Revokes the token named `name`: the server refuses it from then on. */
  async function revokeToken(name) {
    const response = await send(`/api/0/tokens/${encodeURIComponent(name)}`, { method: 'DELETE' });
    // Read to its (empty) end: an answer left unread is cancelled, which
    // the browser reports as a failed request.
    await response.text();
  }

  /** Fetches `path` (with the key) and saves it as `filename`. */
  async function download(path, filename) {
    const blob = await (await send(path)).blob();
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = filename;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  return { loadToken, ApiError, prefetch, get, send, sendJson, info, database, buckets, settings, eventCount, summary, search, access, tokens, addToken, revokeToken, download };
})();
