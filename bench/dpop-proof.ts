// The gateway's DPoP proof check alone, without HTTP or Redis (issue 49): CPU µs per proof of this process, for an
// app signing every proof with one key, the checker remembering the key it imported from the proof's header (as the
// gateway runs it) against one that imports it from every proof (a checker that remembers nothing), in alternating
// rounds. The proofs are signed beforehand, each checked once. Not part of `npm run bench`.
//   npx tsx bench/dpop-proof.ts <proofs a round (5000)> <rounds (4)>
import { randomUUID } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { accessTokenHash, proofChecker } from '../gateway/plugins/dpop/proof.js';

const [perRound, rounds] = [Number(process.argv[2] ?? 5000), Number(process.argv[3] ?? 4)];
const settings = { algs: ['ES256' as const], iatWindowS: 60, maxProofChars: 4096 };
const url = 'https://api.example.test/v1/me';
const token = `${'h'.repeat(40)}.${'c'.repeat(900)}.${'s'.repeat(86)}`;
const { privateKey, publicKey } = await generateKeyPair('ES256');
const jwk = await exportJWK(publicKey);
const jkt = await calculateJwkThumbprint(jwk, 'sha256');
const ath = accessTokenHash(token);

const sign = () =>
  new SignJWT({ htm: 'GET', htu: url, ath, jti: randomUUID() })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
    .setIssuedAt()
    .sign(privateKey);

async function round(remembering: boolean): Promise<number> {
  const proofs = await Promise.all(Array.from({ length: perRound }, sign));
  const check = proofChecker(settings, remembering ? undefined : 0);
  const before = process.cpuUsage();
  for (const proof of proofs) {
    const checked = await check({ proof, method: 'GET', url, token, jkt, nowS: Math.floor(Date.now() / 1000) });
    if (!checked.ok) throw new Error(checked.reason);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / perRound;
}

await round(true); // warm-up: both paths compiled before anything is counted
await round(false);
const results: Record<'remembered' | 'imported', number[]> = { remembered: [], imported: [] };
for (let i = 0; i < rounds; i++) {
  results.remembered.push(await round(true));
  results.imported.push(await round(false));
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
for (const [name, values] of Object.entries(results))
  console.log(
    `${name.padEnd(10)} µs CPU per proof: median ${median(values).toFixed(1)} (${values.map((v) => v.toFixed(1)).join(', ')})`,
  );
console.log(`remembered/imported ${(median(results.remembered) / median(results.imported)).toFixed(2)}`);
