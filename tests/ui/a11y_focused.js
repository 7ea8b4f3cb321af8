// The element that has the focus, as tests/ui/a11y.py checks it.
() => { const el = document.activeElement; const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
  return { tag: el.tagName.toLowerCase(), id: el.id, cls: el.getAttribute("class") || "", text: (el.textContent || "").trim().slice(0, 30),
           visible: r.width > 0 && r.height > 0, outline: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0 }; }
