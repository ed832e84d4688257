// The concurrency sweep as a picture (issue 19): requests per second and p99 latency against connections, R1 (the
// full path) beside B2 (a bare proxy to the same backend), written as SVG next to the run's JSON.
import escapeHtml from 'escape-html';

export interface SweepPoint {
  /** R1 or B2. */
  series: string;
  connections: number;
  rps: number;
  p99: number;
}

const WIDTH = 820;
const HEIGHT = 340;
const PANEL = { width: 320, height: 200, top: 90 };
const PANELS = [
  { left: 60, title: 'requests per second', value: (p: SweepPoint) => p.rps },
  { left: 60 + PANEL.width + 90, title: 'p99 latency (ms)', value: (p: SweepPoint) => p.p99 },
];
const STYLE: Record<string, { color: string; dash: string; label: string }> = {
  R1: { color: '#d95f02', dash: '', label: 'R1 full path' },
  B2: { color: '#1b9e77', dash: '6 4', label: 'B2 bare proxy' },
};
const GRID_LINES = 4;

/** A round step for the value axis: 1, 2 or 5 times a power of ten. */
function niceStep(max: number): number {
  const raw = max / GRID_LINES;
  const power = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
}

const label = (n: number) => (n >= 1000 ? `${+(n / 1000).toFixed(1)}k` : String(+n.toPrecision(3)));

/** The SVG document; connections are spaced evenly (1, 10, 64 and 256 would crowd a linear axis). */
export function sweepChartSvg(measured: SweepPoint[], caption: string): string {
  const points = measured.filter((p) => Number.isFinite(p.rps) && Number.isFinite(p.p99)); // a failed point is left out
  const connections = [...new Set(points.map((p) => p.connections))].sort((a, b) => a - b);
  const series = [...new Set(points.map((p) => p.series))];
  const x = (c: number) =>
    connections.length === 1 ? PANEL.width / 2 : (connections.indexOf(c) / (connections.length - 1)) * PANEL.width;
  const parts: string[] = [];
  for (const panel of PANELS) {
    const step = niceStep(Math.max(...points.map(panel.value), 0));
    const top = step * GRID_LINES;
    const y = (v: number) => PANEL.height - (v / top) * PANEL.height;
    parts.push(`<g transform="translate(${panel.left},${PANEL.top})">`);
    parts.push(
      `<text x="${PANEL.width / 2}" y="-12" text-anchor="middle" font-weight="bold">${escapeHtml(panel.title)}</text>`,
    );
    for (let i = 0; i <= GRID_LINES; i++) {
      const gy = y(i * step).toFixed(1);
      parts.push(`<line x1="0" x2="${PANEL.width}" y1="${gy}" y2="${gy}" stroke="#ddd"/>`);
      parts.push(`<text x="-6" y="${gy}" text-anchor="end" dominant-baseline="middle">${label(i * step)}</text>`);
    }
    for (const c of connections)
      parts.push(`<text x="${x(c).toFixed(1)}" y="${PANEL.height + 18}" text-anchor="middle">${c}</text>`);
    parts.push(`<text x="${PANEL.width / 2}" y="${PANEL.height + 36}" text-anchor="middle">connections</text>`);
    for (const name of series) {
      const style = STYLE[name] ?? { color: '#555', dash: '', label: name };
      const mine = points.filter((p) => p.series === name).sort((a, b) => a.connections - b.connections);
      const coords = mine.map((p) => `${x(p.connections).toFixed(1)},${y(panel.value(p)).toFixed(1)}`);
      parts.push(
        `<polyline data-series="${escapeHtml(name)}" fill="none" stroke="${style.color}" stroke-width="2" ` +
          `stroke-dasharray="${style.dash}" points="${coords.join(' ')}"/>`,
      );
      for (const c of coords) {
        const [cx, cy] = c.split(',');
        parts.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${style.color}"/>`);
      }
    }
    parts.push('</g>');
  }
  const legend = series.map((name, i) => {
    const style = STYLE[name] ?? { color: '#555', dash: '', label: name };
    const lx = WIDTH / 2 - 170 + i * 180;
    return (
      `<line x1="${lx}" x2="${lx + 24}" y1="44" y2="44" stroke="${style.color}" stroke-width="2" ` +
      `stroke-dasharray="${style.dash}"/>` +
      `<text x="${lx + 30}" y="44" dominant-baseline="middle">${escapeHtml(style.label)}</text>`
    );
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" ` +
      'font-family="sans-serif" font-size="12" role="img">',
    `<title>${escapeHtml(`Concurrency sweep: ${caption}`)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="14">` +
      `${escapeHtml(`Concurrency sweep: ${caption}`)}</text>`,
    ...parts,
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}

/** The sweep's points from its measurements (ids `R1 c=<n>`, `B2 c=<n>`). */
export function sweepPoints(sweep: { id: string; rps: number; p99: number }[]): SweepPoint[] {
  return sweep.flatMap((m) => {
    const match = /^(\S+) c=(\d+)$/.exec(m.id);
    return match ? [{ series: match[1]!, connections: Number(match[2]), rps: m.rps, p99: m.p99 }] : [];
  });
}
