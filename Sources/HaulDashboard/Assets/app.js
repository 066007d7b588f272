// The dashboard: signs in, polls the daemon once a second (one system.multicall: the counts and
// the rows in view, never the whole list), and wires the forms and buttons to aria2's methods
// and haul daemon's extensions (haul.tellMatching, haul.changeMatching) where it has them.

import { RpcClient, endpoints } from './rpc.js';
import { SpeedChart } from './chart.js';
import { DetailView } from './details.js';
import { DownloadList } from './view.js';
import { Selection } from './selection.js';
import { LIST_KEYS, downloadFrom, abilities } from './store.js';
import { exitCodeMeaning } from './errors.js';
import * as format from './format.js';

const SECRET_KEY = 'haul.secret';
const POLL_MS = 1000;
const HIDDEN_POLL_MS = 5000;
const SOON_MS = 250;
const FILTER_DELAY_MS = 150;
const CONFIRM_ABOVE = 100;
const CHECKSUM_TYPES = { sha256: 'sha-256', sha512: 'sha-512', sha1: 'sha-1', md5: 'md5' };
const CONNECTION_WORDS = {
  connecting: 'Connecting…',
  websocket: 'Connected',
  http: 'Connected (polling over HTTP)',
  offline: 'Cannot reach the daemon; retrying…',
};

const $ = (id) => document.getElementById(id);

const page = {
  signedIn: false,
  timer: 0,
  inFlight: false,
  again: false,
  lastRefresh: 0,
  lastSample: 0,
  lastAgain: 0,
  pendingRemovals: new Set(),
  downloads: new Map(),
  // Whether the daemon has haul's extensions (the filter, and bulk changes by filter).
  extensions: false,
  filter: { text: '', state: 'all' },
  filterTimer: 0,
  // The list's sections as the last poll counted them.
  counts: { active: 0, waiting: 0, stopped: 0 },
  // The limits as the form last showed them: Apply sends only what was changed since.
  shownLimits: { downloads: 0, rate: 0, schedule: '' },
};

const client = new RpcClient(endpoints(window.location), {
  onNotification: (method) => {
    if (method.startsWith('aria2.onDownload')) refreshSoon();
  },
  onState: (state) => {
    $('connection').textContent = CONNECTION_WORDS[state] || state;
    $('connection').dataset.state = state;
  },
});

function describeError(download) {
  const meaning = exitCodeMeaning(download.errorCode);
  const message = download.errorMessage || 'The download failed.';
  return meaning ? `${message} (${meaning})` : message;
}

const selection = new Selection();
const list = new DownloadList($('downloads'), $('rows'), {
  onAction: (action, download) => act(action, download),
  onSelect: (download, selected) => {
    if (!download) return;
    selection.set(download.gid, selected);
    showSelection();
  },
  isSelected: (download) => selection.has(download.gid),
  describeError,
  onScroll: () => scrolled(),
});
const details = new DetailView(describeError);
const chart = new SpeedChart($('chart'), $('chart-caption'));

function say(id, text, isError = false) {
  const element = $(id);
  element.textContent = text;
  element.classList.toggle('error-message', isError);
}

function failure(error) {
  return error && error.message ? error.message : String(error);
}

// Signing in ------------------------------------------------------------------------------------

function secretFromFragment() {
  const match = /^#token=(.*)$/.exec(window.location.hash);
  if (!match) return null;
  // The secret leaves the address bar (and the history) at once.
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return match[1];
  }
}

function showSignIn(message) {
  page.signedIn = false;
  clearTimeout(page.timer);
  $('app').hidden = true;
  $('sign-out').hidden = true;
  $('sign-in').hidden = false;
  say('sign-in-error', message || '', Boolean(message));
  $('secret').focus();
}

async function signIn(secret, { quiet = false } = {}) {
  client.token = secret;
  let answers;
  try {
    answers = await client.multicall([['aria2.getVersion'], ['aria2.getGlobalOption'], ['system.listMethods']]);
  } catch (error) {
    showSignIn(`The daemon cannot be reached: ${failure(error)}.`);
    return;
  }
  const refused = answers.find((answer) => answer.error);
  if (refused) {
    window.sessionStorage.removeItem(SECRET_KEY);
    const wrong = refused.error.unauthorized;
    if (quiet && wrong) showSignIn('');
    else showSignIn(wrong
      ? 'Wrong secret: the daemon refused it. Use the contents of the secret file haul daemon named at start.'
      : `The daemon refused: ${refused.error.message}`);
    return;
  }
  const options = answers[1].result;
  page.extensions = (answers[2].result || []).includes('haul.tellMatching');
  $('filter-field').hidden = !page.extensions;
  $('state-field').hidden = !page.extensions;
  $('select-matching').hidden = !page.extensions;
  window.sessionStorage.setItem(SECRET_KEY, secret);
  showLimits(options);
  page.signedIn = true;
  $('sign-in').hidden = true;
  $('app').hidden = false;
  $('sign-out').hidden = false;
  say('sign-in-error', '');
  $('secret').value = '';
  refreshNow();
}

function signOut() {
  window.sessionStorage.removeItem(SECRET_KEY);
  client.token = '';
  if (details.dialog.open) details.dialog.close();
  showSignIn('');
  say('sign-in-error', 'Signed out.');
}

// Polling ---------------------------------------------------------------------------------------

function schedule(delay) {
  clearTimeout(page.timer);
  page.timer = setTimeout(refreshNow, delay);
}

/** A refresh soon after a notification, never more than one in flight. */
function refreshSoon() {
  if (!page.signedIn) return;
  if (page.inFlight) {
    page.again = true;
    return;
  }
  schedule(Math.max(0, page.lastRefresh + SOON_MS - Date.now()));
}

async function refreshNow() {
  if (!page.signedIn) return;
  clearTimeout(page.timer);
  if (page.inFlight) {
    page.again = true;
    return;
  }
  page.inFlight = true;
  page.lastRefresh = Date.now();
  try {
    await refresh();
  } catch (error) {
    if (error && error.unauthorized) {
      showSignIn('The daemon no longer accepts the secret: sign in again.');
      return;
    }
  } finally {
    page.inFlight = false;
  }
  if (!page.signedIn) return;
  const again = page.again;
  page.again = false;
  schedule(again ? SOON_MS : (document.hidden ? HIDDEN_POLL_MS : POLL_MS));
}

/** Whether the list shows a filter's matches (haul.tellMatching) rather than the whole list. */
function filtering() {
  return page.extensions && (page.filter.text !== '' || page.filter.state !== 'all');
}

/**
 * The calls for the rows `first` to `first + count` of the whole list: the active downloads, then
 * the queue (tellWaiting), then the results (tellStopped, oldest first), as the counts say.
 */
function windowCalls(first, count) {
  const { active, waiting } = page.counts;
  const end = first + count;
  const calls = [];
  if (first < active) calls.push(['aria2.tellActive', [LIST_KEYS]]);
  if (first < active + waiting && end > active) {
    const from = Math.max(0, first - active);
    calls.push(['aria2.tellWaiting', [from, Math.min(end - active, waiting) - from, LIST_KEYS]]);
  }
  if (end > active + waiting) {
    const from = Math.max(0, first - active - waiting);
    calls.push(['aria2.tellStopped', [from, end - active - waiting - from, LIST_KEYS]]);
  }
  return calls;
}

async function refresh() {
  const { first, count } = list.wanted();
  const filtered = filtering();
  const rowCalls = filtered
    ? [['haul.tellMatching', [{ text: page.filter.text, state: page.filter.state }, first, count, LIST_KEYS]]]
    : windowCalls(first, count);
  const removing = [...page.pendingRemovals].slice(0, 20);
  const calls = [['aria2.getGlobalStat'], ['haul.getNodes'], ['aria2.getGlobalOption'], ...rowCalls,
    ...removing.map((gid) => ['aria2.tellStatus', [gid, ['gid', 'status']]])];
  const detailGid = details.gid;
  if (detailGid) calls.push(['aria2.tellStatus', [detailGid]]);
  const answers = await client.multicall(calls);
  const refused = answers.find((answer) => answer.error && answer.error.unauthorized);
  if (refused) throw refused.error;
  const results = answers.map((answer) => answer.result);
  const [stat, nodes, options] = results;
  const rows = results.slice(3, 3 + rowCalls.length);
  const removals = answers.slice(3 + rowCalls.length, 3 + rowCalls.length + removing.length);
  const full = detailGid ? results[3 + rowCalls.length + removing.length] : undefined;
  if (stat) showGlobal(stat);
  showNodes(nodes || []);
  if (options) showLimitState(options);
  const before = { ...page.counts };
  if (stat) page.counts = { active: Number(stat.numActive) || 0, waiting: Number(stat.numWaiting) || 0, stopped: Number(stat.numStopped) || 0 };
  const shown = filtered ? matchedRows(rows[0]) : wholeListRows(rowCalls, rows, first, count);
  showRows(first, shown, before);
  finishRemovals(removing, removals);
  showDetails(detailGid, full);
}

/** A haul.tellMatching answer as `{total, downloads}`. */
function matchedRows(answer) {
  return { total: Number(answer && answer.total) || 0, downloads: ((answer && answer.downloads) || []).map(downloadFrom) };
}

/** The rows of the whole list from the window's answers, in order, and the list's length as counted now. */
function wholeListRows(rowCalls, rows, first, count) {
  const { active, waiting, stopped } = page.counts;
  const downloads = [];
  rowCalls.forEach(([method], index) => {
    let part = rows[index] || [];
    if (method === 'aria2.tellActive') part = part.slice(first, first + count);
    downloads.push(...part);
  });
  return { total: active + waiting + stopped, downloads: downloads.slice(0, count).map(downloadFrom) };
}

function showRows(first, { total, downloads }, before) {
  page.downloads = new Map(downloads.map((download) => [download.gid, download]));
  if (filtering() && selection.matching) selection.matching.total = total;
  list.render(first, downloads, total);
  // When the first rows showed, for the browser test (a User Timing mark, once).
  if (downloads.length > 0 && performance.getEntriesByName('haul-first-rows').length === 0) performance.mark('haul-first-rows');
  showStatus();
  showSelection();
  $('empty').hidden = total > 0;
  $('empty').textContent = filtering() ? 'No download matches.' : 'No downloads yet: add a URL above.';
  $('purge').disabled = page.counts.stopped === 0;
  const moved = ['active', 'waiting', 'stopped'].some((key) => before[key] !== page.counts[key]);
  // Rows asked for with the counts before a change may sit a place off: ask again (once a poll).
  if (moved && !filtering() && Date.now() - page.lastAgain >= POLL_MS) {
    page.lastAgain = Date.now();
    page.again = true;
  }
}

function showDetails(detailGid, full) {
  if (detailGid && details.gid === detailGid) {
    if (full) details.update(downloadFrom(full));
    else if (page.downloads.has(detailGid)) details.update(page.downloads.get(detailGid));
    else details.dialog.close();
  }
}

/** "Showing A–B of N" for each section of the list (or for the filter's matches). */
function showStatus() {
  const { first: from, last } = list.visible();
  const number = (n) => n.toLocaleString('en-US');
  const line = (start, size, words) => {
    const a = Math.max(from, start), b = Math.min(last, start + size);
    if (size === 0) return null;
    if (a >= b) return `${number(size)} ${words} ${start >= last ? 'below' : 'above'}`;
    return `Showing ${number(a - start + 1)}–${number(b - start)} of ${number(size)} ${words}`;
  };
  let parts;
  if (filtering()) {
    const words = $('state-filter').selectedOptions[0].textContent.toLowerCase();
    parts = [line(0, list.total, page.filter.state === 'all' ? 'matching' : `${words} matching`)];
  } else {
    const { active, waiting, stopped } = page.counts;
    parts = [line(0, active, 'active'), line(active, waiting, 'waiting or paused'), line(active + waiting, stopped, 'finished, failed or removed')];
  }
  const text = parts.filter(Boolean).join(' · ');
  if ($('list-status').textContent !== text) $('list-status').textContent = text;
}

function showGlobal(stat) {
  const speed = Number(stat.downloadSpeed) || 0;
  $('global-speed').textContent = format.speed(speed);
  $('global-counts').textContent = `${stat.numActive} active · ${stat.numWaiting} waiting · ${stat.numStopped} finished`;
  // One sample a second, however many refreshes notifications bring.
  if (Date.now() - page.lastSample >= 900) {
    page.lastSample = Date.now();
    chart.push(speed);
  }
}

/** A line per node of a fleet (hidden for one daemon): its downloads, speed and last renewal. */
function showNodes(nodes) {
  const list = $('nodes');
  list.hidden = nodes.length === 0;
  const lines = nodes.map((node) => `${node.node}: ${node.numActive} active · ${format.speed(Number(node.downloadSpeed) || 0)}`
    + ` · renewed ${node.secondsSinceRenewal} s ago`);
  const items = [...list.children];
  lines.forEach((line, index) => {
    const item = items[index] || list.appendChild(document.createElement('li'));
    if (item.textContent !== line) item.textContent = line;
  });
  items.slice(lines.length).forEach((item) => item.remove());
}

/**
 * A download removed while running stays as a result; take that away too once it has stopped
 * (each poll asks for the status of those, wherever they are in the list).
 */
function finishRemovals(gids, answers) {
  const calls = [];
  gids.forEach((gid, index) => {
    const answer = answers[index];
    if (!answer || answer.error) page.pendingRemovals.delete(gid);   // gone already
    else if (abilities(downloadFrom(answer.result)).stopped) {
      page.pendingRemovals.delete(gid);
      calls.push(['aria2.removeDownloadResult', [gid]]);
    }
  });
  if (calls.length > 0) client.multicall(calls).then(refreshSoon, () => {});
}

// Actions ---------------------------------------------------------------------------------------

async function act(action, download) {
  if (!download) return;
  if (action === 'details') {
    details.open(page.downloads.get(download.gid) || download, document.activeElement);
    refreshSoon();
    return;
  }
  const can = abilities(download);
  const calls = {
    pause: ['aria2.pause', [download.gid]],
    resume: ['aria2.unpause', [download.gid]],
    up: ['aria2.changePosition', [download.gid, -1, 'POS_CUR']],
    down: ['aria2.changePosition', [download.gid, 1, 'POS_CUR']],
    remove: can.stopped ? ['aria2.removeDownloadResult', [download.gid]] : ['aria2.forceRemove', [download.gid]],
  };
  const [method, params] = calls[action];
  try {
    await client.call(method, params);
    if (action === 'remove' && !can.stopped) page.pendingRemovals.add(download.gid);
    say('action-message', '');
  } catch (error) {
    say('action-message', `${download.name}: ${failure(error)}`, true);
  }
  refreshSoon();
}

function addOptions(form, count) {
  const options = {};
  const out = form.out.value.trim();
  if (out) {
    if (count !== 1) throw new Error('A file name needs exactly one URL.');
    options.out = out;
  }
  const checksum = form.checksum.value.trim();
  if (checksum) {
    const match = /^([a-z0-9-]+)=([0-9a-f]+)$/i.exec(checksum);
    const type = match && (CHECKSUM_TYPES[match[1].toLowerCase().replace('-', '')]);
    if (!type) throw new Error('A checksum is sha256, sha512, sha1 or md5, then = and the hex digest.');
    options.checksum = `${type}=${match[2].toLowerCase()}`;
  }
  const connections = form.connections.value.trim();
  if (connections) {
    const n = Number(connections);
    if (!Number.isInteger(n) || n < 1 || n > 16) throw new Error('Connections is a whole number from 1 to 16.');
    options.split = String(n);
    options['max-connection-per-server'] = String(n);
  }
  return options;
}

async function add(event) {
  event.preventDefault();
  const form = event.target;
  const uris = form.url.value.split(/\s+/).filter((uri) => uri.length > 0);
  if (uris.length === 0) {
    say('add-message', 'Enter a URL.', true);
    return;
  }
  let options;
  try {
    options = addOptions(form, uris.length);
  } catch (error) {
    say('add-message', error.message, true);
    return;
  }
  try {
    const answers = await client.multicall(uris.map((uri) => ['aria2.addUri', [[uri], options]]));
    const failed = answers.map((answer, i) => [answer, uris[i]]).filter(([answer]) => answer.error);
    if (failed.length > 0) {
      say('add-message', failed.map(([answer, uri]) => `${uri}: ${answer.error.message}`).join('; '), true);
    } else {
      say('add-message', uris.length === 1 ? 'Added 1 download.' : `Added ${uris.length} downloads.`);
      form.reset();
    }
  } catch (error) {
    say('add-message', `Nothing added: ${failure(error)}.`, true);
  }
  refreshSoon();
}

function rateText(bytesPerSecond) {
  const n = Number(bytesPerSecond) || 0;
  if (n === 0) return '0';
  if (n % (1024 * 1024) === 0) return `${n / (1024 * 1024)}M`;
  if (n % 1024 === 0) return `${n / 1024}K`;
  return String(n);
}

function showLimits(options) {
  if (!options) return;
  const shown = {
    downloads: Number(options['max-concurrent-downloads']) || 0,
    rate: Number(options['max-overall-download-limit']) || 0,
    schedule: options['haul-limit-schedule'] || '',
  };
  page.shownLimits = shown;
  $('max-downloads').value = shown.downloads || '';
  $('rate-limit').value = rateText(shown.rate);
  $('limit-schedule').value = shown.schedule;
  showLimitState(options);
}

/**
 * Haul's rate by the clock (absent with aria2c: the field and the line stay hidden): the rate in
 * force, the next change in the daemon's local time, the rate outside the schedule.
 */
function showLimitState(options) {
  const scheduling = 'haul-limit-schedule' in options;
  $('schedule-field').hidden = !scheduling;
  const line = $('limit-now');
  line.hidden = !scheduling;
  if (!scheduling) return;
  const words = (value) => (Number(value) > 0 ? format.speed(Number(value)) : 'no limit');
  const parts = [`Now: ${words(options['max-overall-download-limit'])}`];
  const next = options['haul-limit-next-change'];
  const when = format.wallClock(next);
  if (when) parts.push(`${when} → ${words(options['haul-limit-next-rate'])}, ${format.until(Date.parse(next) - Date.now())}`);
  parts.push(options['haul-limit-schedule'] ? `outside the schedule: ${words(options['haul-limit-rate'])}` : 'no schedule');
  const text = parts.join(' · ');
  if (line.textContent !== text) line.textContent = text;
}

/** The changes the form asks for beyond what it showed, or a sentence saying what is wrong. */
function limitChanges(form) {
  const shown = page.shownLimits;
  const downloads = Number(form['max-downloads'].value);
  const rate = format.parseRate(form['rate-limit'].value);
  const schedule = form['limit-schedule'].value.trim();
  if (!Number.isInteger(downloads) || downloads < 1) return 'Downloads at once is a whole number from 1.';
  if (rate === null) return 'A rate is a number of bytes per second, with K, M or G; 0 for none.';
  const changes = {};
  const said = [];
  if (downloads !== shown.downloads) {
    changes['max-concurrent-downloads'] = String(downloads);
    said.push(`up to ${downloads} at once`);
  }
  if (rate !== shown.rate) {
    changes['max-overall-download-limit'] = String(rate);
    said.push(rate === 0 ? 'no rate limit' : `at most ${format.speed(rate)} in all`);
  }
  if (!$('schedule-field').hidden && schedule !== shown.schedule) {
    changes['haul-limit-schedule'] = schedule;
    said.push(schedule ? 'schedule set' : 'no schedule');
  }
  return { changes, said };
}

async function applyLimits(event) {
  event.preventDefault();
  const asked = limitChanges(event.target);
  if (typeof asked === 'string') {
    say('limits-message', asked, true);
    return;
  }
  if (asked.said.length === 0) {
    say('limits-message', 'Nothing changed.');
    return;
  }
  try {
    await client.call('aria2.changeGlobalOption', [asked.changes]);
    showLimits(await client.call('aria2.getGlobalOption'));
    const sentence = asked.said.join(', ');
    say('limits-message', `${sentence[0].toUpperCase()}${sentence.slice(1)}.`);
  } catch (error) {
    // The daemon's words for a wrong schedule start with aria2's sentence about the option.
    const message = failure(error).replace(/^We encountered a problem while processing the option '--haul-limit-schedule': /, 'schedule: ');
    say('limits-message', `Not changed: ${message}.`, true);
  }
  refreshSoon();
}

async function purge() {
  try {
    await client.call('aria2.purgeDownloadResult');
    say('action-message', 'Finished downloads removed from the list.');
  } catch (error) {
    say('action-message', `Not removed: ${failure(error)}.`, true);
  }
  refreshSoon();
}

// The list: scrolling, the filter, the selection, the keyboard ------------------------------------

/** The rows in view changed: ask for them when the page does not hold them. */
function scrolled() {
  const { first, last } = list.visible();
  showStatus();
  const held = list.first <= first && last <= list.first + list.size;
  if (!held) refreshSoon();
}

function filterChanged() {
  page.filter = { text: $('filter').value, state: $('state-filter').value };
  selection.filterChanged(page.filter);
  list.reset();
  refreshNow();
}

function showSelection() {
  const count = selection.count;
  for (const action of ['pause', 'unpause', 'remove', 'moveToTop']) $(`bulk-${action}`).disabled = count === 0;
  $('select-none').disabled = count === 0;
  const words = count === 0 ? '' : `${count.toLocaleString('en-US')} selected${selection.matching ? ' (all matching)' : ''}`;
  if ($('selection-count').textContent !== words) $('selection-count').textContent = words;
  list.showSelection();
}

function selectMatching() {
  const total = filtering() ? list.total : page.counts.active + page.counts.waiting + page.counts.stopped;
  selection.selectMatching(page.filter, total);
  showSelection();
}

const ACTION_WORDS = { pause: 'Paused', unpause: 'Resumed', remove: 'Removed', moveToTop: 'Moved to the top' };

/** Asks before removing more than CONFIRM_ABOVE downloads; resolves to whether to go on. */
function confirmRemoval(count) {
  if (count <= CONFIRM_ABOVE) return Promise.resolve(true);
  const dialog = $('confirm-remove');
  $('confirm-text').textContent = `Remove ${count.toLocaleString('en-US')} downloads? Their partial files stay on disk.`;
  $('confirm-yes').textContent = `Remove ${count.toLocaleString('en-US')}`;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'remove'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}

async function bulk(action) {
  const count = selection.count;
  if (count === 0) return;
  if (action === 'remove' && !(await confirmRemoval(count))) return;
  say('action-message', `${ACTION_WORDS[action]}: working on ${count.toLocaleString('en-US')}…`);
  try {
    const { changed, unchanged } = await selection.apply(client, action, { extensions: page.extensions });
    const rest = unchanged > 0 ? `; ${unchanged.toLocaleString('en-US')} left as they were` : '';
    say('action-message', `${ACTION_WORDS[action]} ${changed.toLocaleString('en-US')}${rest}.`);
    if (action === 'remove') selection.clear();
  } catch (error) {
    say('action-message', `Not done: ${failure(error)}.`, true);
  }
  showSelection();
  refreshNow();
}

/** Keys in the list: arrows, Page Up/Down, Home/End move; Space selects; Enter opens the details. */
function listKey(event) {
  const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: list.page(), PageUp: -list.page(), Home: -Infinity, End: Infinity };
  const onList = event.target === $('downloads');
  if (event.key in moves && (onList || event.target.type === 'checkbox')) {
    event.preventDefault();
    const delta = moves[event.key];
    list.move(Number.isFinite(delta) ? delta : (delta > 0 ? list.total : -list.total));
    $('downloads').focus({ preventScroll: true });
    scrolled();
    return;
  }
  const download = list.at(list.current);
  if (!onList || !download) return;
  if (event.key === ' ') {
    event.preventDefault();
    selection.toggle(download.gid);
    showSelection();
  } else if (event.key === 'Enter') {
    event.preventDefault();
    act('details', download);
  }
}

/** `/` anywhere but in a field goes to the filter. */
function slashKey(event) {
  if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)) return;
  if ($('filter-field').hidden || $('app').hidden) return;
  event.preventDefault();
  $('filter').focus();
}

// Start -----------------------------------------------------------------------------------------

$('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  signIn($('secret').value);
});
$('sign-out').addEventListener('click', signOut);
$('add-form').addEventListener('submit', add);
$('limits-form').addEventListener('submit', applyLimits);
$('purge').addEventListener('click', purge);
$('filter-form').addEventListener('submit', (event) => {
  event.preventDefault();
  clearTimeout(page.filterTimer);
  filterChanged();
});
$('filter').addEventListener('input', () => {
  clearTimeout(page.filterTimer);
  page.filterTimer = setTimeout(filterChanged, FILTER_DELAY_MS);
});
$('state-filter').addEventListener('change', filterChanged);
$('select-matching').addEventListener('click', selectMatching);
$('select-none').addEventListener('click', () => {
  selection.clear();
  showSelection();
});
for (const action of ['pause', 'unpause', 'remove', 'moveToTop']) $(`bulk-${action}`).addEventListener('click', () => bulk(action));
$('downloads').addEventListener('keydown', listKey);
document.addEventListener('keydown', slashKey);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refreshSoon();
});

(async () => {
  const fromFragment = secretFromFragment();
  const stored = window.sessionStorage.getItem(SECRET_KEY);
  await client.connect();
  if (fromFragment !== null) await signIn(fromFragment);
  // Without a secret, try none: a daemon run with --secret= lets everyone in.
  else await signIn(stored ?? '', { quiet: stored === null });
})();
