// Push notifications (Preferences → Notifications on this device): "Subscribe this device" asks the browser for its
// permission, subscribes through the service worker with the installation's VAPID key, and sends the subscription
// to the app, which checks it (notifications/push_devices.py) and answers field errors.
"use strict";
(() => {
  const box = document.querySelector("#push-devices");
  if (!box) return;
  const state = box.querySelector("#push-state");
  const subscribe = box.querySelector("[data-push-subscribe]");
  const problem = box.querySelector("#push-error");
  const name = box.querySelector("#push-name");
  const supported = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
  const blocked = () => Notification.permission === "denied";

  function show(words) {
    state.textContent = words;
    subscribe.hidden = !supported || blocked();
  }
  function fail(words) {
    problem.textContent = words;
    problem.hidden = false;
  }

  if (!supported) return show("This browser cannot receive push notifications.");
  show(blocked() ? "Notifications are blocked for this site in the browser's settings."
    : "Subscribe this browser to hear of holds with no Review Queue page open.");
  subscribe.addEventListener("click", async () => {
    problem.hidden = true;
    if (await Notification.requestPermission() !== "granted") {
      return show("Push needs the browser's permission to show notifications.");
    }
    let subscription, existing;
    try {
      const registration = await navigator.serviceWorker.ready;
      existing = await registration.pushManager.getSubscription();  // this browser's, perhaps already a device
      subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true, applicationServerKey: box.getAttribute("data-push-key"),
      });
    } catch (error) {
      return fail("This browser could not subscribe: " + error.message);
    }
    const response = await fetch(box.getAttribute("data-push-url"), {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        "X-CSRFToken": JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"],
      },
      body: JSON.stringify({ name: name.value, subscription: subscription.toJSON() }),
    });
    if (response.status === 201) return location.reload();  // the list of devices, and the message saying so
    const answer = await response.json().catch(() => ({}));
    const errors = Object.entries(answer.errors || {}).map(([field, words]) => `${field}: ${words}`);
    fail("The device was not added. " + (errors.join(" ") || "Try again."));
    if (!existing) await subscription.unsubscribe();  // only the one made here: a device that works stays so
  });
})();
