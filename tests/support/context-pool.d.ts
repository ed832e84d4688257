// Types of context-pool.js (plain JavaScript, since the suites' jest environment imports it outside jest's transform).
import type { Browser } from 'playwright-core';
export declare function reusingContexts(browser: Browser): Browser;
