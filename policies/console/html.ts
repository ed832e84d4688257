// HTML for the admin console without a template engine: a tagged template whose every interpolated value is escaped
// (escape-html, the escaper Express itself uses) unless it is already Html built the same way.
import escapeHtml from 'escape-html';

export class Html {
  constructor(readonly text: string) {}
}

export type HtmlValue = Html | string | number | null | undefined | false | readonly HtmlValue[];

const render = (v: HtmlValue): string => {
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
};

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? render(values[i]!) : ''), ''));
}

/** The console's only style sheet, inline; the CSP allows exactly this text by its hash. */
export const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#fff}
header{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;padding:.75rem 1.5rem;background:#1f3a5f;color:#fff}
header a{color:#fff}
.brand{font-weight:bold;margin:0}
nav ul{display:flex;flex-wrap:wrap;gap:1rem;list-style:none;margin:0;padding:0}
main{padding:1rem 1.5rem}
table{border-collapse:collapse;margin:1rem 0;width:100%}
caption{text-align:left;font-weight:bold}
th,td{border:1px solid #999;padding:.35rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#eef1f5}
form.inline{display:inline}
fieldset{margin:1rem 0;border:1px solid #999}
label{display:block;margin:.5rem 0 .25rem}
fieldset label{display:inline;margin:0 1rem 0 .25rem}
input[type=text],input[type=password],input[type=search],select,textarea{
font:inherit;padding:.3rem;min-width:20rem;max-width:100%}
button{font:inherit;padding:.3rem .8rem;margin:.25rem 0;cursor:pointer}
.notice{border-left:4px solid #1f6f3f;background:#eef7f0;padding:.5rem 1rem}
.problem{border-left:4px solid #a01818;background:#fbeeee;padding:.5rem 1rem}
.secret{font:1.1rem monospace;background:#f4f4f4;padding:.5rem;word-break:break-all}
pre{background:#f4f4f4;padding:.5rem;white-space:pre-wrap;word-break:break-all}
.ceiling,.plan{color:#5a3d00}
.refused{color:#a01818}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`;
export const STYLE_ELEMENT = new Html(`<style>${STYLE}</style>`);

/**
 * The console's only script, inline and allowed by its hash: a Copy button copies the text of the element its
 * `data-copy` names (a shown-once secret) and says so. Without scripts the text stays selectable. A textarea marked
 * `data-json` (an app's public keys) says in place, as the browser's own validation message, when it holds no valid
 * JSON; the server checks the keys themselves either way.
 */
export const SCRIPT =
  "for(const b of document.querySelectorAll('button[data-copy]')){b.hidden=false;" +
  "b.addEventListener('click',async()=>{const t=document.getElementById(b.dataset.copy).textContent;" +
  "try{await navigator.clipboard.writeText(t);b.textContent='Copied'}" +
  "catch{b.textContent='Copy failed: select the text'}})}" +
  "for(const t of document.querySelectorAll('textarea[data-json]')){t.addEventListener('input',()=>{let m='';" +
  "if(t.value.trim())try{JSON.parse(t.value)}catch{m='This is not valid JSON: paste the key set as it is'}" +
  't.setCustomValidity(m)})}';
export const SCRIPT_ELEMENT = new Html(`<script>${SCRIPT}</script>`);
