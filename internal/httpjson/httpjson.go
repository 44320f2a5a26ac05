// Package httpjson writes one JSON answer over HTTP, the same way for every surface that answers in JSON
// (the server's documents, OAuth, the web UI's actions): the status, no caching, one object.
package httpjson

import (
	"encoding/json"
	"net/http"
)

// Write sends v as JSON with status, never cached. escapeHTML escapes <, > and & (for what a browser's
// page reads); without it URLs stay as they are (OAuth and metadata documents). An error encoding or
// sending is not reported: the status is sent, and a client that went away cannot be told anything more.
func Write(w http.ResponseWriter, status int, v any, escapeHTML bool) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v)
}
