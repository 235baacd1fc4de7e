"""Waits and probes shared by the end-to-end tests of the Streamlit app.

Streamlit reruns the whole script after every widget change. A test must wait for the run
its action caused to *finish*, not merely for the app to look idle (it is idle for a moment
right after the change, before the rerun starts), and must fail when the action caused no
run at all. Two events show a run: the app root's ``data-test-script-state`` attribute
(``running`` / ``notRunning``) changing, and messages arriving on the app's websocket. The
attribute alone misses short runs when the browser is busy: the frontend then handles the
run's messages in one batch and React never writes the intermediate ``running`` value. So
:func:`open_app` counts websocket messages from the page's first script on, and
:func:`rerun_after` requires one of the two events after the action, then the app idle and
quiet.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

APP = '[data-testid="stApp"]'
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
RUNNING_WIDGET = '[data-testid="stStatusWidget"] [data-testid="stStatusWidgetRunningIcon"]'

# Counts every message the app's websocket delivers (installed before the page's own scripts).
SOCKET_HOOK_JS = """(() => {
  window.__stFrames = 0;
  window.__stLastFrame = 0;
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => { window.__stFrames += 1; window.__stLastFrame = performance.now(); });
    }
  };
})();"""

_WATCH_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (window.__stWatch) window.__stWatch.disconnect();
  window.__stStateChanges = 0;
  window.__stFramesBefore = window.__stFrames;
  window.__stLastChange = performance.now();
  window.__stWatch = new MutationObserver((records) => {
    window.__stStateChanges += records.length;
    window.__stLastChange = performance.now();
  });
  window.__stWatch.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""

_RERUN_DONE_JS = """(quietMs) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const ran = window.__stStateChanges > 0 || window.__stFrames > window.__stFramesBefore;
  const last = Math.max(window.__stLastChange, window.__stLastFrame);
  return ran && app &&
         app.getAttribute('data-test-script-state') === 'notRunning' &&
         !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]') &&
         performance.now() - last >= quietMs;
}"""


def wait_for_idle(page, timeout: float = 60_000) -> None:
    """Wait until no script run is in progress and the 'running' widget has gone."""
    page.wait_for_selector(IDLE, timeout=timeout)
    page.wait_for_selector(RUNNING_WIDGET, state="detached", timeout=timeout)


def open_app(page, url: str, timeout: float = 90_000) -> None:
    """Load a page of the app (counting its websocket messages) and wait for its first run to finish."""
    page.add_init_script(SOCKET_HOOK_JS)
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(APP, timeout=timeout)
    wait_for_idle(page, timeout)


def rerun_after(page, action: Callable[[], None], timeout: float = 60_000, quiet_ms: float = 300) -> float:
    """Do ``action`` (a widget change) and wait for the reruns it triggers to finish.

    Done when the action caused a run (the script state changed or the server sent
    messages), the app is idle and it stayed quiet for ``quiet_ms``: some actions cause two
    runs back to back (replacing an uploaded file first removes the old one, ~15 ms between
    the runs). An action that causes no run fails with a timeout. Returns the seconds from
    just before the action to the end of the last run (the quiet period excluded).
    """
    watch_runs(page)
    start = time.perf_counter()
    action()
    wait_for_runs(page, timeout, quiet_ms)
    return time.perf_counter() - start - quiet_ms / 1000


def watch_runs(page) -> None:
    """Start counting the runs of ``page``'s session (the first half of :func:`rerun_after`).

    With :func:`wait_for_runs`, several tabs can be driven at once: watch each, act on each,
    then wait for each, so that their sessions run concurrently on the server."""
    page.evaluate(_WATCH_JS)


def wait_for_runs(page, timeout: float = 60_000, quiet_ms: float = 300) -> None:
    """Wait until a run has happened since :func:`watch_runs`, the app is idle and it stayed
    quiet for ``quiet_ms`` (the second half of :func:`rerun_after`)."""
    page.wait_for_function(_RERUN_DONE_JS, arg=quiet_ms, timeout=timeout, polling=20)


def press(page, name: str, timeout: float = 60_000) -> float:
    """Press the button called ``name`` and wait for the run it triggers (:func:`rerun_after`).

    The click is dispatched to the button element itself, not to screen coordinates: on a
    loaded machine a button that has just appeared (an expander opening, a page still
    laying out) can move between the moment Playwright finds it and the mouse event, and a
    click at the old place is lost. A lost click still fails the test: no run follows.
    """
    button = page.get_by_role("button", name=name, exact=True)
    button.wait_for(state="visible", timeout=timeout)
    return rerun_after(page, lambda: button.dispatch_event("click"), timeout=timeout)


# Plotly ≥ 6 ships numpy arrays as {dtype, bdata} (base64); the chart's ``data`` keeps
# them that way, so decode them as plotly.js does.
_DECODE_JS = """const __decode = (v) => {
  if (v === undefined || v === null) return [];
  if (v.bdata !== undefined) {
    const bin = atob(v.bdata);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const T = {f8: Float64Array, f4: Float32Array, i1: Int8Array, u1: Uint8Array, i2: Int16Array,
               u2: Uint16Array, i4: Int32Array, u4: Uint32Array, i8: BigInt64Array, u8: BigUint64Array}[v.dtype];
    return Array.from(new T(bytes.buffer), Number);
  }
  return Array.from(v, x => (x === null ? null : (typeof x === 'string' ? x : Number(x))));
};"""


def plotly_figures(page) -> list[dict]:
    """Data of every Plotly chart on the page: ``[{title, traces: [{name, x, y}]}]``."""
    return page.evaluate("() => {" + _DECODE_JS + """
      return Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => ({
        title: (el.layout && el.layout.title && (el.layout.title.text || el.layout.title)) || '',
        traces: (el.data || []).map(t => ({name: t.name || '', x: __decode(t.x), y: __decode(t.y)}))
      }));
    }""")


_TITLED_FIGURE_JS = """(fragment) => Array.from(document.querySelectorAll('.js-plotly-plot')).some(el => {
  const t = el.layout && el.layout.title;
  return String((t && (t.text || t)) || '').includes(fragment);
})"""


def figure_with_title(page, fragment: str, timeout: float = 30.0) -> dict:
    """The first Plotly chart whose title contains ``fragment``, waiting for it to render.

    Plotly draws after Streamlit reports the run finished, so a single look can miss it.
    """
    try:
        page.wait_for_function(_TITLED_FIGURE_JS, arg=fragment, timeout=timeout * 1000, polling="raf")
    except PlaywrightTimeoutError:
        titles = [f["title"] for f in plotly_figures(page)]
        raise AssertionError(f"no chart titled with {fragment!r} after {timeout:g} s; charts: {titles}") from None
    for fig in plotly_figures(page):
        if fragment in str(fig["title"]):
            return fig
    raise AssertionError(f"the chart titled with {fragment!r} went away")


_PLOTS_FIT_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).every(el =>
  el._fullLayout && Math.abs(el._fullLayout.width - el.getBoundingClientRect().width) < 2)"""


def wait_for_plots_to_fit(page, timeout: float = 30_000) -> None:
    """Wait until every Plotly chart has been laid out again at its container's width
    (after a viewport resize, plotly relayouts asynchronously)."""
    page.wait_for_function(_PLOTS_FIT_JS, timeout=timeout, polling="raf")


def trace(fig: dict, name: str) -> dict:
    for t in fig["traces"]:
        if t["name"] == name:
            return t
    raise AssertionError(f"no trace {name!r} in {[t['name'] for t in fig['traces']]}")


def slider(page, key: str):
    """The range input of the Streamlit slider created with ``key=key``.

    Streamlit 1.67 renders a slider as a react-aria group around a visually hidden
    ``<input type="range">``; its element container carries the class ``st-key-<key>``.
    """
    return page.locator(f'.st-key-{key} input[type="range"]').first


def slider_value(page, key: str) -> float:
    return float(slider(page, key).input_value())


def select_slider_value(page, key: str) -> float:
    """The number a select slider (e.g. the log-scale θ and m of the Privacy page) shows: its
    range input holds the option's index, its ``aria-valuetext`` the option as formatted."""
    return float(slider(page, key).get_attribute("aria-valuetext").replace(",", ""))


def press_slider(page, key: str, press: str = "ArrowRight", times: int = 1) -> None:
    """Move a slider with the keyboard (each press is one committed change)."""
    thumb = slider(page, key)
    thumb.focus()
    for _ in range(times):
        thumb.press(press)


_TRACE_CHANGED_JS = "([name, axis, old]) => {" + _DECODE_JS + """
  for (const el of document.querySelectorAll('.js-plotly-plot')) {
    for (const t of (el.data || [])) {
      if (t.name !== name) continue;
      const v = __decode(t[axis]);
      if (v.length && v[0] !== old) return true;
    }
  }
  return false;
}"""


def wait_for_trace_change(page, name: str, old: float, axis: str = "y", timeout: float = 60_000) -> None:
    """Wait until the first ``axis`` value of the chart trace ``name`` differs from ``old``:
    the chart the user sees has been redrawn with new numbers."""
    page.wait_for_function(_TRACE_CHANGED_JS, arg=[name, axis, old], timeout=timeout, polling=10)


def first_value(page, name: str, axis: str = "y") -> float:
    for fig in plotly_figures(page):
        for t in fig["traces"]:
            if t["name"] == name:
                return float(t[axis][0])
    raise AssertionError(f"no chart trace named {name!r}")


def go_to_page(page, label: str, timeout: float = 90_000) -> None:
    """Switch page with the sidebar navigation (keeps the session, unlike a new URL)."""
    link = page.locator('[data-testid="stSidebarNav"] a', has_text=label).first
    href = link.get_attribute("href")   # "/" for the main page (app.py), "/Privacy", …
    if page.url.rstrip("/").endswith(href.rstrip("/")):
        wait_for_idle(page, timeout)
        return
    # Wait for the new page's own title (every page has a distinct st.title, drawn by the
    # new run): the old page is idle too, so a plain idle check can pass before the switch
    # starts, and the next click then lands on a DOM that is about to be replaced.
    old_title = page.evaluate("() => (document.querySelector('h1') || {innerText: ''}).innerText")
    link.click()
    page.wait_for_url(lambda url: url.rstrip("/").endswith(href.rstrip("/")), timeout=timeout)
    page.wait_for_function("(old) => { const h = document.querySelector('h1');"
                           " return !!h && h.innerText !== old; }", arg=old_title, timeout=timeout)
    wait_for_idle(page, timeout)


UPLOADER = '[data-testid="stFileUploader"] input[type="file"]'


def upload(page, path, timeout: float = 120_000) -> float:
    """Hand ``path`` to the file uploader and wait for the run it causes to finish.

    Waits first for the uploader to be attached and the app idle (the state the action
    needs), then requires a rerun: an upload that causes none fails the test instead of
    being repeated. Returns :func:`rerun_after`'s seconds.
    """
    uploader = page.locator(UPLOADER)
    uploader.wait_for(state="attached", timeout=timeout)
    wait_for_idle(page, timeout)
    console: list[str] = []
    page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
    try:
        return rerun_after(page, lambda: uploader.set_input_files(str(path)), timeout=timeout)
    except PlaywrightTimeoutError:
        state = page.evaluate("""() => ({changes: window.__stStateChanges,
          state: document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state'),
          inputs: document.querySelectorAll('[data-testid=stFileUploader] input[type=file]').length,
          chips: document.querySelectorAll('[data-testid=stFileUploaderFile]').length,
          connection: document.querySelector('[data-testid=stStatusWidget]')?.innerText})""")
        raise AssertionError(f"uploading {Path(path).name} caused no rerun: {state}; console: {console[-10:]}") from None


def choose_radio(page, label: str, timeout: float = 60_000) -> None:
    """Choose the radio option whose label contains ``label`` and wait for its rerun.

    An option that is already chosen causes no run, so nothing is clicked then; otherwise
    the click must cause a rerun and leave the option checked.
    """
    option = page.get_by_role("radio", name=label)
    option.first.wait_for(state="attached", timeout=timeout)
    wait_for_idle(page, timeout)
    if option.first.is_checked():
        return
    rerun_after(page, lambda: page.get_by_text(label, exact=False).first.click(), timeout=timeout)
    assert option.first.is_checked(), f"the radio option {label!r} is not chosen after the click"


def alert_texts(page) -> list[str]:
    """Texts of every st.error / st.warning / st.info / st.success on the page."""
    return page.locator('[data-testid="stAlert"]').all_inner_texts()


def has_exception(page) -> bool:
    """True if Streamlit rendered a traceback (st.exception or an uncaught error)."""
    return page.locator('[data-testid="stException"]').count() > 0


def has_trace(page, name: str) -> bool:
    """Whether any chart on the page has a trace named ``name``."""
    return any(t["name"] == name for fig in plotly_figures(page) for t in fig["traces"])
