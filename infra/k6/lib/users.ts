// Who the scripts sign in as: the users file `npm run admin -- seed-load` writes (USERS_FILE, an absolute path), or
// the demo person and app `npm start` seeds. Read once in the init context and shared by every VU (SharedArray).
import { SharedArray } from 'k6/data';

export interface LoadUser {
  username: string;
  password: string;
  personId: string;
}

/** The app every sign-in uses and the scope it asks for. */
export interface LoadApp {
  clientId: string;
  redirectUri: string;
  scope: string;
  extensionId: string;
}

interface UsersFile extends Omit<LoadApp, 'extensionId'> {
  extensionId?: string;
  users: LoadUser[];
}

const DEMO_SCOPE =
  'svc.profile.self.read svc.tenant.info.read svc.person.read svc.person.metadata.read svc.person.metadata.write';
/** The users file, read once for the whole run (a SharedArray's callback runs once, not once per VU). */
const readFile = (): UsersFile | undefined => (__ENV.USERS_FILE ? JSON.parse(open(__ENV.USERS_FILE)) : undefined);

export const USERS: LoadUser[] = new SharedArray(
  'users',
  () =>
    readFile()?.users ?? [
      {
        username: __ENV.USERNAME ?? 'alice',
        password: __ENV.PASSWORD ?? 'alice-demo-password',
        personId: __ENV.PERSON_ID ?? '',
      },
    ],
);

const fileApp = new SharedArray('app', () => {
  const { users: _users, ...app } = readFile() ?? {};
  return [app];
})[0] as Partial<UsersFile>;

export const APP: LoadApp = {
  clientId: __ENV.CLIENT_ID ?? fileApp.clientId ?? 'tp_demo_sample-app',
  redirectUri: __ENV.REDIRECT_URI ?? fileApp.redirectUri ?? 'http://127.0.0.1:8400/callback',
  scope: __ENV.SCOPE ?? fileApp.scope ?? DEMO_SCOPE,
  extensionId: __ENV.EXTENSION_ID ?? fileApp.extensionId ?? '',
};

/** The user a VU signs in as: VUs take the pool in turn, so N users spread the load of N or more VUs. */
export const userOf = (vu: number): LoadUser => USERS[(vu - 1) % USERS.length]!;

const listed = (__ENV.PERSON_IDS ?? __ENV.PERSON_ID ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
/** Person ids the scripts address: PERSON_IDS, else the pool's own persons. */
export const PERSON_IDS: string[] = listed.length
  ? listed
  : new SharedArray('person-ids', () => (readFile()?.users ?? []).map((u) => u.personId).filter(Boolean));
