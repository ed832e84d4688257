// What an app will see with each capability, in the words of the person asked to allow it (issue 51): the catalogue's
// description speaks of tokens and resources, which is right for developers and admins but not for a person deciding
// at the consent page. Each sentence says exactly what the API returns with that capability (contract §3), no more.

/** The sentence for `capabilityId` at `tenantName`; undefined for a capability without one (its description is used). */
export function whatTheAppSees(capabilityId: string, tenantName: string): string | undefined {
  const at = tenantName || 'this organisation';
  switch (capabilityId) {
    case 'svc.profile.self.read':
      return `That it is you: the identifier of your account at ${at} (not your name, username, email or password)`;
    case 'svc.tenant.info.read':
      return `The name of ${at}`;
    case 'svc.person.read':
      return `The names of people at ${at}, yours included, and when each was added`;
    case 'svc.person.metadata.read':
      return `The notes this app keeps about people at ${at}, yours included`;
    case 'svc.person.metadata.write':
      return `Keep, change and delete this app's own notes about people at ${at}`;
    default:
      return undefined;
  }
}
