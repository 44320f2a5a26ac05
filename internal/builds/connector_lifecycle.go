package builds

import (
	"context"
	"fmt"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// testActor is who records a test run's outcome in the diary: the box itself.
var testActor = box.Actor{Who: "box", Via: "sandbox", Trust: "own"}

// Runnable is an installed connector that may run now: on, and the box not in safe mode. Anything else
// is an error saying why and what the owner does.
func (r *Builds) Runnable(ctx context.Context, id string) (Build, error) {
	b, err := r.Connector(ctx, id)
	if err != nil {
		return b, err
	}
	switch {
	case r.SafeMode(ctx):
		return b, errs.E("builds.runnable", errs.Refused, "%s", safeModeSentence(b))
	case b.Status == StatusOn:
		return b, nil
	case b.Status == StatusPending:
		return b, errs.E("builds.runnable", errs.Refused, "The connector %s is still running its tests; try again in a moment (if it stays so, `box builds on %s` runs them again).", b.Name, b.ID)
	case b.Status == StatusFailed:
		return b, errs.E("builds.runnable", errs.Refused, "The connector %s failed its tests, so it is off; `box builds status %s` says why.", b.Name, b.ID)
	}
	return b, errs.E("builds.runnable", errs.Refused, "The connector %s is switched off; the owner switches it on in Settings → Things I built.", b.Name)
}

// safeModeSentence says why a connector does not run, its tests included: safe mode pauses every
// connector (docs/CONNECTORS.md, "Safe mode").
func safeModeSentence(b Build) string {
	return fmt.Sprintf("Safe mode is on, so the connector %s is paused; the owner turns safe mode off in Settings → Safety.", b.Name)
}

// testsWait is the outcome of a connector installed in safe mode: pending, its tests not run.
func testsWait(b Build) string {
	return fmt.Sprintf("safe mode is on, so its tests wait and it stays off; once safe mode is off, `box builds on %s` runs them.", b.ID)
}

// afterTests runs the tests of version n of the connector id, if it is still pending at n, and records
// the outcome as one change (in safe mode it runs nothing and the version stays pending): passed, it is on (or stays off if the owner switched it off meanwhile);
// failed, an update puts the version before back and a first version is failed, with its health.
func (r *Builds) afterTests(ctx context.Context, actor box.Actor, id string, n int) (Build, error) {
	b, err := r.Connector(ctx, id)
	if err != nil || b.Version != n || b.Status != StatusPending || r.SafeMode(ctx) {
		return b, err
	}
	h := r.test(ctx, b, n)
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err = r.Connector(ctx, id)
	if err != nil || b.Version != n || b.Status != StatusPending {
		return b, err // changed while its tests ran: that change stands
	}
	was := clone(b)
	b.Health = &h
	reached := ""
	if len(h.Hosts) > 0 {
		reached = " (reached " + strings.Join(h.Hosts, ", ") + ")"
	}
	if h.OK {
		b.Status, b.Previous = StatusOn, 0
		return b, r.change(ctx, actor, "connector-on", fmt.Sprintf("The connector %s passed its tests%s: version %d is on", b.Name, reached, n), was, b, nil)
	}
	for i := range b.Versions {
		if b.Versions[i].N == n {
			b.Versions[i].Failed, b.Versions[i].Problem = true, clip(oneLine(h.Why), 500)
		}
	}
	if b.Previous > 0 {
		prev := b.Previous
		if bundle, err := r.Bundle(b, prev); err == nil {
			env := bundle.Envelope
			b.Version, b.Previous, b.Status, b.Envelope = prev, 0, StatusOn, &env
			return b, r.change(ctx, actor, "connector-failed", fmt.Sprintf("Version %d of the connector %s failed its tests%s, so version %d is back", n, b.Name, reached, prev), was, b, nil)
		}
	}
	b.Status, b.Previous = StatusFailed, 0
	return b, r.change(ctx, actor, "connector-failed", fmt.Sprintf("The connector %s failed its tests%s, so it is off: %s", b.Name, reached, clip(oneLine(h.Why), 200)), was, b, nil)
}

func (r *Builds) test(ctx context.Context, b Build, n int) Health {
	if r.runner == nil {
		return Health{Version: n, At: r.now().UTC().Truncate(1e9), Why: "this box cannot run connectors' tests", Hosts: []string{}}
	}
	h := r.runner.Test(ctx, b, n)
	if h.Hosts == nil {
		h.Hosts = []string{}
	}
	return h
}

// retest puts version n of a connector in use, pending, as one change, then runs its tests: what
// switching a connector on and going back to an earlier version do, since keys or sites may have
// changed since it last passed.
func (r *Builds) retest(ctx context.Context, actor box.Actor, b Build, n int, op, summary string) (Build, error) {
	bundle, err := r.Bundle(b, n)
	if err != nil {
		return b, err
	}
	was := clone(b)
	env := bundle.Envelope
	b.Version, b.Previous, b.Status, b.Envelope = n, 0, StatusPending, &env
	if err := r.change(ctx, actor, op, summary, was, b, nil); err != nil {
		return b, err
	}
	r.mu.Unlock()
	defer r.mu.Lock()
	return r.afterTests(context.WithoutCancel(ctx), actor, b.ID, n)
}

// removeConnector offers, after a connector is removed, to delete for good what it leaves outside the
// tree: its keys in the vault and its own data. Undoing the removal brings the connector back with them.
func (r *Builds) removeConnector(ctx context.Context, b Build, who gate.Asker, out Removed) (Removed, error) {
	if r.runner == nil {
		return out, nil
	}
	a, any, err := r.runner.Leftovers(ctx, b)
	if err != nil || !any {
		return out, err
	}
	return r.offerForGood(ctx, a, who, "Its keys and data", out)
}
