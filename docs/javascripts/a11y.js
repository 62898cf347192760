// Names and keyboard access for what Markdown renders without them, on every page Material
// shows (also after an instant-navigation page change).
document$.subscribe(function () {
  // A task-list checkbox is named by the text of its item (axe: label).
  document.querySelectorAll(".task-list-item input[type=checkbox]").forEach(function (box) {
    if (box.hasAttribute("aria-label")) return;
    var item = box.closest(".task-list-item").cloneNode(true);
    item.querySelectorAll("ul, ol, .task-list-control").forEach(function (n) { n.remove(); });
    box.setAttribute("aria-label", item.textContent.trim().replace(/\s+/g, " "));
  });
  // Code never wraps: a block wider than the screen scrolls sideways, and takes the
  // keyboard's focus so that the arrow keys scroll it (axe: scrollable-region-focusable).
  // Material does this for a block it sets up as it comes into view; this does it for all.
  document.querySelectorAll(".md-typeset pre > code").forEach(function (code) {
    if (code.hasAttribute("tabindex") || code.scrollWidth <= code.clientWidth) return;
    code.setAttribute("tabindex", "0");
  });
  // A table wider than the screen scrolls sideways in its wrapper; the wrapper takes the
  // keyboard's focus so that the arrow keys scroll it (axe: scrollable-region-focusable).
  document.querySelectorAll(".md-typeset__scrollwrap").forEach(function (wrap) {
    if (wrap.hasAttribute("tabindex") || wrap.scrollWidth <= wrap.clientWidth) return;
    wrap.setAttribute("tabindex", "0");
    wrap.setAttribute("role", "region");
    wrap.setAttribute("aria-label", "Table, scrolls sideways");
  });
});
