// @ts-check
import { confirmButton, fill, h } from './dom.js';
import { instant, json } from './format.js';
import { HttpError, request, seg } from './http.js';
import { isSet, queueHref } from './routes.js';

/** @typedef {import('./model.js').Job} Job */

/** A job is read again at most this often while events about it keep coming. */
const REFRESH_GAP_MS = 250;

/**
 * @param {string} term
 * @param {string | number | undefined} value
 */
function fact(term, value) {
  if (value === undefined || value === '') return null;
  return [h('dt', null, term), h('dd', { dataset: { fact: term.toLowerCase() } }, String(value))];
}

/**
 * @param {string} term
 * @param {string | undefined} iso
 */
function when(term, iso) {
  if (!iso) return null;
  return [h('dt', null, term), h('dd', { title: iso }, instant(iso))];
}

/**
 * @param {string} title
 * @param {string} text
 * @param {string} [kind]
 */
function block(title, text, kind = '') {
  return h('section', { class: `block ${kind}` }, h('h2', null, title), h('pre', { class: kind }, text));
}

/** @param {Job} job */
function logs(job) {
  const lines = job.logs ?? [];
  const dropped = job.logsDropped ? ` (the ${job.logsDropped} before these are not kept)` : '';
  return h(
    'section',
    { class: 'block logs' },
    h('h2', null, `Logs${dropped}`),
    lines.length === 0
      ? h('p', { class: 'muted' }, 'The handler wrote no log lines.')
      : h('ol', { class: 'log-lines' }, ...lines.map((line) => h('li', null, line))),
  );
}

/**
 * Everything about one job: state, attempts, timestamps, data, last error, result, progress
 * and logs, with retry (when dead) and remove. Events about the job read it again, so a retried
 * job is seen going back to pending, running and completing without a reload.
 * @param {HTMLElement} root
 * @param {{ queue: string, id: string }} route
 * @returns {import('./model.js').View}
 */
export function jobView(root, route) {
  const { queue, id } = route;
  const path = `/queues/${seg(queue)}/jobs/${seg(id)}`;
  const notice = h('p', { class: 'notice', role: 'status' });
  const back = h('a', { href: queueHref(queue) }, queue);
  const state = h('span', { class: 'badge state', dataset: { state: 'loading' } }, '…');
  const retry = h('button', { type: 'button', class: 'primary', hidden: true }, 'Retry');
  const remove = confirmButton(
    'Remove',
    'Click again to remove this job',
    async () => {
      notice.classList.remove('problem');
      try {
        await request(path, { method: 'DELETE' });
        notice.textContent = 'Removed.';
        await refresh();
      } catch (error) {
        notice.classList.add('problem');
        notice.textContent = error instanceof Error ? error.message : String(error);
      }
    },
    { class: 'danger' },
  );
  const content = h('div', { class: 'job-content' });
  fill(
    root,
    h(
      'section',
      { class: 'job-page', dataset: { job: id } },
      h(
        'nav',
        { class: 'crumbs' },
        h('a', { href: '#/' }, 'Queues'),
        ' / ',
        back,
        ' / ',
        h('span', { class: 'mono' }, id),
      ),
      h(
        'header',
        { class: 'queue-head' },
        h('h1', { class: 'mono' }, id),
        state,
        h('span', { class: 'spacer' }),
        retry,
        remove,
      ),
      notice,
      content,
    ),
  );

  retry.addEventListener('click', () => {
    retry.disabled = true;
    notice.classList.remove('problem');
    request(`${path}/retry`, { method: 'POST' })
      .then(() => {
        notice.textContent = 'Retried: back in pending with a fresh retry budget.';
        return refresh();
      })
      .catch((error) => {
        notice.classList.add('problem');
        notice.textContent = error instanceof Error ? error.message : String(error);
      })
      .finally(() => {
        retry.disabled = false;
      });
  });

  /** @param {Job} job */
  const draw = (job) => {
    state.textContent = job.state;
    state.dataset.state = job.state;
    retry.hidden = job.state !== 'dead';
    remove.hidden = false;
    if (isSet(job.state)) back.href = queueHref(queue, job.state);
    fill(
      content,
      h(
        'dl',
        { class: 'facts' },
        ...(fact('Name', job.name || '(none)') ?? []),
        ...(fact('Lane', job.lane) ?? []),
        ...(fact('Priority', job.priority) ?? []),
        ...(fact(
          'Attempts',
          `${job.attempts} (${job.attemptsLeft} of ${job.maxAttempts} left in this budget)`,
        ) ?? []),
        ...(fact('Timeout', job.timeoutMs === undefined ? undefined : `${job.timeoutMs} ms`) ?? []),
        ...(when('Enqueued', job.enqueuedAt) ?? []),
        ...(when('Runs at', job.runAt) ?? []),
        ...(when('Lease until', job.leaseDeadline) ?? []),
        ...(when('Finished', job.finishedAt) ?? []),
      ),
      job.lastError !== undefined ? block('Last error', job.lastError, 'error') : null,
      job.lastErrorStack !== undefined ? block('Stack trace', job.lastErrorStack, 'stack') : null,
      block('Data', json(job.data)),
      'result' in job ? block('Result', json(job.result)) : null,
      'progress' in job ? block('Progress', json(job.progress)) : null,
      logs(job),
    );
  };

  const gone = () => {
    state.textContent = 'gone';
    state.dataset.state = 'gone';
    retry.hidden = true;
    remove.hidden = true;
    fill(
      content,
      h(
        'p',
        { class: 'empty' },
        'No such job now: it was removed, or it completed and its row has expired (retainCompletedMs).',
      ),
    );
  };

  let disposed = false;
  const refresh = async () => {
    try {
      const job = /** @type {Job} */ (await request(path));
      if (!disposed) draw(job);
    } catch (error) {
      if (disposed) return;
      if (error instanceof HttpError && error.status === 404) gone();
      else {
        notice.classList.add('problem');
        notice.textContent = `Could not read the job: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
  };

  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const soon = () => {
    if (timer === undefined) {
      timer = setTimeout(() => {
        timer = undefined;
        void refresh();
      }, REFRESH_GAP_MS);
    }
  };

  void refresh();
  return {
    overview: () => {},
    job: (event) => {
      if (event.queue !== queue) return;
      if (event.id === id) soon();
    },
    resync: soon,
    dispose: () => {
      disposed = true;
      clearTimeout(timer);
    },
  };
}
