// @ts-check
import { fill, h } from './dom.js';
import { HttpError, request } from './http.js';

/**
 * The token form, shown when the api has a token and this browser holds no live session. The
 * token is sent once; what comes back is an HttpOnly cookie the page's script cannot read.
 * @param {HTMLElement} root
 * @param {() => void} signedIn
 */
export function showLogin(root, signedIn) {
  const token = h('input', {
    type: 'password',
    name: 'token',
    id: 'token',
    autocomplete: 'current-password',
    required: true,
    autofocus: true,
  });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'login', 'aria-label': 'Sign in' },
    h('h1', null, 'Sign in'),
    h(
      'p',
      { class: 'muted' },
      'This api has a token (EMQ_API_TOKEN). Give it once; the browser keeps a session.',
    ),
    h('label', { for: 'token' }, 'API token'),
    token,
    problem,
    submit,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit.disabled = true;
    problem.hidden = true;
    request('/dashboard/session', { method: 'POST', body: { token: token.value }, quiet401: true })
      .then(() => signedIn())
      .catch((error) => {
        problem.textContent =
          error instanceof HttpError && error.status === 401
            ? 'That is not the api token.'
            : error instanceof HttpError && error.status === 429
              ? 'Too many attempts: wait a minute and try again.'
              : `Could not sign in: ${error instanceof Error ? error.message : String(error)}`;
        problem.hidden = false;
        token.select();
      })
      .finally(() => {
        submit.disabled = false;
      });
  });
  fill(root, form);
  token.focus();
}
