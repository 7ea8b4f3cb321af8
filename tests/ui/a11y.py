"""An accessibility check run inside the page, with no outside service.

`problems(page)` lists, for the view on screen: form controls without a
label, buttons and links without a name, images without `alt`, SVG drawings
and focusable SVG parts without a name, positive `tabindex`, repeated ids,
not exactly one `h1`, and text whose contrast with what lies behind it is
under WCAG's AA ratio (4.5:1, large text 3:1), computed from the page's own
colours. `focus_problems(page)` tabs through the page: the skip link comes
first and every stop is visible and outlined.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Page

# The scripts run in the page (Playwright evaluates it over the DevTools protocol, which
# the page's CSP does not govern; the page itself never evaluates strings).
HERE = Path(__file__).resolve().parent


def _script(name: str) -> str:
    """A function expression from a file beside this one, its comment lines left out."""
    text = (HERE / name).read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if not line.startswith("//"))


COLLECT = _script("a11y_collect.js")
FOCUSED = _script("a11y_focused.js")


def _rgba(text: str) -> tuple[float, float, float, float]:
    numbers = [float(x) for x in re.findall(r"[\d.]+", text)]
    if len(numbers) < 3:
        raise ValueError(f"not a colour: {text!r}")
    return numbers[0], numbers[1], numbers[2], numbers[3] if len(numbers) > 3 else 1.0


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else float(((c + 0.055) / 1.055) ** 2.4)

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: str, bg: str) -> float:
    """WCAG contrast ratio of text colour `fg` over `bg` (CSS rgb()/rgba() strings)."""
    fr, fgg, fb, alpha = _rgba(fg)
    br, bgg, bb, _ = _rgba(bg)
    blended = (
        fr * alpha + br * (1 - alpha),
        fgg * alpha + bgg * (1 - alpha),
        fb * alpha + bb * (1 - alpha),
    )
    lighter, darker = sorted(
        (_luminance((blended[0], blended[1], blended[2])), _luminance((br, bgg, bb))), reverse=True
    )
    return (lighter + 0.05) / (darker + 0.05)


def problems(page: Page) -> list[str]:
    found: dict[str, Any] = page.evaluate(COLLECT)
    out = list(found["missing"])
    for text in found["texts"]:
        large = text["size"] >= 24 or (text["bold"] and text["size"] >= 18.66)
        need = 3.0 if large else 4.5
        if text["fg"].startswith("rgb") and text["bg"].startswith("rgb"):
            ratio = contrast(text["fg"], text["bg"])
            if ratio < need:
                out.append(f"contrast {ratio:.2f} < {need}: {text['where']} {text['text']!r}")
    return out


def focus_problems(page: Page, stops: int = 12) -> list[str]:
    """Tab from the top: the skip link first, then every stop visible and outlined."""
    page.reload()  # tabbing starts from the top of a freshly loaded page
    page.wait_for_selector("main:not([aria-busy]) h1", state="attached")
    out = []
    for i in range(stops):
        page.keyboard.press("Tab")
        at: dict[str, Any] = page.evaluate(FOCUSED)
        label = f"stop {i + 1} ({at['tag']}#{at['id']} {at['text']!r})"
        if i == 0 and "skip" not in at["cls"]:
            out.append(f"{label}: the first stop is not the skip link")
        if at["tag"] == "body":
            break
        if not at["visible"]:
            out.append(f"{label}: not visible")
        if not at["outline"]:
            out.append(f"{label}: no focus outline")
    return out
