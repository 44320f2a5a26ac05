// The box's page holding a page's frame: only that frame's own window may ask to open a path of the box's
// UI, and only one the UI knows; anything else is ignored (docs/PAGES.md). templates/holder.html loads
// this before the frame and without defer, so a page that asks as it loads is heard.
"use strict";
(function () {
  const known = /^\/(today|todo|chat|pages|memory|diary|settings)(\/[a-z0-9-]+)?$|^\/memory\/note\?name=[A-Za-z0-9%._\/-]+$/;
  window.addEventListener("message", function (ev) {
    const frame = document.getElementById("pageframe");
    if (!frame || ev.source !== frame.contentWindow) return;
    const d = ev.data;
    if (!d || d.type !== "box:open" || typeof d.url !== "string" || !known.test(d.url)) return;
    location.href = d.url;
  });
})();
