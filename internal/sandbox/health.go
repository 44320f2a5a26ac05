package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/errs"
)

// Health is the outcome of a connector's tests (docs/CONNECTORS.md, "Tests"). Why is in the box's own
// words only, never the connector's (it may be shown to assistants); Detail and TestOutputTail may
// carry what the connector said or fetched with the owner's keys, and are for the owner's eyes only.
type Health struct {
	OK             bool         `json:"ok"`
	Why            string       `json:"why,omitempty"`
	Detail         string       `json:"detail,omitempty"`
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
	fail := func(why, detail string) {
		if h.Why == "" {
			h.Why, h.Detail = why, detail
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
				why := fmt.Sprintf("index.mjs exports no tool %s, which the manifest declares", t.Name)
				fail(why, why)
			}
		}
		for _, name := range res.Tools {
			if m.Tool(name) == nil {
				why := fmt.Sprintf("index.mjs exports the tool %s, which the manifest does not declare", name)
				fail(why, why)
			}
		}
	}
	if len(m.Test) == 0 {
		res, err := r.run(ctx, "", nil, st)
		note(res)
		if err != nil {
			fail(ownWords(err), err.Error())
		} else {
			exports(res)
		}
	}
	for i, t := range m.Test {
		tr, own := TestResult{Tool: t.Tool}, ""
		res, err := r.run(ctx, t.Tool, t.Args, st)
		note(res)
		if i == 0 && res.Tools != nil {
			exports(res)
		}
		switch {
		case err != nil:
			tr.Why, own = err.Error(), ownWords(err)
		default:
			if ok, why := t.Expect.Check(res.Value); ok {
				tr.OK = true
			} else {
				tr.Why, own = why, why // the expectation's words hold no more than an empty result
			}
		}
		if !tr.OK {
			fail(fmt.Sprintf("test %d (%s): %s", i+1, t.Tool, own), fmt.Sprintf("test %d (%s): %s", i+1, t.Tool, tr.Why))
		}
		h.Tests = append(h.Tests, tr)
	}
	h.OK = h.Why == ""
	h.TestOutputTail = lastBytes(r.proxy.scrub(out.String()), TailBytes)
	return h
}

// ownWords is a failed call in the box's own words: a limit the parent measured says which; any other
// failure may quote the connector (a thrown message, its crash) and is told only as a failure.
func ownWords(err error) string {
	if errs.Is(err, errs.Limited) {
		return errs.Sentence(err)
	}
	return "the call failed (what the connector said is in its test output, shown to the owner)"
}
