// The hold page's decision form: text areas that grow with their content, and the error summary of a
// refused submit, which takes focus and whose links take the reviewer to each field to fix.
(function () {
  "use strict";

  // As tall as the content, so a JSON value is never cut off behind a scrollbar.
  function grow(area) {
    if (area.offsetParent === null) return;  // folded away: measured when its <details> opens
    area.style.height = "auto";
    var borders = area.offsetHeight - area.clientHeight;
    area.style.height = area.scrollHeight + borders + "px";
  }

  function growAll(root) {
    root.querySelectorAll("textarea[data-autogrow]").forEach(grow);
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("textarea[data-autogrow]")) grow(event.target);
  });
  // A folded area has no height to measure until its <details> opens (toggle does not bubble: capture it).
  document.addEventListener("toggle", function (event) {
    if (event.target.open) growAll(event.target);
  }, true);

  // A refused form comes back (as a full page, or swapped in by htmx) with its summary first: focus it, so the
  // reviewer starts from the list of what to fix, wherever the page was scrolled.
  function focusSummary(root) {
    var summary = root.querySelector("[data-error-summary]");
    if (summary) summary.focus();
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("[data-error-summary] a[href^='#']");
    if (!link) return;
    var field = document.getElementById(decodeURIComponent(link.getAttribute("href").slice(1)));
    if (!field) return;
    // A fragment link scrolls but does not move focus into an input: the reviewer should be able to type at once.
    event.preventDefault();
    var folded = field.closest("details");
    if (folded && !folded.open) folded.open = true;
    field.focus();
    field.scrollIntoView({ block: "center" });
  });

  function prepare(root) {
    growAll(root);
    focusSummary(root);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { prepare(document); });
  else prepare(document);
  // Fonts change line heights once they load; the form then needs measuring again.
  if (document.fonts) document.fonts.ready.then(function () { growAll(document); });
  window.addEventListener("resize", function () { growAll(document); });
  // htmx announces each element it swaps in; one holding the form is prepared as a page would be.
  document.addEventListener("htmx:load", function (event) {
    var added = event.detail.elt;
    if (added !== document.body && added.matches && (added.matches("#decide-form") || added.querySelector("#decide-form"))) prepare(added);
  });
})();
