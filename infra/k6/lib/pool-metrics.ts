// The token pool's counters. Declared here, once, and imported wherever they are counted and by scenarios.ts, whose
// thresholds name them: k6 refuses to start a run whose thresholds name a metric no module declared.
import { Counter } from 'k6/metrics';

export const signIns = new Counter('sign_ins');
export const signInFailed = new Counter('sign_in_failed');
export const refreshes = new Counter('token_refreshes');
export const refreshFailed = new Counter('refresh_failed');
