// The bench's sweep chart (bench/sweep-chart.ts), rendered by Chromium: two panels, one line per series in each, a
// point per connection count, higher values drawn higher, and labels a reader needs. And the bench's CPU profile
// summary (bench/cpu-profile-summary.ts), on a profile made up to hold a start-up and a busy span.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import { sweepChartSvg, sweepPoints } from '../../bench/sweep-chart.js';
import { busiestSpan, summarize } from '../../bench/cpu-profile-summary.js';

describe('sweep-chart', () => {
  const SWEEP = [
    { id: 'R1 c=1', rps: 476, p99: 7.87 },
    { id: 'B2 c=1', rps: 1393, p99: 3.76 },
    { id: 'R1 c=10', rps: 1343, p99: 21.74 },
    { id: 'B2 c=10', rps: 3236, p99: 11.13 },
    { id: 'R1 c=64', rps: 2001, p99: 69.49 },
    { id: 'B2 c=64', rps: 3564, p99: 37.59 },
    { id: 'R1 c=256', rps: 1786, p99: 388.06 },
    { id: 'B2 c=256', rps: 2912, p99: 117.32 },
  ];

  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe('sweep chart', () => {
    it('draws req/s and p99 against connections, R1 beside B2, each point where its value says', async () => {
      const svg = sweepChartSvg(sweepPoints(SWEEP), 'deployed shape, 2 CPUs <test>');
      expect(svg).not.toMatch(/NaN|undefined/);
      const page = await browser.newPage();
      await page.setContent(svg);
      const drawn = await page.evaluate(() => ({
        title: document.querySelector('svg > title')?.textContent,
        lines: [...document.querySelectorAll('polyline')].map((l) => ({
          series: l.getAttribute('data-series'),
          points: [...l.points].map((p) => ({ x: p.x, y: p.y })),
          box: (({ left, top, right, bottom }) => ({ left, top, right, bottom }))(l.getBoundingClientRect()),
        })),
        textRights: [...document.querySelectorAll('text')].map((t) => t.getBoundingClientRect().right),
        texts: [...document.querySelectorAll('text')].map((t) => t.textContent),
        width: document.querySelector('svg')!.getBoundingClientRect().width,
      }));
      await page.close();
      expect(Math.max(...drawn.textRights)).toBeLessThanOrEqual(820);
      expect(drawn.title).toBe('Concurrency sweep: deployed shape, 2 CPUs <test>');
      expect(drawn.width).toBe(820);
      expect(drawn.lines.map((l) => l.series)).toEqual(['R1', 'B2', 'R1', 'B2']);
      for (const line of drawn.lines) {
        expect(line.points).toHaveLength(4);
        // drawn inside the picture
        expect(line.box.left >= 0 && line.box.top >= 0 && line.box.right <= 820 && line.box.bottom <= 340).toBe(true);
        expect(line.points.map((p) => p.x)).toEqual([...line.points.map((p) => p.x)].sort((a, b) => a - b));
      }
      // SVG's y grows downwards: B2's 3,564 req/s at 64 connections is drawn above R1's 2,001; R1's p99 at 256 above all.
      const [r1Rps, b2Rps, r1P99, b2P99] = drawn.lines;
      expect(b2Rps!.points[2]!.y).toBeLessThan(r1Rps!.points[2]!.y);
      expect(Math.min(...r1P99!.points.map((p) => p.y), ...b2P99!.points.map((p) => p.y))).toBe(r1P99!.points[3]!.y);
      expect(drawn.texts).toEqual(
        expect.arrayContaining([
          'requests per second',
          'p99 latency (ms)',
          '1',
          '10',
          '64',
          '256',
          'connections',
          'R1 full path',
          'B2 bare proxy',
        ]),
      );
    });
  });

  describe('CPU profile summary', () => {
    // Node 1 is the root; 2 a module load at start; 3 the gateway's proxy, calling undici (4); 5 the collector; 6 idle.
    const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
      id,
      callFrame: { functionName, url, lineNumber: 0 },
      children,
    });
    const profile = {
      startTime: 1_000_000,
      nodes: [
        frame(1, '(root)', '', [2, 3, 5, 6]),
        frame(2, 'compileSourceTextModule', 'node:internal/modules/esm/utils'),
        frame(3, 'forward', 'file:///app/gateway/proxy.ts', [4]),
        frame(4, 'request', 'file:///app/node_modules/undici/lib/client.js'),
        frame(5, '(garbage collector)', ''),
        frame(6, '(idle)', ''),
      ],
      // 2 s of start-up in 1 ms samples, busy half the time; 1 s idle; 2 s of serving: proxy, undici, undici, GC and
      // idle in turn, busy four fifths of the time.
      samples: [
        ...Array.from({ length: 2000 }, (_, i) => [2, 6][i % 2]!),
        ...Array<number>(1000).fill(6),
        ...Array.from({ length: 2000 }, (_, i) => [3, 4, 4, 5, 6][i % 5]!),
      ],
      timeDeltas: Array<number>(5000).fill(1000),
    };

    it('finds the busiest span and counts only its busy samples, by part, by product caller and by frame', () => {
      const span = busiestSpan(profile, 2);
      expect(span.from).toBeGreaterThanOrEqual(profile.startTime + 3_000_000 - 1000);
      const { busyUs, parts, ownCallers, frames } = summarize(profile, span);
      expect(busyUs).toBeGreaterThanOrEqual(1_590_000); // 4 busy samples in 5 over 2 s, start-up and idle left out
      expect(busyUs).toBeLessThanOrEqual(1_610_000);
      const share = (rows: [string, number][], key: string) =>
        Math.round((100 * (new Map(rows).get(key) ?? 0)) / busyUs);
      expect(share(parts, 'undici')).toBe(50);
      expect(share(parts, 'gateway/proxy.ts')).toBe(25);
      expect(share(parts, '(garbage collector)')).toBe(25);
      expect(share(ownCallers, 'gateway/proxy.ts')).toBe(75); // undici's frames were the proxy's calls
      expect(frames[0]![0]).toBe('request undici:1');
    });

    it('counts every busy sample without a window', () => {
      expect(summarize(profile).busyUs).toBe(2_600_000);
    });
  });
});
