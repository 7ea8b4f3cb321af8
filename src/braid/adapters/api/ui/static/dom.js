// DOM helpers. Data only ever enters the page as text nodes or attribute
// values, never as markup, so nothing a server or user sends can run.
const SVG = "http://www.w3.org/2000/svg";

function build(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.setAttribute("class", value);
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

// SVG text is sized in the drawing's own units, which a narrow screen scales
// down (a 1000-unit map on a 390 px phone: 13 px labels become 5 px). Each
// drawing under `root` gets a --zoom (style.css multiplies its text sizes by
// it) that brings its smallest text (11 units) back to at least MIN_TEXT_PX.
const MIN_TEXT_PX = 10.5, SMALLEST_TEXT = 11;
const drawings = new ResizeObserver((entries) => { for (const e of entries) fitText(e.target); });

function fitText(svg) {
  const m = svg.getScreenCTM();
  const scale = m ? Math.hypot(m.a, m.b) : 0;
  if (!(scale > 0)) return;
  const zoom = Math.max(1, MIN_TEXT_PX / (SMALLEST_TEXT * scale));
  svg.style.setProperty("--zoom", zoom.toFixed(3));
}

export function keepTextLegible(root) {
  const watch = (node) => {
    if (node instanceof SVGSVGElement) drawings.observe(node);
    else if (node instanceof Element) node.querySelectorAll("svg").forEach((svg) => drawings.observe(svg));
  };
  new MutationObserver((changes) => changes.forEach((c) => c.addedNodes.forEach(watch)))
    .observe(root, { childList: true, subtree: true });
  watch(root);
}
