import { teardown } from './global-setup.js';
export default teardown;
