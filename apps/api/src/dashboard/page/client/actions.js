// @ts-check
/**
 * Runs an action of the page and says how it went in the notice line.
 * @param {HTMLElement} notice
 * @param {() => Promise<string>} action resolves with what to tell the reader
 */
export async function act(notice, action) {
  notice.classList.remove('problem');
  try {
    notice.textContent = await action();
  } catch (error) {
    notice.classList.add('problem');
    notice.textContent = error instanceof Error ? error.message : String(error);
  }
}
