// Installs the service worker (webapp/views.py): the offline page when a page cannot load, and what makes the site
// installable as an app.
"use strict";
(() => {
  const script = document.currentScript;
  if (!("serviceWorker" in navigator) || !script) return;  // an insecure origin has none: the site works without it
  navigator.serviceWorker.register(script.dataset.worker, { scope: "/" })
    .catch((error) => console.warn("The offline page is not installed:", error));
})();
