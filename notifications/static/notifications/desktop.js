// System notifications from an open tab: when the bell's fragment (notifications/_bell.html, fetched again on the
// live stream's events) names a newer urgent or assignment message while this tab is hidden, the system shows it,
// on a device where the person turned them on (Preferences → Notifications on this device). No push service.
"use strict";
(() => {
  const ON = "review-queue:desktop-notifications";
  const SEEN = "review-queue:desktop-notifications-seen";
  const supported = "Notification" in window;
  const turnedOn = () => supported && Notification.permission === "granted" && localStorage.getItem(ON) === "on";

  document.addEventListener("htmx:afterSettle", () => {
    const bell = document.querySelector("#bell[data-desktop-id]");
    if (!bell || !turnedOn()) return;
    const id = Number(bell.getAttribute("data-desktop-id"));
    if (!(id > Number(localStorage.getItem(SEEN) || 0))) return;
    localStorage.setItem(SEEN, String(id));  // once per device, whichever of its tabs heard first
    if (!document.hidden) return;  // the bell shows it already
    const shown = new Notification(bell.getAttribute("data-desktop-title"), { tag: "review-queue-" + id });
    shown.addEventListener("click", () => {
      const link = new URL(bell.getAttribute("data-desktop-link") || bell.getAttribute("href"), location.href);
      window.focus();
      location.assign(link.origin === location.origin ? link.href : bell.getAttribute("href"));
      shown.close();
    });
  });

  const settings = document.querySelector("#desktop-notifications");
  if (!settings) return;
  const state = settings.querySelector("#desktop-state");
  const enable = settings.querySelector("[data-desktop-enable]");
  const disable = settings.querySelector("[data-desktop-disable]");
  function show() {
    const on = turnedOn();
    enable.hidden = !supported || on || Notification.permission === "denied";
    disable.hidden = !on;
    state.textContent = !supported ? "This browser cannot show notifications."
      : on ? "On for this device."
      : Notification.permission === "denied" ? "Notifications are blocked for this site in the browser's settings."
      : "Off for this device.";
  }
  enable.addEventListener("click", () => {
    Notification.requestPermission().then((permission) => {
      if (permission === "granted") {
        localStorage.setItem(ON, "on");
        localStorage.setItem(SEEN, settings.getAttribute("data-newest"));  // nothing already waiting pops up
      }
      show();
    });
  });
  disable.addEventListener("click", () => { localStorage.removeItem(ON); show(); });
  show();
})();
