package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/mcp"
)

// direct answers a plain tools/call itself through mcp.Service.Call, without the SDK's per-request server,
// session and goroutines, which cost more than a small search (docs/ARCHITECTURE.md, "One request's path").
// It takes only what the SDK's stateless handler would answer with the tool's result, written as the SDK
// writes it (with a Content-Length): one POSTed JSON-RPC request (not a batch) for tools/call with an id, params holding only
// name and arguments (an object), and headers it accepts (JSON in, JSON and an event stream accepted, a
// protocol version it speaks that predates per-request metadata, no resumption). Anything else goes to the
// SDK, which answers it as before. It reports whether it answered.
func (s *Server) direct(w http.ResponseWriter, r *http.Request, body []byte) bool {
	ri := info(r.Context())
	if s.sdkOnly || ri == nil || ri.build == nil || r.Method != http.MethodPost || !directHeaders(r.Header) {
		return false
	}
	id, name, args, ok := mcp.ReadCall(body)
	if !ok {
		return false
	}
	s.directs.Add(1)
	res, err := s.MCP.Call(r.Context(), ri.c, name, args)
	var data []byte
	if err == nil {
		data, err = answer(id, res)
	}
	if err != nil {
		data, err = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: err})
	}
	if err != nil {
		s.Logger.Error("a tools/call answer could not be encoded", "err", err)
		http.Error(w, "the answer could not be encoded", http.StatusInternalServerError)
		return true
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data))) // one write, never chunked
	if _, err := w.Write(data); err != nil {
		s.Logger.Debug("a tools/call answer could not be written", "err", err)
	}
	return true
}

// directVersions are the protocol versions whose stateless tools/call the SDK answers with nothing but the
// result: later ones carry per-request metadata and standard headers, which the SDK checks.
var directVersions = map[string]bool{"2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// directHeaders reports whether the SDK would take a request with these headers and do nothing with them
// beyond what direct does.
func directHeaders(h http.Header) bool {
	if !directVersions[h.Get("Mcp-Protocol-Version")] || len(h.Values("Last-Event-Id")) > 0 {
		return false
	}
	if ct, _, _ := strings.Cut(h.Get("Content-Type"), ";"); !strings.EqualFold(strings.TrimSpace(ct), "application/json") {
		return false
	}
	var jsonOK, streamOK bool
	for _, v := range h.Values("Accept") {
		for _, a := range strings.Split(v, ",") {
			a, _, _ = strings.Cut(a, ";")
			switch strings.ToLower(strings.TrimSpace(a)) {
			case "application/json":
				jsonOK = true
			case "text/event-stream":
				streamOK = true
			}
		}
	}
	if !jsonOK || !streamOK {
		return false
	}
	for k := range h {
		if strings.HasPrefix(k, "Mcp-") && k != "Mcp-Protocol-Version" && k != "Mcp-Session-Id" {
			return false
		}
	}
	return true
}

// answer is the response to request id with result res, the bytes jsonrpc.EncodeMessage makes of it. The
// SDK encodes a tool's result with the result's own marshaller, then the response around it, which
// compacts the result's bytes twice more on the way (a broad search's answer is several kilobytes); that
// marshaller's output is compact already, so it goes in as it is. Any other result goes through
// EncodeMessage.
func answer(id jsonrpc.ID, res sdk.Result) ([]byte, error) {
	r, ok := res.(*sdk.CallToolResult)
	if !ok {
		result, err := marshal(res)
		if err != nil {
			return nil, err
		}
		return jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result})
	}
	result, err := r.MarshalJSON()
	if err != nil {
		return nil, err
	}
	idJSON, err := marshal(id.Raw()) // as EncodeMessage writes it: without HTML escaping
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(result)+len(idJSON)+32)
	b = append(append(append(b, `{"jsonrpc":"2.0","id":`...), idJSON...), `,"result":`...)
	return append(append(b, result...), '}'), nil
}

// marshal is a result as the SDK puts it in a response: JSON without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
