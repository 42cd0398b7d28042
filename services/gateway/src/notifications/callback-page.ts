import type { CallbackView } from '@packetagent/contracts';

const escape = (text: string): string =>
  text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);

/** Links opened from a mail or a chat: a page that confirms before acting (link scanners only GET). */
export const CALLBACK_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function callbackPage(view: CallbackView): string {
  const facts = Object.entries(view.detail ?? {})
    .map(([key, value]) => `<tr><th>${escape(key)}</th><td>${escape(typeof value === 'string' ? value : JSON.stringify(value))}</td></tr>`)
    .join('');
  const usable = view.state === 'usable' && view.action !== 'open';
  const state =
    view.state === 'used' ? '<p><strong>This link was already used.</strong> Nothing more will happen.</p>' : view.state === 'expired' ? '<p><strong>This link has expired.</strong> Nothing will happen.</p>' : '';
  const form = usable
    ? `<form method="post" enctype="text/plain">${view.action === 'reject' || view.action === 'stop' ? '<label>Reason <input name="reason" maxlength="1000"></label> ' : ''}<button type="submit">Confirm: ${escape(view.summary)}</button></form>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${escape(view.summary)} · PacketAgent</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1rem}th{text-align:left;padding-right:1rem}</style></head>
<body><main><h1>${escape(view.summary)}</h1>
<p>Worker <strong>${escape(view.worker.name)}</strong>; this link works until ${escape(view.expiresAt)}, once.</p>
${state}${facts ? `<table>${facts}</table>` : ''}${form}</main></body></html>`;
}
