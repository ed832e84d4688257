// What a parsed JSON body may hold before anything else reads it. JSON.parse accepts any depth and any \u escape, but
// JSON.stringify, schema compilers and PostgreSQL's jsonb parser recurse (a few thousand levels overflow their
// stacks), and jsonb refuses lone UTF-16 surrogates (`"\ud800"`). JSON.parse also turns a number beyond a double's
// range (`1e400`) into Infinity, which JSON.stringify writes as null: stored, the value would silently change.
// Bodies are checked right after parsing.
import type { RequestHandler } from 'express';
import { sendProblem } from './http.js';

/**
 * Why `value` cannot be taken — nesting deeper than `maxDepth` levels, a key or string that is not well-formed
 * Unicode, a number a double cannot hold — or undefined when it can. Iterative: the input decides the depth.
 */
export function jsonInputProblem(value: unknown, maxDepth: number): string | undefined {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return 'contains text that is not well-formed Unicode (a lone surrogate)';
      continue;
    }
    if (typeof v === 'number' && !Number.isFinite(v)) return 'holds a number too large to keep exactly (over 1.8e308)';
    if (typeof v !== 'object' || v === null) continue;
    if (depth > maxDepth) return `nests deeper than ${maxDepth} levels`;
    if (Array.isArray(v)) for (const child of v) stack.push([child, depth + 1]);
    else for (const [key, child] of Object.entries(v)) stack.push([key, depth], [child, depth + 1]);
  }
  return undefined;
}

/** After express.json: a body `jsonInputProblem` refuses is 422 schema_invalid. */
export const jsonInputGuard =
  (maxDepth: number): RequestHandler =>
  (req, res, next) => {
    const problem = jsonInputProblem(req.body, maxDepth);
    return problem ? sendProblem(res, 'schema_invalid', { message: `the body ${problem}` }) : next();
  };
