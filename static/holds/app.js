// Review Queue: countdowns, keyboard shortcuts and small helpers. Everything works without it.
(function () {
  "use strict";

  // Inputs that take no text (a radio, a checkbox, a button) leave the letter keys to the shortcuts.
  var KEYLESS_INPUTS = /^(checkbox|radio|button|submit|reset|range|color|file|image)$/;

  function typing(target) {
    if (!target) return false;
    if (target.tagName === "INPUT") return !KEYLESS_INPUTS.test(target.type);
    return target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName);
  }

  // The countdowns' words and urgency bands are holds/queue/display.py's (COUNTDOWN), carried by the page.
  var countdownRules = document.getElementById("countdown-rules");
  var countdown = countdownRules && JSON.parse(countdownRules.textContent);

  function formatLeft(ms) {
    var words = countdown.words;
    if (ms <= 0) return words.expired;
    var s = Math.floor(ms / 1000), d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600),
        m = Math.floor(s % 3600 / 60);
    var parts = { d: d, h: h, m: m, mm: String(m).padStart(2, "0"), ss: String(s % 60).padStart(2, "0") };
    return (d ? words.days : h ? words.hours : words.minutes).replace(/\{(\w+)\}/g, function (whole, name) {
      return name in parts ? parts[name] : whole;
    });
  }

  function tickCountdowns() {
    if (!countdown) return;
    var now = Date.now();
    document.querySelectorAll("time.countdown").forEach(function (el) {
      var left = Date.parse(el.getAttribute("datetime")) - now;
      el.textContent = formatLeft(left);
      var holder = el.closest("tr, dd") || el;
      holder.classList.toggle("urgent", left < countdown.urgent_ms);
      holder.classList.toggle("soon", left >= countdown.urgent_ms && left < countdown.soon_ms);
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

  // Starting on a decision claims the hold, once: the heartbeat then keeps the claim and the pagehide beacon ends it.
  function startDeciding() {
    if (document.querySelector("#presence[data-deciding]")) return;
    var claim = document.getElementById("claim-form");
    if (claim && !claim.hasAttribute("data-sent")) {
      claim.setAttribute("data-sent", "");
      claim.requestSubmit();
    }
  }

  function changedDecision(event) {
    if (event.target.closest && event.target.closest("#decide-form")) startDeciding();
  }
  document.addEventListener("input", changedDecision);
  document.addEventListener("change", changedDecision);

  function setAll(action) {
    startDeciding();
    document.querySelectorAll('#decide-form input[type=radio][value="' + action + '"]').forEach(function (radio) {
      radio.checked = true;
    });
    if (action === "reject") {
      var comment = document.querySelector("#decide-form textarea[name$='-comment']");
      if (comment) comment.focus();
    }
  }

  // An approval whose values changed is sent as "Approve with edits": the item's radio says so as soon as one does.
  function sameValue(field) {
    var original = field.getAttribute("data-original");
    if (field.type === "checkbox") return String(field.checked) === original;
    var value = field.value.replace(/\r\n?/g, "\n");
    if (/^(decimal|numeric)$/.test(field.getAttribute("inputmode") || "") && value.trim() !== "" && original !== "") {
      return Number(value) === Number(original);  // "49.9" is the agent's "49.90": the server reads them alike
    }
    return value === original.replace(/\r\n?/g, "\n");
  }

  document.addEventListener("input", function (event) {
    var item = event.target.closest && event.target.closest("#decide-form fieldset.item");
    var word = item && item.querySelector("[data-approve-word]");
    if (!word) return;
    var edited = !Array.prototype.every.call(item.querySelectorAll("[data-original]"), sameValue);
    word.textContent = edited ? "Approve with edits" : "Approve";
  });

  // The shortcuts dialog gives focus back to what opened it (or to the page's content) when it closes.
  var helpOpener = null;

  function openHelp() {
    var help = document.getElementById("help");
    if (help.open) return;
    helpOpener = document.activeElement !== document.body ? document.activeElement : null;
    help.showModal();
  }

  document.getElementById("help").addEventListener("close", function () {
    var back = helpOpener && helpOpener.isConnected ? helpOpener : document.getElementById("main");
    helpOpener = null;
    back.focus();
  });

  function skipToQueue() {
    var first = document.querySelector("tr.hold-row") || document.getElementById("queue-body");
    if (!first.hasAttribute("tabindex")) first.setAttribute("tabindex", "-1");
    first.focus();
  }

  // After Send the page reloads with the decision's status: focus goes there, so a screen reader reads the outcome
  // and Tab continues from it. The status block refreshes itself; focus follows it across each swap.
  var SENT_FLAG = "reviewqueue:focus-decision-status";

  function focusStatus() {
    var status = document.getElementById("decision-status");
    if (!status) return;
    status.setAttribute("tabindex", "-1");
    status.focus({ preventScroll: true });
    status.scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("submit", function (event) {
    if (event.target.matches("#confirm-form")) sessionStorage.setItem(SENT_FLAG, "1");
  });
  if (sessionStorage.getItem(SENT_FLAG)) {
    sessionStorage.removeItem(SENT_FLAG);
    focusStatus();
  }
  var statusHadFocus = false;
  document.addEventListener("htmx:beforeSwap", function () {
    statusHadFocus = !!(document.activeElement && document.activeElement.id === "decision-status");
  });
  document.addEventListener("htmx:afterSwap", function () {
    if (statusHadFocus) focusStatus();
  });

  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      var form = document.getElementById("decide-form");
      var confirm = document.querySelector("#confirm-form button[name=confirm]");
      if (confirm) { event.preventDefault(); confirm.click(); }
      else if (form) { event.preventDefault(); form.requestSubmit(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    // A key pressed outside a text field comes from a real keyboard (an on-screen one shows only for text).
    document.documentElement.classList.add("keyboard-used");
    if (event.key === "?") { event.preventDefault(); openHelp(); return; }
    if (event.key === "z") {
      var undo = document.getElementById("undo-button");
      if (undo && !undo.disabled) { event.preventDefault(); undo.click(); return; }
    }
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
      else if (event.key.toLowerCase() === "x" && event.target.matches("tr.hold-row")) {
        var box = event.target.querySelector("input[name=hold]");
        if (box) { event.preventDefault(); box.checked = !box.checked; noteToggle(box, event.shiftKey); }
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
    if (event.target.closest("[data-help-open]")) { openHelp(); return; }
    if (event.target.closest("[data-skip-to-queue]")) { event.preventDefault(); skipToQueue(); return; }
    var box = event.target.closest("tr.hold-row input[name=hold]");
    if (box) { noteToggle(box, event.shiftKey); return; }
    var row = event.target.closest("tr.hold-row");
    if (row && !event.target.closest("a, td.select")) window.location.href = row.getAttribute("data-href");
  });

  // The hold page's heartbeat (data-heartbeat) goes on in a hidden tab, where the reviewer may be looking
  // something up, so their claim holds; like the polls it is not use of the session.
  document.addEventListener("htmx:configRequest", function (event) {
    if (event.detail.elt.hasAttribute("data-heartbeat")) event.detail.headers["X-Poll"] = "1";
  });

  // Closing or leaving a hold's page ends the reviewer's presence and claim at once, unless they leave it
  // to check or send their decision (the summary page keeps both).
  var leavingToDecide = false;
  document.addEventListener("submit", function (event) {
    if (event.target.matches("#decide-form, #confirm-form")) leavingToDecide = true;
  });
  window.addEventListener("pageshow", function () { leavingToDecide = false; });
  window.addEventListener("pagehide", function () {
    var presence = document.querySelector("#presence[data-leave-url]");
    if (!presence || leavingToDecide) return;
    var body = new FormData();
    body.append("csrfmiddlewaretoken", JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"]);
    navigator.sendBeacon(presence.getAttribute("data-leave-url"), body);
  });

  // Polls (data-poll) wait while the tab is hidden (htmx's own "[!document.hidden]" filter would need the eval
  // that the CSP forbids), and say they are polls, which the session idle timeout does not count as use.
  document.addEventListener("htmx:configRequest", function (event) {
    if (!event.detail.elt.hasAttribute("data-poll")) return;
    // A part marked data-live-hidden still follows the live stream in a hidden tab: the bell, through which a system
    // notification reaches the device (notifications/static/notifications/desktop.js).
    var heardLive = event.detail.triggeringEvent && event.detail.triggeringEvent.type === "live";
    if (document.hidden && !(heardLive && event.detail.elt.hasAttribute("data-live-hidden"))) event.preventDefault();
    else event.detail.headers["X-Poll"] = "1";
  });

  // Bulk selection in the queue. The 5 s refresh replaces the rows and their checkboxes, so the checked hold ids
  // live here and are ticked again after each swap; shift (click or x) extends from the last box toggled, as in Gmail.
  var selectedHolds = new Set(), lastToggled = null;

  function holdBoxes() { return Array.prototype.slice.call(document.querySelectorAll("tr.hold-row input[name=hold]")); }

  function rememberSelection() {
    selectedHolds = new Set(holdBoxes().filter(function (box) { return box.checked; }).map(function (box) { return box.value; }));
    var count = document.querySelector("[data-selected-count]");
    if (count) count.textContent = selectedHolds.size ? selectedHolds.size + " selected" : "";
  }

  function noteToggle(box, extend) {
    var boxes = holdBoxes(), values = boxes.map(function (each) { return each.value; });
    var from = values.indexOf(lastToggled), to = boxes.indexOf(box);
    if (extend && from !== -1) {
      boxes.slice(Math.min(from, to), Math.max(from, to) + 1).forEach(function (each) { each.checked = box.checked; });
    }
    lastToggled = box.value;
    rememberSelection();
  }

  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target.id !== "queue-body") return;
    holdBoxes().forEach(function (box) { box.checked = selectedHolds.has(box.value); });
    rememberSelection();  // a selected hold that left the queue is no longer selected
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

  rememberSelection();
  window.addEventListener("pageshow", rememberSelection);

  // The queue's filters come open in the markup. Where the stylesheet shows their fold's summary (a phone), they fold
  // behind it when the page opens, so the holds come first; where it hides the summary (a desk), they stay open.
  var filtersFold = document.querySelector("details[data-fold-filters]"), foldShown = false;

  function fitFiltersFold() {
    var shown = getComputedStyle(filtersFold.querySelector("summary")).display !== "none";
    if (shown && !foldShown) filtersFold.open = false;
    if (!shown) filtersFold.open = true;
    foldShown = shown;
  }

  if (filtersFold) {
    fitFiltersFold();
    window.addEventListener("resize", fitFiltersFold);
  }
  // The undo window counts down in whole seconds; at its end Undo goes (the server would refuse it anyway), and
  // the status block's own refresh, due at the same moment, shows the sending.
  function tickUndo() {
    document.querySelectorAll("time.undo-countdown").forEach(function (el) {
      var left = Math.max(0, Math.ceil((Date.parse(el.getAttribute("datetime")) - Date.now()) / 1000));
      el.textContent = left + " s";
      if (left) return;
      var undo = document.getElementById("undo-button");
      if (undo) { undo.disabled = true; undo.textContent = "Sending…"; }
    });
  }

  tickCountdowns();
  setInterval(tickCountdowns, 1000);
  tickUndo();
  setInterval(tickUndo, 250);
})();

// Relative times (times engineer; the `relative_time` filter of people/templatetags/people.py): each
// <time datetime data-relative> says "3 minutes ago" in words, kept current, and its title gives the exact
// time in the page's zone (<body data-time-zone>), the zone named as on the server.
(function () {
  "use strict";

  var zone = document.body.getAttribute("data-time-zone") || undefined;
  var exact, words = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  try {
    exact = new Intl.DateTimeFormat("en-GB", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "short" });
  } catch (unknownZone) {
    zone = undefined;
    exact = new Intl.DateTimeFormat("en-GB", { year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "short" });
  }

  function exactText(date) {
    var part = {};
    exact.formatToParts(date).forEach(function (piece) { part[piece.type] = piece.value; });
    return part.year + "-" + part.month + "-" + part.day + " " + part.hour + ":" + part.minute + ":" + part.second +
      " " + part.timeZoneName + (zone ? " (" + zone + ")" : "");
  }

  function relativeText(ms) {
    var seconds = Math.round(ms / 1000), size = Math.abs(seconds);
    if (size < 60) return words.format(seconds, "second");
    if (size < 3600) return words.format(Math.round(seconds / 60), "minute");
    if (size < 86400) return words.format(Math.round(seconds / 3600), "hour");
    return words.format(Math.round(seconds / 86400), "day");
  }

  function tickRelative() {
    var now = Date.now();
    document.querySelectorAll("time[data-relative]").forEach(function (el) {
      var at = new Date(el.getAttribute("datetime"));
      if (isNaN(at)) return;
      el.textContent = relativeText(at - now);
      el.title = exactText(at);
    });
  }

  tickRelative();
  setInterval(tickRelative, 15000);
  document.addEventListener("htmx:load", tickRelative);
})();
