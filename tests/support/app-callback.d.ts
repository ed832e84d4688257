// Types of app-callback.js (plain JavaScript, since jest's global setup imports it outside jest's TypeScript transform).
export declare function appRedirectUri(): string;
export declare function startAppCallback(): Promise<void>;
export declare function stopAppCallback(): Promise<void>;
