// Push notifications (notifications/push.py): each push shows as a system notification in the words the app wrote,
// as text. Approve… and Reject… open the hold's one-tap page, which decides nothing until its Send; "Open", or a click
// on the notification itself, opens the hold. Only this site's own links are opened.
self.addEventListener("push", (event) => {
  let pushed;
  try {
    pushed = event.data.json();
  } catch (error) {
    return;  // not a push of ours
  }
  const links = pushed.links || {};
  const actions = [
    links.approve && { action: "approve", title: "Approve…" },
    links.reject && { action: "reject", title: "Reject…" },
    { action: "open", title: "Open" },
  ].filter(Boolean);
  event.waitUntil(self.registration.showNotification(String(pushed.title || "Review Queue"), {
    body: String(pushed.body || ""), tag: String(pushed.tag || ""), data: links, actions,
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const links = event.notification.data || {};
  const target = new URL(links[event.action] || links.open || "/", self.location.origin);
  if (target.origin !== self.location.origin) return;
  // A window of its own, so that nothing under way in an open one is lost; where the browser allows none, an open
  // window of ours goes there instead.
  event.waitUntil(self.clients.openWindow(target.href).catch(() => self.clients.matchAll({ type: "window" })
    .then((windows) => windows.length && windows[0].navigate(target.href))));
});
