package mcp

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segment "github.com/segmentio/encoding/json"
)

// Call answers one tools/call for the connection c without an SDK server or session: the direct path
// box serve takes for a stateless HTTP request (docs/ARCHITECTURE.md, "One request's path"). It runs the
// same checks and the same tool code as a session's tools/call and returns what the SDK would put in the
// JSON-RPC response: a result, or a protocol error (*JSONRPCError).
func (s *Service) Call(ctx context.Context, c Conn, name string, args json.RawMessage) (sdk.Result, error) {
	ss := &session{svc: s, conn: c}
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: name, Arguments: args}}
	return ss.call(ctx, req, func(ctx context.Context) (sdk.Result, error) {
		t, ok := byName[name]
		if !ok || !has(c.Caps, t.cap) { // as the SDK answers a tool its server does not hold
			return nil, &JSONRPCError{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
		}
		res, err := t.run(ctx, ss, req)
		if err != nil {
			return nil, err
		}
		if res.Content == nil { // as the SDK sends it: [] rather than null
			res.Content = []sdk.Content{}
		}
		return res, nil
	})
}

// ReadCall reads body as the SDK reads a JSON-RPC message and reports whether it is a single tools/call
// that Call answers just as a session would: an id, params holding only name and arguments (an object).
func ReadCall(body []byte) (id jsonrpc.ID, name string, args json.RawMessage, ok bool) {
	var msg struct {
		Version string          `json:"jsonrpc"`
		ID      any             `json:"id,omitempty"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' || decode(body, &msg) != nil || msg.Version != "2.0" {
		return id, "", nil, false
	}
	var method string
	id, err := jsonrpc.MakeID(msg.ID)
	if err != nil || !id.IsValid() || decode(msg.Method, &method) != nil || method != "tools/call" {
		return id, "", nil, false
	}
	// A map made here: for a nil one the decoder makes room for 64 keys, a few kilobytes per request.
	params := make(map[string]json.RawMessage, 2)
	if len(msg.Params) == 0 || decode(msg.Params, &params) != nil || decode(params["name"], &name) != nil {
		return id, "", nil, false
	}
	args, hasArgs := params["arguments"]
	if len(params) != 1+btoi(hasArgs) || (hasArgs && !bytes.HasPrefix(bytes.TrimLeft(args, " \t\r\n"), []byte("{"))) {
		return id, "", nil, false
	}
	return id, name, args, true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// typed is what the SDK's typed sdk.AddTool makes of a handler, made once per tool so that a session and
// Service.Call run the same code: the arguments are checked against the input schema and decoded as the SDK
// decodes them (names matched exactly); an error becomes an isError result, except a *JSONRPCError, which
// stays a protocol error; the output is the text a model reads (plainJSON) and, checked against the output
// schema, the structuredContent, marshalled once: the structured copy is the same JSON with HTML escaped,
// byte for byte what json.Marshal gives.
func typed[In, Out any](in, out *jsonschema.Resolved, h func(context.Context, *session, *sdk.CallToolRequest, In) (Out, error)) func(context.Context, *session, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var elemZero any // a pointer Out's nil is sent as its element's zero value, never null
	if rt := reflect.TypeFor[Out](); rt.Kind() == reflect.Pointer {
		elemZero = reflect.Zero(rt.Elem()).Interface()
	}
	// An output schema inferred from Out (define's schemaFor: no defaults, null nowhere) takes every
	// object encoded from an Out that holds no null as it is: sortedJSON gives it as the SDK sends it
	// without decoding and validating it (docs/ARCHITECTURE.md, "One request's path").
	fits := out != nil && !hasDefault(out.Schema()) && plainType(reflect.TypeFor[Out]())
	return func(ctx context.Context, ss *session, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		input, err := applySchema(req.Params.Arguments, in, false)
		if err != nil {
			return errorResult(fmt.Errorf("validating \"arguments\": %v", err)), nil
		}
		var v In
		if input != nil {
			if err := decode(input, &v); err != nil {
				return errorResult(err), nil
			}
		}
		o, err := h(ctx, ss, req, v)
		if err != nil {
			if w := (*JSONRPCError)(nil); errors.As(err, &w) {
				return nil, w
			}
			return errorResult(err), nil
		}
		plain, perr := plainJSON(o)
		res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(plain)}}}
		var outval any = o
		zeroed := elemZero != nil && reflect.ValueOf(o).IsNil()
		if zeroed {
			outval = elemZero
		}
		if outval == nil {
			return res, nil
		}
		var data []byte
		if zeroed {
			data, err = json.Marshal(outval)
		} else if err = perr; err == nil {
			var b bytes.Buffer
			json.HTMLEscape(&b, plain)
			data = b.Bytes()
		}
		if err != nil {
			return nil, fmt.Errorf("marshaling output: %w", err)
		}
		if sorted, ok := sortedJSON(data); ok && fits {
			data = sorted
		} else if data, err = applySchema(data, out, true); err != nil {
			return nil, fmt.Errorf("validating tool output: %w", err)
		}
		res.StructuredContent = json.RawMessage(data)
		if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			res.Content = append(res.Content, &sdk.TextContent{Text: string(data)})
		}
		return res, nil
	}
}

func errorResult(err error) *sdk.CallToolResult {
	var r sdk.CallToolResult
	r.SetError(err)
	return &r
}

// applySchema validates data against resolved and applies its defaults, as the SDK does for a tool's
// arguments (always an object, {} when absent) and its output.
func applySchema(data json.RawMessage, resolved *jsonschema.Resolved, forOutput bool) (json.RawMessage, error) {
	if resolved == nil {
		return data, nil
	}
	var v any
	if !forOutput {
		m := map[string]any{}
		if len(data) > 0 {
			if err := decode(data, &m); err != nil {
				return nil, fmt.Errorf("unmarshaling arguments: %w", err)
			}
		}
		v = m
	} else if len(data) > 0 {
		if err := decode(data, &v); err != nil {
			return nil, fmt.Errorf("unmarshaling output: %w", err)
		}
	}
	applied := false
	if _, ok := v.(map[string]any); ok {
		if err := resolved.ApplyDefaults(&v); err != nil {
			return nil, fmt.Errorf("applying schema defaults:\n%w", err)
		}
		applied = true
	} else if forOutput && v == nil && resolved.Schema().Type == "object" {
		v = map[string]any{}
		if err := resolved.ApplyDefaults(&v); err != nil {
			return nil, fmt.Errorf("applying schema defaults:\n%w", err)
		}
		applied = true
	}
	if err := resolved.Validate(&v); err != nil {
		return nil, err
	}
	if !applied {
		return data, nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshalling with defaults: %v", err)
	}
	return out, nil
}

// hasDefault reports whether s, or a schema of its properties or items, gives a default (the SDK's
// ApplyDefaults looks at properties only, so this looks wider than it).
func hasDefault(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	if s.Default != nil {
		return true
	}
	for _, p := range s.Properties {
		if hasDefault(p) {
			return true
		}
	}
	for _, p := range s.PrefixItems {
		if hasDefault(p) {
			return true
		}
	}
	return hasDefault(s.Items) || hasDefault(s.AdditionalProperties)
}

// plainType reports whether every value of t encodes as its inferred schema describes it, so that an
// encoding holding no null fits that schema: no custom marshaller (time.Time aside: an RFC 3339 string),
// interface, []byte, map keyed by other than strings, embedded pointer (a nil one drops its fields) or
// ",string" field.
func plainType(t reflect.Type) bool { return plain(t, map[reflect.Type]bool{}) }

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func plain(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == reflect.TypeFor[time.Time]() || seen[t] {
		return true
	}
	seen[t] = true
	for _, m := range []reflect.Type{marshalerType, textMarshalerType} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return false
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Array:
		return plain(t.Elem(), seen)
	case reflect.Slice:
		return t.Elem().Kind() != reflect.Uint8 && plain(t.Elem(), seen)
	case reflect.Map:
		return t.Key().Kind() == reflect.String && plain(t.Key(), seen) && plain(t.Elem(), seen)
	case reflect.Interface, reflect.Func, reflect.Chan, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return false
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			switch {
			case tag == "-" || !f.IsExported() && !f.Anonymous:
			case strings.Contains(tag, ",string"), f.Anonymous && (f.Type.Kind() == reflect.Pointer || name != ""), !plain(f.Type, seen):
				return false // a named embedded struct is one member to encoding/json, its fields to the schema
			}
		}
		// A name two fields share (one promoted from an embedded struct) is one field to encoding/json,
		// the other to the schema.
		names := map[string]bool{}
		for _, f := range reflect.VisibleFields(t) {
			tag := f.Tag.Get("json")
			if tag == "-" || !f.IsExported() || f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "" {
				name = f.Name
			}
			if names[name] {
				return false
			}
			names[name] = true
		}
	}
	return true
}

// sortedJSON is data, an object as encoding/json writes it (compact, HTML escaped), with every object's
// keys in order: byte for byte what decoding it into an any and marshalling that gives, the SDK's way
// of applying an output schema, at a fraction of the cost. It reports false, for the caller to take that
// way, when the answer might differ or the value might not fit its schema: data not an object, null
// anywhere, an integer too long for a float64 to hold exactly, a key with an escape, a string that held
// invalid UTF-8, nesting deeper than the SDK decodes.
func sortedJSON(data []byte) ([]byte, bool) {
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	out := make([]byte, 0, len(data))
	out, end, ok := sortedValue(data, 0, out, 0)
	return out, ok && end == len(data)
}

// sortedValue appends the value at data[i:] to out, its objects' keys sorted, and returns where it ends.
func sortedValue(data []byte, i int, out []byte, depth int) ([]byte, int, bool) {
	if i >= len(data) {
		return out, i, false
	}
	switch c := data[i]; {
	case c == '{':
		if depth++; depth > maxDepth {
			return out, i, false
		}
		type member struct{ key, value []byte }
		var ms []member
		i++
		for i < len(data) && data[i] != '}' {
			if len(ms) > 0 {
				if data[i] != ',' {
					return out, i, false
				}
				i++
			}
			end, ok := stringEnd(data, i)
			if !ok || end >= len(data) || data[end] != ':' || bytes.IndexByte(data[i:end], '\\') >= 0 {
				return out, i, false
			}
			key, v, next, ok := data[i:end], []byte(nil), end+1, false
			if next < len(data) && (data[next] == '{' || data[next] == '[') {
				v, next, ok = sortedValue(data, next, nil, depth)
			} else if next, ok = scalarEnd(data, next); ok {
				v = data[end+1 : next] // as it is: only objects change
			}
			if !ok {
				return out, i, false
			}
			ms = append(ms, member{key, v})
			i = next
		}
		if i >= len(data) {
			return out, i, false
		}
		slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.key[1:len(a.key)-1], b.key[1:len(b.key)-1]) })
		out = append(out, '{')
		for k, m := range ms {
			if k > 0 {
				out = append(out, ',')
			}
			out = append(append(append(out, m.key...), ':'), m.value...)
		}
		return append(out, '}'), i + 1, true
	case c == '[':
		if depth++; depth > maxDepth {
			return out, i, false
		}
		out = append(out, '[')
		i++
		for n := 0; i < len(data) && data[i] != ']'; n++ {
			if n > 0 {
				if data[i] != ',' {
					return out, i, false
				}
				out = append(out, ',')
				i++
			}
			var ok bool
			if out, i, ok = sortedValue(data, i, out, depth); !ok {
				return out, i, false
			}
		}
		if i >= len(data) {
			return out, i, false
		}
		return append(out, ']'), i + 1, true
	}
	end, ok := scalarEnd(data, i)
	return append(out, data[i:end]...), end, ok
}

// scalarEnd returns where the string, true, false or number at data[i] ends, and false for null, an
// integer of more than 15 digits (a float64 encoding/json wrote comes back the same; such an integer
// might not) or anything else.
func scalarEnd(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; {
	case c == '"':
		return stringEnd(data, i)
	case c == 't' && bytes.HasPrefix(data[i:], []byte("true")):
		return i + 4, true
	case c == 'f' && bytes.HasPrefix(data[i:], []byte("false")):
		return i + 5, true
	case c == '-' || '0' <= c && c <= '9':
		end, digits, integer := i, 0, true
		for ; end < len(data) && strings.IndexByte("-+.eE0123456789", data[end]) >= 0; end++ {
			switch b := data[end]; {
			case '0' <= b && b <= '9':
				digits++
			case b == '.' || b == 'e' || b == 'E':
				integer = false
			}
		}
		return end, !integer || digits <= 15
	}
	return i, false
}

// stringEnd returns where the JSON string starting at data[i] ends (past its closing quote).
func stringEnd(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			if bytes.HasPrefix(data[i+1:], []byte("ufffd")) { // encoding/json's stand-in for invalid UTF-8, which the SDK's way writes raw
				return i, false
			}
			i++
		case '"':
			return i + 1, true
		}
	}
	return i, false
}

// maxDepth is how deeply nested a JSON value the SDK decodes.
const maxDepth = 1000

// decode reads JSON as the SDK does: struct fields matched by their exact names, at most maxDepth deep.
func decode(data []byte, v any) error {
	return parse(data, v, segment.DontMatchCaseInsensitiveStructFields)
}

// parse reads the first JSON value of data into v with flags, refusing one nested past maxDepth.
func parse(data []byte, v any, flags segment.ParseFlags) error {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString:
			inString = b != '"'
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > maxDepth {
				return fmt.Errorf("json: exceeded maximum nesting depth of %d", maxDepth)
			}
		case (b == '}' || b == ']') && depth > 0:
			depth--
		}
	}
	// Parse reads the first value as the SDK's stream decoder does, without its buffer.
	_, err := segment.Parse(data, v, flags)
	return err
}

// resolve readies a tool's schema for validation, once, when the catalog is built.
func resolve(s *jsonschema.Schema) *jsonschema.Resolved {
	r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("mcp: resolving a tool's schema: %v", err)) // a programming error, caught by every test
	}
	return r
}
