package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/mcptest"
)

type (
	typedIn struct {
		Words string   `json:"words"`
		Limit int      `json:"limit,omitempty"`
		Tags  []string `json:"tags,omitempty"`
	}
	typedHit struct {
		Text  string  `json:"text"`
		Score float64 `json:"score"`
	}
	typedOut struct {
		Hits []typedHit `json:"hits"`
		When time.Time  `json:"when"`
		Note string     `json:"note,omitempty"`
	}
)

// typedAnswer answers by its words: a refusal, a protocol error, an output its schema refuses (a nil list),
// nothing (a nil pointer), or hits with text that JSON escapes for HTML.
func typedAnswer(in typedIn) (*typedOut, error) {
	switch in.Words {
	case "refuse":
		return nil, refusal("No: the words say so.")
	case "rpc":
		return nil, &JSONRPCError{Code: CodeLocked, Message: "locked"}
	case "nilhits":
		return &typedOut{}, nil
	case "nothing":
		return nil, nil
	}
	return &typedOut{Hits: []typedHit{{Text: "<outside_content>Leo & Mira \u2028 swim</outside_content>", Score: 1.5}},
		When: time.Date(2026, 2, 29, 23, 59, 59, 0, time.FixedZone("x", 3600)), Note: in.Words + strings.Join(in.Tags, ",")}, nil
}

// TestTypedAnswersAsTheSDK: the tool runner both paths share (typed) answers every call as the SDK's typed
// sdk.AddTool did with the same handler and schemas: arguments checked and decoded alike (names matched
// exactly, nesting bounded), errors, protocol errors, an output its schema refuses, a nil pointer and an
// untyped output.
func TestTypedAnswersAsTheSDK(t *testing.T) {
	type pair struct{ ours, sdks string }
	// serve answers raw JSON-RPC over the SDK's stateless HTTP handler, so answers compare byte for byte.
	serve := func(add func(*sdk.Server)) string {
		srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
		add(srv)
		hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
			&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
		t.Cleanup(hs.Close)
		return hs.URL
	}
	// The typed tool as define made it before typed existed: plain JSON as the text, the SDK for the rest.
	// out is the output schema, nil for none.
	both := func(name string, out *jsonschema.Schema, h func(typedIn) (any, error)) pair {
		in := schemaFor[typedIn]()
		tool := sdk.Tool{Name: name, InputSchema: in}
		withOut := out != nil
		if withOut {
			tool.OutputSchema = out
		}
		sdkTool := tool
		return pair{
			ours: serve(func(srv *sdk.Server) {
				if withOut {
					run := typed(resolve(in), resolve(out), func(_ context.Context, _ *session, _ *sdk.CallToolRequest, in typedIn) (*typedOut, error) {
						o, err := h(in)
						p, _ := o.(*typedOut)
						return p, err
					})
					srv.AddTool(&tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
						return run(ctx, nil, req)
					})
					return
				}
				run := typed(resolve(in), nil, func(_ context.Context, _ *session, _ *sdk.CallToolRequest, in typedIn) (any, error) { return h(in) })
				srv.AddTool(&tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return run(ctx, nil, req)
				})
			}),
			sdks: serve(func(srv *sdk.Server) {
				if withOut {
					sdk.AddTool(srv, &sdkTool, func(_ context.Context, _ *sdk.CallToolRequest, in typedIn) (*sdk.CallToolResult, *typedOut, error) {
						o, err := h(in)
						p, _ := o.(*typedOut)
						if err != nil {
							return nil, nil, err
						}
						text, _ := plainJSON(p)
						return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}, p, nil
					})
					return
				}
				sdk.AddTool(srv, &sdkTool, func(_ context.Context, _ *sdk.CallToolRequest, in typedIn) (*sdk.CallToolResult, any, error) {
					o, err := h(in)
					if err != nil {
						return nil, nil, err
					}
					text, _ := plainJSON(o)
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}, o, nil
				})
			}),
		}
	}
	typedTool := both("typed", schemaFor[*typedOut](), func(in typedIn) (any, error) { return typedAnswer(in) })
	// An output schema with a default (define's never has one): the SDK's way, the default applied.
	withDefault := schemaFor[*typedOut]()
	withDefault.Properties["note"].Default = json.RawMessage(`"none"`)
	defaulted := both("defaulted", withDefault, func(in typedIn) (any, error) {
		o, err := typedAnswer(in)
		if o != nil {
			o.Note = ""
		}
		return o, err
	})
	untyped := both("untyped", nil, func(in typedIn) (any, error) {
		if in.Words == "nothing" {
			return nil, nil
		}
		o, err := typedAnswer(in)
		if err != nil {
			return nil, err
		}
		return map[string]any{"note": o.Note, "n": 3}, nil
	})
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	answer := func(url, name, args string) string {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
		resp, err := http.DefaultClient.Do(mcptest.Post(url, body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Status + " " + string(b)
	}
	for _, args := range []string{
		`{"words":"leo"}`, `{"words":"leo","tags":["a","b"],"limit":3}`, `{"Words":"leo"}`, `{}`, `{"words":5}`,
		`{"words":"leo","extra":1}`, `{"words":"leo","tags":null}`, `{"words":"leo","limit":1.5}`, `{"words":"leo","tags":` + deep + `}`,
		`{"words":"refuse"}`, `{"words":"rpc"}`, `{"words":"nilhits"}`, `{"words":"nothing"}`,
	} {
		for name, p := range map[string]pair{"typed": typedTool, "defaulted": defaulted, "untyped": untyped} {
			if ours, sdks := answer(p.ours, name, args), answer(p.sdks, name, args); ours != sdks {
				t.Errorf("%s %s:\n ours: %s\n  SDK: %s", name, args, ours, sdks)
			}
		}
	}
}
