// Review Queue's service worker ({{ version }}): when the network fails a page's load, the offline page instead.
// It keeps the offline page and its stylesheet, and nothing else: no page that shows a hold is ever stored here.
"use strict";
const KEPT = "review-queue-offline-{{ version|escapejs }}";
const OFFLINE = "{{ offline_url|escapejs }}";
const KEPT_PATHS = [{% for url in kept %}"{{ url|escapejs }}"{% if not forloop.last %}, {% endif %}{% endfor %}];

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches.open(KEPT)
      .then((cache) => cache.addAll(KEPT_PATHS))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(names.filter((name) => name !== KEPT).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.match(OFFLINE)));
  } else if (request.method === "GET" && KEPT_PATHS.includes(new URL(request.url).pathname)) {
    event.respondWith(fetch(request).catch(() => caches.match(request)));  // the network first: kept for offline
  } else if (request.keepalive) {
    // A beacon from a page being left (app.js ends the reviewer's claim so): sent from here, as Chromium drops one
    // left to go to the network by itself once its page is gone.
    event.respondWith(fetch(request));
  }  // anything else goes to the network as if there were no worker
});

{% include "notifications/push-worker.js" %}
