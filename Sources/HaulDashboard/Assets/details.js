// The detail view of one download: a modal dialog with the segment map and the facts, redrawn
// from a full tellStatus once a second while it is open.

import { h } from './dom.js';
import * as format from './format.js';
import * as segments from './segments.js';

/** One server of a download from several: its URI, state and speed, or why it was set aside. */
function describeSource(source) {
  const given = `${source.uri}: `;
  if (source.state === 'setAside') return `${given}set aside (${source.reason || 'no reason given'})`;
  if (source.state === 'waiting') return `${given}waiting, ${format.bytes(Number(source.completedLength) || 0)} so far`;
  return `${given}${format.speed(Number(source.downloadSpeed) || 0)} over ${source.connections}, `
    + `${format.bytes(Number(source.completedLength) || 0)} so far`;
}

export class DetailView {
  /** @param {(download: object) => string} describeError */
  constructor(describeError) {
    this.describeError = describeError;
    this.dialog = document.getElementById('details');
    this.title = document.getElementById('details-title');
    this.facts = document.getElementById('details-facts');
    this.segmentText = document.getElementById('segment-text');
    this.map = segments.createMap();
    document.getElementById('segment-map-box').append(this.map);
    this.gid = null;
    this.opener = null;
    document.getElementById('details-close').addEventListener('click', () => this.dialog.close());
    this.dialog.addEventListener('close', () => {
      this.gid = null;
      if (this.opener && this.opener.isConnected) this.opener.focus();
      this.opener = null;
    });
  }

  /** Opens the view on `download` (its list entry) until the next full status arrives. */
  open(download, opener) {
    this.gid = download.gid;
    this.opener = opener;
    this.update(download);
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** Redraws from a download view (full or from the list). */
  update(download) {
    if (download.gid !== this.gid) return;
    this.title.textContent = download.name;
    this.segmentText.textContent = segments.render(this.map, download);
    for (const item of document.querySelectorAll('.legend-flight')) item.hidden = download.segments === null;
    const rows = [
      ['State', download.state],
      ['Size', download.total > 0 ? format.bytes(download.total) : 'not known yet'],
      ['Downloaded', `${format.bytes(download.completed)}${
        download.total > 0 ? ` (${format.percent(download.total, download.completed).toFixed(1)}%)` : ''}`],
      ['Speed', download.status === 'active' ? format.speed(download.speed) : '—'],
      ['Time left', download.status === 'active'
        ? format.duration(format.remainingSeconds(download.total, download.completed, download.speed)) : '—'],
      ['Connections', String(download.connections)],
      ['Saved as', download.path || `${download.dir || '(default folder)'}/…`],
      ['URL', download.uris.join('\n') || '—'],
      ...(download.sources ? [['Servers', download.sources.map(describeSource).join('\n')]] : []),
      ['GID', download.gid],
    ];
    if (download.status === 'error') rows.push(['Error', this.describeError(download)]);
    // The list is small: rebuilt when its text changes, left alone otherwise.
    const signature = JSON.stringify(rows);
    if (signature === this.signature) return;
    this.signature = signature;
    this.facts.replaceChildren(...rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
  }
}
