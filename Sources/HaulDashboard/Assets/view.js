// The list of downloads as a virtual list: the table scrolls over every download of the daemon's
// list, but only the rows in view (and a few beyond) are in the page. Row N sits at N row heights
// from the top; the space above and below the rows in the page is padding.

import { h, setText, setAttribute } from './dom.js';
import * as format from './format.js';
import { abilities } from './store.js';

const BUTTONS = [
  ['up', 'Move up'],
  ['down', 'Move down'],
  ['pause', 'Pause'],
  ['resume', 'Resume'],
  ['remove', 'Remove'],
  ['details', 'Details'],
];
/** Rows kept in the page beyond those in view, above and below. */
const OVERSCAN = 10;
/** The most rows ever asked for at once (the page holds no more). */
const MOST_ROWS = 120;

function cell(kind, label, ...children) {
  return h('div', { role: 'cell', class: `cell ${kind}`, 'data-label': label }, ...children);
}

class Row {
  constructor(gid, handlers) {
    this.gid = gid;
    this.download = null;
    this.check = h('input', { type: 'checkbox', class: 'select' });
    this.check.addEventListener('change', () => handlers.onSelect(this.download, this.check.checked));
    this.name = h('span', { class: 'file-name' });
    this.problem = h('span', { class: 'problem', hidden: true });
    this.fill = h('div', { class: 'fill' });
    this.bar = h('div', { role: 'progressbar', class: 'bar', 'aria-valuemin': 0, 'aria-valuemax': 100 }, this.fill);
    this.amount = h('span', { class: 'amount' });
    this.speed = h('span');
    this.eta = h('span');
    this.state = h('span', { class: 'state' });
    this.connections = h('span');
    this.buttons = {};
    const actions = cell('actions', '');
    for (const [action, label] of BUTTONS) {
      const button = h('button', { type: 'button', class: `action ${action}` }, label);
      button.addEventListener('click', () => handlers.onAction(action, this.download));
      this.buttons[action] = button;
      actions.append(button);
    }
    this.element = h('div', { role: 'row', class: 'row', 'data-gid': gid },
      cell('name', '', this.check, h('span', { class: 'name-text' }, this.name, this.problem)),
      cell('progress', '', this.bar, this.amount),
      cell('speed', 'Speed', this.speed),
      cell('eta', 'ETA', this.eta),
      cell('state-cell', 'State', this.state),
      cell('connections', 'Connections', this.connections),
      actions);
  }

  update(download, index, selected, describeError) {
    this.download = download;
    const { name, total, completed } = download;
    setAttribute(this.element, 'aria-label', name);
    setAttribute(this.element, 'aria-rowindex', index + 2);   // the header is row 1
    setAttribute(this.element, 'id', `row-${index}`);
    setAttribute(this.element, 'data-status', download.status);
    setAttribute(this.check, 'aria-label', `Select ${name}`);
    if (this.check.checked !== selected) this.check.checked = selected;
    setText(this.name, name);
    setAttribute(this.name, 'title', name);
    const problem = download.status === 'error' ? describeError(download) : '';
    setText(this.problem, problem);
    setAttribute(this.problem, 'title', problem || null);
    this.problem.hidden = problem === '';
    this.showProgress(download, name, total, completed);
    const running = download.status === 'active';
    setText(this.speed, running ? format.speed(download.speed) : '—');
    setText(this.eta, running ? format.duration(format.remainingSeconds(total, completed, download.speed)) : '—');
    setText(this.state, download.node ? `${download.state} · ${download.node}` : download.state);
    setText(this.connections, running ? String(download.connections) : '—');
    const can = abilities(download);
    this.buttons.pause.disabled = !can.pause;
    this.buttons.resume.disabled = !can.resume;
    this.buttons.up.hidden = !can.move;
    this.buttons.down.hidden = !can.move;
  }

  showProgress(download, name, total, completed) {
    const percent = download.status === 'complete' ? 100 : format.percent(total, completed);
    setAttribute(this.bar, 'aria-label', `Progress of ${name}`);
    setAttribute(this.bar, 'aria-valuenow', percent);
    const amount = total > 0
      ? `${format.bytes(completed)} of ${format.bytes(total)}${percent === null ? '' : ` · ${percent.toFixed(1)}%`}`
      : format.bytes(completed);
    setAttribute(this.bar, 'aria-valuetext', amount);
    setText(this.amount, amount);
    const width = `${percent === null ? 0 : percent}%`;
    if (this.fill.style.width !== width) this.fill.style.width = width;
  }
}

export class DownloadList {
  /**
   * @param {HTMLElement} viewport the table, which scrolls
   * @param {HTMLElement} body the row group that holds the rows
   * @param {{onAction, onSelect, isSelected, describeError, onScroll}} handlers
   */
  constructor(viewport, body, handlers) {
    this.viewport = viewport;
    this.body = body;
    this.handlers = handlers;
    this.rows = new Map();
    this.total = 0;
    this.first = 0;
    this.current = -1;
    this.rowHeight = 0;
    viewport.addEventListener('scroll', () => handlers.onScroll());
  }

  /** The height of one row in pixels, unrounded (every row has the same; measured once one is drawn). */
  height() {
    const any = this.rows.values().next().value;
    const measured = any ? any.element.getBoundingClientRect().height : 0;
    if (measured > 0) this.rowHeight = measured;
    return this.rowHeight || 56;
  }

  /** The rows in view: `{first, last}` (last excluded), within the list. */
  visible() {
    const height = this.height();
    const header = this.viewport.querySelector('.head');
    const top = this.viewport.scrollTop;
    const room = this.viewport.clientHeight - (header ? header.offsetHeight : 0);
    const first = Math.min(this.total, Math.floor(top / height));
    const last = Math.min(this.total, Math.ceil((top + Math.max(room, height)) / height));
    return { first, last };
  }

  /** The rows to ask for: those in view and a few beyond, at most MOST_ROWS. */
  wanted() {
    const { first, last } = this.visible();
    const start = Math.max(0, first - OVERSCAN);
    return { first: start, count: Math.min(MOST_ROWS, last + OVERSCAN - start) };
  }

  /** Shows `downloads` as the rows from `first`, in a list of `total`. */
  render(first, downloads, total) {
    const focused = document.activeElement;
    // Measured before the rows change: a layout with rows gone and the padding not yet grown
    // would make the browser pull the scroll back.
    const height = this.height();
    this.total = total;
    this.first = first;
    const seen = new Set();
    let previous = null;
    downloads.forEach((download, offset) => {
      seen.add(download.gid);
      let row = this.rows.get(download.gid);
      if (!row) {
        row = new Row(download.gid, this.handlers);
        this.rows.set(download.gid, row);
      }
      row.update(download, first + offset, this.handlers.isSelected(download), this.handlers.describeError);
      row.element.classList.toggle('current', first + offset === this.current);
      const expected = previous ? previous.nextSibling : this.body.firstChild;
      if (expected !== row.element) this.body.insertBefore(row.element, expected);
      previous = row.element;
    });
    for (const [gid, row] of this.rows) {
      if (!seen.has(gid)) {
        row.element.remove();
        this.rows.delete(gid);
      }
    }
    this.pad(first, downloads.length, total, height);
    setAttribute(this.viewport, 'aria-rowcount', total + 1);
    this.markCurrent();
    // Moving a row takes the focus from its button; give it back so the keyboard stays put.
    if (focused && focused !== document.activeElement && focused.isConnected && !focused.disabled) focused.focus();
  }

  /** The space of the rows not in the page, above and below. */
  pad(first, count, total, height) {
    const above = `${first * height}px`, below = `${Math.max(0, total - first - count) * height}px`;
    if (this.body.style.paddingTop !== above) this.body.style.paddingTop = above;
    if (this.body.style.paddingBottom !== below) this.body.style.paddingBottom = below;
  }

  /** Ticks the rows' boxes as the selection now says. */
  showSelection() {
    for (const row of this.rows.values()) {
      const selected = Boolean(row.download && this.handlers.isSelected(row.download));
      if (row.check.checked !== selected) row.check.checked = selected;
    }
  }

  /** The download shown at `index`, if its row is in the page. */
  at(index) {
    const row = this.body.children[index - this.first];
    return row ? this.rows.get(row.dataset.gid)?.download : undefined;
  }

  /** Moves the keyboard's row by `delta` (clamped), scrolling it into view. */
  move(delta) {
    if (this.total === 0) return;
    this.current = Math.max(0, Math.min(this.total - 1, (this.current < 0 ? 0 : this.current + delta)));
    const height = this.height();
    const header = this.viewport.querySelector('.head');
    const room = this.viewport.clientHeight - (header ? header.offsetHeight : 0);
    const top = this.current * height;
    if (top < this.viewport.scrollTop) this.viewport.scrollTop = top;
    else if (top + height > this.viewport.scrollTop + room) this.viewport.scrollTop = top + height - room;
    this.markCurrent();
  }

  /** Rows in one screen. */
  page() {
    const header = this.viewport.querySelector('.head');
    return Math.max(1, Math.floor((this.viewport.clientHeight - (header ? header.offsetHeight : 0)) / this.height()));
  }

  markCurrent() {
    for (const row of this.rows.values()) row.element.classList.remove('current');
    const element = this.body.children[this.current - this.first];
    if (element) element.classList.add('current');
    setAttribute(this.viewport, 'aria-activedescendant', element ? element.id : null);
  }

  /** Back to the top (a new filter). */
  reset() {
    this.viewport.scrollTop = 0;
    this.current = -1;
  }

  get size() {
    return this.rows.size;
  }
}
