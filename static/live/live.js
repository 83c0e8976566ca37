// Live updates: the page's event stream (<body data-live-url>, live/streams.py) tells it what changed; each part
// of the page that shows it (data-live-on="kinds", data-live-hold="id" for one hold's) fetches itself again
// through its own hx-get, on its "live" trigger. Events carry ids, never text: what is shown comes from the views.
// While the stream is up the polls (data-poll) wait; when it fails, is refused or goes silent, they go on as
// before, and a stream that was cut is opened again after a while, from the last event it had.
(function () {
  "use strict";

  var body = document.body;
  var url = body.getAttribute("data-live-url");
  if (!url || !window.EventSource || !window.htmx) return;
  var heartbeatMs = Number(body.getAttribute("data-live-heartbeat") || 15) * 1000;
  var KINDS = ["hold", "decision", "claim", "presence", "approval", "assignment", "note", "bell", "refresh"];
  var RECONNECT_MS = 10000, RECONNECT_MAX_MS = 120000;  // after a failure the page polls this long, then longer
  var source = null, lastId = null, silence = null, due = new Map(), wait = RECONNECT_MS;

  function setLive(on) {
    if (on) body.setAttribute("data-live", "on");
    else body.removeAttribute("data-live");
  }

  // The page's own number, from the URL it was drawn with, is where a new stream starts: what came after it is
  // replayed.
  function streamUrl() {
    return lastId === null ? url : url.replace(/([?&]since=)\d*/, "$1" + lastId);
  }

  function connect() {
    source = new EventSource(streamUrl());
    source.addEventListener("hello", heard);
    source.addEventListener("ping", heard);
    KINDS.forEach(function (kind) { source.addEventListener(kind, received); });
    source.onerror = function () {
      setLive(false);
      // A refusal (204, 429, 503) closes it for good; a cut connection the browser retries by itself, but the
      // polls take over until it is back.
      if (source.readyState === EventSource.CLOSED) later();
    };
  }

  function later() {
    clearTimeout(silence);
    if (source) source.close();
    source = null;
    setLive(false);
    setTimeout(connect, wait);
    wait = Math.min(wait * 2, RECONNECT_MAX_MS);
  }

  function heard(event) {
    setLive(true);
    wait = RECONNECT_MS;
    if (event.lastEventId) lastId = event.lastEventId;
    clearTimeout(silence);
    silence = setTimeout(later, heartbeatMs * 2.5);  // no ping for that long: the stream is dead
  }

  function received(event) {
    heard(event);
    var holds = JSON.parse(event.data || "{}").holds || [];
    document.querySelectorAll("[data-live-on]").forEach(function (part) {
      if (event.type !== "refresh") {
        if (part.getAttribute("data-live-on").split(" ").indexOf(event.type) === -1) return;
        var hold = part.getAttribute("data-live-hold");
        if (hold && holds.indexOf(Number(hold)) === -1) return;
      }
      // While the reviewer is deciding the hold, its page is not redrawn under their form.
      if (part.hasAttribute("data-live-not-while-deciding") && document.querySelector("#presence[data-deciding]")) {
        return;
      }
      fetchSoon(part);
    });
  }

  // A burst of events (a sync of many holds) fetches each part once. A part with data-live-every="S" is fetched at
  // most once every S seconds: the queue's body, which every open queue fetches on every change to any hold.
  var fetched = new WeakMap();
  function fetchSoon(part) {
    if (due.has(part)) return;
    var every = Number(part.getAttribute("data-live-every") || 0) * 1000;
    var delay = Math.max(50, (fetched.get(part) || 0) + every - Date.now());
    due.set(part, setTimeout(function () {
      due.delete(part);
      fetched.set(part, Date.now());
      if (part.isConnected) htmx.trigger(part, "live");
    }, delay));
  }

  // A poll while the stream is up would fetch what the stream already said: it waits.
  document.addEventListener("htmx:configRequest", function (event) {
    if (!body.hasAttribute("data-live") || !event.detail.elt.hasAttribute("data-poll")) return;
    var cause = event.detail.triggeringEvent;
    if (!cause || cause.type !== "live") event.preventDefault();
  });

  // Once the page is being left (a form sent, a link followed), what it would fetch could only get in the way: a
  // refresh answered to it would reload this page instead of going on to the next.
  window.addEventListener("beforeunload", stop);
  window.addEventListener("pagehide", stop);

  function stop() {
    clearTimeout(silence);
    due.forEach(clearTimeout);
    due.clear();
    if (source) source.close();
    source = null;
    setLive(false);
  }
  window.addEventListener("pageshow", function (event) { if (event.persisted && !source) connect(); });
  connect();
})();
