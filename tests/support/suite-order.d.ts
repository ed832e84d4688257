// Types of suite-order.js (plain JavaScript, since jest loads it outside its TypeScript transform).
export declare const HEAVIEST_FIRST: string[];
export declare function suiteName(path: string): string;
