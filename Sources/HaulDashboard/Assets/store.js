// What the page shows of one download, from aria2's tellStatus structure (strings for numbers).

/** The keys the list asks for; the detail view asks for every key (bitfield, segments, ...). */
export const LIST_KEYS = [
  'gid', 'status', 'totalLength', 'completedLength', 'downloadSpeed', 'connections',
  'errorCode', 'errorMessage', 'files', 'dir', 'node',
];

const STATES = {
  active: 'Downloading',
  waiting: 'Queued',
  paused: 'Paused',
  error: 'Failed',
  complete: 'Complete',
  removed: 'Removed',
};

/** The last component of a path ("/srv/a/b.iso" → "b.iso"), or "". */
export function baseName(path) {
  const parts = String(path || '').split('/').filter((part) => part.length > 0);
  return parts.length > 0 ? parts[parts.length - 1] : '';
}

/** A name for a download not started yet: the last path segment of its URL, decoded. */
export function nameFromURI(uri) {
  try {
    const url = new URL(uri);
    const segment = baseName(url.pathname);
    try {
      return decodeURIComponent(segment) || url.host;
    } catch {
      return segment || url.host;
    }
  } catch {
    return String(uri || '');
  }
}

function number(value) {
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : 0;
}

/** The view of one tellStatus structure. */
export function downloadFrom(status) {
  const file = (status.files && status.files[0]) || {};
  const uris = (file.uris || []).map((entry) => entry.uri).filter((uri, i, all) => all.indexOf(uri) === i);
  const name = baseName(file.path) || (uris.length > 0 ? nameFromURI(uris[0]) : '') || status.gid;
  return {
    gid: status.gid,
    status: status.status,
    state: STATES[status.status] || status.status,
    name,
    path: file.path || '',
    dir: status.dir || '',
    uris,
    total: number(status.totalLength),
    completed: number(status.completedLength),
    speed: number(status.downloadSpeed),
    connections: number(status.connections),
    errorCode: status.errorCode,
    errorMessage: status.errorMessage || '',
    numPieces: number(status.numPieces),
    pieceLength: number(status.pieceLength),
    bitfield: status.bitfield || '',
    segments: Array.isArray(status.segments) ? status.segments : null,
    sources: Array.isArray(status.sources) ? status.sources : null,
    node: status.node || '',
  };
}

/** Whether the download can be paused, resumed, moved in the queue, or has stopped for good. */
export function abilities(download) {
  const s = download.status;
  return {
    pause: s === 'active' || s === 'waiting',
    resume: s === 'paused',
    move: s === 'waiting' || s === 'paused',
    stopped: s === 'complete' || s === 'error' || s === 'removed',
  };
}
