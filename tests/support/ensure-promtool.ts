// `pretest`: tests/gateway/dashboards.ts checks the shipped alert rules with Prometheus's own `promtool check rules`,
// which Debian's prometheus package installs (the server is not started). Finds it, installs it where this process may,
// and otherwise stops with one line naming the command to run.
import { executable, installDebianPackage } from './debian-package.js';

const PROMTOOL = '/usr/bin/promtool';

if (!executable(PROMTOOL)) installDebianPackage('prometheus', PROMTOOL, 'The alert rules test needs promtool');
