// The box's page holding a page's frame: only that frame's own window may ask to open a path of the box's
// UI, and only one the UI knows; anything else is ignored (docs/PAGES.md). templates/holder.html loads
// this before the frame and without defer, so a page that asks as it loads is heard.
"use strict";
(function () {
  // A note goes through this page's own note route, which opens it only when the page may read it.
  const here = location.pathname.replace(/[^a-z0-9\/-]/g, "");
  const known = /^\/(today|todo|chat|pages|memory|diary|settings)(\/[a-z0-9-]+)?$/;
  const note = /^\/pages\/[a-z0-9-]+\/note\?name=[A-Za-z0-9%._\/-]+$/;
  window.addEventListener("message", function (ev) {
    const frame = document.getElementById("pageframe");
    if (!frame || ev.source !== frame.contentWindow) return;
    const d = ev.data;
    if (!d || d.type !== "box:open" || typeof d.url !== "string") return;
    if (!known.test(d.url) && !(note.test(d.url) && d.url.startsWith(here + "/note?"))) return;
    location.href = d.url;
  });
})();
