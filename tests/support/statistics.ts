// Comparing two samples of response times without assuming their shape: the Mann-Whitney U test.

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Standard normal upper tail, by the Abramowitz–Stegun 7.1.26 approximation of erfc (error < 1.5e-7). */
function normalUpperTail(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erfc =
    t *
    (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) *
    Math.exp(-x * x);
  return z >= 0 ? erfc / 2 : 1 - erfc / 2;
}

export interface MannWhitney {
  /** P(a value of A exceeds one of B) + P(tie)/2: 0.5 when neither tends to be larger. */
  effect: number;
  /** Normal approximation of U, tie-corrected; two-sided p. */
  z: number;
  p: number;
  medianA: number;
  medianB: number;
}

export function mannWhitney(a: number[], b: number[]): MannWhitney {
  const all = [...a.map((v) => ({ v, fromA: true })), ...b.map((v) => ({ v, fromA: false }))].sort((x, y) => x.v - y.v);
  let rankSumA = 0;
  let tieTerm = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    const rank = (i + j) / 2 + 1; // tied values share the mean of their ranks
    for (let k = i; k <= j; k++) if (all[k]!.fromA) rankSumA += rank;
    const t = j - i + 1;
    tieTerm += t ** 3 - t;
    i = j + 1;
  }
  const [n1, n2] = [a.length, b.length];
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const n = n1 + n2;
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  const z = sigma === 0 ? 0 : (u - (n1 * n2) / 2) / sigma;
  return {
    effect: u / (n1 * n2),
    z,
    p: Math.min(1, 2 * normalUpperTail(Math.abs(z))),
    medianA: median(a),
    medianB: median(b),
  };
}
