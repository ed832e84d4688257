// Types of app-callback.js (plain JavaScript, since jest's global setup imports it outside jest's TypeScript transform).
export declare const APP_REDIRECT_URI_ENV: string;
export declare function appRedirectUri(): string;
export declare function startAppCallback(): Promise<void>;
export declare function stopAppCallback(): Promise<void>;
