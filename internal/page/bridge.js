// The box bridge: the first script of every page (docs/PAGES.md). It removes the APIs a page may not
// use, then defines the global `box`, the page's only door to the box, and reports the first load.
(() => {
  "use strict";
  const cfg = /*BOX_CONFIG*/ {};
  const me = document.currentScript;
  if (me) me.remove(); // the page never sees its token in the DOM

  // What the bridge and its guard use, taken before the page's scripts run: a page may change any
  // prototype afterwards, so the guard calls only these, through Reflect.apply.
  const W = window, D = document, O = Object, apply = Reflect.apply, defineProperty = O.defineProperty;
  const assign = O.assign, create = O.create;
  // bare is a copy of props on an object with no prototype: a page's setters and getters on
  // Object.prototype never see what the bridge sets on it or what fetch reads from it (the token).
  const bare = (props) => assign(create(null), props);
  const getDescriptor = O.getOwnPropertyDescriptor, String_ = String, DOMException_ = DOMException;
  const fetch_ = W.fetch.bind(W), stringify = JSON.stringify, parse = JSON.parse;
  const setTimeout_ = W.setTimeout.bind(W), encode = encodeURIComponent;
  const post = W.parent.postMessage.bind(W.parent);
  const nodeType = getDescriptor(W.Node.prototype, "nodeType").get;
  const matches = W.Element.prototype.matches, remove = W.Element.prototype.remove;
  const toLower = String_.prototype.toLowerCase;
  const querySelector = { 1: W.Element.prototype.querySelector, 9: W.Document.prototype.querySelector, 11: W.DocumentFragment.prototype.querySelector };

  // The guard (docs/PAGES.md, "The walls"): a list of what it knows, not a wall. Each API that connects,
  // starts a worker or opens a window is taken away. Deleting it is enough (no other copy is left to
  // reach) and lets a page name its own function `open`.
  const kill = (obj, name) => {
    if (!obj) return;
    try { delete obj[name]; } catch (_) { }
    if (name in obj) try { defineProperty(obj, name, { value: undefined, writable: true, configurable: true }); } catch (_) { }
  };
  for (const name of ["WebSocket", "WebSocketStream", "WebTransport", "EventSource", "RTCPeerConnection",
    "webkitRTCPeerConnection", "mozRTCPeerConnection", "RTCDataChannel", "RTCIceTransport", "RTCSctpTransport",
    "Worker", "SharedWorker", "ServiceWorker", "ServiceWorkerContainer", "ServiceWorkerRegistration",
    "Worklet", "AudioWorklet", "AudioWorkletNode", "PresentationRequest", "open", "showModalDialog",
    "XSLTProcessor"]) {
    kill(W, name);
  }
  for (const name of ["sendBeacon", "serviceWorker", "presentation", "registerProtocolHandler"]) {
    kill(W.Navigator && W.Navigator.prototype, name);
  }
  for (const name of ["paintWorklet", "animationWorklet", "layoutWorklet"]) kill(W.CSS, name);
  kill(W.BaseAudioContext && W.BaseAudioContext.prototype, "audioWorklet");
  for (const C of [W.Element, W.ShadowRoot]) for (const name of ["setHTMLUnsafe", "setHTML"]) kill(C && C.prototype, name);
  for (const name of ["parseHTMLUnsafe", "parseHTML"]) kill(W.Document, name);
  // document.write parses as a stream: "<ifr" then "ame>" makes a frame no one call shows, so it goes.
  for (const name of ["write", "writeln"]) kill(W.Document.prototype, name);
  for (const C of [W.HTMLIFrameElement, W.HTMLFrameElement, W.HTMLObjectElement, W.HTMLEmbedElement]) {
    if (C) for (const name of ["contentWindow", "contentDocument", "getSVGDocument"]) kill(C.prototype, name);
  }

  // No frame may be made by any door a script has: a frame is a fresh window whose APIs the guard has
  // not removed (WebRTC among them, which no CSP rule covers). So every way to make an element by name
  // or from markup refuses a frame where it is made: createElement(NS), custom elements extending a
  // frame, and every parser. A parser's product is what is checked, template contents included, not
  // the markup: markup read by an inert copy can differ from what the browser builds. For markup set
  // on an element, the product is built first in a copy of the context element, in the same document
  // (same parser, same scripting flag) but never connected, so no frame in it ever loads.
  const FRAMES = "iframe,frame,frameset,object,embed,applet,portal,fencedframe";
  const FRAME_NAMES = { iframe: 1, frame: 1, frameset: 1, object: 1, embed: 1, applet: 1, portal: 1, fencedframe: 1 };
  const refuse = () => { throw new DOMException_("A page can't hold frames or plug-ins (docs/PAGES.md).", "NotSupportedError"); };
  const innerHTML = getDescriptor(W.Element.prototype, "innerHTML");
  const content = getDescriptor(W.HTMLTemplateElement.prototype, "content").get;
  const host = getDescriptor(W.ShadowRoot.prototype, "host").get;
  const parentNode = getDescriptor(W.Node.prototype, "parentNode").get;
  const ownerDocument = getDescriptor(W.Node.prototype, "ownerDocument").get;
  const localName = getDescriptor(W.Element.prototype, "localName").get;
  const namespaceURI = getDescriptor(W.Element.prototype, "namespaceURI").get;
  const cloneNode = W.Node.prototype.cloneNode;
  const listLength = getDescriptor(W.NodeList.prototype, "length").get;
  const addedNodes = getDescriptor(W.MutationRecord.prototype, "addedNodes").get;
  const querySelectorAll = { 1: W.Element.prototype.querySelectorAll, 9: W.Document.prototype.querySelectorAll, 11: W.DocumentFragment.prototype.querySelectorAll };
  const HTML_NS = "http:" + "//www.w3.org/1999/xhtml";
  // within: a frame below node, or in the contents of a template below it (or of node, a template).
  const within = (node, depth) => {
    let type;
    try { type = apply(nodeType, node, []); } catch (_) { return false; } // not a node: the browser refuses it
    if (type !== 1 && type !== 9 && type !== 11) return false;
    if (depth > 32 || apply(querySelector[type], node, [FRAMES]) !== null) return true;
    const inside = (t) => {
      let c = null;
      try { c = apply(content, t, []); } catch (_) { } // a template element of another namespace has none
      return c !== null && within(c, depth + 1);
    };
    if (type === 1 && apply(matches, node, ["template"]) && inside(node)) return true;
    const templates = apply(querySelectorAll[type], node, ["template"]);
    for (let i = 0, n = apply(listLength, templates, []); i < n; i++) if (inside(templates[i])) return true;
    return false;
  };
  const nodeHasFrame = (node) => {
    let type;
    try { type = apply(nodeType, node, []); } catch (_) { return false; }
    return type === 1 && apply(matches, node, [FRAMES]) || within(node, 0);
  };
  const checked = (product) => { if (product && nodeHasFrame(product)) refuse(); return product; };
  // makesFrame parses markup as the element context would (innerHTML on a copy of it) and looks at what
  // came out.
  const makesFrame = (context, markup) => {
    const probe = apply(cloneNode, context, [false]);
    apply(innerHTML.set, probe, [markup]);
    const found = within(probe, 0);
    apply(innerHTML.set, probe, [""]);
    return found;
  };
  // fragmentContext is the element markup is parsed in when it goes beside or in place of node: its
  // parent, or a body when the parent is not an element (a fragment, a shadow root) or is <html>.
  const fragmentContext = (node, parent) => {
    if (parent !== null && apply(nodeType, parent, []) === 1 &&
      !(apply(localName, parent, []) === "html" && apply(namespaceURI, parent, []) === HTML_NS)) return parent;
    return apply(createElement, apply(ownerDocument, node, []), ["body"]);
  };
  const lock = (obj, name, desc) => {
    try { defineProperty(obj, name, O.assign({ configurable: false, enumerable: true }, desc)); } catch (_) { }
  };
  const wrap = (proto, name, make) => {
    const f = proto && proto[name];
    if (typeof f === "function") lock(proto, name, { writable: false, value: make(f) });
  };
  const wrapNodes = (proto, names) => {
    for (const name of names) wrap(proto, name, (f) => function (...args) {
      for (let i = 0; i < args.length; i++) if (nodeHasFrame(args[i])) refuse();
      return apply(f, this, args);
    });
  };
  const wrapNodeSetter = (proto, name) => {
    const d = proto && getDescriptor(proto, name);
    if (!d || !d.set) return;
    lock(proto, name, { get: d.get, set: function (v) {
      if (nodeHasFrame(v)) refuse();
      apply(d.set, this, [v]);
    } });
  };
  const wrapMarkupSetter = (proto, name, contextOf) => {
    const d = proto && getDescriptor(proto, name);
    if (!d || !d.set) return;
    lock(proto, name, { get: d.get, set: function (v) {
      const markup = String_(v);
      const context = contextOf(this);
      if (context !== null && makesFrame(context, markup)) refuse();
      apply(d.set, this, [markup]);
    } });
  };
  const createElement = W.Document.prototype.createElement, createElementNS = W.Document.prototype.createElementNS;

  // Inserting: every method that puts a node in a tree refuses one holding a frame (a second net, for
  // a frame the list of makers above missed).
  wrapNodes(W.Node.prototype, ["appendChild", "insertBefore", "replaceChild"]);
  for (const C of [W.Element, W.Document, W.DocumentFragment, W.CharacterData, W.DocumentType]) {
    if (C) wrapNodes(C.prototype, ["append", "prepend", "replaceChildren", "before", "after", "replaceWith", "moveBefore"]);
  }
  wrapNodes(W.Element.prototype, ["insertAdjacentElement"]);
  wrapNodes(W.Range && W.Range.prototype, ["insertNode", "surroundContents"]);
  wrapNodes(W.HTMLSelectElement && W.HTMLSelectElement.prototype, ["add"]);
  wrapNodes(W.HTMLOptionsCollection && W.HTMLOptionsCollection.prototype, ["add"]);
  for (const name of ["caption", "tHead", "tFoot"]) wrapNodeSetter(W.HTMLTableElement && W.HTMLTableElement.prototype, name);
  wrapNodeSetter(W.Document.prototype, "body");

  // Making from markup: parsed where it can't load, then checked.
  wrapMarkupSetter(W.Element.prototype, "innerHTML", (el) => el);
  wrapMarkupSetter(W.ShadowRoot.prototype, "innerHTML", (root) => apply(host, root, []));
  wrapMarkupSetter(W.Element.prototype, "outerHTML", (el) => {
    const parent = apply(parentNode, el, []);
    return parent === null || apply(nodeType, parent, []) === 9 ? null : fragmentContext(el, parent); // else the browser refuses
  });
  wrap(W.Element.prototype, "insertAdjacentHTML", (f) => function (position, markup) {
    const where = apply(toLower, String_(position), []), text = String_(markup);
    const parent = where === "beforebegin" || where === "afterend" ? apply(parentNode, this, []) : this;
    if (parent !== null && apply(nodeType, parent, []) !== 9 && makesFrame(fragmentContext(this, parent), text)) refuse();
    return apply(f, this, [position, text]);
  });
  wrap(W.Document.prototype, "execCommand", (f) => function (command, ui, value) {
    if (apply(toLower, String_(command), []) === "inserthtml") {
      value = String_(value);
      if (makesFrame(apply(createElement, this, ["body"]), value)) refuse();
    }
    return apply(f, this, [command, ui, value]);
  });
  wrap(W.DOMParser && W.DOMParser.prototype, "parseFromString", (f) => function (...args) { return checked(apply(f, this, args)); });
  wrap(W.Range && W.Range.prototype, "createContextualFragment", (f) => function (...args) { return checked(apply(f, this, args)); });
  wrap(W.DOMImplementation && W.DOMImplementation.prototype, "createDocument", (f) => function (...args) { return checked(apply(f, this, args)); });

  // Making by name.
  lock(W.Document.prototype, "createElement", { writable: false, value: function (name, ...rest) {
    const n = String_(name);
    if (FRAME_NAMES[apply(toLower, n, [])] === 1) refuse();
    return apply(createElement, this, [n, ...rest]);
  } });
  lock(W.Document.prototype, "createElementNS", { writable: false, value: function (ns, name, ...rest) {
    const n = String_(name), local = apply(toLower, n, []);
    if (FRAME_NAMES[local.slice(local.lastIndexOf(":") + 1)] === 1) refuse();
    return apply(createElementNS, this, [ns, n, ...rest]);
  } });
  // A customized built-in (class extends HTMLIFrameElement, { extends: "iframe" }) is a frame made with new.
  wrap(W.CustomElementRegistry && W.CustomElementRegistry.prototype, "define", (f) => function (name, constructor, options) {
    let ext;
    if (options !== undefined && options !== null) {
      ext = options.extends; // read once: the browser gets this value, not a getter's next answer
      if (ext !== undefined) {
        ext = String_(ext);
        if (FRAME_NAMES[apply(toLower, ext, [])] === 1) refuse();
      }
    }
    return apply(f, this, ext === undefined ? [name, constructor] : [name, constructor, { extends: ext }]);
  });

  // The last net: a frame that still turns up, in the document or in any shadow root a script makes,
  // is taken out as soon as it does, before the document it would load runs.
  const observe = W.MutationObserver.prototype.observe, attachShadow = W.Element.prototype.attachShadow;
  const net = new W.MutationObserver((records) => {
    for (let i = 0; i < records.length; i++) {
      const added = apply(addedNodes, records[i], []);
      for (let j = 0, m = apply(listLength, added, []); j < m; j++) {
        const n = added[j];
        if (apply(nodeType, n, []) !== 1) continue;
        if (apply(matches, n, [FRAMES])) apply(remove, n, []);
        else {
          const fs = apply(querySelectorAll[1], n, [FRAMES]);
          for (let k = 0, f = apply(listLength, fs, []); k < f; k++) apply(remove, fs[k], []);
        }
      }
    }
  });
  const watch = (root) => apply(observe, net, [root, { childList: true, subtree: true }]);
  watch(D);
  lock(W.Element.prototype, "attachShadow", { writable: false, value: function (...args) {
    const root = apply(attachShadow, this, args);
    watch(root);
    return root;
  } });

  // The door: every call is a request to /api/sections/<slug>/… with the page's own token.
  const MESSAGES = {
    401: "This page's key is no longer valid: reload the page (it may have been updated or removed).",
    403: "This page isn't allowed to do that.",
    423: "Safe mode is on: the owner's pages are paused until it is turned off in Settings → Things I built.",
    429: "This page asked too often: wait a moment and try again.",
  };
  class BoxError extends Error {
    constructor(status, message, detail) {
      super(message);
      this.name = "BoxError";
      this.status = status;
      this.detail = detail;
    }
  }
  const call = async (method, path, body) => {
    const init = bare({ method, headers: bare({ "x-section-token": cfg.token }), credentials: "omit", cache: "no-store",
      redirect: "error", referrerPolicy: "no-referrer" });
    if (body !== undefined) {
      init.headers["content-type"] = "text/plain;charset=UTF-8";
      init.body = stringify(body);
    }
    let res, text;
    try {
      res = await fetch_(cfg.api + path, init);
      text = await res.text();
    } catch (_) {
      throw new BoxError(0, "The box can't be reached: check the connection and try again.", "");
    }
    let data = null;
    try { data = text ? parse(text) : null; } catch (_) { data = null; }
    if (res.ok) return data;
    const said = data && typeof data.error === "string" ? data.error : "";
    const base = MESSAGES[res.status];
    const message = base ? (said && said !== base ? base + " " + said : base) : (said || "The box answered " + res.status + ".");
    throw new BoxError(res.status, message, said);
  };
  const need = (v, what) => {
    if (v === undefined || v === null || String_(v).trim() === "") throw new BoxError(0, "Give " + what + ".", "");
    return String_(v);
  };
  const query = (k, v) => "?" + k + "=" + encode(v);

  const box = {
    slug: cfg.slug,
    version: cfg.version,
    memory: O.freeze({
      map: () => call("GET", "memory/map"),
      note: async (id) => call("GET", "memory/note" + query("id", need(id, "the note's name"))),
      search: async (q) => call("GET", "memory/search" + query("q", need(q, "words to search for"))),
      remember: async (text) => call("POST", "memory/remember", { text: need(text, "the fact to remember") }),
      edit: async (id, text) => call("POST", "memory/edit", { id: need(id, "the note's name"), text: need(text, "the note's new text") }),
      forget: async (words) => call("POST", "memory/forget", { words: need(words, "the words to forget") }),
    }),
    data: O.freeze({
      get: async (key) => key === undefined
        ? (await call("GET", "data")).data
        : (await call("GET", "data" + query("key", need(key, "a key")))).value,
      set: async (key, value) => call("POST", "data", { key: need(key, "a key"), value: value === undefined ? null : value }),
    }),
    todos: O.freeze({
      list: () => call("GET", "todos"),
      add: async (text) => call("POST", "todos/add", { text: need(text, "the to-do") }),
      done: async (id) => call("POST", "todos/done", { id: need(id, "the to-do's id") }),
    }),
    cards: () => call("GET", "cards"),
    ui: O.freeze({
      open: async (target) => {
        const r = await call("POST", "ui/open", { target: need(target, "what to open") });
        if (r && typeof r.url === "string") post({ type: "box:open", slug: cfg.slug, url: r.url }, cfg.origin);
        return r;
      },
      tabs: () => call("GET", "ui/tabs"),
    }),
    diary: async (n) => call("GET", "diary" + (n === undefined ? "" : query("n", String_(Math.max(1, Math.floor(Number(n)) || 1))))),
    connector: async (id, tool, args) => call("POST", "connector", { id: need(id, "the connector"), tool: need(tool, "the tool"), args: args === undefined ? {} : args }),
    ask: async (question) => call("POST", "ask", { question: need(question, "the question") }),
    Error: BoxError,
  };
  O.defineProperty(W, "box", { value: O.freeze(box), writable: false, configurable: false, enumerable: true });

  // The first load: a clean one posts the heartbeat 1.5 s after load; an error before then posts error
  // instead, once, and no heartbeat follows.
  let settled = false;
  const failed = (message, where) => {
    if (settled) return;
    settled = true;
    call("POST", "error", { version: cfg.version, message: String_(message).slice(0, 500), where: String_(where || "").slice(0, 200) }).catch(() => { });
  };
  W.addEventListener("error", (ev) => {
    if (ev instanceof ErrorEvent) failed(ev.message || "an error", ev.lineno ? "line " + ev.lineno + ":" + ev.colno : "");
  }, true);
  W.addEventListener("unhandledrejection", (ev) => {
    const r = ev.reason;
    failed(r && typeof r.message === "string" ? r.message : String_(r), "a promise");
  });
  W.addEventListener("load", () => setTimeout_(() => {
    if (settled) return;
    settled = true;
    call("POST", "heartbeat", { version: cfg.version }).catch(() => { });
  }, 1500));
})();
