// @ts-check
import { h, svg } from './dom.js';

/**
 * A small bar chart of the last minutes, one bar per history bucket placed by its time (a
 * stretch nobody watched stays empty rather than being squeezed out), drawn as SVG with
 * attributes only: no canvas, no library, nothing the CSP refuses.
 */

/** 180 px over 15 minutes: 3 px for a 15 s bucket, a bar and a gap. */
const WIDTH = 180;
const HEIGHT = 34;

/** @typedef {{ startMs: number, value: number }} Bar */

/**
 * @param {object} spec
 * @param {string} spec.label what the chart shows, e.g. "completed"
 * @param {string} spec.kind a class for the colour: "throughput" or "failures"
 * @param {Bar[]} spec.bars oldest first
 * @param {number} spec.fromMs the left edge of the time axis
 * @param {number} spec.toMs the right edge (the sample's time)
 * @param {number} spec.bucketMs how much time one bar stands for
 * @param {string} spec.figure the number shown beside the label
 * @param {string} spec.summary the chart in words, for screen readers and the tooltip
 * @param {number} [spec.ceiling] a fixed top (1 for a share), else the tallest bar
 */
export function barChart({ label, kind, bars, fromMs, toMs, bucketMs, figure, summary, ceiling }) {
  const span = Math.max(1, toMs - fromMs);
  const top = ceiling ?? Math.max(0, ...bars.map((bar) => bar.value));
  const barWidth = Math.max(1, (bucketMs / span) * WIDTH - 1);
  const rects = bars
    .filter((bar) => bar.value > 0 && top > 0)
    .map((bar) => {
      const height = Math.max(1, (bar.value / top) * (HEIGHT - 2));
      const x = Math.min(WIDTH - barWidth, Math.max(0, ((bar.startMs - fromMs) / span) * WIDTH));
      return svg('rect', {
        class: 'bar',
        x: x.toFixed(1),
        y: (HEIGHT - 1 - height).toFixed(1),
        width: barWidth.toFixed(1),
        height: height.toFixed(1),
      });
    });
  return h(
    'figure',
    { class: `spark ${kind}`, dataset: { chart: kind } },
    svg(
      'svg',
      { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: 'img', 'aria-label': summary },
      svg('title', null, summary),
      svg('line', { class: 'axis', x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5 }),
      ...rects,
    ),
    h('figcaption', null, h('span', { class: 'label' }, label), ' ', h('strong', null, figure)),
  );
}
