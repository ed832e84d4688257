// Assertions on Problem answers (contract §7.2), for jest suites; support modules that also run outside jest (the
// soak, the benchmark) do not import this.
import { expect } from '@jest/globals';

/** The parts of an answer a program may act on: its status and Problem `error`. */
export const problemOf = (res: { status: number; body: any }) => ({
  status: res.status,
  error: res.body?.error as string | undefined,
});

export function expectProblem(res: { status: number; body: any }, status: number, error: string): void {
  expect(problemOf(res)).toEqual({ status, error });
}
