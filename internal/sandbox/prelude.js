// The sandbox's own script, run before the connector's: it makes ctx from one host function and runs a
// tool. It is a function expression, so nothing here becomes a global the connector can reach.
(function (host) {
  "use strict";
  var stringify = JSON.stringify, parse = JSON.parse, PromiseCtor = Promise, StringCtor = String;
  var freeze = Object.freeze, keys = Object.keys, isArray = Array.isArray, create = Object.create;

  function call(op, payload) {
    return parse(host(op, stringify(payload)));
  }

  function Headers(pairs) {
    var map = {};
    for (var i = 0; i < pairs.length; i++) {
      var k = pairs[i][0].toLowerCase();
      map[k] = map[k] === undefined ? pairs[i][1] : map[k] + ", " + pairs[i][1];
    }
    this.get = function (name) { var v = map[StringCtor(name).toLowerCase()]; return v === undefined ? null : v; };
    this.has = function (name) { return map[StringCtor(name).toLowerCase()] !== undefined; };
    this.entries = function () { return keys(map).map(function (k) { return [k, map[k]]; }); };
    this.forEach = function (f) { keys(map).forEach(function (k) { f(map[k], k); }); };
    freeze(this);
  }

  function Response(r) {
    var body = r.body;
    this.ok = r.status >= 200 && r.status < 300;
    this.status = r.status;
    this.statusText = r.statusText;
    this.url = r.url;
    this.redirected = r.redirected;
    this.headers = new Headers(r.headers || []);
    this.text = function () { return PromiseCtor.resolve(body); };
    this.json = function () {
      return new PromiseCtor(function (resolve) { resolve(parse(body)); });
    };
    freeze(this);
  }

  function headerPairs(h) {
    if (h === undefined || h === null) return [];
    if (isArray(h)) return h.map(function (p) { return [StringCtor(p[0]), StringCtor(p[1])]; });
    if (typeof h.entries === "function" && !isArray(h) && typeof h.get === "function") return h.entries();
    return keys(h).map(function (k) { return [k, StringCtor(h[k])]; });
  }

  function fetch(input, init) {
    return new PromiseCtor(function (resolve) {
      init = init || {};
      var body = init.body;
      if (body !== undefined && body !== null && typeof body !== "string") {
        throw new TypeError("ctx.fetch: body must be text; use JSON.stringify for JSON");
      }
      var req = {
        url: StringCtor(input),
        method: init.method === undefined ? "GET" : StringCtor(init.method).toUpperCase(),
        headers: headerPairs(init.headers),
        body: body === undefined ? null : body
      };
      resolve(new Response(call("fetch", req)));
    });
  }

  function show(v) {
    if (typeof v === "string") return v;
    try { var s = stringify(v); return s === undefined ? StringCtor(v) : s; } catch (e) { return StringCtor(v); }
  }

  function log() {
    var parts = [];
    for (var i = 0; i < arguments.length; i++) parts.push(show(arguments[i]));
    host("log", parts.join(" "));
  }

  function storeCall(action, key, value) {
    return new PromiseCtor(function (resolve) {
      var payload = { action: action };
      if (key !== undefined) payload.key = StringCtor(key);
      if (action === "set") {
        var s = stringify(value);
        if (s === undefined) throw new TypeError("ctx.store.set: the value must be JSON (not undefined or a function)");
        payload.value = s;
      }
      resolve(call("store", payload));
    });
  }

  var ctx = freeze({
    fetch: fetch,
    log: log,
    store: freeze({
      get: function (k) { return storeCall("get", k); },
      set: function (k, v) { return storeCall("set", k, v).then(function () {}); },
      delete: function (k) { return storeCall("delete", k).then(function () {}); },
      keys: function () { return storeCall("keys"); }
    })
  });

  // run calls one tool and reports through the returned object once its promise settles.
  return function run(exportsObj, name, argsJSON) {
    // No prototype: a property the connector puts on Object.prototype is never read as the outcome.
    var out = create(null);
    out.settled = false;
    var tools = exportsObj && exportsObj.tools;
    if (!tools || typeof tools !== "object") {
      out.settled = true;
      out.stop = "no-tools";
      return out;
    }
    out.tools = keys(tools).filter(function (k) { return typeof tools[k] === "function"; });
    if (name === "") {
      out.settled = true;
      out.value = "null";
      return out;
    }
    if (typeof tools[name] !== "function") {
      out.settled = true;
      out.stop = "no-tool";
      return out;
    }
    PromiseCtor.resolve().then(function () {
      return tools[name](parse(argsJSON), ctx);
    }).then(function (v) {
      var s = stringify(v === undefined ? null : v);
      out.value = s === undefined ? "null" : s;
      out.settled = true;
    }).then(null, function (e) {
      out.error = e && e.stack ? StringCtor(e.stack) : StringCtor(e);
      if (e && e.message && out.error.indexOf(e.message) < 0) out.error = e.message + "\n" + out.error;
      out.settled = true;
    });
    return out;
  };
})
