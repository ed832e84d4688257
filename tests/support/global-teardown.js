import { teardown } from './database-setup.js';
export default teardown;
