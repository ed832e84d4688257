// Types of suite-scopes.js (plain JavaScript, since jest.config.js imports it outside jest's TypeScript transform).
export declare const STORE_FREE_SUITES: string[];
export declare const LONG_SUITES: string[];
export declare function ignoredSuites(scope: string | undefined): string[];
