package mcp

import "github.com/modelcontextprotocol/go-sdk/jsonrpc"

// The JSON-RPC methods the box answers: the lifecycle, ping and tools, which is all it declares. Prompts,
// resources, completions and logging are not declared, so they are not served either.
var served = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"server/discover": true, "subscriptions/listen": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/roots/list_changed": true, "notifications/progress": true,
}

// Serves reports whether the box answers a JSON-RPC method; any other is -32601 (method not found), over
// stdio and over HTTP alike.
func Serves(method string) bool { return served[method] }

// CodeMethodNotFound is JSON-RPC's "method not found".
const CodeMethodNotFound = jsonrpc.CodeMethodNotFound

// MethodNotFound is the error for a method the box does not serve.
func MethodNotFound(method string) *JSONRPCError {
	return &JSONRPCError{Code: CodeMethodNotFound, Message: "Method not found: " + method + " (this box serves tools only: tools/list and tools/call)"}
}
