// What tests/ui/a11y.py checks, gathered in the page.
() => {
  const out = { missing: [], texts: [] };
  const seen = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden"; };
  const name = (el) => (el.getAttribute("aria-label") || "").trim() || (el.getAttribute("aria-labelledby") ? "by" : "") ||
    (el.textContent || "").trim() || (el.getAttribute("title") || "").trim();
  const where = (el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className && typeof el.className === "string" ? "." + el.className.split(" ")[0] : ""}`;
  for (const el of document.querySelectorAll("input, select, textarea")) {
    if (el.type === "hidden") continue;
    if (!(el.labels && el.labels.length) && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby")) out.missing.push(`no label: ${where(el)}`);
  }
  for (const el of document.querySelectorAll("button, a[href]")) if (!name(el)) out.missing.push(`no name: ${where(el)}`);
  for (const el of document.querySelectorAll("img")) if (!el.hasAttribute("alt")) out.missing.push(`no alt: ${where(el)}`);
  for (const el of document.querySelectorAll("svg")) {
    if (el.parentElement.closest("svg") || el.getAttribute("aria-hidden") === "true") continue;
    if (!el.getAttribute("aria-label") && !el.querySelector(":scope > title")) out.missing.push(`unnamed drawing: ${where(el)}`);
  }
  for (const el of document.querySelectorAll("svg [tabindex]")) if (!el.getAttribute("aria-label")) out.missing.push(`unnamed focusable drawing part: ${where(el)}`);
  for (const el of document.querySelectorAll("[tabindex]")) if (Number(el.getAttribute("tabindex")) > 0) out.missing.push(`positive tabindex: ${where(el)}`);
  const ids = [...document.querySelectorAll("[id]")].map((e) => e.id);
  for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i))) out.missing.push(`repeated id: ${id}`);
  if (/\[object /.test(document.querySelector("main").innerText)) out.missing.push("an object printed as text in main");
  const h1 = document.querySelectorAll("main h1").length;
  if (h1 !== 1) out.missing.push(`${h1} h1 headings in main`);
  const behind = (el) => {
    for (let e = el; e; e = e.parentElement) {
      if (e instanceof SVGElement && !(e instanceof SVGSVGElement)) continue;
      const bg = getComputedStyle(e).backgroundColor;
      if (bg && bg !== "transparent" && !/rgba\(.*,\s*0\)$/.test(bg)) return bg;
    }
    return "rgb(255, 255, 255)";
  };
  for (const el of document.querySelectorAll("body *")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !seen(el) || el.closest("[aria-hidden=true]")) continue;
    const style = getComputedStyle(el);
    const svg = el instanceof SVGElement;
    out.texts.push({ where: where(el), text: el.textContent.trim().slice(0, 40),
      fg: svg ? style.fill : style.color, bg: behind(el),
      size: parseFloat(style.fontSize), bold: Number(style.fontWeight) >= 700 });
  }
  return out;
}
