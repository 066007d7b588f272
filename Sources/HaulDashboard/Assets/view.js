// The list of downloads: one row per gid, built once and then updated in place, so a page left
// open keeps the same few nodes however long it runs.

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

function cell(kind, label, ...children) {
  return h('div', { role: 'cell', class: `cell ${kind}`, 'data-label': label }, ...children);
}

class Row {
  constructor(gid, onAction) {
    this.gid = gid;
    this.download = null;
    this.name = h('span', { class: 'file-name' });
    this.problem = h('span', { class: 'problem', hidden: true });
    this.fill = h('div', { class: 'fill' });
    this.bar = h('div', {
      role: 'progressbar', class: 'bar', 'aria-valuemin': 0, 'aria-valuemax': 100,
    }, this.fill);
    this.amount = h('span', { class: 'amount' });
    this.speed = h('span');
    this.eta = h('span');
    this.state = h('span', { class: 'state' });
    this.connections = h('span');
    this.buttons = {};
    const actions = cell('actions', '');
    for (const [action, label] of BUTTONS) {
      const button = h('button', { type: 'button', class: `action ${action}` }, label);
      button.addEventListener('click', () => onAction(action, this.download));
      this.buttons[action] = button;
      actions.append(button);
    }
    this.element = h('div', { role: 'row', class: 'row', 'data-gid': gid },
      cell('name', '', this.name, this.problem),
      cell('progress', '', this.bar, this.amount),
      cell('speed', 'Speed', this.speed),
      cell('eta', 'ETA', this.eta),
      cell('state-cell', 'State', this.state),
      cell('connections', 'Connections', this.connections),
      actions);
  }

  update(download, describeError) {
    this.download = download;
    const { name, total, completed } = download;
    setAttribute(this.element, 'aria-label', name);
    setAttribute(this.element, 'data-status', download.status);
    setText(this.name, name);
    setAttribute(this.name, 'title', name);
    const problem = download.status === 'error' ? describeError(download) : '';
    setText(this.problem, problem);
    this.problem.hidden = problem === '';

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
}

export class DownloadList {
  /**
   * @param {HTMLElement} body the row group that holds the rows
   * @param {(action: string, download: object) => void} onAction
   * @param {(download: object) => string} describeError words for a failed download
   */
  constructor(body, onAction, describeError) {
    this.body = body;
    this.onAction = onAction;
    this.describeError = describeError;
    this.rows = new Map();
  }

  /** Shows `downloads` in this order: new rows are made, gone ones dropped, the rest updated. */
  render(downloads) {
    const focused = document.activeElement;
    const seen = new Set();
    let previous = null;
    for (const download of downloads) {
      seen.add(download.gid);
      let row = this.rows.get(download.gid);
      if (!row) {
        row = new Row(download.gid, this.onAction);
        this.rows.set(download.gid, row);
      }
      row.update(download, this.describeError);
      const expected = previous ? previous.nextSibling : this.body.firstChild;
      if (expected !== row.element) this.body.insertBefore(row.element, expected);
      previous = row.element;
    }
    for (const [gid, row] of this.rows) {
      if (!seen.has(gid)) {
        row.element.remove();
        this.rows.delete(gid);
      }
    }
    // Moving a row takes the focus from its button; give it back so the keyboard stays put.
    if (focused && focused !== document.activeElement && focused.isConnected && !focused.disabled) focused.focus();
  }

  get size() {
    return this.rows.size;
  }
}
