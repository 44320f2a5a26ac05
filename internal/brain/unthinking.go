package brain

import (
	"context"
	"fmt"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/memory"
)

// readBox reads a file of the box through the escape check every read takes.
func (b *Brain) readBox(p string) ([]byte, error) { return layout.ReadFile(b.cfg.Box.Root, p) }

var (
	rememberRe = lazyregexp.New(`(?is)^\s*(?:please\s+)?remember(?:\s+that)?[\s:,]+(.+)$`)
	forgetRe   = lazyregexp.New(`(?is)^\s*(?:please\s+)?forget(?:\s+about)?[\s:,]+(.+)$`)
)

// NoBrain is what the chat says while no brain is set.
const NoBrain = "No brain is set up yet, so I answer from your memory by search; you can set one up in Settings → Brain."

// Unthinking is the chat without a brain: "remember …" and "forget …" by pattern, questions by search.
// confirm is the owner's yes to forgetting more than five lines; needsConfirm asks for it.
func (b *Brain) Unthinking(ctx context.Context, text string, confirm bool) (reply string, needsConfirm bool) {
	if mt := rememberRe.FindStringSubmatch(text); mt != nil {
		t, err := b.OwnerRemember(ctx, memory.RememberInput{Text: mt[1]}, "chat")
		if err != nil {
			return sentenceOf(err), false
		}
		return t, false
	}
	m := b.cfg.Memory
	if mt := forgetRe.FindStringSubmatch(text); mt != nil {
		// The owner's own words, through the gate as the chat with a brain goes (docs/GATE.md): "Change
		// my box" at Never refuses, Ask me makes a card; the lines removed are those it decided on.
		lines, err := m.ForgetPreview(ctx, mt[1])
		if err != nil {
			return sentenceOf(err), false
		}
		if len(lines) > memory.MaxForgetUnconfirmed && !confirm { // the owner's yes first, then the gate
			return fmt.Sprintf("%d lines match; nothing was removed yet. Remove them all? (They go to the trash, and Undo brings them back.)", len(lines)), true
		}
		if len(lines) > 0 {
			out, err := b.cfg.Gate.Propose(ctx, memory.ForgetAction(mt[1], lines), gate.Asker{Owner: true, Via: "chat", OwnLastMessageAsked: true})
			if err != nil {
				return sentenceOf(err), false
			}
			if o, held := heldByTheGate(out, "Nothing removed yet: a card is waiting for you on Today."); held {
				return o.Text, false
			}
		}
		res, err := m.ForgetMatched(ctx, memory.Actor{Who: "owner", Via: "chat", Trust: "own"}, memory.ForgetInput{Words: mt[1], Confirm: confirm}, lines)
		if err != nil {
			return sentenceOf(err), false
		}
		if res.NeedsConfirm {
			return fmt.Sprintf("%d lines match; nothing was removed yet. Remove them all? (They go to the trash, and Undo brings them back.)", len(res.Matched)), true
		}
		return res.Text, false
	}
	res, err := m.Search(ctx, memory.SearchInput{Words: text, Limit: 3})
	if err != nil {
		return sentenceOf(err), false
	}
	if len(res.Hits) == 0 {
		return "I found nothing about that in your memory. " + NoBrain, false
	}
	var sb strings.Builder
	sb.WriteString("From your memory:")
	for _, h := range res.Hits {
		fmt.Fprintf(&sb, "\n• %s", strings.ReplaceAll(strings.Join(strings.Fields(h.Snippet), " "), "**", ""))
	}
	sb.WriteString("\n" + NoBrain)
	return sb.String(), false
}

// OwnerRemember runs "remember" through the gate as the owner asked it (web, or the chat's pattern): a
// plain fact, a core fact or a caution alike, so Ask me makes a "Save this?" card and Never refuses.
func (b *Brain) OwnerRemember(ctx context.Context, in memory.RememberInput, via string) (string, error) {
	if strings.TrimSpace(in.Text) == "" {
		return "", errs.E("brain.remember", errs.Invalid, "Type the fact to remember first.")
	}
	out, res, err := b.saveThroughGate(ctx, memory.Actor{Who: "owner", Via: via, Trust: "own"}, in, gate.Asker{Owner: true, Via: via})
	if err != nil {
		return "", err
	}
	switch out.Decision.Verdict {
	case gate.Refuse:
		return "", errs.E("brain.remember", errs.Refused, "%s", out.Text)
	case gate.Card:
		return "A \"Save this?\" card is waiting on Today; nothing is saved until you say yes.", nil
	}
	return res.Text, nil
}

// saveThroughGate is the one way the owner's side saves a fact: what remember refuses is refused
// first (a card, its diary line and its commit would otherwise carry the very secret remember refuses
// to keep), then the gate decides; on its Do the fact is saved as actor. The caller words the outcome.
func (b *Brain) saveThroughGate(ctx context.Context, actor memory.Actor, in memory.RememberInput, who gate.Asker) (gate.Outcome, memory.RememberResult, error) {
	in.Text = strings.TrimSpace(in.Text)
	if err := b.cfg.Memory.CheckRememberAs(actor, in); err != nil {
		return gate.Outcome{}, memory.RememberResult{}, err
	}
	out, err := b.cfg.Gate.Propose(ctx, in.Action(), who)
	if err != nil || out.Decision.Verdict != gate.Do {
		return out, memory.RememberResult{}, err
	}
	res, err := b.cfg.Memory.Remember(ctx, actor, in)
	return out, res, err
}

// sentenceOf is what the owner reads for an error: the box's own sentence, or a plain apology.
func sentenceOf(err error) string {
	if s := errs.Sentence(err); s != "" {
		return s
	}
	return "Something went wrong inside the box; nothing was changed. Try again, and if it keeps happening, look at box serve's log."
}
