package connectors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
)

// The owner's keys of a connector (docs/CONNECTORS.md, "Keys"): pasted once, sealed in the vault, never
// shown again but for their last four characters.

// KeyStatus is one key a connector declares, as the owner sees it: never the key.
type KeyStatus struct {
	Name  string `json:"name"`
	Host  string `json:"host"`
	What  string `json:"what,omitempty"`
	Set   bool   `json:"set"`
	Last4 string `json:"last4,omitempty"` // "…abcd"; "…" for a key too short to show any of it
}

// Keys lists the keys the connector id's version in use declares and whether each is set.
func (s *Service) Keys(ctx context.Context, id string) ([]KeyStatus, error) {
	b, err := s.opts.Builds.Connector(ctx, id)
	if err != nil {
		return nil, err
	}
	bundle, err := s.opts.Builds.Bundle(b, b.Version)
	if err != nil {
		return nil, err
	}
	out := []KeyStatus{}
	for _, c := range bundle.Manifest.Credentials {
		k := KeyStatus{Name: c.Name, Host: c.Host, What: c.What}
		if s.opts.Vault != nil {
			if v, err := s.opts.Vault(); err == nil {
				if sec, err := v.Get(KeyName(id, c.Name)); err == nil {
					if _, ok := openKey(sec.Reveal(), c.Host); ok {
						k.Set, k.Last4 = true, sec.Last4() // a key pasted for another host is not this one's
					}
				}
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// MaxKey bounds one key; API keys and tokens are far smaller.
const MaxKey = 8 << 10

// SetKey seals the owner's key name of the connector id in the vault, replacing one set before, with a
// diary line that names the key, never its value. The key is one line of printable text; nothing of it
// appears in an error.
func (s *Service) SetKey(ctx context.Context, actor box.Actor, id, name, key string) (KeyStatus, error) {
	const op = "connectors.key"
	if err := s.opts.State.Quiet(ctx); err != nil {
		return KeyStatus{}, err
	}
	b, err := s.opts.Builds.Connector(ctx, id)
	if err != nil {
		return KeyStatus{}, err
	}
	bundle, err := s.opts.Builds.Bundle(b, b.Version)
	if err != nil {
		return KeyStatus{}, err
	}
	var k *KeyStatus
	var names []string
	for _, c := range bundle.Manifest.Credentials {
		names = append(names, c.Name)
		if c.Name == name {
			k = &KeyStatus{Name: c.Name, Host: c.Host, What: c.What}
		}
	}
	if k == nil {
		if len(names) == 0 {
			return KeyStatus{}, errs.E(op, errs.NotFound, "The connector %s needs no key.", b.Name)
		}
		return KeyStatus{}, errs.E(op, errs.NotFound, "The connector %s has no key %q; its keys are %s.", b.Name, clip(name, 40), strings.Join(names, ", "))
	}
	key = strings.TrimSpace(key)
	switch {
	case key == "":
		return KeyStatus{}, errs.E(op, errs.Invalid, "The key for %s is empty; paste the whole key.", name)
	case len(key) > MaxKey:
		return KeyStatus{}, errs.E(op, errs.Invalid, "The key for %s is longer than %d KB; paste only the key.", name, MaxKey>>10)
	case strings.IndexFunc(key, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return KeyStatus{}, errs.E(op, errs.Invalid, "The key for %s holds a line break or a control character; paste it as one line.", name)
	}
	if s.opts.Vault == nil {
		return KeyStatus{}, errs.E(op, errs.Other, "This box has no vault to keep keys in.")
	}
	v, err := s.opts.Vault()
	if err != nil {
		return KeyStatus{}, err
	}
	// A key without its diary line is not set: if the line cannot be written, the vault goes back to what
	// it held (the key before, or none).
	prev, prevErr := v.Get(KeyName(id, name))
	undo := func() error {
		if prevErr == nil {
			return v.Put(KeyName(id, name), prev.Reveal())
		}
		return v.Delete(KeyName(id, name))
	}
	if err := v.Put(KeyName(id, name), SealKey(k.Host, key)); err != nil {
		return KeyStatus{}, err
	}
	sec, err := v.Get(KeyName(id, name))
	if err != nil {
		return KeyStatus{}, err
	}
	k.Set, k.Last4 = true, sec.Last4()
	who := actor.Who
	if who == "" {
		who = "owner"
	}
	if _, err := s.opts.Box.Do(ctx, box.Change{Actor: actor, Op: "connector-key", Permanent: true,
		Summary: fmt.Sprintf("%s set the key %s of the connector %s (sealed in the vault)", who, name, b.Name),
		Apply:   func(*box.Tx) error { return nil }}); err != nil {
		return KeyStatus{}, errors.Join(err, undo())
	}
	return *k, nil
}
