// Box web UI: passkeys, approvals, search as you type and the chat. Plain JavaScript, no build step.
"use strict";
(function () {
  const csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";

  function b64d(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    const bin = atob(s), out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function b64e(buf) {
    const bytes = new Uint8Array(buf);
    let bin = "";
    for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function ids(list) {
    return (list || []).map(function (c) { return Object.assign({}, c, { id: b64d(c.id) }); });
  }
  function creationOptions(o) {
    const pk = Object.assign({}, o.publicKey);
    pk.challenge = b64d(pk.challenge);
    pk.user = Object.assign({}, pk.user, { id: b64d(pk.user.id) });
    pk.excludeCredentials = ids(pk.excludeCredentials);
    return { publicKey: pk };
  }
  function requestOptions(o) {
    const pk = Object.assign({}, o.publicKey);
    pk.challenge = b64d(pk.challenge);
    if (pk.allowCredentials) pk.allowCredentials = ids(pk.allowCredentials);
    return { publicKey: pk };
  }
  function credJSON(c) {
    const r = c.response, out = { id: c.id, rawId: b64e(c.rawId), type: c.type, response: { clientDataJSON: b64e(r.clientDataJSON) },
      clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {} };
    if (c.authenticatorAttachment) out.authenticatorAttachment = c.authenticatorAttachment;
    if (r.attestationObject) {
      out.response.attestationObject = b64e(r.attestationObject);
      if (r.getTransports) out.response.transports = r.getTransports();
    } else {
      out.response.authenticatorData = b64e(r.authenticatorData);
      out.response.signature = b64e(r.signature);
      if (r.userHandle) out.response.userHandle = b64e(r.userHandle);
    }
    return out;
  }

  async function post(url, body) {
    const res = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, "Accept": "application/json" },
      body: JSON.stringify(body || {}),
    });
    let data = {};
    try { data = await res.json(); } catch (e) { data = { text: "The box did not answer as expected (" + res.status + ")." }; }
    if (!res.ok || data.ok === false) throw new Error(data.text || ("Error " + res.status));
    return data;
  }

  function say(text, isError) {
    const el = document.querySelector(".note.live");
    if (!el) return;
    el.textContent = text;
    el.hidden = false;
    el.classList.toggle("error", !!isError);
    el.scrollIntoView({ block: "nearest" });
  }
  function busy(btn, on) { if (btn) btn.disabled = on; }
  function failed(e) {
    if (e && e.name === "NotAllowedError") return "The passkey request was cancelled or timed out; nothing was done.";
    return (e && e.message) || String(e);
  }

  async function makePasskey(btn, body, name) {
    busy(btn, true);
    try {
      const begin = await post("/auth/register/begin", body);
      const cred = await navigator.credentials.create(creationOptions(begin.options));
      const done = await post("/auth/register/finish", { ceremony: begin.ceremony, credential: credJSON(cred), name: name });
      return done;
    } finally { busy(btn, false); }
  }

  async function assertion(btn, beginURL, body) {
    const begin = await post(beginURL, body);
    const cred = await navigator.credentials.get(requestOptions(begin.options));
    return { ceremony: begin.ceremony, credential: credJSON(cred) };
  }

  function on(sel, ev, fn) {
    document.querySelectorAll(sel).forEach(function (el) { el.addEventListener(ev, fn); });
  }

  on("#setup", "click", async function (ev) {
    const btn = ev.currentTarget, name = (document.getElementById("pkname") || {}).value || "";
    try {
      const done = await makePasskey(btn, { code: btn.dataset.code }, name);
      location.href = done.next || "/today";
    } catch (e) { say(failed(e), true); }
  });

  on("#signin", "click", async function (ev) {
    const btn = ev.currentTarget;
    busy(btn, true);
    try {
      const a = await assertion(btn, "/auth/login/begin", {});
      const done = await post("/auth/login/finish", a);
      location.href = done.next || "/today";
    } catch (e) { say(failed(e), true); } finally { busy(btn, false); }
  });

  // Adding or removing a passkey first asks for one of the owner's passkeys: a session alone is not enough.
  on("#addpasskey", "click", async function (ev) {
    const btn = ev.currentTarget;
    try {
      busy(btn, true);
      const a = await assertion(btn, "/auth/confirm/begin", { purpose: "passkey-add" });
      await makePasskey(btn, a, "Passkey " + new Date().toLocaleDateString());
      location.href = "/settings?note=" + encodeURIComponent("The new passkey is saved.");
    } catch (e) { say(failed(e), true); busy(btn, false); }
  });
  on("button.removepasskey", "click", async function (ev) {
    const btn = ev.currentTarget, id = btn.dataset.passkey;
    busy(btn, true);
    try {
      const a = await assertion(btn, "/auth/confirm/begin", { purpose: "passkey-remove", passkey: id });
      const done = await post("/settings/passkeys/" + encodeURIComponent(id) + "/remove", a);
      location.href = "/settings?note=" + encodeURIComponent(done.text);
    } catch (e) { say(failed(e), true); busy(btn, false); }
  });

  function ticked(id) { const el = document.getElementById(id); return !!(el && el.checked); }
  on("#consent-approve", "click", async function (ev) {
    const btn = ev.currentTarget, req = document.getElementById("consent-checks").dataset.request;
    busy(btn, true);
    try {
      const a = await assertion(btn, "/mcp/oauth/consent/begin",
        { request: req, memory: ticked("c-memory"), messages: ticked("c-messages"), build: ticked("c-build") });
      const done = await post("/mcp/oauth/consent/finish", a);
      say(done.text);
      location.href = done.next;
    } catch (e) { say(failed(e), true); busy(btn, false); }
  });
  on("#consent-deny", "click", async function (ev) {
    try {
      const done = await post("/mcp/oauth/consent/deny", { request: document.getElementById("consent-checks").dataset.request });
      location.href = done.next;
    } catch (e) { say(failed(e), true); }
  });

  on("button.approve", "click", async function (ev) {
    const btn = ev.currentTarget, id = btn.dataset.card;
    busy(btn, true);
    try {
      const a = await assertion(btn, "/auth/confirm/begin", { purpose: "approve", card: id });
      const done = await post("/cards/" + encodeURIComponent(id) + "/approve", a);
      const card = document.getElementById("card-" + id);
      if (card) card.remove();
      say(done.text);
      if (done.secret) {
        document.getElementById("secret").hidden = false;
        document.getElementById("secret-value").textContent = done.secret;
      }
    } catch (e) { say(failed(e), true); } finally { busy(btn, false); }
  });

  on("#erase", "click", async function (ev) {
    const btn = ev.currentTarget, phrase = document.getElementById("phrase").value;
    busy(btn, true);
    try {
      const a = await assertion(btn, "/auth/confirm/begin", { purpose: "erase" });
      a.phrase = phrase;
      const done = await post("/settings/erase", a);
      say(done.text);
      document.getElementById("phrase").value = "";
    } catch (e) { say(failed(e), true); } finally { busy(btn, false); }
  });

  // Safe mode off needs a passkey made for it (docs/PAGES.md).
  on("#safemode-off", "click", async function (ev) {
    const btn = ev.currentTarget;
    busy(btn, true);
    try {
      const a = await assertion(btn, "/auth/confirm/begin", { purpose: "safe-mode-off" });
      const done = await post("/settings/safe-mode", a);
      location.href = "/settings/builds?note=" + encodeURIComponent(done.text);
    } catch (e) { say(failed(e), true); } finally { busy(btn, false); }
  });

  // A form that changes where the owner's keys and words go (the brain), takes the whole memory out (an
  // export), unfreezes the box, or a switch's button that lets the box do more without asking, first asks
  // for the owner's passkey, then is sent with the assertion in it.
  on("form[data-confirm], form.switch", "submit", async function (ev) {
    const form = ev.currentTarget, btn = ev.submitter;
    if (form.dataset.confirmed === "1") { form.dataset.confirmed = ""; return; }
    const purpose = form.dataset.confirm || (btn && btn.dataset.confirm);
    if (!purpose) return;
    ev.preventDefault();
    busy(btn, true);
    try {
      const a = await assertion(btn, "/auth/confirm/begin", { purpose: purpose, card: (btn && btn.dataset.card) || "" });
      form.elements.ceremony.value = a.ceremony;
      form.elements.credential.value = JSON.stringify(a.credential);
      form.dataset.confirmed = "1";
      busy(btn, false);
      form.requestSubmit(btn);
    } catch (e) { say(failed(e), true); busy(btn, false); }
  });

  // Search as you type.
  const q = document.querySelector("input[data-search]"), hits = document.getElementById("hits");
  if (q && hits) {
    let timer = 0, seq = 0;
    q.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(async function () {
        const mine = ++seq, text = q.value.trim();
        if (!text) { hits.replaceChildren(); return; }
        try {
          const res = await fetch("/api/search?q=" + encodeURIComponent(text), { credentials: "same-origin" });
          const data = await res.json();
          if (mine !== seq) return;
          hits.replaceChildren();
          let partial = false;
          (data.hits || []).forEach(function (h) {
            if (h.partial && !partial) { // partial matches go under their own heading
              partial = true;
              const head = document.createElement("li");
              head.className = "partial-head";
              head.textContent = "Partial matches: some of the words";
              hits.append(head);
            }
            const li = document.createElement("li"), a = document.createElement("a"), p = document.createElement("p");
            if (h.partial) li.className = "partial";
            a.href = "/memory/note?name=" + encodeURIComponent(h.name || h.path);
            a.textContent = h.title || h.name || h.kind;
            (h.snippet || "").split("**").forEach(function (part, i, all) {
              if (i % 2 === 1 && i < all.length - 1) {
                const m = document.createElement("mark");
                m.textContent = part;
                p.append(m);
              } else p.append(document.createTextNode(part));
            });
            li.append(a, p);
            hits.append(li);
          });
          if (!(data.hits || []).length) {
            const li = document.createElement("li");
            li.className = "empty";
            li.textContent = "Nothing matches “" + text + "”.";
            hits.append(li);
          }
        } catch (e) { /* the form still works without this */ }
      }, 150);
    });
  }

  // The chat. With a brain the answer streams (POST /chat/stream, server-sent events read from the
  // fetch body); without one it is one JSON answer.
  const form = document.getElementById("chatform"), log = document.getElementById("chatlog");
  function bubble(cls, text) {
    const li = document.createElement("li");
    li.className = cls;
    li.textContent = text;
    log.append(li);
    li.scrollIntoView({ block: "nearest" });
    return li;
  }
  function meta(li, text) {
    const m = document.createElement("span");
    m.className = "meta";
    m.textContent = text;
    li.append(m);
  }
  function finish(li, r) {
    li.textContent = r.reply;
    li.classList.remove("thinking");
    if (r.failed) li.classList.add("failed");
    (r.tools || []).forEach(function (t) {
      if (t.name === "memory_remember" && t.ok) meta(li, "Remembered: " + (JSON.parse(t.input || "{}").text || ""));
    });
    if (r.cards && r.cards.length) {
      const a = document.createElement("a");
      a.href = "/today";
      a.className = "cardlink";
      a.textContent = "A \u201cSave this?\u201d card is waiting on Today";
      li.append(document.createElement("br"), a);
    }
    if (r.brain && r.model) meta(li, r.model + (r.calls ? " \u00b7 " + r.calls + " calls \u00b7 " + (r.costKnown ? "$" + r.cost.toFixed(r.cost > 0 && r.cost < 0.01 ? 4 : 2) : "cost unknown") : ""));
    if (r.chat) {
      log.dataset.chat = r.chat;
      const id = document.getElementById("chatid");
      if (id) id.value = r.chat;
    }
  }
  async function stream(text) {
    const li = bubble("box thinking", "\u2026");
    let got = "", shown = false, result = null;
    const res = await fetch("/chat/stream", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, "Accept": "text/event-stream" },
      body: JSON.stringify({ text: text, chat: log.dataset.chat || "" }),
    });
    if (!res.ok || !res.body) {
      let msg = "The box did not answer (" + res.status + ").";
      try { msg = (await res.json()).text || msg; } catch (e) { /* not JSON */ }
      throw new Error(msg);
    }
    const reader = res.body.getReader(), dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const part = await reader.read();
      if (part.done) break;
      buf += dec.decode(part.value, { stream: true });
      let k;
      while ((k = buf.indexOf("\n\n")) >= 0) {
        const line = buf.slice(0, k);
        buf = buf.slice(k + 2);
        if (!line.startsWith("data: ")) continue;
        const e = JSON.parse(line.slice(6));
        if (e.type === "text") {
          got += e.text;
          li.textContent = got;
          shown = true;
        } else if (e.type === "restart") {
          got = "";
          li.textContent = "\u2026 (thinking harder)";
        } else if (e.type === "tool") {
          if (!shown) li.textContent = "\u2026 (" + e.tool.replace(/_/g, " ") + ")";
        } else if (e.type === "note") {
          log.insertBefore(bubble("box note", e.text), li); // the box's note comes before the answer
        } else if (e.type === "done") {
          result = e.result;
        }
      }
    }
    if (!result) throw new Error("The answer broke off; nothing more came.");
    finish(li, result);
  }
  async function send(text, confirm) {
    bubble("me", confirm ? "Yes, forget them." : text);
    try {
      if (log.dataset.brain) { await stream(text); return; }
      const data = await post("/chat", { text: text, confirm: !!confirm });
      const li = bubble("box", data.reply);
      if (data.confirm) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = "primary";
        b.textContent = "Yes, forget them all";
        b.addEventListener("click", function () { b.remove(); send(text, true); });
        li.append(document.createElement("br"), b);
      }
    } catch (e) { bubble("box failed", failed(e)); }
  }
  if (form && log) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      const input = document.getElementById("chattext"), text = input.value.trim();
      if (!text) return;
      input.value = "";
      send(text, false);
    });
  }
})();

// Bring your memories: a file over the upload limit is named before it is sent (the box refuses it too).
(function () {
  "use strict";
  document.querySelectorAll('input[type="file"][data-max]').forEach(function (input) {
    input.addEventListener("change", function () {
      const f = input.files && input.files[0], max = Number(input.dataset.max);
      input.setCustomValidity(f && max && f.size > max ? "This file is bigger than the " + Math.floor(max / 1048576) + " MiB an upload may be." : "");
      input.reportValidity();
    });
  });
})();
