// Package connectors runs the box's installed connectors: the sandbox of each (its bundle as approved,
// the owner's keys from the vault, its store under .box/connectors), the test run that decides
// whether an approved version turns on, every call of a tool with its diary line, and the owner's keys
// (docs/CONNECTORS.md, "Installed connectors", "Calls", "Keys"). It asks the gate about a write, never
// decides approval itself, and keeps no registry (the builds package's).
package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/sandbox"
	"github.com/boxmem/box/internal/state"
	"github.com/boxmem/box/internal/vault"
)

// KeyName is where the owner's key name of the connector id is sealed in the vault:
// "connector/<id>/<NAME>" (docs/CONNECTORS.md, "Keys").
func KeyName(id, name string) string { return "connector/" + id + "/" + name }

// KeyPrefix is the start of every vault name of the connector id's keys.
func KeyPrefix(id string) string { return "connector/" + id + "/" }

// SealKey is a key as the vault keeps it: sealed with the host the owner pasted it for (the credential's
// host then). The sandbox gets it only for a credential of that same host, so a connector that names
// another host (a new one reusing the id, an update that moves the key) never gets it (docs/CONNECTORS.md, "Keys").
func SealKey(host, key string) string { return vault.Bind(host, key) }

// openKey is the sealed key for host; ok is false for a key pasted for another host, or kept without one.
func openKey(sealed, host string) (key string, ok bool) {
	at, key, bound := vault.Unbind(sealed)
	return key, bound && at == host
}

// Options are what the service needs of the process; the composition root fills them.
type Options struct {
	Builds *builds.Builds
	// Vault is the process's vault, opened on first use; an error means no keys (a request that needs one
	// fails with the sentence saying where the owner adds it).
	Vault func() (*vault.Vault, error)
	// StoreRoot is the folder under which each connector keeps its own data (<StoreRoot>/<id>/store.json):
	// .box/connectors, outside the tree git tracks.
	StoreRoot string
	// BoxHosts are the box's own names, never reached whatever a connector's egress says.
	BoxHosts []string
	// Exe is the binary run as the sandbox child; "" is this process's own.
	Exe string
	// Test replaces the network in tests; sandbox.New refuses it outside a test binary.
	Test *sandbox.TestNet
	// Now is the process's clock, for the time of a health.
	Now func() time.Time
	// Box, Gate and State are what a call needs (calls.go): the diary line of every call, the switches a
	// write goes through, and whether the box is frozen or locked.
	Box   *box.Box
	Gate  *gate.Gate
	State *state.Store
}

// Service runs installed connectors.
type Service struct {
	opts  Options
	mu    sync.Mutex
	hosts []string // the box's own names, Options.BoxHosts and those learnt since (AddBoxHost)
	probe struct {
		mu     sync.Mutex
		ok     bool
		failed time.Time // when the last probe failed
	}
}

// probeRetry is how long a failed probe is believed: a failure may be passing (a fork refused under
// load), so it is tried again after this, never remembered for the process's life.
const probeRetry = time.Minute

// CanBuild reports whether connectors run on this machine: a sandbox.Probe (an empty connector run
// boxed), its success remembered for the process, a failure for probeRetry.
func (s *Service) CanBuild(ctx context.Context) bool {
	s.probe.mu.Lock()
	defer s.probe.mu.Unlock()
	now := s.opts.Now()
	if s.probe.ok || (!s.probe.failed.IsZero() && now.Sub(s.probe.failed) < probeRetry) {
		return s.probe.ok
	}
	_, err := sandbox.Probe(context.WithoutCancel(ctx), s.opts.Exe)
	s.probe.ok = err == nil
	if !s.probe.ok {
		s.probe.failed = now
	}
	return s.probe.ok
}

// CheckOptions are the options connector.Validate takes on this box; boxHosts adds the box's own names
// as the caller knows them (its public address).
func (s *Service) CheckOptions(ctx context.Context, boxHosts ...string) connector.Options {
	return connector.Options{BoxHosts: append(s.boxHosts(), boxHosts...), BoxCanBuild: s.CanBuild(ctx)}
}

// New returns the service; nothing runs until a call or a test.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{opts: o, hosts: slices.Clone(o.BoxHosts)}
}

// AddBoxHost adds one of the box's own names (the host of the public address it is served at, known
// once box serve starts): no connector reaches it, whatever its egress says.
func (s *Service) AddBoxHost(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if host != "" && !slices.Contains(s.hosts, host) {
		s.hosts = append(s.hosts, host)
	}
}

func (s *Service) boxHosts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hosts)
}

// StoreDir is where the connector id keeps its own data.
func (s *Service) StoreDir(id string) string { return filepath.Join(s.opts.StoreRoot, id) }

// Config is the sandbox of version n of the installed connector b: its bundle as approved (checked
// again), the owner's keys for the credentials it declares, and its store; fresh gives no store, so
// every call starts empty and nothing is kept (a test run).
func (s *Service) Config(b builds.Build, n int, fresh bool) (sandbox.Config, error) {
	bundle, err := s.opts.Builds.Bundle(b, n)
	if err != nil {
		return sandbox.Config{}, err
	}
	cfg := sandbox.Config{Bundle: bundle, Keys: map[string]string{}, BoxHosts: s.boxHosts(), Exe: s.opts.Exe, Test: s.opts.Test}
	if !fresh {
		cfg.StoreDir = s.StoreDir(b.ID)
	}
	if len(bundle.Manifest.Credentials) == 0 || s.opts.Vault == nil {
		return cfg, nil
	}
	v, err := s.opts.Vault()
	if err != nil {
		return cfg, nil // no vault, no keys: the sandbox says where the owner adds one
	}
	for _, c := range bundle.Manifest.Credentials {
		sec, err := v.Get(KeyName(b.ID, c.Name))
		switch {
		case err == nil:
			if key, ok := openKey(sec.Reveal(), c.Host); ok {
				cfg.Keys[c.Name] = key
			} // a key pasted for another host is not this credential's: the sandbox says to add one
		case errs.Is(err, errs.NotFound):
		default:
			return cfg, err
		}
	}
	return cfg, nil
}

// Test runs the tests of version n of the connector b in the sandbox, on fresh, empty state, with the
// owner's keys if they are set: the builds package's Tester.
func (s *Service) Test(ctx context.Context, b builds.Build, n int) builds.Health {
	h := builds.Health{Version: n, At: s.opts.Now().UTC().Truncate(time.Second), Hosts: []string{}}
	cfg, err := s.Config(b, n, true)
	if err != nil {
		h.Why = errs.Sentence(err)
		return h
	}
	r, err := sandbox.New(cfg)
	if err != nil {
		h.Why = errs.Sentence(err)
		return h
	}
	defer r.Close()
	got := r.RunTests(ctx)
	h.OK, h.Why, h.Hosts = got.OK, got.Why, got.Hosts
	rep := TestReport{Version: n, At: h.At, OK: got.OK, Detail: got.Detail, TestOutputTail: got.TestOutputTail}
	if err := s.saveReport(b.ID, rep); err != nil {
		h.Why = strings.TrimSpace(h.Why + " (its test output could not be kept: " + errs.Sentence(err) + ")")
	}
	return h
}

// TestReport is a connector's last test run as only the owner sees it (box builds status): the failure
// as the sandbox told it and the end of the run's output, which may hold what the connector fetched with
// the owner's keys. It is kept with the connector's data (<StoreRoot>/<id>/tests.json), outside the tree
// git tracks, and deleted with it; assistants see only the health's box-made why (docs/CONNECTORS.md, "Tests").
type TestReport struct {
	Version        int       `json:"version"`
	At             time.Time `json:"at"`
	OK             bool      `json:"ok"`
	Detail         string    `json:"detail,omitempty"`
	TestOutputTail string    `json:"testOutputTail"`
}

func (s *Service) reportPath(id string) string { return filepath.Join(s.StoreDir(id), "tests.json") }

func (s *Service) saveReport(id string, rep TestReport) error {
	if !validID(id) {
		return errs.E("connectors.test", errs.Invalid, "the connector id %q cannot name a folder", id)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.StoreDir(id), 0o700); err != nil {
		return errs.Wrap("connectors.test", errs.Other, err, "the connector's folder could not be made")
	}
	if err := atomicfile.WriteFile(s.reportPath(id), data, 0o600); err != nil {
		return errs.Wrap("connectors.test", errs.Other, err, "the test report could not be written")
	}
	return nil
}

// LastTest is the connector id's last test report; NotFound when none is kept.
func (s *Service) LastTest(id string) (TestReport, error) {
	var rep TestReport
	if !validID(id) {
		return rep, errs.E("connectors.last-test", errs.NotFound, "No connector is called %q.", id)
	}
	data, err := os.ReadFile(s.reportPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return rep, errs.E("connectors.last-test", errs.NotFound, "The connector %s has no test run kept.", id)
	}
	if err != nil {
		return rep, errs.Wrap("connectors.last-test", errs.Other, err, "The connector's test report could not be read")
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return rep, errs.Wrap("connectors.last-test", errs.Other, err, "The connector's test report "+s.reportPath(id)+" is not one the box wrote")
	}
	return rep, nil
}

// OpLeftovers is the "Delete for good" action of a removed connector's keys and data.
const OpLeftovers = "connector-leftovers"

var _ builds.ConnectorRunner = (*Service)(nil)

// Leftovers is what the removed connector b leaves outside the tree (its keys in the vault, its own
// data) as a "Delete for good" action; any is false when it left nothing.
func (s *Service) Leftovers(ctx context.Context, b builds.Build) (gate.Action, bool, error) {
	a, err := s.leftovers(ctx, b.ID, b.Name)
	if err != nil {
		return a, false, err
	}
	p := a.Payload.(map[string]any)
	return a, len(p["keys"].([]any)) > 0 || p["data"] == true, nil
}

func (s *Service) leftovers(ctx context.Context, id, name string) (gate.Action, error) {
	keys := []any{}
	if s.opts.Vault != nil {
		if v, err := s.opts.Vault(); err == nil {
			all, err := v.List()
			if err != nil {
				return gate.Action{}, err
			}
			for _, e := range all {
				if k, ok := strings.CutPrefix(e.Name, KeyPrefix(id)); ok {
					keys = append(keys, k)
				}
			}
		}
	}
	_, err := os.Stat(s.StoreDir(id))
	data := err == nil
	_, err = s.opts.Builds.Connector(ctx, id)
	installed := err == nil
	return gate.Action{Kind: "delete", Switch: gate.Delete,
		Summary: fmt.Sprintf("The keys and data of the removed connector %s (%d keys)", name, len(keys)),
		Payload: map[string]any{"op": OpLeftovers, "id": id, "name": name, "keys": keys, "data": data, "installed": installed}}, nil
}

// LeftoversOp deletes a removed connector's keys and data for good: exactly what the card listed, and
// only while the connector is still removed (an undo that brought it back expires the card).
func (s *Service) LeftoversOp() gate.Op {
	return gate.Op{
		Current: func(ctx context.Context, stored gate.Action) (gate.Action, error) {
			p, _ := stored.Payload.(map[string]any)
			id, _ := p["id"].(string)
			name, _ := p["name"].(string)
			if !validID(id) {
				return stored, errs.E("connectors.leftovers", errs.Invalid, "The card names no connector; nothing ran.")
			}
			return s.leftovers(ctx, id, name)
		},
		Run: func(ctx context.Context, c gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
			p, _ := a.Payload.(map[string]any)
			id, _ := p["id"].(string)
			name, _ := p["name"].(string)
			keys, _ := p["keys"].([]any)
			if p["installed"] == true {
				return gate.Effect{}, errs.E("connectors.leftovers", errs.Conflict, "The connector %s is installed again, so its keys and data stay.", name)
			}
			return gate.Effect{
				After: func(ctx context.Context) (string, error) {
					if len(keys) > 0 {
						v, err := s.opts.Vault()
						if err != nil {
							return "", err
						}
						for _, k := range keys {
							ks, _ := k.(string)
							if err := v.Delete(KeyName(id, ks)); err != nil && !errs.Is(err, errs.NotFound) {
								return "", err
							}
						}
					}
					if err := os.RemoveAll(s.StoreDir(id)); err != nil {
						return "", errs.Wrap("connectors.leftovers", errs.Other, err, "The connector's data could not be deleted")
					}
					return "", nil
				},
				Text: func() string { return "Deleted for good the keys and data of the connector " + name + "." },
			}, nil
		},
	}
}

// validID is a connector's id as the manifest rules make it, so it can name a folder and a vault name.
func validID(id string) bool { return id != "" && connector.Slug(id) == id }
