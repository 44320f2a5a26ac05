package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Health is the outcome of a connector's tests: what build_status shows (docs/CONNECTORS.md, "Tests").
type Health struct {
	OK             bool         `json:"ok"`
	Why            string       `json:"why,omitempty"`
	TestOutputTail string       `json:"testOutputTail"`
	Tests          []TestResult `json:"tests"`
	Hosts          []string     `json:"hosts"`
	BlockedHosts   []Blocked    `json:"blockedHosts"`
}

// TestResult is one test of the manifest.
type TestResult struct {
	Tool string `json:"tool"`
	OK   bool   `json:"ok"`
	Why  string `json:"why,omitempty"`
}

// RunTests runs the manifest's tests in order on a fresh, empty store (never the one calls keep), and
// checks that the code exports exactly the declared tools. The first failure is the health's why; the
// output tail is the end of the children's stderr, keys scrubbed.
func (r *Runner) RunTests(ctx context.Context) Health {
	m := r.cfg.Bundle.Manifest
	h := Health{Tests: []TestResult{}, Hosts: []string{}, BlockedHosts: []Blocked{}}
	st, _ := openStore("") // a fresh store cannot fail to open
	var out strings.Builder
	fail := func(why string) {
		if h.Why == "" {
			h.Why = why
		}
	}
	note := func(res *Result) {
		out.WriteString(res.Log)
		for _, host := range res.Hosts {
			if !slices.Contains(h.Hosts, host) {
				h.Hosts = append(h.Hosts, host)
			}
		}
		for _, b := range res.Blocked {
			if !slices.ContainsFunc(h.BlockedHosts, func(x Blocked) bool { return x.Host == b.Host }) {
				h.BlockedHosts = append(h.BlockedHosts, b)
			}
		}
	}
	exports := func(res *Result) {
		for _, t := range m.Tools {
			if !slices.Contains(res.Tools, t.Name) {
				fail(fmt.Sprintf("index.mjs exports no tool %s, which the manifest declares", t.Name))
			}
		}
		for _, name := range res.Tools {
			if m.Tool(name) == nil {
				fail(fmt.Sprintf("index.mjs exports the tool %s, which the manifest does not declare", name))
			}
		}
	}
	if len(m.Test) == 0 {
		res, err := r.run(ctx, "", nil, st)
		note(res)
		if err != nil {
			fail(err.Error())
		} else {
			exports(res)
		}
	}
	for i, t := range m.Test {
		tr := TestResult{Tool: t.Tool}
		res, err := r.run(ctx, t.Tool, t.Args, st)
		note(res)
		if i == 0 && res.Tools != nil {
			exports(res)
		}
		switch {
		case err != nil:
			tr.Why = err.Error()
		default:
			if ok, why := t.Expect.Check(res.Value); ok {
				tr.OK = true
			} else {
				tr.Why = why
			}
		}
		if !tr.OK {
			fail(fmt.Sprintf("test %d (%s): %s", i+1, t.Tool, tr.Why))
		}
		h.Tests = append(h.Tests, tr)
	}
	h.OK = h.Why == ""
	h.TestOutputTail = lastBytes(r.proxy.scrub(out.String()), TailBytes)
	return h
}
