// Names for what Markdown renders without one, on every page Material shows (also
// after an instant-navigation page change): a task-list checkbox is named by the text of
// its item (axe: label).
document$.subscribe(function () {
  document.querySelectorAll(".task-list-item input[type=checkbox]").forEach(function (box) {
    if (box.hasAttribute("aria-label")) return;
    var item = box.closest(".task-list-item").cloneNode(true);
    item.querySelectorAll("ul, ol, .task-list-control").forEach(function (n) { n.remove(); });
    box.setAttribute("aria-label", item.textContent.trim().replace(/\s+/g, " "));
  });
});
