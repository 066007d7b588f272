// The segment map: the file as a bar; completed ranges from aria2's bitfield (piece i is bit
// 7 - i % 8 of byte i / 8, hex encoded), and each connection's range in flight from haul's
// "segments" key of tellStatus ([{start, end, position}], byte offsets as strings; end
// exclusive). See docs/DASHBOARD.md.

import { svg } from './dom.js';
import * as format from './format.js';

const WIDTH = 1000;
const HEIGHT = 40;

/** The completed byte ranges [start, end) a bitfield marks, adjacent pieces merged. */
export function completedRanges(bitfield, numPieces, pieceLength, total) {
  const ranges = [];
  if (!bitfield || !(numPieces > 0) || !(pieceLength > 0)) return ranges;
  let runStart = -1;
  for (let piece = 0; piece <= numPieces; piece += 1) {
    let done = false;
    if (piece < numPieces) {
      const nibble = parseInt(bitfield[piece >> 2] || '0', 16);
      done = ((nibble >> (3 - (piece & 3))) & 1) === 1;
    }
    if (done && runStart < 0) runStart = piece;
    if (!done && runStart >= 0) {
      ranges.push([runStart * pieceLength, Math.min(piece * pieceLength, total)]);
      runStart = -1;
    }
  }
  return ranges;
}

/** The ranges in flight from the "segments" key: {start, end, position} as numbers, sane ones only. */
export function flightRanges(segments, total) {
  if (!Array.isArray(segments)) return [];
  return segments
    .map((s) => ({ start: Number(s.start), end: Number(s.end), position: Number(s.position) }))
    .filter((s) => Number.isFinite(s.start) && Number.isFinite(s.end) && Number.isFinite(s.position)
      && s.start >= 0 && s.start <= s.position && s.position <= s.end && s.end <= total);
}

function x(offset, total) {
  return (offset / total) * WIDTH;
}

function rect(kind, from, to, total) {
  const left = x(from, total);
  // At least a hairline, so a piece of a huge file still shows.
  const width = Math.max(x(to, total) - left, 0.75);
  return svg('rect', { class: kind, x: left.toFixed(2), y: 0, width: width.toFixed(2), height: HEIGHT });
}

/** Makes the (empty) map element; `render` fills it. */
export function createMap() {
  return svg('svg', {
    role: 'img', class: 'segment-map', viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none',
  });
}

/**
 * Draws `download` into `map` and returns a sentence saying what it shows.
 * @param {SVGSVGElement} map from createMap
 */
export function render(map, download) {
  const { total, completed, name } = download;
  map.setAttribute('aria-label', `Segments of ${name}`);
  const parts = [svg('rect', { class: 'missing', x: 0, y: 0, width: WIDTH, height: HEIGHT })];
  if (!(total > 0)) {
    map.replaceChildren(...parts);
    return 'The size is not known yet.';
  }
  let done = completedRanges(download.bitfield, download.numPieces, download.pieceLength, total);
  if (done.length === 0 && download.status === 'complete') done = [[0, total]];
  // Ranges in flight first, the completed pieces over them, each connection's mark on top: bytes
  // a connection received show until a checkpoint makes their pieces complete.
  const flights = flightRanges(download.segments, total);
  for (const flight of flights) {
    parts.push(rect('flight', flight.start, flight.end, total));
    if (flight.position > flight.start) parts.push(rect('flight-done', flight.start, flight.position, total));
  }
  for (const [from, to] of done) parts.push(rect('done', from, to, total));
  for (const flight of flights) parts.push(rect('head', flight.position, flight.position, total));
  map.replaceChildren(...parts);

  const count = done.reduce((n, [from, to]) => n + Math.ceil((to - from) / download.pieceLength), 0);
  const pieces = download.numPieces > 0
    ? `${count} of ${download.numPieces} pieces of ${format.bytes(download.pieceLength)} complete`
    : `${format.bytes(completed)} of ${format.bytes(total)} complete`;
  const inFlight = flights.length > 0
    ? `; ${flights.length} connection${flights.length === 1 ? '' : 's'} in flight: ${flights
      .map((f) => `${format.bytes(f.start)}–${format.bytes(f.end)} at ${format.bytes(f.position)}`).join(', ')}`
    : '';
  return `${pieces}${inFlight}.`;
}
