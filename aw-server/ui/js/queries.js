// The query programs the pages send to /api/0/query/, of the kind aw-webui
// sends (its src/queries.ts): window events flooded, kept only while the
// AFK watcher says "not-afk", categorized by the user's rules, merged by
// app, title and category; browser tab events kept only while a window of
// that browser is active, merged by domain.

const queries = (() => {
  'use strict';

  /** Browser watcher bucket names to the window `app` names of that browser. */
  const BROWSERS = {
    chrome: '(?i)^(google[-_ ]?chrome|chrome|chromium)',
    firefox: '(?i)(firefox|librewolf|waterfox|nightly)',
    opera: '(?i)(opera)',
    brave: '(?i)(brave)',
    edge: '(?i)^(microsoft[-_ ]?edge|msedge)',
    arc: '(?i)^arc(\\.exe)?$',
    vivaldi: '(?i)(vivaldi)',
    orion: '(?i)(orion)',
    yandex: '(?i)(yandex)',
    zen: '(?i)(zen)',
    floorp: '(?i)(floorp)',
    helium: '(?i)(helium)',
  };

  /** Most rows of a top list. */
  const LIMIT = 100;

  /** A query language string literal. */
  const quote = text => `"${String(text).replace(/"/g, '\\"')}"`;

  /**
   * JSON for the query language. Its strings keep every backslash but the one
   * before a quote, so a JSON-escaped backslash is written single, as aw-webui
   * writes its category rules.
   */
  const literal = value => JSON.stringify(value).replace(/\\\\/g, '\\');

  /**
   * Which buckets of `host` the queries read. Browser buckets without a host
   * name of their own are read for every host, unless `hostless` is false.
   */
  function hostBuckets(allBuckets, host, { hostless = true } = {}) {
    const list = Object.values(allBuckets);
    const ofHost = type => list.filter(b => b.type === type && b.hostname === host);
    const window = ofHost('currentwindow')[0];
    const afk = ofHost('afkstatus')[0];
    const browsers = [];
    for (const bucket of list.filter(b => b.type === 'web.tab.current')) {
      const browser = Object.keys(BROWSERS).find(name => bucket.id.includes(name));
      // Browser watchers often report no host name of their own.
      const sameHost = bucket.hostname === host || (hostless && isHostless(bucket));
      if (browser && sameHost) browsers.push({ id: bucket.id, browser });
    }
    return { window: window && window.id, afk: afk && afk.id, browsers };
  }

  /** A bucket without a host name of its own, as browser watchers often send. */
  const isHostless = bucket => !bucket.hostname || bucket.hostname === 'unknown';

  /**
   * The buckets of each of `hosts`, for the view of all devices: those of
   * `hostBuckets`, except that the browser buckets without a host name of
   * their own go to the first host only (the most recently active, as the
   * activity view orders them). Given to every host, as the view of one host
   * gives them, their time would be counted once per host in the sums.
   */
  function devicesBuckets(allBuckets, hosts) {
    return hosts.map((host, index) => hostBuckets(allBuckets, host, { hostless: index === 0 }));
  }

  /** The statements that leave a host's active, categorized window events in `events`. */
  function activeEvents(buckets, rules) {
    const lines = [`events = flood(query_bucket(${quote(buckets.window)}));`];
    if (buckets.afk) {
      lines.push(
        `not_afk = flood(query_bucket(${quote(buckets.afk)}));`,
        'not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);',
        'events = filter_period_intersect(events, not_afk);',
      );
    }
    lines.push(`events = categorize(events, ${literal(rules)});`);
    return lines;
  }

  function browserEvents(buckets) {
    const lines = ['browser_events = [];'];
    buckets.browsers.forEach(({ id, browser }, index) => {
      const name = `browser_${index}`;
      lines.push(
        `${name} = flood(query_bucket(${quote(id)}));`,
        `${name}_window = filter_keyvals_regex(events, "app", ${literal(BROWSERS[browser])});`,
        `${name} = filter_period_intersect(${name}, ${name}_window);`,
        `${name} = split_url_events(${name});`,
        `browser_events = sort_by_timestamp(concat(browser_events, ${name}));`,
      );
    });
    return lines;
  }

  /**
   * The summary of one period: active time, top apps, titles, categories and
   * browser domains; with `timeline`, the active events themselves (for the
   * day's hour chart and timeline).
   */
  function summaryQuery(buckets, rules, { timeline }) {
    const lines = [
      ...activeEvents(buckets, rules),
      ...browserEvents(buckets),
      'title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));',
      'app_events = sort_by_duration(merge_events_by_keys(title_events, ["app"]));',
      'cat_events = sort_by_duration(merge_events_by_keys(events, ["$category"]));',
      `app_events = limit_events(app_events, ${LIMIT});`,
      `title_events = limit_events(title_events, ${LIMIT});`,
      'duration = sum_durations(events);',
      'domains = sort_by_duration(merge_events_by_keys(browser_events, ["$domain"]));',
      `domains = limit_events(domains, ${LIMIT});`,
      timeline ? 'events = sort_by_timestamp(events);' : 'events = [];',
      'RETURN = {"duration": duration, "apps": app_events, "titles": title_events, ' +
        '"categories": cat_events, "domains": domains, "events": events};',
    ];
    return lines.join('\n');
  }

  /** Active time alone, for each day of a week or month. */
  function durationQuery(buckets, rules) {
    return [...activeEvents(buckets, rules), 'RETURN = sum_durations(events);'].join('\n');
  }

  return { hostBuckets, devicesBuckets, summaryQuery, durationQuery };
})();
