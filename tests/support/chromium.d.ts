// Types of chromium.js (plain JavaScript, since jest's global setup imports it outside jest's TypeScript transform).
import type { LaunchOptions } from 'playwright-core';
export declare const CHROMIUM_PATH: string;
export declare const BROWSER_ENDPOINT_ENV: string;
export declare const WORKER_BROWSER: unique symbol;
export declare const LAUNCH_OPTIONS: LaunchOptions;
export declare function startRunBrowser(): Promise<void>;
export declare function stopRunBrowser(): Promise<void>;
