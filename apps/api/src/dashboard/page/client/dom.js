// @ts-check
/**
 * The page's only way to make elements. Text always goes in as text nodes (never innerHTML), so
 * job data, names and errors cannot inject markup; handlers are attached with addEventListener
 * and no style attribute is ever written, as the api's Content-Security-Policy requires.
 */

/** @typedef {Node | string | number | null | undefined | false} Child */
/** @typedef {Record<string, unknown>} Props */

/**
 * @param {Element} el
 * @param {Props | null | undefined} props
 */
function applyProps(el, props) {
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'style') throw new Error('style attributes are refused by the CSP: use a class');
    if (key === 'dataset') {
      for (const [name, data] of Object.entries(/** @type {Record<string, unknown>} */ (value))) {
        if (data !== undefined && data !== null) el.setAttribute(`data-${name}`, String(data));
      }
    } else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
}

/**
 * @param {Child[]} children
 * @returns {(Node | string)[]}
 */
function nodes(children) {
  /** @type {(Node | string)[]} */
  const out = [];
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    out.push(typeof child === 'number' ? String(child) : child);
  }
  return out;
}

/**
 * An HTML element: h('a', { href: '#/', class: 'brand' }, 'EchoMQ').
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  applyProps(el, props);
  el.append(...nodes(children));
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * An SVG element (charts draw with attributes, never styles).
 * @param {string} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {SVGElement}
 */
export function svg(tag, props, ...children) {
  const el = /** @type {SVGElement} */ (document.createElementNS(SVG_NS, tag));
  applyProps(el, props);
  el.append(...nodes(children));
  return el;
}

/**
 * Replaces everything inside el.
 * @param {Element} el
 * @param {...Child} children
 */
export function fill(el, ...children) {
  el.replaceChildren(...nodes(children));
}

/**
 * A button that asks for a second click before it acts (drain, remove, retry all): the first
 * click arms it for a few seconds and says what the second will do.
 * @param {string} label
 * @param {string} confirmLabel
 * @param {() => Promise<void>} action
 * @param {Props} [props]
 */
export function confirmButton(label, confirmLabel, action, props = {}) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let disarm;
  const button = h('button', { type: 'button', ...props }, label);
  const reset = () => {
    clearTimeout(disarm);
    button.textContent = label;
    button.classList.remove('armed');
  };
  button.addEventListener('click', () => {
    if (!button.classList.contains('armed')) {
      button.classList.add('armed');
      button.textContent = confirmLabel;
      disarm = setTimeout(reset, 4000);
      return;
    }
    reset();
    button.disabled = true;
    // Each action reports its own failure on the page (act); a rejection here has been shown.
    void action()
      .catch(() => undefined)
      .finally(() => {
        button.disabled = false;
      });
  });
  return button;
}
