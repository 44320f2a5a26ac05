// Package mcp owns the box's MCP surface on the official Go SDK: its tools, their checkboxes,
// the initialize instructions and the one mapping from box errors to isError sentences. No HTTP, no storage.
package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/state"
	"github.com/boxmem/box/internal/todo"
)

// Memory is what the tools need of the memory engine; *memory.Memory is the real one.
type Memory interface {
	Remember(ctx context.Context, a memory.Actor, in memory.RememberInput) (memory.RememberResult, error)
	CheckRememberAs(a memory.Actor, in memory.RememberInput) error
	Forget(ctx context.Context, a memory.Actor, in memory.ForgetInput) (memory.ForgetResult, error)
	ForgetMatched(ctx context.Context, a memory.Actor, in memory.ForgetInput, matched []memory.Match) (memory.ForgetResult, error)
	ForgetPreview(ctx context.Context, words string) ([]memory.Match, error)
	Search(ctx context.Context, in memory.SearchInput) (memory.SearchResult, error)
	Read(ctx context.Context, name string) (memory.Note, error)
	Overview(ctx context.Context) (memory.Overview, error)
	Recent(ctx context.Context, n int) ([]memory.RecentItem, error)
}

var _ Memory = (*memory.Memory)(nil)

// Todos is what the to-do tools need; *todo.Store is the real one.
type Todos interface {
	Lists(ctx context.Context) ([]todo.List, error)
	Add(ctx context.Context, a box.Actor, list, text string) (todo.Item, error)
	Done(ctx context.Context, a box.Actor, ref string) (todo.Item, error)
	Find(ctx context.Context, ref string) (todo.Item, error)
}

var _ Todos = (*todo.Store)(nil)

// State reports the box-wide flags; *state.Store is the real one.
type State interface {
	Quiet(ctx context.Context) error
}

var _ State = (*state.Store)(nil)

// Config is what the tools are built on: the process's one memory, to-dos, state and gate.
type Config struct {
	Memory  Memory
	Todos   Todos
	State   State
	Version string
	// Address is the box's public address for the locked sentence ("…open it with their passkey at <Address>").
	Address string
	// Gate decides the "Change my box" switch for writes and makes the approval card when an assistant
	// asks to forget more than memory.MaxForgetUnconfirmed lines.
	Gate *gate.Gate
	// Builds is the registry of pages, looks, the layout and connectors, for the build tools.
	Builds *builds.Builds
	// Connectors knows whether this box can run connectors, for validate_build and propose_connector.
	Connectors *connectors.Service
}

// Service holds what every connection's server shares.
type Service struct {
	Config
	schemas *sdk.SchemaCache
	mu      sync.Mutex
	servers map[Conn]*sdk.Server // made once per connection as it calls, not once per request
}

// maxServers bounds the server cache; past it the cache starts again (a server is cheap to remake).
const maxServers = 1024

// Conn is who is calling: one key or OAuth grant over HTTP, or the local process over stdio.
type Conn struct {
	Who    string    // the key's name, or "" to use the client's own name from initialize
	Host   string    // where the call came from (an address, or "local")
	KeyID  string    // the key, when there is one
	Caps   keys.Caps // the checkboxes
	Client string    // the client's own name, when known
}

// New returns a service; the zero Version is "dev".
func New(c Config) *Service {
	loadCatalog()
	if c.Version == "" {
		c.Version = "dev"
	}
	return &Service{Config: c, schemas: sdk.NewSchemaCache(), servers: map[Conn]*sdk.Server{}}
}

// ServerFor is Server, kept for the connection: stateless HTTP asks for one on every request, and adding the
// tools costs more than the call itself. A revoked key never reaches here, so a kept server grants nothing.
func (s *Service) ServerFor(c Conn) *sdk.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv, ok := s.servers[c]; ok {
		return srv
	}
	if len(s.servers) >= maxServers {
		clear(s.servers)
	}
	srv := s.Server(c)
	s.servers[c] = srv
	return srv
}

// Server returns an MCP server for one connection: only its tools are listed, and calling another is a
// refusal naming the checkbox. Over stdio it is made once; over HTTP, ServerFor keeps one per connection.
func (s *Service) Server(c Conn) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "box", Title: "Box — the owner's memory", Version: s.Version},
		&sdk.ServerOptions{
			Instructions: instructions(c),
			SchemaCache:  s.schemas,
			Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		})
	sess := &session{svc: s, conn: c}
	for _, t := range catalog {
		if has(c.Caps, t.cap) {
			t.add(srv, sess)
		}
	}
	srv.AddReceivingMiddleware(sess.gate)
	return srv
}

// session is one connection's view of the service.
type session struct {
	svc  *Service
	conn Conn
}

// gate answers a method the box does not serve with -32601, and refuses tools/call on a frozen or locked
// box and for a tool whose checkbox this connection lacks.
func (ss *session) gate(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if !Serves(method) {
			return nil, MethodNotFound(method)
		}
		if method == "tools/list" {
			res, err := next(ctx, method, req)
			if list, ok := res.(*sdk.ListToolsResult); ok {
				list.Tools = slices.DeleteFunc(list.Tools, func(t *sdk.Tool) bool { return byName[t.Name].never })
			}
			return res, err
		}
		call, ok := req.(*sdk.CallToolRequest)
		if !ok || method != "tools/call" {
			return next(ctx, method, req)
		}
		return ss.call(ctx, call, func(ctx context.Context) (sdk.Result, error) { return next(ctx, method, req) })
	}
}

// call refuses a tools/call on a frozen or locked box, for a tool whose checkbox this connection lacks, a
// write while "Change my box" is at Never, and arguments that do not fit, each in one sentence; otherwise
// run answers it. Sessions and Service.Call both come here.
func (ss *session) call(ctx context.Context, call *sdk.CallToolRequest, run func(context.Context) (sdk.Result, error)) (sdk.Result, error) {
	if d, ok := ctx.Value(deadlineKey{}).(time.Time); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	if err := ss.svc.State.Quiet(ctx); err != nil { // a flag it cannot read refuses: closed, not open
		if errs.Is(err, errs.Locked) {
			return nil, LockedError(ss.svc.Address)
		}
		return refusalResult(sentence(err).Error()), nil
	}
	t, known := byName[call.Params.Name]
	if known && !has(ss.conn.Caps, t.cap) {
		return refusalResult(needs(t.name, t.cap)), nil
	}
	if known && t.cap == memoryCB {
		// Remember and to-dos are under "Change my box": at Never the box takes no change from anyone,
		// and the refusal is in the diary (the gate's one check for a write that makes no card).
		a := ss.actor(call)
		if err := ss.svc.Gate.Check(ctx, gate.Change, gate.Asker{Connection: a.Who, Via: a.Via, Host: a.Host, Conn: a.Conn}, call.Params.Name); errs.Is(err, errs.Refused) {
			return refusalResult(ChangeNeverSentence), nil
		} else if err != nil {
			return refusalResult(sentence(err).Error()), nil
		}
	}
	if known {
		if msg := checkArguments(t.name, t.in, call.Params.Arguments); msg != "" {
			return refusalResult(msg), nil
		}
	}
	res, err := run(ctx)
	if r, ok := res.(*sdk.CallToolResult); ok {
		plainValidation(call.Params.Name, r)
	}
	return res, err
}

type deadlineKey struct{}

// WithDeadline marks ctx with the time by which a tools/call must be done. The SDK's session hands its
// handlers the request's values but not its deadline, so the deadline travels as a value and the call
// applies it (a write past it is dropped whole and answered TooLongSentence).
func WithDeadline(ctx context.Context, d time.Time) context.Context {
	return context.WithValue(ctx, deadlineKey{}, d)
}

// actor is who a write is recorded under: the key's name, else the client's own name; always outside.
func (ss *session) actor(req *sdk.CallToolRequest) memory.Actor {
	who := ss.conn.Who
	if who == "" && req != nil && req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			who = strings.TrimSpace(p.ClientInfo.Name)
		}
	}
	if who == "" {
		who = ss.conn.Client
	}
	if who == "" {
		who = "an assistant"
	}
	if keys.Reserved(who) { // the owner's own name on cards and in the diary is never a client's to take
		who = "an assistant calling itself " + who
	}
	return memory.Actor{Who: who, Via: "mcp", Host: ss.conn.Host, Conn: ss.conn.KeyID, Trust: "outside"}
}

func refusalResult(sentence string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: sentence}}}
}

// JSONRPCError is a protocol-level error, as the SDK sends it.
type JSONRPCError = jsonrpc.Error

// CodeLocked is the JSON-RPC error code of a locked box.
const CodeLocked = -32000

// LockedSentence is what a client is told when the box's data is locked.
func LockedSentence(address string) string {
	if address == "" {
		address = "the box's own address"
	}
	return "This box is locked. Ask its owner to open it with their passkey at " + address + "."
}

// LockedError is the JSON-RPC error of a locked box: code -32000 with data.locked true.
func LockedError(address string) *JSONRPCError {
	data, _ := json.Marshal(map[string]any{"locked": true})
	return &JSONRPCError{Code: CodeLocked, Message: LockedSentence(address), Data: data}
}

// ChangeNeverSentence answers a memory or to-do write while the owner's "Change my box" switch is at Never.
const ChangeNeverSentence = "Nothing was saved: the owner set \"Change my box\" to Never, so the box takes no changes to memory or to-dos. Tell the owner; they change it in Settings → What I may do."

// held asks the gate about a write of this connection that makes no card at Just do it (docs/GATE.md,
// "Ask me on every surface"): "" when it may run now; at Ask me, the sentence saying a card for exactly
// this waits for the owner (not an error: nothing failed); a refusal (Never, or past the card limits)
// is an error.
func (ss *session) held(ctx context.Context, req *sdk.CallToolRequest, a gate.Action) (string, error) {
	who := ss.actor(req)
	out, err := ss.svc.Gate.Hold(ctx, a, gate.Asker{Connection: who.Who, Via: who.Via, Host: who.Host, Conn: who.Conn})
	switch {
	case err != nil:
		return "", err
	case out.Decision.Verdict == gate.Refuse:
		return "", refusal(out.Text)
	case out.Decision.Verdict == gate.Card:
		return "Not done yet: the owner set \"Change my box\" to Ask me, so a card waits for them on Today (" + out.Card.Title + "). Nothing changes until they approve it; tell them it is waiting.", nil
	}
	return "", nil
}

// askToForget turns an assistant's confirmed forget of more than five lines into an approval card bound
// to exactly the lines it matches now, by id; the owner approves it with their passkey (docs/GATE.md:
// anything another assistant proposes is a card that says who sent it).
func (ss *session) askToForget(ctx context.Context, req *sdk.CallToolRequest, words string) (string, error) {
	lines, err := ss.svc.Memory.ForgetPreview(ctx, words)
	if err != nil {
		return "", err
	}
	a := ss.actor(req)
	out, err := ss.svc.Gate.Propose(ctx, memory.ForgetAction(words, lines), gate.Asker{Connection: a.Who, Via: a.Via, Host: a.Host, Conn: a.Conn})
	if err != nil {
		return "", err
	}
	return out.Text, nil
}
