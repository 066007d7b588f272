// Building the page from data: elements and text nodes only. Nothing here parses markup, so a
// file name such as "<img src=x onerror=…>" stays text.

const SVG = 'http://www.w3.org/2000/svg';

function build(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) {
    if (/^on/i.test(name) || name === 'style') throw new Error(`refusing attribute ${name}`);
    if (value === false || value === null || value === undefined) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return element;
}

/** An HTML element: h('button', { type: 'button' }, 'Pause'). */
export function h(tag, attributes = {}, ...children) {
  return build(document.createElement(tag), attributes, children);
}

/** An SVG element, for the chart and the segment map. */
export function svg(tag, attributes = {}, ...children) {
  return build(document.createElementNS(SVG, tag), attributes, children);
}

/** Sets an element's text when it differs (keeps the DOM still while nothing changes). */
export function setText(element, text) {
  if (element.textContent !== text) element.textContent = text;
}

/** Sets or removes an attribute when it differs. */
export function setAttribute(element, name, value) {
  if (value === null || value === undefined || value === false) {
    if (element.hasAttribute(name)) element.removeAttribute(name);
  } else {
    const text = value === true ? '' : String(value);
    if (element.getAttribute(name) !== text) element.setAttribute(name, text);
  }
}
