// Requests written out byte for byte, for what fetch will not send (a malformed head, an Expect header) and answers
// Node's parser gives before any handler runs.
import { connect } from 'node:net';

/**
 * Sends `bytes` to `url`'s host and port and returns the raw answer once the server closes the connection (after a
 * refusal, or `connection: close`): the sending side stays open, as a client's does while it waits.
 */
export const rawHttp = (url: string, bytes: string) =>
  new Promise<string>((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let answer = '';
    socket.on('data', (d) => (answer += d));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });

/** A header of a raw answer (case-insensitive name), from its head only. */
export const rawHeader = (answer: string, name: string) =>
  new RegExp(`\r\n${name}: ([^\r]*)\r\n`, 'i').exec(answer.split('\r\n\r\n')[0]!)?.[1];

/** The raw answer's body parsed as JSON. */
export const rawJson = <T = Record<string, unknown>>(answer: string): T =>
  JSON.parse(answer.split('\r\n\r\n')[1]!) as T;

/** The raw answer's status code. */
export const rawStatus = (answer: string) => Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1]);
