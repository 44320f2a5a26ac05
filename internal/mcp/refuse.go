package mcp

import (
	"context"
	"errors"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
)

// checkbox names what a connection was given; reading memory is always in.
type checkbox string

const (
	reading  checkbox = ""
	memoryCB checkbox = "memory"
	messages checkbox = "messages"
	build    checkbox = "build"
)

func has(c keys.Caps, b checkbox) bool {
	switch b {
	case memoryCB:
		return c.Memory
	case messages:
		return c.Messages
	case build:
		return c.Build
	}
	return true
}

// label is the checkbox as the owner sees it in Settings → Other assistants.
func (b checkbox) label() string {
	switch b {
	case memoryCB:
		return "Memory"
	case messages:
		return "My messages and mail"
	case build:
		return "Can build for my box"
	}
	return "Reading memory"
}

// FrozenSentence is the refusal of every call while the owner has frozen the box (docs/GATE.md).
const FrozenSentence = "This box is frozen: the owner froze it on purpose, so nothing can be read or done until they unfreeze it in Settings → Safety; stop and tell them, don't retry."

func needs(tool string, b checkbox) string {
	return tool + " needs the " + b.label() + " checkbox, which this connection wasn't given; the owner makes a key with " +
		b.label() + " ticked in Settings → Other assistants (`box keys new --" + string(b) + "`)."
}

// TooLongSentence answers a call stopped at its deadline (box serve gives one HTTP call a minute). A write
// commits whole or not at all, so the client is told to look rather than write twice.
const TooLongSentence = "This call took longer than the box allows one call, so it was stopped. A change is saved whole or not at all: look with memory_recent before trying again."

// refusal is a refusal whose text is the one sentence a client is shown.
func refusal(sentence string) error { return errs.E("mcp", errs.Refused, "%s", sentence) }

// sentence maps a box error to its isError sentence, once for every tool: what happened, what to tell the
// owner, where they fix it. Rule refusals carry their own sentence; unexpected failures never leak internals.
func sentence(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return refusal(TooLongSentence)
	}
	msg := errs.Sentence(err)
	switch k := errs.KindOf(err); k {
	case errs.Invalid, errs.Refused, errs.NotFound, errs.Exists, errs.Conflict, errs.Limited, errs.Forbidden:
		if msg != "" {
			return errs.E("mcp", k, "%s", period(msg))
		}
	case errs.Busy:
		return refusal("The box is busy with another write; try again in a moment.")
	case errs.Frozen:
		return refusal(FrozenSentence)
	case errs.Locked:
		return refusal(LockedSentence(""))
	}
	return refusal("Something went wrong inside the box, so nothing was done; tell the owner, who can see what happened in the Diary or with `box status`.")
}

func period(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}

// fence marks text not in the owner's own words, so a client reads it as data, never as instructions.
func fence(s string) string { return memory.Fence(s) }

// ownVia lists the ways in that carry the owner's own words.
var ownVia = memory.OwnVias
