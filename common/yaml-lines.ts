// Where a setting sits in a YAML file, so a problem found in the parsed value can be reported as `file:line`. One
// helper for every declarative file the project reads (the gateway file, a tenant's configuration file).
import { LineCounter, parseDocument, type Document } from 'yaml';

/** A setting's place in the parsed value: map keys and list indexes from the top. */
export type YamlPath = (string | number)[];

export interface LocatedYaml {
  doc: Document;
  /** `file:line: message` for each syntax error (a duplicate key is one); empty when the text parsed. */
  syntaxProblems: string[];
  /** The line of the deepest node of `path` that exists in the document (a missing setting: its parent's line). */
  lineOf(path: YamlPath): number;
}

/** Parses `text` (read from `file`) keeping each node's position. */
export function locatedYaml(text: string, file: string): LocatedYaml {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  return {
    doc,
    syntaxProblems: doc.errors.map((e) => `${file}:${lines.linePos(e.pos[0]).line}: ${e.message.split('\n')[0]}`),
    lineOf: (path) => lineOf(doc, lines, path),
  };
}

function lineOf(doc: Document, lines: LineCounter, path: YamlPath): number {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = doc.getIn(path.slice(0, depth), true) as { range?: [number, number, number] } | undefined;
    const keyLine = depth > 0 ? keyNodeLine(doc, lines, path.slice(0, depth)) : undefined;
    if (keyLine) return keyLine;
    if (node?.range) return lines.linePos(node.range[0]).line;
  }
  return 1;
}

/** For a map entry, the line of its key (a nested map's own first line would be the line after it). */
function keyNodeLine(doc: Document, lines: LineCounter, path: YamlPath): number | undefined {
  const parent = doc.getIn(path.slice(0, -1), true) as
    { items?: { key?: { value?: unknown; range?: [number, number, number] } }[] } | undefined;
  const key = parent?.items?.find((p) => p.key?.value === path[path.length - 1])?.key;
  return key?.range ? lines.linePos(key.range[0]).line : undefined;
}

/** A path as a reader writes it: `routes[2].plugins.cors`, or `(file)` for the whole file. */
export const settingName = (path: YamlPath) =>
  path.length ? path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i ? `.${p}` : p)).join('') : '(file)';
