// Charts drawn with plain elements: bars are divs sized in percent, so
// they need no canvas, scale with the page and are read by screen readers
// through their labels.

import { h } from './dom.js';
import { formatDuration, formatTime, isoDuration } from './time.js';

/** `<time>` showing a duration, exact in its datetime attribute. */
export function duration(seconds) {
  return h('time', { datetime: isoDuration(seconds), class: 'duration' }, formatDuration(seconds));
}

/**
 * A ranked list: rows of `{label, seconds, color?, title?}`, each with a
 * bar proportional to the longest.
 */
export function topList(rows, { empty = 'Nothing in this period.', limit = 10 } = {}) {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  const longest = Math.max(...rows.map(row => row.seconds), 1);
  return h(
    'ol',
    { class: 'top-list' },
    rows.slice(0, limit).map(row => {
      const bar = h('span', { class: 'bar' });
      bar.style.width = `${(100 * row.seconds) / longest}%`;
      if (row.color) bar.style.backgroundColor = row.color;
      return h(
        'li',
        { title: row.title || row.label },
        h('span', { class: 'label' }, row.label),
        duration(row.seconds),
        h('span', { class: 'track', 'aria-hidden': 'true' }, bar),
      );
    }),
  );
}

/**
 * Vertical bars, one per `{label, seconds, title}`; the tallest possible
 * bar is `max` seconds.
 */
export function columns(bins, max, caption) {
  const chart = h('div', { class: 'columns', role: 'list', 'aria-label': caption });
  for (const bin of bins) {
    const bar = h('span', { class: 'fill' });
    bar.style.height = `${Math.min(100, (100 * bin.seconds) / max)}%`;
    chart.append(
      h(
        'div',
        {
          class: 'column',
          role: 'listitem',
          title: `${bin.title}: ${formatDuration(bin.seconds)}`,
          'aria-label': `${bin.title}: ${formatDuration(bin.seconds)}`,
        },
        h('span', { class: 'slot' }, bar),
        h('span', { class: 'tick' }, bin.label),
      ),
    );
  }
  return chart;
}

/**
 * Seconds of `events` falling in each of `ranges` (`[start, end]`, in
 * order and not overlapping, as the hours of a day): each event is added
 * to the few ranges it overlaps, found by a binary search.
 */
export function secondsPerRange(events, ranges) {
  const starts = ranges.map(([from]) => from.getTime());
  const ends = ranges.map(([, to]) => to.getTime());
  const totals = ranges.map(() => 0);
  for (const event of events) {
    const start = Date.parse(event.timestamp);
    const end = start + event.duration * 1000;
    // The first range ending after the event starts.
    let low = 0;
    let high = ranges.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (ends[middle] <= start) low = middle + 1;
      else high = middle;
    }
    for (let index = low; index < ranges.length && starts[index] < end; index++) {
      const overlap = Math.min(end, ends[index]) - Math.max(start, starts[index]);
      if (overlap > 0) totals[index] += overlap / 1000;
    }
  }
  return totals;
}

/**
 * The day as one strip: each active stretch placed by its time and
 * coloured by its category. Neighbouring events of one category less than
 * a pixel's worth apart are drawn as one block.
 */
export function timeline(events, [start, end], colorOf) {
  const span = end.getTime() - start.getTime();
  const strip = h('div', { class: 'timeline-strip' });
  const joinGap = span / 2000;
  let block = null;
  const flush = () => {
    if (!block) return;
    const element = h('span', {
      class: 'block',
      title: `${block.name.join(' > ')}: ${formatTime(new Date(block.from))}–${formatTime(
        new Date(block.to),
      )}`,
    });
    element.style.left = `${(100 * (block.from - start.getTime())) / span}%`;
    element.style.width = `${Math.max(0.1, (100 * (block.to - block.from)) / span)}%`;
    element.style.backgroundColor = colorOf(block.name);
    strip.append(element);
  };
  for (const event of events) {
    const from = Math.max(new Date(event.timestamp).getTime(), start.getTime());
    const to = Math.min(from + event.duration * 1000, end.getTime());
    if (to <= from) continue;
    const name = event.data.$category || ['Uncategorized'];
    if (block && block.key === name.join('>') && from - block.to < joinGap) {
      block.to = Math.max(block.to, to);
    } else {
      flush();
      block = { key: name.join('>'), name, from, to };
    }
  }
  flush();
  const ticks = h('div', { class: 'timeline-ticks', 'aria-hidden': 'true' });
  for (let hour = 0; hour <= 24; hour += 6) {
    const at = new Date(start.getTime() + hour * 3600_000);
    const tick = h('span', {}, formatTime(at));
    tick.style.left = `${(100 * hour * 3600_000) / span}%`;
    ticks.append(tick);
  }
  return h('div', { class: 'timeline' }, strip, ticks);
}
