// Deleting a time range from the day view (`DELETE
// /api/0/buckets/<id>/events?start=&end=`, docs/API.md §3.10): a form
// under the day's timeline, opened by activity.js and loaded the first
// time it is asked for, so the view's own script does not grow with it.
// The range is typed, or dragged across the timeline; the buckets are
// those of the hosts shown. The server's dry run says per bucket what
// would be deleted and trimmed, and only once that is confirmed is it
// done; then the view is drawn again.

window.rangeDelete = (() => {
  'use strict';

  const { h, count, why } = dom;
  const { formatDate, formatTime } = time;

  /** Numbers each form's inputs, so that every label names its own input. */
  let serial = 0;

  /**
   * A time typed for the day `[start, end)`: on the date the day starts,
   * or the next one when it is earlier than the day's start ("03:00" of a
   * day from 04:00 is the next morning's). As an end, the day's start time
   * is its end. Null for a value that is no time.
   */
  function timeOfDay(value, [start, end], isEnd) {
    const match = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
    if (!match) return null;
    const [hours, minutes, seconds] = [match[1], match[2], match[3] || 0].map(Number);
    const at = new Date(start.getFullYear(), start.getMonth(), start.getDate(), hours, minutes, seconds);
    if (at < start) at.setDate(at.getDate() + 1);
    if (isEnd && at.getTime() === start.getTime()) return new Date(end);
    return at;
  }

  /**
   * The buckets a range of these hosts' day is deleted from: theirs, and
   * those of no host (a browser watcher that sends none), which the day's
   * figures count for every host.
   */
  function bucketsOf(buckets, hosts) {
    const hostless = bucket => !bucket.hostname || bucket.hostname === 'unknown';
    return Object.values(buckets)
      .filter(bucket => hosts.includes(bucket.hostname) || hostless(bucket))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  const rangePath = (id, start, end, dryRun) =>
    `/api/0/buckets/${encodeURIComponent(id)}/events?start=${encodeURIComponent(start.toISOString())}` +
    `&end=${encodeURIComponent(end.toISOString())}${dryRun ? '&dry_run=true' : ''}`;

  /** The answer of a range delete (or its dry run) in one bucket: `{deleted, trimmed}`. */
  async function deleteIn(id, start, end, dryRun) {
    return (await api.send(rangePath(id, start, end, dryRun), { method: 'DELETE' })).json();
  }

  /**
   * Opens the form in `slot`, hiding `opener`, the button that asked for
   * it, until it closes. `day` is `[start, end]` of the day shown,
   * `buckets` the server's, `hosts` the hosts shown.
   */
  function open(slot, { opener, day, buckets, hosts }) {
    const id = `range-${++serial}`;
    const card = slot.closest('.card') || slot;
    const strips = [...card.querySelectorAll('.timeline-strip')];
    // Every listener this form adds outside itself, removed when it closes.
    const listening = new AbortController();

    const input = (name, label, hint) => {
      const control = h('input', {
        id: `${id}-${name}`,
        type: 'time',
        required: true,
        'aria-describedby': `${id}-${name}-hint`,
      });
      const error = h('p', { class: 'error-text', id: `${id}-${name}-error`, hidden: true });
      const field = h(
        'div',
        { class: 'field' },
        h('label', { for: control.id }, label),
        control,
        h('small', { id: `${id}-${name}-hint` }, hint),
        error,
      );
      return { control, error, field };
    };
    const dayStart = formatTime(day[0]);
    const from = input('from', 'From', `Times before ${dayStart} are the next morning’s.`);
    const to = input('to', 'To', 'Not included: the range ends just before it.');

    const choices = bucketsOf(buckets, hosts).map((bucket, index) => {
      const box = h('input', { type: 'checkbox', id: `${id}-bucket-${index}`, value: bucket.id, checked: true });
      return {
        bucket,
        box,
        element: h(
          'label',
          { class: 'check', for: box.id },
          box,
          ' ',
          h('code', {}, bucket.id),
          bucket.type ? h('span', { class: 'muted' }, ` (${bucket.type})`) : null,
        ),
      };
    });
    const bucketsError = h('p', { class: 'error-text', id: `${id}-buckets-error`, hidden: true });
    const bucketsField = h(
      'fieldset',
      { class: 'range-buckets', 'aria-describedby': bucketsError.id },
      h('legend', {}, 'From the buckets'),
      choices.map(choice => choice.element),
      bucketsError,
    );

    const status = h('div', { class: 'range-status', 'aria-live': 'polite' });
    const check = h('button', { type: 'submit' }, 'Show what would be deleted');
    const cancel = h('button', { type: 'button', onclick: close }, 'Cancel');
    const form = h(
      'form',
      { class: 'range-form', novalidate: true, 'aria-labelledby': `${id}-title`, onsubmit: dryRun },
      h('h3', { id: `${id}-title` }, 'Delete a time range'),
      h(
        'p',
        { class: 'muted' },
        'Everything the chosen buckets recorded in the range is deleted; events crossing its edges are cut ' +
          'at them. Type the times or drag across the timeline. Nothing is deleted before you confirm.',
      ),
      h('div', { class: 'fields' }, from.field, to.field),
      bucketsField,
      h('div', { class: 'button-row' }, check, cancel),
      status,
    );

    /** A message beside what caused it (null clears it). */
    function mark(target, message) {
      target.error.hidden = !message;
      target.error.textContent = message || '';
      const described = [`${target.control.id}-hint`, message ? target.error.id : null].filter(Boolean);
      target.control.setAttribute('aria-describedby', described.join(' '));
      if (message) target.control.setAttribute('aria-invalid', 'true');
      else target.control.removeAttribute('aria-invalid');
    }

    /** The range typed, or null after saying what is wrong beside it. */
    function readRange() {
      mark(from, null);
      mark(to, null);
      const start = timeOfDay(from.control.value, day, false);
      const end = timeOfDay(to.control.value, day, true);
      if (!start) mark(from, 'Give the time the range starts at.');
      if (!end) mark(to, 'Give the time the range ends at.');
      if (start && end && end <= start) {
        mark(to, `The range must end after it starts (${formatTime(start)}); the day ends at ${dayStart}.`);
      }
      const wrong = [from, to].find(each => !each.error.hidden);
      if (wrong) {
        wrong.control.focus();
        return null;
      }
      return [start, end];
    }

    function chosen() {
      bucketsError.hidden = true;
      const ids = choices.filter(choice => choice.box.checked).map(choice => choice.bucket.id);
      if (ids.length === 0) {
        bucketsError.hidden = false;
        bucketsError.textContent = 'Choose at least one bucket.';
        choices[0]?.box.focus();
      }
      return ids;
    }

    async function dryRun(event) {
      event.preventDefault();
      status.replaceChildren();
      const range = readRange();
      const ids = chosen();
      if (!range || ids.length === 0) return;
      const [start, end] = range;
      check.disabled = true;
      try {
        const answers = await Promise.all(ids.map(bucket => deleteIn(bucket, start, end, true)));
        showPreview(range, ids.map((bucket, index) => [bucket, answers[index]]));
      } catch (error) {
        // The server's refusal of the range goes beside the range's end.
        if (error instanceof api.ApiError && error.status === 400) {
          mark(to, error.message);
          to.control.focus();
        } else {
          dom.replace(status, h('p', { class: 'error-text' }, `Could not check the range: ${why(error)}.`));
        }
      } finally {
        check.disabled = false;
      }
    }

    function showPreview([start, end], results) {
      const deleted = results.reduce((sum, [, answer]) => sum + answer.deleted, 0);
      const trimmed = results.reduce((sum, [, answer]) => sum + answer.trimmed, 0);
      const when = `between ${formatTime(start)} and ${formatTime(end)} of ${formatDate(day[0])}`;
      const table = h(
        'table',
        { class: 'range-counts' },
        h(
          'thead',
          {},
          h('tr', {}, ['Bucket', 'Events deleted', 'Events trimmed'].map(name => h('th', { scope: 'col' }, name))),
        ),
        h(
          'tbody',
          {},
          results.map(([bucket, answer]) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row', 'data-label': 'Bucket' }, h('code', {}, bucket)),
              h('td', { class: 'number', 'data-label': 'Events deleted' }, answer.deleted.toLocaleString('en')),
              h('td', { class: 'number', 'data-label': 'Events trimmed' }, answer.trimmed.toLocaleString('en')),
            ),
          ),
        ),
      );
      if (deleted + trimmed === 0) {
        dom.replace(status, h('p', {}, `Nothing is recorded ${when} in these buckets.`), table);
        return;
      }
      const what = `delete ${count(deleted, 'event')} and trim ${trimmed.toLocaleString('en')}`;
      const yes = h(
        'button',
        { type: 'button', class: 'danger', onclick: () => confirmed([start, end], results.map(([bucket]) => bucket), when) },
        `Yes, ${what}`,
      );
      dom.replace(
        status,
        h('p', { class: 'confirm' }, `This will ${what} ${when}. It cannot be undone.`),
        table,
        h(
          'div',
          { class: 'button-row' },
          yes,
          h(
            'button',
            {
              type: 'button',
              onclick: () => {
                status.replaceChildren();
                check.focus();
              },
            },
            'Cancel',
          ),
        ),
      );
      yes.focus();
    }

    /** Deletes the range from each bucket in turn, then draws the view again. */
    async function confirmed([start, end], ids, when) {
      for (const button of form.querySelectorAll('button')) button.disabled = true;
      let deleted = 0;
      let trimmed = 0;
      const done = [];
      for (const bucket of ids) {
        try {
          const answer = await deleteIn(bucket, start, end, false);
          deleted += answer.deleted;
          trimmed += answer.trimmed;
          done.push(bucket);
        } catch (error) {
          for (const button of form.querySelectorAll('button')) button.disabled = false;
          dom.replace(
            status,
            h(
              'p',
              { class: 'error-text' },
              `Could not delete the range from ${bucket}: ${why(error)}.`,
              done.length ? ` It was deleted from ${done.join(', ')}.` : ' Nothing was deleted.',
            ),
          );
          return;
        }
      }
      close();
      await redraw();
      // The view drawn again has a slot of its own for the note.
      const note = h(
        'p',
        { class: 'range-done', role: 'status', tabindex: '-1' },
        `Deleted ${count(deleted, 'event')} and trimmed ${trimmed.toLocaleString('en')} ${when}.`,
      );
      const next = document.querySelector('main .range-tool');
      if (next) {
        next.prepend(note);
        note.focus();
      }
    }

    /** Asks app.js to draw the view again; settles once it has. */
    function redraw() {
      const before = document.body.dataset.drawn;
      return new Promise(resolve => {
        const observer = new MutationObserver(() => {
          if (document.body.dataset.drawn !== before) {
            observer.disconnect();
            resolve();
          }
        });
        observer.observe(document.body, { attributes: true, attributeFilter: ['data-drawn'] });
        window.dispatchEvent(new HashChangeEvent('hashchange'));
      });
    }

    function close() {
      const hadFocus = form.contains(document.activeElement);
      listening.abort();
      for (const strip of strips) strip.querySelector('.range-selection')?.remove();
      card.classList.remove('range-open');
      form.remove();
      opener.hidden = false;
      if (hadFocus) opener.focus();
    }

    // A changed range or choice of buckets: what was previewed no longer holds.
    form.addEventListener('input', () => {
      status.replaceChildren();
      showSelection();
    });
    form.addEventListener('change', () => showSelection());

    /** The range typed, shown on the timeline. */
    function showSelection() {
      const start = timeOfDay(from.control.value, day, false);
      const end = timeOfDay(to.control.value, day, true);
      for (const strip of strips) {
        let box = strip.querySelector('.range-selection');
        if (!start || !end || end <= start) {
          box?.remove();
          continue;
        }
        if (!box) {
          box = h('div', { class: 'range-selection', 'aria-hidden': 'true' });
          strip.append(box);
        }
        const span = day[1] - day[0];
        box.style.left = `${(100 * (start - day[0])) / span}%`;
        box.style.width = `${(100 * (end - start)) / span}%`;
      }
    }

    // Dragging across a timeline picks the range, to the minute.
    for (const strip of strips) {
      let anchor = null;
      const at = event => {
        const box = strip.getBoundingClientRect();
        const fraction = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
        const minute = 60_000;
        return new Date(Math.round((day[0].getTime() + fraction * (day[1] - day[0])) / minute) * minute);
      };
      const choose = (a, b) => {
        const [first, last] = a <= b ? [a, b] : [b, a];
        from.control.value = formatTime(first);
        to.control.value = formatTime(last);
        status.replaceChildren();
        showSelection();
      };
      const options = { signal: listening.signal };
      strip.addEventListener(
        'pointerdown',
        event => {
          if (event.button !== 0) return;
          anchor = at(event);
          strip.setPointerCapture(event.pointerId);
          event.preventDefault();
        },
        options,
      );
      strip.addEventListener(
        'pointermove',
        event => {
          if (anchor) choose(anchor, at(event));
        },
        options,
      );
      const finish = event => {
        if (!anchor) return;
        const end = at(event);
        // A click without a drag picks nothing.
        if (end.getTime() !== anchor.getTime()) choose(anchor, end);
        anchor = null;
      };
      strip.addEventListener('pointerup', finish, options);
      strip.addEventListener('pointercancel', () => (anchor = null), options);
    }

    card.classList.add('range-open');
    opener.hidden = true;
    slot.append(form);
    from.control.focus();
  }

  return { open, timeOfDay };
})();
