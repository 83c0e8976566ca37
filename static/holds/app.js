// Review Queue: countdowns, keyboard shortcuts and small helpers. Everything works without it.
(function () {
  "use strict";

  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  function formatLeft(ms) {
    if (ms <= 0) return "expired";
    var s = Math.floor(ms / 1000), d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600),
        m = Math.floor(s % 3600 / 60);
    if (d) return d + "d " + h + "h";
    if (h) return h + "h " + String(m).padStart(2, "0") + "m";
    return m + "m " + String(s % 60).padStart(2, "0") + "s";
  }

  function tickCountdowns() {
    var now = Date.now();
    document.querySelectorAll("time.countdown").forEach(function (el) {
      var left = Date.parse(el.getAttribute("datetime")) - now;
      el.textContent = formatLeft(left);
      var holder = el.closest("tr, dd") || el;
      holder.classList.toggle("urgent", left < 15 * 60000);
      holder.classList.toggle("soon", left >= 15 * 60000 && left < 3600000);
    });
  }

  function rows() { return Array.prototype.slice.call(document.querySelectorAll("tr.hold-row")); }

  function moveSelection(step) {
    var all = rows();
    if (!all.length) return;
    var index = all.indexOf(document.activeElement);
    var next = all[Math.min(Math.max(index + step, 0), all.length - 1)];
    if (index === -1) next = all[0];
    next.focus();
    next.scrollIntoView({ block: "nearest" });
  }

  function setAll(action) {
    document.querySelectorAll('#decide-form input[type=radio][value="' + action + '"]').forEach(function (radio) {
      radio.checked = true;
    });
    if (action === "reject") {
      var comment = document.querySelector("#decide-form textarea[name$='-comment']");
      if (comment) comment.focus();
    }
  }

  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      var form = document.getElementById("decide-form");
      var confirm = document.querySelector("#confirm-form button[name=confirm]");
      if (confirm) { event.preventDefault(); confirm.click(); }
      else if (form) { event.preventDefault(); form.requestSubmit(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var help = document.getElementById("help");
    if (event.key === "?") { event.preventDefault(); if (!help.open) help.showModal(); return; }
    // Not while a decision is being written or checked: leaving would abandon it.
    if (event.key === "n" && !document.getElementById("decide-form") && !document.getElementById("confirm-form")) {
      var next = document.querySelector("[data-next]");
      window.location.href = next ? next.getAttribute("href") : "/holds/next";
      return;
    }
    if (document.querySelector("tr.hold-row") || document.getElementById("queue-body")) {
      if (event.key === "j") { event.preventDefault(); moveSelection(1); }
      else if (event.key === "k") { event.preventDefault(); moveSelection(-1); }
      else if (event.key === "Enter" && event.target.matches("tr.hold-row")) {
        window.location.href = event.target.getAttribute("data-href");
      }
    }
    if (document.getElementById("decide-form")) {
      if (event.key === "a") { event.preventDefault(); setAll("approve"); }
      else if (event.key === "r") { event.preventDefault(); setAll("reject"); }
    }
  });

  document.addEventListener("click", function (event) {
    var bulk = event.target.closest("[data-bulk]");
    if (bulk) { setAll(bulk.getAttribute("data-bulk")); return; }
    if (event.target.closest("[data-help-open]")) { document.getElementById("help").showModal(); return; }
    var row = event.target.closest("tr.hold-row");
    if (row && !event.target.closest("a")) window.location.href = row.getAttribute("data-href");
  });

  // Polls (data-poll) wait while the tab is hidden (htmx's own "[!document.hidden]" filter would need the eval
  // that the CSP forbids), and say they are polls, which the session idle timeout does not count as use.
  document.addEventListener("htmx:configRequest", function (event) {
    if (!event.detail.elt.hasAttribute("data-poll")) return;
    if (document.hidden) event.preventDefault();
    else event.detail.headers["X-Poll"] = "1";
  });

  // The queue refreshes in place: keep the reviewer's focused row across the swap.
  var focusedId = null;
  document.addEventListener("htmx:beforeSwap", function () {
    focusedId = document.activeElement && document.activeElement.id;
  });
  document.addEventListener("htmx:afterSwap", function () {
    if (focusedId) {
      var again = document.getElementById(focusedId);
      if (again && again !== document.activeElement) again.focus({ preventScroll: true });
    }
    tickCountdowns();
  });

  tickCountdowns();
  setInterval(tickCountdowns, 1000);
})();
