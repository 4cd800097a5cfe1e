"""An annotator in a REAL browser: headless Chromium (Debian's ``chromium`` package) driven by
Playwright's Python API, working in a real Label Studio.

Playwright's own browser download does not work here; it drives the system Chromium through
``executable_path`` with the flags this machine needs (no sandbox as root, no background
networking: its connections would be refused by the closed network).

``LabelStudioPage`` is what a test drives, in the words of an annotator::

    lsp = LabelStudioPage.login(browser, url, email, password, label_config)
    lsp.open_task(project_id, task_id)
    el = lsp.text("महिलाएँ गाड़ी नहीं चला सकतीं।")         # the rendered sentence
    glyphs_rendered(lsp.page, el, "artifacts/pair")   # screenshot: real Devanagari, not tofu
    lsp.choose("validity", "antistereo")              # click a radio button by its label
    lsp.tick("concerns", "Logical failure")           # tick check boxes
    lsp.type("comment", "ठीक है")                     # type into a text area and add it
    lsp.edit("corrected_more_A", "नया वाक्य")          # replace a (prefilled) text area's text
    lsp.instructions()                                # the instructions panel (guidelines)
    ann = lsp.submit()                                # click Submit; the annotation Label Studio stored

Controls are named as in the labeling config (``from_name``): Label Studio renders Choices and
TextArea controls in config order, which is how a control name maps to what is on screen.
"""

from __future__ import annotations

import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--font-render-hinting=none",
]
VIEWPORT = {"width": 1280, "height": 1400}  # tall enough for a whole task (screenshots of the labeling area)
ANNOTATION = ".lsf-main-view__annotation"  # the labeling area (not the Data Manager's table)
# a code point no font has: what a glyph the fonts lack looks like (the .notdef box, "tofu")
NO_GLYPH = "\U000f0000"


def chromium_path() -> str | None:
    """The system Chromium (``$BIASKIT_CHROMIUM``, ``chromium``, ``chromium-browser``) or None."""
    for c in (os.environ.get("BIASKIT_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser")):
        if c and Path(c).exists():
            return c
    return None


def launch(playwright, *, env: dict | None = None):
    """Headless system Chromium (raises when it is missing: callers skip with the reason)."""
    exe = chromium_path()
    if exe is None:
        raise RuntimeError("Chromium not found: install Debian's `chromium` package (`make services` does)")
    return playwright.chromium.launch(
        executable_path=exe, args=CHROMIUM_FLAGS, headless=True, env={**os.environ, **(env or {})}
    )


def control_order(label_config: str) -> dict[str, tuple[str, int]]:
    """control name -> (tag, index among the controls of that tag, in config order)."""
    out: dict[str, tuple[str, int]] = {}
    seen: dict[str, int] = {}
    for el in ET.fromstring(label_config).iter():
        name = el.get("name")
        if el.tag in ("Choices", "TextArea") and name:
            out[name] = (el.tag, seen.get(el.tag, 0))
            seen[el.tag] = seen.get(el.tag, 0) + 1
    return out


class LabelStudioPage:
    """One logged-in annotator's browser tab in Label Studio."""

    def __init__(self, page, url: str, label_config: str | None = None):
        self.page = page
        self.url = url.rstrip("/")
        self.controls = control_order(label_config) if label_config else {}

    # --- session ------------------------------------------------------------------------------
    @classmethod
    def login(cls, browser, url: str, email: str, password: str) -> LabelStudioPage:
        """A fresh browser context (own cookies) logged in through Label Studio's login form."""
        ctx = browser.new_context(viewport=VIEWPORT, locale="en-US")
        ctx.set_default_timeout(60_000)
        page = ctx.new_page()
        url = url.rstrip("/")
        page.goto(url + "/user/login/")
        page.fill("input[name=email]", email)
        page.fill("input[name=password]", password)
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_url(lambda u: "/user/login" not in u)
        return cls(page, url)

    def open_task(self, project_id: int, task_id: int, label_config: str | None = None) -> None:
        """Open one task in the labeling view and wait until its editor is ready."""
        if label_config:
            self.controls = control_order(label_config)
        self.page.goto(f"{self.url}/projects/{project_id}/data?task={task_id}")
        self.page.get_by_test_id("bottombar-submit-button").wait_for()
        self.page.locator(f"{ANNOTATION} .lsf-richtext, {ANNOTATION} .lsf-htx-richtext").first.wait_for()

    def open_stream(self, project_id: int, label_config: str | None = None) -> None:
        """Start Label Studio's label stream ("Label All Tasks", what annotators use): the server picks
        the task; wait until its editor is ready."""
        if label_config:
            self.controls = control_order(label_config)
        self.page.goto(f"{self.url}/projects/{project_id}/data?labeling=1")
        self.page.get_by_test_id("bottombar-submit-button").wait_for()
        self.page.locator(f"{ANNOTATION} .lsf-richtext, {ANNOTATION} .lsf-htx-richtext").first.wait_for()

    @property
    def area(self):
        return self.page.locator(ANNOTATION)

    # --- what the annotator sees -----------------------------------------------------------------
    def text(self, sentence: str):
        """The smallest element of the labeling area whose visible text contains ``sentence``
        (HyperText is drawn in an iframe of its own: looked for there too); text areas holding it
        (an editing task's prefilled box) are not what is *shown*: see :meth:`prefilled`."""
        import time

        from playwright.sync_api import Error as PlaywrightError

        deadline = time.monotonic() + 30
        while True:
            for scope in (self.area, self.area.frame_locator("iframe").first):
                loc = scope.get_by_text(sentence, exact=False)
                try:
                    for i in reversed(range(loc.count())):
                        if loc.nth(i).evaluate("e => e.tagName", timeout=5_000) != "TEXTAREA":
                            return loc.nth(i)
                except PlaywrightError:  # the editor re-rendered (a HyperText iframe detached): look again
                    pass
            if time.monotonic() > deadline:
                raise AssertionError(f"'{sentence}' is not shown in the labeling area")
            self.page.wait_for_timeout(200)

    # --- what the annotator does ----------------------------------------------------------------
    def _group(self, control: str, tag: str):
        if control not in self.controls:
            raise KeyError(f"no control '{control}' in the labeling config (pass label_config to open_task)")
        got_tag, i = self.controls[control]
        assert got_tag == tag, f"'{control}' is a {got_tag}, not {tag}"
        if tag == "TextArea":  # by name: an area that was added (Shift+Enter) leaves the page's list
            return self.area.locator(f'textarea[name="{control}"]')
        return self.area.locator(".lsf-choices").nth(i)

    def _option(self, control: str, value: str):
        return self._group(control, "Choices").locator("label", has=self.page.locator(f'input[name="{value}"]'))

    def options(self, control: str) -> list[str]:
        """The options of a choice control, as shown (in screen order)."""
        return self._group(control, "Choices").locator("input").evaluate_all("els => els.map(e => e.name)")

    def choose(self, control: str, value: str) -> None:
        """Click the option ``value`` of a single-choice control (its label, as a person does)."""
        self._option(control, value).click()
        assert self._option(control, value).locator("input").is_checked()

    def tick(self, control: str, *values: str) -> None:
        """Tick the check boxes ``values`` of a multiple-choice control."""
        for v in values:
            self._option(control, v).click()
            assert self._option(control, v).locator("input").is_checked()

    def type(self, control: str, text: str) -> None:
        """Type ``text`` into a text area and add it (Shift+Enter, Label Studio's own shortcut)."""
        box = self._group(control, "TextArea")
        box.click()
        box.fill(text)
        box.press("Shift+Enter")

    def prefilled(self, control: str) -> str:
        """What a text area holds before the annotator types (its prefill)."""
        return self._group(control, "TextArea").input_value()

    def edit(self, control: str, text: str, *, add: bool = True) -> None:
        """Replace what a text area holds (a prefilled sentence, say) by ``text`` as a person does
        (select all, type), then add it (Shift+Enter); ``add=False`` leaves it in the box, which
        Label Studio submits with the annotation."""
        box = self._group(control, "TextArea")
        box.click()
        box.press("Control+a")
        box.press_sequentially(text)
        if add:
            box.press("Shift+Enter")

    def instructions(self, *, wait_s: float = 15):
        """The instructions panel (Label Studio's "Labeling Instructions" modal): the one the
        labeling stream opens by itself (``show_instruction``), else opened with the top bar's
        Instructions button."""
        panel = self.page.locator(".lsf-modal-ls_visible, [role=dialog]").filter(has_text="Labeling Instructions")
        try:
            panel.first.wait_for(timeout=wait_s * 1000)
        except Exception:  # not opened by itself: open it as a person would
            self.page.get_by_role("button", name="Instructions").click()
            panel.first.wait_for()
        return panel.first

    def submit(self) -> dict:
        """Click Submit; returns the annotation Label Studio stored (the POST's JSON answer)."""
        with self.page.expect_response(
            lambda r: r.request.method == "POST" and "/annotations" in r.url and r.status in (200, 201)
        ) as resp:
            self.page.get_by_test_id("bottombar-submit-button").click()
        return resp.value.json()

    def screenshot(self, path: str | Path, *, area_only: bool = True) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        (self.area if area_only else self.page).screenshot(path=str(path))
        return path


# ------------------------------------------------------------------------------------------------
# Is the text really drawn? (a screenshot, not the DOM)
# ------------------------------------------------------------------------------------------------
def _ink(png: bytes):
    """Boolean ink mask (dark pixels) of a screenshot, cropped to the inked bounding box."""
    import io

    import numpy as np
    from PIL import Image

    a = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.int16)
    ink = a < 128
    if not ink.any():
        return ink[:0, :0]
    rows, cols = np.where(ink.any(1))[0], np.where(ink.any(0))[0]
    return ink[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def tofu_difference(page, element) -> tuple[float, bytes, bytes]:
    """How different ``element`` looks from the same element with every character replaced by
    one no font has (so drawn as the "missing glyph" box).

    The element is cloned in place (same styles and width) with its text swapped codepoint by
    codepoint, both are screenshotted, and their ink masks compared: 0.0 means the text is drawn
    as boxes ("tofu"), values near 1.0 mean real, varied glyphs. Returns (difference, png, tofu_png).
    """
    import numpy as np

    el = element.element_handle()  # a handle, not a locator: the clone must not be mistaken for it
    png = el.screenshot()
    clone = el.evaluate_handle(
        """(el, box) => {
        const c = el.cloneNode(true);
        c.removeAttribute('id');
        const walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode())
            n.nodeValue = Array.from(n.nodeValue).map(ch => /\\s/.test(ch) ? ch : box).join('');
        el.after(c);
        return c;
    }""",
        NO_GLYPH,
    ).as_element()
    try:
        tofu_png = clone.screenshot()
    finally:
        clone.evaluate("c => c.remove()")
    a, b = _ink(png), _ink(tofu_png)
    if a.size == 0:
        return 0.0, png, tofu_png
    h, w = max(a.shape[0], b.shape[0]), max(a.shape[1], b.shape[1])
    pa = np.zeros((h, w), bool)
    pb = np.zeros((h, w), bool)
    pa[: a.shape[0], : a.shape[1]] = a
    pb[: b.shape[0], : b.shape[1]] = b
    # ink of one image farther than a pixel from any ink of the other (anti-aliasing and sub-pixel
    # positions move box edges by a pixel; real glyphs differ from boxes everywhere)
    far = (pa & ~_dilate(pb)).sum() + (pb & ~_dilate(pa)).sum()
    total = pa.sum() + pb.sum()
    return float(far / total) if total else 0.0, png, tofu_png


def _dilate(mask, r: int = 1):
    import numpy as np

    out = mask.copy()
    h, w = mask.shape
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            sh = np.zeros_like(mask)
            sh[max(dy, 0) : h + min(dy, 0), max(dx, 0) : w + min(dx, 0)] = mask[
                max(-dy, 0) : h + min(-dy, 0), max(-dx, 0) : w + min(-dx, 0)
            ]
            out |= sh
    return out


def platform_fonts(page, element, attempts: int = 5) -> dict[str, int]:
    """Fonts Chromium actually used to draw ``element``'s text (family -> glyph count), via CDP
    (the element is marked with an attribute and found by a search that enters iframes).
    Informational (the screenshot is the check): ``{}`` when the page re-rendered meanwhile."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        for _ in range(attempts):
            element.evaluate("e => e.setAttribute('data-biaskit-probe', '1')")
            cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})
            found = cdp.send("DOM.performSearch", {"query": "[data-biaskit-probe]"})
            try:
                if found["resultCount"]:
                    nodes = cdp.send(
                        "DOM.getSearchResults",
                        {"searchId": found["searchId"], "fromIndex": 0, "toIndex": found["resultCount"]},
                    )["nodeIds"]
                    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": nodes[0]})["fonts"]
                    return {f["familyName"]: f["glyphCount"] for f in fonts}
            finally:
                cdp.send("DOM.discardSearchResults", {"searchId": found["searchId"]})
                element.evaluate("e => e.removeAttribute('data-biaskit-probe')")
            page.wait_for_timeout(200)
        return {}
    finally:
        cdp.detach()


def glyphs_rendered(page, element, artifact: str | Path, *, min_difference: float = 0.25) -> dict:
    """Check from screenshots that ``element``'s text is drawn with real glyphs, keep the evidence.

    Saves ``ARTIFACT.png`` (what the annotator sees) and ``ARTIFACT.tofu.png`` (the same text as
    missing-glyph boxes); returns ``{"difference", "fonts"}``. Raises AssertionError on tofu.
    """
    artifact = Path(artifact)
    artifact.parent.mkdir(parents=True, exist_ok=True)
    fonts = platform_fonts(page, element)
    diff, png, tofu_png = tofu_difference(page, element)
    artifact.with_suffix(".png").write_bytes(png)
    artifact.with_suffix(".tofu.png").write_bytes(tofu_png)
    assert diff >= min_difference, (
        f"the text looks like missing-glyph boxes (ink difference {diff:.2f} from tofu "
        f"< {min_difference}); fonts used: {fonts}; see {artifact}.png"
    )
    return {"difference": diff, "fonts": fonts}
