package connectors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/sandbox"
	"github.com/boxmem/box/internal/say"
)

// Running an installed connector's tool for the owner (the CLI), the box's chat and a page
// (docs/CONNECTORS.md, "Calls").

// OpCall is the gate op of a write tool's call waiting on a "Send as you" card.
const OpCall = "connector-call"

// Caller is who calls a tool: the diary's actor, and the gate's asker with what its turn has seen.
type Caller struct {
	Actor box.Actor
	Asker gate.Asker
}

// Answer is one call: the tool's value as data (outside content: whoever shows it to a model fences
// it), the hosts it reached and those refused; or, for a write that waits, the card.
type Answer struct {
	Connector string            `json:"connector"`
	Tool      string            `json:"tool"`
	Value     json.RawMessage   `json:"value,omitempty"`
	Hosts     []string          `json:"hosts"`
	Blocked   []sandbox.Blocked `json:"blocked"`
	Card      string            `json:"card,omitempty"` // a write waiting for the owner's yes
	Text      string            `json:"text"`
	ElapsedMs int64             `json:"elapsedMs"`
}

// Call runs tool of the installed connector id with args (a JSON object; empty is {}). The connector
// must be on and safe mode off; a read runs at once; a write goes through the gate under "Send as me"
// (a connector that may reach any website: "Share outside my box"): Never refuses, a card waits for the
// owner (Answer.Card), Just do it runs. A read of a connector that may reach any website is refused at
// Never, and goes through the gate like a write unless the owner asks in a turn with no outside content. One sandbox per call, with the connector's own store and the
// owner's keys; every call's hosts go into the diary in one line, never its arguments, value or keys.
func (s *Service) Call(ctx context.Context, who Caller, id, tool string, args json.RawMessage) (Answer, error) {
	const op = "connectors.call"
	ans := Answer{Connector: id, Tool: tool, Hosts: []string{}, Blocked: []sandbox.Blocked{}}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	b, cfg, err := s.usable(ctx, id)
	if err != nil {
		return ans, err
	}
	bundle := cfg.Bundle
	t := bundle.Manifest.Tool(tool)
	if err := bundle.CheckArgs(tool, args); err != nil {
		return ans, err
	}
	sw := "" // a read runs under no switch
	gated := t.Effect == connector.Write
	if !gated && bundle.Envelope.AnyWebsite() {
		// Its every fetch may carry the owner's words anywhere: at Never, nothing of it runs; asked by
		// anyone but the owner, or after outside content, a read is gated like a write (docs/CONNECTORS.md).
		if who.Asker.Owner && who.Asker.Connection == "" && !who.Asker.OutsideRead {
			if err := s.opts.Gate.Check(ctx, gate.Share, who.Asker, "a call of "+b.Name); err != nil {
				return ans, err
			}
		} else {
			gated = true
		}
	}
	if gated {
		sw = switchOf(bundle)
		act, err := callAction(b, bundle, tool, args)
		if err != nil {
			return ans, err
		}
		out, err := s.opts.Gate.Propose(ctx, act, who.Asker)
		if err != nil {
			return ans, err
		}
		switch out.Decision.Verdict {
		case gate.Refuse:
			return ans, errs.E(op, errs.Refused, "%s", out.Text)
		case gate.Card:
			if out.Card == nil {
				return ans, errs.E(op, errs.Refused, "%s", out.Text)
			}
			ans.Card, ans.Text = out.Card.ID, out.Text
			return ans, nil
		}
	}
	return s.run(ctx, who.Actor, b, cfg, tool, args, sw)
}

// switchOf is the switch a gated call is under: "Share outside my box" for any call of a connector that
// may reach any website (it sends the box's data somewhere new), else "Send as me" (a write).
func switchOf(bundle *connector.Bundle) string {
	if bundle.Envelope.AnyWebsite() {
		return gate.Share
	}
	return gate.Send
}

// usable is the installed connector id and the sandbox of its version in use, when it may run now: the
// box not frozen or locked, and the connector runnable (on, safe mode off: builds.Runnable says why not).
// The bundle is read and checked once, in Config.
func (s *Service) usable(ctx context.Context, id string) (builds.Build, sandbox.Config, error) {
	if err := s.opts.State.Quiet(ctx); err != nil {
		return builds.Build{}, sandbox.Config{}, err
	}
	b, err := s.opts.Builds.Runnable(ctx, id)
	if err != nil {
		return b, sandbox.Config{}, err
	}
	cfg, err := s.Config(b, b.Version, false)
	return b, cfg, err
}

// run is one call in a fresh sandbox, then its diary line: the hosts reached and refused, whatever the
// outcome. Calls of one connector take turns, so its store is never written by two at once.
func (s *Service) run(ctx context.Context, actor box.Actor, b builds.Build, cfg sandbox.Config, tool string, args json.RawMessage, sw string) (Answer, error) {
	ans := Answer{Connector: b.ID, Tool: tool, Hosts: []string{}, Blocked: []sandbox.Blocked{}}
	unlock, err := s.turn(ctx, b.ID)
	if err != nil {
		return ans, err
	}
	defer unlock()
	r, err := sandbox.New(cfg)
	if err != nil {
		return ans, err
	}
	defer r.Close()
	res, callErr := r.Call(ctx, tool, args)
	if res != nil {
		ans.Hosts = append(ans.Hosts, res.Hosts...)
		ans.Blocked = append(ans.Blocked, res.Blocked...)
		ans.ElapsedMs = res.Elapsed.Milliseconds()
		ans.Value = res.Value
	}
	if err := s.diary(ctx, actor, b, tool, ans, callErr, sw); err != nil {
		return ans, err
	}
	if callErr != nil {
		ans.Value = nil
		return ans, errs.E("connectors.call", errs.KindOf(callErr), "%s → %s: %s", b.Name, tool, sentence(callErr))
	}
	ans.Text = fmt.Sprintf("%s → %s answered.", b.Name, tool)
	return ans, nil
}

// turn waits for the connector id's turn: one call at a time, in every process of the box (box serve
// and the owner's CLI), since each call reads its store when it starts and writes it when it ends. The
// lock is a file beside the store folder, so removing a connector's data leaves it be.
func (s *Service) turn(ctx context.Context, id string) (func(), error) {
	const op = "connectors.call"
	if err := os.MkdirAll(s.opts.StoreRoot, 0o700); err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "The connectors' folder cannot be made")
	}
	f, err := os.OpenFile(filepath.Join(s.opts.StoreRoot, id+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "The connector's lock cannot be opened")
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil // closing lets the lock go
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			_ = f.Close()
			return nil, errs.Wrap(op, errs.Other, err, "The connector's lock cannot be taken")
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, errs.E(op, errs.Busy, "The connector is busy with another call; try again.")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// diary writes a call's one line: who called which tool, the hosts it reached and those refused.
func (s *Service) diary(ctx context.Context, actor box.Actor, b builds.Build, tool string, ans Answer, callErr error, sw string) error {
	reached := "reached no host"
	if len(ans.Hosts) > 0 {
		reached = "reached " + strings.Join(ans.Hosts, ", ")
	}
	var reason []string
	for _, x := range ans.Blocked {
		reason = append(reason, "refused "+x.Host+": "+x.Why)
	}
	switch {
	case errs.Is(callErr, errs.Limited):
		reason = append(reason, "it was stopped: "+clip(sentence(callErr), 200))
	case callErr != nil:
		// The tool's own error text may carry what it was asked: the diary says only that it failed.
		reason = append(reason, "it failed")
	}
	who := actor.Who
	if who == "" {
		who = "owner"
	}
	_, err := s.opts.Box.Do(ctx, box.Change{Actor: actor, Op: "connector-call", Switch: sw, Permanent: true,
		Summary: fmt.Sprintf("%s called %s → %s: %s", who, b.Name, tool, reached),
		Reason:  strings.Join(reason, "; "),
		Apply:   func(*box.Tx) error { return nil }})
	return err
}

// sentence is err's sentence for the owner; the sandbox has scrubbed the keys from it.
func sentence(err error) string {
	if s := errs.Sentence(err); s != "" {
		return s
	}
	return "the connector could not run"
}

// clip cuts s to at most n bytes at a rune boundary, with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// callPayload is a write call waiting on its card: the connector at the version and bytes the owner
// sees, the tool and its arguments. What runs on approval is exactly this.
type callPayload struct {
	Op      string `json:"op"`
	ID      string `json:"id"`
	Version int    `json:"version"`
	SHA256  string `json:"sha256"`
	Tool    string `json:"tool"`
	// Args are the arguments as the caller sent them, compacted JSON: kept as text, not decoded, so a
	// number past 2^53 (a message id) runs on approval exactly as it was asked for.
	Args string `json:"args"`
}

func callAction(b builds.Build, bundle *connector.Bundle, tool string, args json.RawMessage) (gate.Action, error) {
	a, err := decodeArgs(args)
	if err != nil {
		return gate.Action{}, errs.Wrap("connectors.call", errs.Invalid, err, "The arguments are not a JSON object")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil {
		return gate.Action{}, errs.Wrap("connectors.call", errs.Invalid, err, "The arguments are not a JSON object")
	}
	p := callPayload{Op: OpCall, ID: b.ID, Version: b.Version, SHA256: b.Current().SHA256, Tool: tool, Args: compact.String()}
	// The summary names the call; every argument is shown whole beneath it (CallArgs), never cut, so
	// the card shows exactly what its hash binds and approval runs (docs/SECURITY.md).
	return gate.Action{Kind: "send", Switch: switchOf(bundle),
		Summary: fmt.Sprintf("%s → %s, with the %s shown in full below", b.Name, tool, say.Count(len(a), "argument")),
		Payload: toMap(p)}, nil
}

// Arg is one argument of a connector call's card: its key and its whole value (a string as it is,
// anything else as JSON).
type Arg struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// CallArgs are the arguments of a "Send as you" card, one per key in key order, each value whole:
// what the web card and `box cards list` show. Nil when a is not a connector call.
func CallArgs(a gate.Action) []Arg {
	p, ok := a.Payload.(map[string]any)
	if !ok || gate.OpOf(a) != OpCall {
		return nil
	}
	raw, _ := p["args"].(string)
	args, _ := decodeArgs([]byte(raw))
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Arg, 0, len(keys))
	for _, k := range keys {
		v, ok := args[k].(string)
		if !ok {
			raw, _ := json.Marshal(args[k]) // read from JSON
			v = string(raw)
		}
		out = append(out, Arg{Key: k, Value: v})
	}
	return out
}

// decodeArgs reads a call's arguments as an object, numbers kept as written (json.Number).
func decodeArgs(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var a map[string]any
	if err := dec.Decode(&a); err != nil {
		return nil, err
	}
	if a == nil {
		return nil, errors.New("null is not an object")
	}
	return a, nil
}

// toMap is a payload as the card keeps it (JSON read back), so the hash made now is the hash checked
// on approval.
func toMap(p callPayload) map[string]any {
	raw, _ := json.Marshal(p) // plain fields and a map read from JSON
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// CallOp runs a write call the owner approved on its card: the connector must still be on, at the
// version and bytes the card showed; then it runs as whoever asked, with its diary line.
func (s *Service) CallOp() gate.Op {
	return gate.Op{
		Current: func(ctx context.Context, stored gate.Action) (gate.Action, error) {
			var p callPayload
			raw, err := json.Marshal(stored.Payload)
			if err == nil {
				err = json.Unmarshal(raw, &p)
			}
			if err != nil || p.ID == "" {
				return gate.Action{}, errs.E("connectors.approve", errs.Invalid, "The card's call cannot be read; nothing ran.")
			}
			b, cfg, err := s.usable(ctx, p.ID)
			if err != nil {
				return gate.Action{}, err
			}
			bundle := cfg.Bundle
			if bundle.Manifest.Tool(p.Tool) == nil {
				return gate.Action{}, errs.E("connectors.approve", errs.NotFound, "%s no longer has the tool %s; nothing ran.", b.Name, p.Tool)
			}
			now, err := callAction(b, bundle, p.Tool, json.RawMessage(p.Args))
			now.Summary = stored.Summary
			return now, err
		},
		Run: func(ctx context.Context, c gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
			p, _ := a.Payload.(map[string]any) // Current made it
			id, _ := p["id"].(string)
			tool, _ := p["tool"].(string)
			raw, _ := p["args"].(string)
			args := json.RawMessage(raw)
			b, cfg, err := s.usable(ctx, id)
			if err != nil {
				return gate.Effect{}, err
			}
			var ans Answer
			return gate.Effect{
				After: func(ctx context.Context) (string, error) {
					var err error
					ans, err = s.run(ctx, c.Proposer(), b, cfg, tool, args, a.Switch)
					return "", err
				},
				Text: func() string {
					return fmt.Sprintf("Done: %s → %s ran; it answered %s", b.Name, tool, clip(string(ans.Value), 300))
				},
			}, nil
		},
	}
}
