// The Privacy page (`#/privacy`): the rules of the `privacy_filters`
// setting (docs/API.md §3.10) edited in a form, previewed against the
// stored history before they are saved, saved through the settings API,
// then applied to what is already stored. The server judges the rules, as
// its regex dialect (Rust's) is not the browser's: a rule it refuses gets
// the server's message beside it, and nothing is saved. Loaded when first
// opened (app.js, `LAZY`).

window.privacyView = (() => {
  'use strict';

  const { h, count, why } = dom;

  const SETTING = '/api/0/settings/privacy_filters';
  const APPLY = '/api/0/privacy/apply';

  /** Fields of the watchers' data a rule often looks at (`tab.url`-like paths work too). */
  const FIELDS = ['title', 'app', 'url', 'file', 'project', 'language'];

  const ACTIONS = [
    ['drop', 'Drop the event'],
    ['redact', 'Redact the field'],
  ];

  /** Numbers each rule's inputs, so that every label names its own input. */
  let serial = 0;

  /** The stored rules and the version they were read at (`ETag`, if the server gives one). */
  async function loadRules() {
    const response = await api.send(SETTING);
    return { value: await response.json(), etag: response.headers.get('ETag') };
  }

  async function render(main, _params, isCurrent) {
    const [stored, buckets] = await Promise.all([loadRules(), api.buckets()]);
    if (!isCurrent()) return false;
    let etag = stored.etag;

    const rows = [];
    const list = h('ol', { class: 'privacy-rules' });
    const empty = h('p', { class: 'empty' }, 'No rules: every event is stored as it comes.');
    const status = h('div', { class: 'privacy-status', role: 'status' });
    const preview = h('div', { class: 'privacy-preview', 'aria-live': 'polite' });
    const dirtyNote = h('span', { class: 'muted' });
    const applyCard = h('section', { class: 'card wide', 'aria-labelledby': 'privacy-apply-title' });
    const applyPanel = applySection(applyCard, isCurrent);

    const currentRules = () => rows.map(row => row.read());
    let savedJson = '';
    const isDirty = () => JSON.stringify(currentRules()) !== savedJson;

    /** After any edit: counts previewed before it no longer hold, the saved rules differ. */
    function edited() {
      preview.replaceChildren();
      const dirty = isDirty();
      dirtyNote.textContent = dirty ? 'Unsaved changes.' : '';
      applyPanel.refresh(dirty);
    }

    function renumber() {
      rows.forEach((row, index) => row.setNumber(index + 1, rows.length));
      empty.hidden = rows.length > 0;
    }

    function addRow(rule, { focus = false } = {}) {
      const row = ruleRow(rule, {
        move: (from, step) => {
          const index = rows.indexOf(from);
          const to = index + step;
          if (to < 0 || to >= rows.length) return;
          rows.splice(index, 1);
          rows.splice(to, 0, from);
          // Moving an element drops its focus; the button goes with the rule.
          const focused = document.activeElement;
          if (step < 0) list.insertBefore(from.element, rows[to + 1].element);
          else rows[to - 1].element.after(from.element);
          if (focused instanceof HTMLElement) focused.focus();
          renumber();
          edited();
        },
        remove: gone => {
          const index = rows.indexOf(gone);
          rows.splice(index, 1);
          gone.element.remove();
          renumber();
          edited();
          // Focus where the rule was, or on adding one when none is left.
          const next = rows[index] || rows[index - 1];
          if (next) next.focusFirst();
          else addButton.focus();
        },
      });
      rows.push(row);
      list.append(row.element);
      renumber();
      if (focus) row.focusFirst();
      return row;
    }

    const valid = Array.isArray(stored.value);
    if (valid) for (const rule of stored.value) addRow(rule && typeof rule === 'object' ? rule : {});
    savedJson = JSON.stringify(currentRules());
    renumber();

    const addButton = h(
      'button',
      {
        type: 'button',
        onclick: () => {
          addRow({ enabled: true, field: 'title', pattern: '', action: 'drop' }, { focus: true });
          edited();
        },
      },
      'Add a rule',
    );

    /** Shows a refusal of the server beside the rule it names ("rule 2: ..."); its number, or null. */
    function showRefusal(error) {
      const match = /\brule (\d+):/.exec(error.message);
      const row = match && error instanceof api.ApiError && error.status === 400 ? rows[Number(match[1]) - 1] : null;
      if (!row) return null;
      row.showError(error.message);
      return Number(match[1]);
    }

    const clearErrors = () => rows.forEach(row => row.showError(null));

    function say(...content) {
      dom.replace(status, h('p', {}, ...content));
    }
    function sayError(...content) {
      dom.replace(status, h('p', { class: 'error-text' }, ...content));
    }

    async function runPreview(event) {
      event.preventDefault();
      clearErrors();
      status.replaceChildren();
      previewButton.disabled = true;
      try {
        const response = await api.sendJson('POST', `${APPLY}?dry_run=true`, currentRules());
        const answer = await response.json();
        if (!isCurrent()) return;
        dom.replace(
          preview,
          h('h2', {}, 'Preview of the rules as edited'),
          h(
            'p',
            {},
            answer.dropped + answer.redacted === 0
              ? 'These rules change nothing already stored.'
              : `Applied to history, these rules would delete ${count(answer.dropped, 'stored event')} and redact ${answer.redacted.toLocaleString('en')}.`,
            ' New events are filtered once the rules are saved.',
          ),
          countsTable(answer, 'Would be'),
        );
      } catch (error) {
        if (!isCurrent()) return;
        if (!showRefusal(error)) sayError(`Could not preview the rules: ${why(error)}.`);
      } finally {
        previewButton.disabled = false;
      }
    }

    /** Saves the rules as edited; `over` saves them over a copy someone else saved meanwhile. */
    async function save({ over = false } = {}) {
      clearErrors();
      status.replaceChildren();
      saveButton.disabled = true;
      const rules = currentRules();
      try {
        if (over) etag = (await loadRules()).etag;
        const headers = { 'Content-Type': 'application/json' };
        if (etag) headers['If-Match'] = etag;
        const response = await api.send(SETTING, { method: 'POST', body: JSON.stringify(rules), headers });
        await response.text();
        etag = response.headers.get('ETag') || (await loadRules()).etag;
        if (!isCurrent()) return;
        savedJson = JSON.stringify(rules);
        edited();
        say(
          rules.length === 0
            ? 'Saved: no rules, every event is stored as it comes.'
            : `Saved: ${rules.length === 1 ? 'the rule applies' : `the ${rules.length} rules apply`} to every ` +
                'event that comes in from now on. To clean what is already stored, apply them to history below.',
        );
      } catch (error) {
        if (!isCurrent()) return;
        if (error instanceof api.ApiError && error.status === 412) {
          stale();
          return;
        }
        const refused = showRefusal(error);
        if (refused) {
          sayError(`The rules were not saved: the server refused rule ${refused}, as it says beside the rule.`);
        } else {
          // The edit stays in the form, to save again.
          sayError(`The rules were not saved: ${why(error)}. Your changes are still here; try again.`);
        }
      } finally {
        saveButton.disabled = false;
      }
    }

    /** Someone saved the rules since this page read them (another tab, aw-webui, a script). */
    function stale() {
      dom.replace(
        status,
        h(
          'p',
          { class: 'error-text' },
          'The rules were not saved: they were changed elsewhere (another tab, aw-webui or a script) ' +
            'since this page read them, so this copy is stale. Your changes are still here.',
        ),
        h(
          'div',
          { class: 'button-row' },
          h('button', { type: 'button', onclick: reload }, 'Load the saved rules (drops your changes)'),
          h('button', { type: 'button', class: 'danger', onclick: () => save({ over: true }) }, 'Save mine over them'),
        ),
      );
    }

    /** Draws the page again from the stored rules. */
    const reload = () => window.dispatchEvent(new HashChangeEvent('hashchange'));

    const previewButton = h('button', { type: 'submit' }, 'Preview');
    const saveButton = h('button', { type: 'button', class: 'primary', onclick: () => save() }, 'Save');
    const form = h(
      'form',
      { class: 'privacy-form', novalidate: true, onsubmit: runPreview },
      list,
      empty,
      h('div', { class: 'button-row' }, addButton),
      h(
        'div',
        { class: 'button-row actions' },
        previewButton,
        saveButton,
        dirtyNote,
      ),
      status,
      preview,
      suggestions(buckets),
    );
    form.addEventListener('input', edited);
    form.addEventListener('change', edited);

    applyPanel.refresh(false);

    main.replaceChildren(
      h(
        'div',
        { class: 'cards' },
        h(
          'section',
          { class: 'card wide', 'aria-labelledby': 'privacy-title' },
          h('h1', { id: 'privacy-title' }, 'Privacy rules'),
          h(
            'p',
            { class: 'muted' },
            'The server applies these rules, in order, to every event that comes in, before it is stored. ' +
              'A rule looks for its pattern (a regular expression, as Rust’s regex crate reads it; ',
            h('code', {}, '(?i)'),
            ' ignores case) in a field of the event’s data. “Drop” keeps the event from being stored and ' +
              'stops there; “Redact” replaces the field’s value and goes on to the next rule. ' +
              'aw-webui reads and writes the same rules.',
          ),
          valid || stored.value === null
            ? null
            : h(
                'p',
                { class: 'error-text' },
                'The stored setting is not a list of rules, so the server applies none. Saving replaces it.',
              ),
          form,
        ),
        applyCard,
      ),
    );
    return true;
  }

  /**
   * One rule as a fieldset of its own. `rule` is the stored object: keys
   * the form does not know are kept as they were. `hooks` are the list's:
   * `move(row, -1 | 1)` and `remove(row)`.
   */
  function ruleRow(rule, hooks) {
    const id = `rule-${++serial}`;
    const original = { ...rule };
    const input = (name, attributes = {}) =>
      h('input', {
        id: `${id}-${name}`,
        autocomplete: 'off',
        spellcheck: 'false',
        ...attributes,
      });

    const enabled = input('enabled', { type: 'checkbox', checked: rule.enabled === true });
    const action = h(
      'select',
      { id: `${id}-action` },
      ACTIONS.map(([value, label]) => h('option', { value, selected: rule.action === value }, label)),
    );
    const field = input('field', {
      value: typeof rule.field === 'string' ? rule.field : '',
      list: 'privacy-fields',
      required: true,
      'aria-describedby': `${id}-field-hint`,
    });
    const pattern = input('pattern', {
      class: 'pattern',
      value: typeof rule.pattern === 'string' ? rule.pattern : '',
      required: true,
      'aria-describedby': `${id}-pattern-hint`,
    });
    const replacement = input('replacement', {
      value: typeof rule.replacement === 'string' ? rule.replacement : '',
      required: true,
      'aria-describedby': `${id}-replacement-hint`,
    });
    const prefix = input('prefix', {
      value: typeof rule.bucket_prefix === 'string' ? rule.bucket_prefix : '',
      list: 'privacy-buckets',
      'aria-describedby': `${id}-prefix-hint`,
    });
    const error = h('p', { class: 'rule-error error-text', id: `${id}-error`, hidden: true });

    const labelled = (control, label, hint, extra = '') =>
      h(
        'div',
        { class: `field ${extra}` },
        h('label', { for: control.id }, label),
        control,
        hint ? h('small', { id: `${control.id}-hint` }, hint) : null,
      );
    const replacementField = labelled(replacement, 'Replacement', 'What the value becomes, e.g. REDACTED.');
    const showReplacement = () => {
      replacementField.hidden = action.value !== 'redact';
    };
    action.addEventListener('change', showReplacement);
    showReplacement();

    const legend = h('legend', {});
    const up = h('button', { type: 'button', onclick: () => hooks.move(row, -1) }, 'Move up');
    const down = h('button', { type: 'button', onclick: () => hooks.move(row, 1) }, 'Move down');
    const remove = h('button', { type: 'button', class: 'danger', onclick: ask }, 'Remove');
    const actions = h('div', { class: 'button-row rule-actions' }, up, down, remove);
    let number = 0;

    /** "Remove", which asks first: the rule is gone from the form (and, once saved, from the server). */
    function idle() {
      dom.replace(actions, up, down, remove);
    }
    function ask() {
      const yes = h(
        'button',
        { type: 'button', class: 'danger', onclick: () => hooks.remove(row) },
        `Yes, remove rule ${number}`,
      );
      dom.replace(
        actions,
        h('span', { class: 'confirm' }, `Remove rule ${number}? It stops applying once the rules are saved.`),
        yes,
        h(
          'button',
          {
            type: 'button',
            onclick: () => {
              idle();
              remove.focus();
            },
          },
          'Cancel',
        ),
      );
      yes.focus();
    }

    const element = h(
      'li',
      { class: 'rule' },
      h(
        'fieldset',
        {},
        legend,
        h(
          'div',
          { class: 'fields' },
          labelled(action, 'Action'),
          labelled(field, 'Field', 'A key of the event’s data: title, app, url, or a path like tab.url.'),
          labelled(pattern, 'Pattern', 'A regular expression searched anywhere in the value.', 'wide'),
          replacementField,
          labelled(prefix, 'Bucket prefix', 'Only buckets whose id starts with this; empty for all.'),
        ),
        h('label', { class: 'check', for: enabled.id }, enabled, ' Enabled'),
        error,
        actions,
      ),
    );

    const row = {
      element,
      /** The rule as the setting stores it. */
      read() {
        const value = { ...original };
        value.enabled = enabled.checked;
        value.field = field.value.trim();
        value.pattern = pattern.value;
        value.action = action.value;
        // Left out when empty, for the server to say a redaction needs one.
        if (action.value === 'redact' && replacement.value) value.replacement = replacement.value;
        else delete value.replacement;
        const bucketPrefix = prefix.value.trim();
        if (bucketPrefix) value.bucket_prefix = bucketPrefix;
        // aw-webui writes `null` for all buckets; a key that was absent stays absent.
        else if ('bucket_prefix' in original) value.bucket_prefix = null;
        else delete value.bucket_prefix;
        return value;
      },
      setNumber(position, total) {
        number = position;
        legend.textContent = `Rule ${position}`;
        // A button that turns disabled loses the focus: hand it to the other one.
        const focused = document.activeElement;
        up.disabled = position === 1;
        down.disabled = position === total;
        if (focused === up && up.disabled && !down.disabled) down.focus();
        if (focused === down && down.disabled && !up.disabled) up.focus();
        up.setAttribute('aria-label', `Move up rule ${position}`);
        down.setAttribute('aria-label', `Move down rule ${position}`);
        remove.setAttribute('aria-label', `Remove rule ${position}`);
      },
      /** The server's message about this rule beside it (null clears it), on the input it names. */
      showError(message) {
        const inputs = { field, pattern, replacement, bucket_prefix: prefix, action };
        for (const each of Object.values(inputs)) {
          each.removeAttribute('aria-invalid');
          const described = (each.getAttribute('aria-describedby') || '').split(' ').filter(part => part && part !== error.id);
          if (described.length) each.setAttribute('aria-describedby', described.join(' '));
          else each.removeAttribute('aria-describedby');
        }
        error.hidden = !message;
        if (!message) {
          error.replaceChildren();
          return;
        }
        // A regex error points at its place with a caret under the
        // pattern, in lines of their own: kept in a fixed-width font.
        const newline = message.indexOf('\n');
        dom.replace(
          error,
          newline === -1 ? message : [message.slice(0, newline), h('code', {}, message.slice(newline + 1))],
        );
        const named = Object.keys(inputs).find(key => message.includes(`\`${key}\``)) || 'pattern';
        const target = inputs[named];
        target.setAttribute('aria-invalid', 'true');
        target.setAttribute('aria-describedby', `${target.getAttribute('aria-describedby') || ''} ${error.id}`.trim());
        target.focus();
      },
      focusFirst() {
        action.focus();
      },
    };
    return row;
  }

  /** Datalists of the fields and bucket prefixes the rules' inputs offer. */
  function suggestions(buckets) {
    const prefixes = new Set();
    for (const id of Object.keys(buckets)) {
      if (id.includes('_')) prefixes.add(id.slice(0, id.indexOf('_')));
      prefixes.add(id);
    }
    return [
      h('datalist', { id: 'privacy-fields' }, FIELDS.map(value => h('option', { value }))),
      h('datalist', { id: 'privacy-buckets' }, [...prefixes].sort().map(value => h('option', { value }))),
    ];
  }

  /**
   * What the rules do (`answer` of /api/0/privacy/apply) per bucket:
   * `verb` is "Would be" for a dry run, else "".
   */
  function countsTable(answer, verb) {
    const buckets = Object.entries(answer.buckets || {});
    if (buckets.length === 0) return h('p', { class: 'empty' }, 'No stored bucket is covered by these rules.');
    const heading = word => (verb ? `${verb} ${word.toLowerCase()}` : word);
    return h(
      'table',
      { class: 'privacy-counts' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Bucket', 'Events examined', heading('Deleted'), heading('Redacted')].map(name => h('th', { scope: 'col' }, name)),
        ),
      ),
      h(
        'tbody',
        {},
        buckets.map(([id, outcome]) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row', 'data-label': 'Bucket' }, h('code', {}, id)),
            h('td', { class: 'number', 'data-label': 'Events examined' }, outcome.examined.toLocaleString('en')),
            h('td', { class: 'number', 'data-label': heading('Deleted') }, outcome.dropped.toLocaleString('en')),
            h('td', { class: 'number', 'data-label': heading('Redacted') }, outcome.redacted.toLocaleString('en')),
          ),
        ),
      ),
    );
  }

  /**
   * "Apply to history": the saved rules over the events already stored.
   * It first says what it would do (a dry run of the saved rules), then
   * asks, then does it. `refresh(dirty)` says whether the form holds
   * unsaved edits, which this does not apply.
   */
  function applySection(card, isCurrent) {
    const check = h(
      'button',
      { type: 'button', 'aria-describedby': 'privacy-apply-hint', onclick: dryRun },
      'Check what applying would change',
    );
    const hint = h('p', { id: 'privacy-apply-hint', class: 'muted' });
    const result = h('div', { class: 'privacy-apply-result', 'aria-live': 'polite' });
    dom.replace(
      card,
      h('h2', { id: 'privacy-apply-title' }, 'Apply the saved rules to history'),
      h(
        'p',
        {},
        'Saved rules filter the events that come in after. Events stored before keep their data until the ' +
          'rules are applied to them: those a drop rule matches are deleted, the fields a redact rule matches ' +
          'are overwritten. This cannot be undone.',
      ),
      hint,
      h('div', { class: 'button-row' }, check),
      result,
    );

    async function dryRun() {
      check.disabled = true;
      result.replaceChildren();
      try {
        const answer = await (await api.send(`${APPLY}?dry_run=true`, { method: 'POST' })).json();
        if (!isCurrent()) return;
        if (answer.dropped + answer.redacted === 0) {
          dom.replace(result, h('p', {}, 'The saved rules change nothing already stored.'), countsTable(answer, ''));
          return;
        }
        const touched = Object.entries(answer.buckets)
          .filter(([, outcome]) => outcome.dropped + outcome.redacted > 0)
          .map(([id]) => id);
        const what = `delete ${count(answer.dropped, 'event')} and redact ${answer.redacted.toLocaleString('en')}`;
        const yes = h('button', { type: 'button', class: 'danger', onclick: apply }, `Yes, ${what}`);
        dom.replace(
          result,
          h(
            'p',
            { class: 'confirm' },
            `Applying the saved rules will ${what}, in ${touched.join(', ')}. This cannot be undone.`,
          ),
          countsTable(answer, 'Will be'),
          h(
            'div',
            { class: 'button-row' },
            yes,
            h(
              'button',
              {
                type: 'button',
                onclick: () => {
                  result.replaceChildren();
                  check.focus();
                },
              },
              'Cancel',
            ),
          ),
        );
        yes.focus();
      } catch (error) {
        if (isCurrent()) dom.replace(result, h('p', { class: 'error-text' }, `Could not check: ${why(error)}.`));
      } finally {
        check.disabled = dirty;
      }
    }

    async function apply() {
      for (const button of result.querySelectorAll('button')) button.disabled = true;
      try {
        const answer = await (await api.send(APPLY, { method: 'POST' })).json();
        if (!isCurrent()) return;
        const done = h(
          'p',
          { tabindex: '-1' },
          `Done: ${count(answer.dropped, 'event')} deleted and ${answer.redacted.toLocaleString('en')} redacted.`,
        );
        dom.replace(result, done, countsTable(answer, ''));
        done.focus();
      } catch (error) {
        if (!isCurrent()) return;
        dom.replace(result, h('p', { class: 'error-text' }, `The rules were not applied: ${why(error)}.`));
      }
    }

    let dirty = false;
    return {
      refresh(now) {
        dirty = now;
        check.disabled = dirty;
        hint.textContent = dirty
          ? 'Save your changes first: this applies the saved rules, not the ones being edited.'
          : 'Nothing changes before you confirm.';
        if (dirty) result.replaceChildren();
      },
    };
  }

  return { render };
})();
