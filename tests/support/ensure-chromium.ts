// `pretest` and `predemo-token`: the browser suites and the demo token drive Debian's Chromium. Finds it, installs
// Debian's package where this process may, and otherwise stops with one line naming the command to run.
import { CHROMIUM_PATH } from './browser.js';
import { executable, installDebianPackage, stop } from './debian-package.js';

if (!executable(CHROMIUM_PATH)) {
  if (process.env.CHROMIUM_PATH)
    stop(
      `CHROMIUM_PATH=${CHROMIUM_PATH} is not an executable file: ` +
        `point it at a Chromium binary, or unset it to use Debian's /usr/bin/chromium.`,
    );
  installDebianPackage('chromium', CHROMIUM_PATH, 'The browser suites need Chromium (or set CHROMIUM_PATH)');
}
