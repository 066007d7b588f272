// Global download speed over the last minute: one sample a second, drawn as an SVG line whose
// points are rewritten in place (no nodes made after the first draw).

import { svg } from './dom.js';
import * as format from './format.js';

const SAMPLES = 60;
const WIDTH = 600;
const HEIGHT = 120;

/** A round top for the scale (1, 2 or 5 × 10ⁿ B/s, KiB/s, MiB/s, …), a fifth or more above the peak. */
export function scaleFor(peak) {
  const target = Math.max(peak * 1.2, 1024);
  const unit = 1024 ** Math.floor(Math.log(target) / Math.log(1024));
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 1024];
  return unit * steps.find((step) => step * unit >= target);
}

export class SpeedChart {
  /** @param {Element} container where the chart goes; @param {Element} caption its text */
  constructor(container, caption) {
    this.samples = [];
    this.caption = caption;
    this.area = svg('polygon', { class: 'chart-area', points: '' });
    this.line = svg('polyline', { class: 'chart-line', points: '' });
    this.element = svg('svg', {
      role: 'img', class: 'chart', viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none',
      'aria-label': 'Download speed over the last minute',
    }, this.area, this.line);
    container.append(this.element);
  }

  /** Adds the speed of this second (bytes/s) and redraws. */
  push(bytesPerSecond) {
    this.samples.push(bytesPerSecond);
    if (this.samples.length > SAMPLES) this.samples.shift();
    const top = scaleFor(Math.max(...this.samples));
    const step = WIDTH / (SAMPLES - 1);
    const offset = SAMPLES - this.samples.length;
    const points = this.samples.map((value, i) => {
      const px = ((offset + i) * step).toFixed(1);
      const py = (HEIGHT - (value / top) * (HEIGHT - 4)).toFixed(1);
      return `${px},${py}`;
    });
    const first = (offset * step).toFixed(1);
    this.line.setAttribute('points', points.join(' '));
    this.area.setAttribute('points', `${first},${HEIGHT} ${points.join(' ')} ${WIDTH},${HEIGHT}`);
    const text = `now ${format.speed(bytesPerSecond)}, peak ${format.speed(Math.max(...this.samples))} in the last minute; `
      + `the scale tops at ${format.speed(top)}`;
    this.element.setAttribute('aria-label', `Download speed: ${text}`);
    if (this.caption.textContent !== text) this.caption.textContent = text;
  }
}
