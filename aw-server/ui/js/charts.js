// Charts drawn with plain elements: bars are divs sized in percent, so
// they need no canvas, scale with the page and are read by screen readers
// through their labels. The day's timeline is one element painted with a
// gradient (see `timeline`).

const charts = (() => {
  'use strict';

  const { h } = dom;
  const { formatDuration, formatTime, isoDuration } = time;

  /** `<time>` showing a duration, exact in its datetime attribute. */
  function duration(seconds) {
    return h('time', { datetime: isoDuration(seconds), class: 'duration' }, formatDuration(seconds));
  }

  /**
   * A ranked list: rows of `{label, seconds, color?, title?, action?}`,
   * each with a bar proportional to the longest; `action` is an element
   * (a link) shown between the label and the duration.
   */
  function topList(rows, { empty = 'Nothing in this period.', limit = 10 } = {}) {
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
          { title: row.title || row.label, class: row.action ? 'has-action' : null },
          h('span', { class: 'label' }, row.label),
          row.action || null,
          duration(row.seconds),
          h('span', { class: 'track', 'aria-hidden': 'true' }, bar),
        );
      }),
    );
  }

  /**
   * The top of an hour scale over `max` seconds and its steps: whole hours,
   * at most four steps (1, 2, 3, 4, 6, 8, 12 or 24 hours each).
   */
  function hourScale(max) {
    const hours = max / 3600;
    const step = [1, 2, 3, 4, 6, 8, 12, 24].find(step => Math.ceil(hours / step) <= 4) || 24;
    const steps = Math.max(1, Math.ceil(hours / step));
    return { top: steps * step * 3600, ticks: Array.from({ length: steps + 1 }, (_, n) => n * step) };
  }

  /**
   * Vertical bars, one per `{label, seconds, title}`; the tallest possible
   * bar is `max` seconds. With `hours`, an axis of whole hours beside them
   * (its top rounded up from `max`) and a line across at each.
   */
  function columns(bins, max, caption, { hours = false } = {}) {
    if (!hours) return bars(bins, max, caption);
    const scale = hourScale(max);
    const at = tick => `${(100 * tick * 3600) / scale.top}%`;
    return h(
      'div',
      { class: 'columns-scaled' },
      h(
        'div',
        { class: 'columns-axis', 'aria-hidden': 'true' },
        h(
          'div',
          { class: 'scale' },
          scale.ticks.map(tick => {
            const label = h('span', {}, tick === 0 ? '0' : `${tick}h`);
            label.style.bottom = at(tick);
            return label;
          }),
        ),
      ),
      h(
        'div',
        { class: 'columns-plot' },
        bars(bins, scale.top, caption),
        h(
          'div',
          { class: 'gridlines', 'aria-hidden': 'true' },
          scale.ticks.slice(1).map(tick => {
            const line = h('span', {});
            line.style.bottom = at(tick);
            return line;
          }),
        ),
      ),
    );
  }

  function bars(bins, max, caption) {
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
   * The day as one strip: each active stretch placed by its time and
   * coloured by its category. Neighbouring events of one category less than
   * a pixel's worth apart make one block. The strip is a single element
   * painted with a gradient of hard stops, not an element per block: a day
   * has hundreds of blocks, and laying out and painting that many elements
   * took longer than the rest of the view. Pointing at a block shows its
   * category and times as the strip's title.
   */
  function timeline(events, [start, end], colorOf) {
    const first = start.getTime();
    const last = end.getTime();
    const span = last - first;
    const joinGap = span / 2000;
    const blocks = [];
    let block = null;
    for (const event of events) {
      const from = Math.max(Date.parse(event.timestamp), first);
      const to = Math.min(from + event.duration * 1000, last);
      if (to <= from) continue;
      const name = event.data.$category || ['Uncategorized'];
      const key = name.join('>');
      if (block && block.key === key && from - block.to < joinGap) {
        block.to = Math.max(block.to, to);
      } else {
        block = { key, name, from, to };
        blocks.push(block);
      }
    }
    const percent = ms => `${((100 * (ms - first)) / span).toFixed(3)}%`;
    // Where a block's colour ends: at least a thousandth of the day after
    // it starts, so that a short block still shows.
    const shownEnd = ({ from, to }) => Math.max(to, from + span / 1000);
    const stops = [];
    for (const block of blocks) {
      const color = colorOf(block.name);
      const left = percent(block.from);
      const right = percent(shownEnd(block));
      stops.push(`transparent ${left}`, `${color} ${left}`, `${color} ${right}`, `transparent ${right}`);
    }
    const strip = h('div', {
      class: 'timeline-strip',
      role: 'img',
      'aria-label': `${blocks.length} stretches of activity; point at one for its category and times`,
    });
    if (stops.length) strip.style.backgroundImage = `linear-gradient(to right, ${stops.join(', ')})`;
    strip.addEventListener('mousemove', event => {
      const box = strip.getBoundingClientRect();
      const at = first + ((event.clientX - box.left) / box.width) * span;
      // Half a pixel either side, so that the thinnest blocks can be found.
      const slack = span / box.width / 2;
      let low = 0;
      let high = blocks.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (shownEnd(blocks[middle]) + slack < at) low = middle + 1;
        else high = middle;
      }
      const found = blocks[low] && blocks[low].from - slack <= at ? blocks[low] : null;
      strip.title = found
        ? `${found.name.join(' > ')}: ${formatTime(new Date(found.from))}–${formatTime(new Date(found.to))}`
        : '';
    });
    const ticks = h('div', { class: 'timeline-ticks', 'aria-hidden': 'true' });
    for (let hour = 0; hour <= 24; hour += 6) {
      const tick = h('span', {}, formatTime(new Date(first + hour * 3600_000)));
      tick.style.left = `${(100 * hour * 3600_000) / span}%`;
      ticks.append(tick);
    }
    return h('div', { class: 'timeline' }, strip, ticks);
  }

  return { duration, topList, columns, timeline };
})();
