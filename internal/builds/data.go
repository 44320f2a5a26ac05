package builds

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/boxmem/box/internal/secret"
	"io/fs"
	"unicode/utf8"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/layout"
)

// Data is a page's own JSON store: an object of keys to any JSON value (docs/PAGES.md).
func (r *Builds) Data(ctx context.Context, slug string) (map[string]json.RawMessage, error) {
	data, err := layout.ReadFile(r.b.Root, DataPath(slug))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]json.RawMessage{}, nil
	}
	if err != nil {
		return nil, errs.Wrap("builds.data", errs.Other, err, "The page's data cannot be read")
	}
	out := map[string]json.RawMessage{}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, errs.Wrap("builds.data", errs.Invalid, err, "The page's data is not a JSON object; fix "+DataPath(slug))
	}
	return out, nil
}

// SetData sets one key of a page's store (a null value deletes it), as the page's own write: the
// "Change my box" switch at Never refuses it.
func (r *Builds) SetData(ctx context.Context, slug, key string, value json.RawMessage) error {
	switch {
	case key == "" || utf8.RuneCountInString(key) > MaxDataKey:
		return errs.E("builds.data", errs.Invalid, "A key is 1 to %d characters.", MaxDataKey)
	case !json.Valid(value):
		return errs.E("builds.data", errs.Invalid, "The value is not JSON.")
	}
	// The store is in the box's tree and git, its key in a commit's message: the rules that keep a
	// secret out of a remembered line keep it out of here (a page is often fed by the owner's typing).
	if reason, found := secretIn(key, value); found {
		return errs.E("builds.data", errs.Invalid, "The page's data was not saved: %s", reason)
	}
	pa := PageActor(slug)
	if err := r.gate.Check(ctx, gate.Change, gate.Asker{Connection: pa.Who, Via: pa.Via, Host: pa.Host, Conn: pa.Conn}, "the page's data "+key); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	store, err := r.Data(ctx, slug)
	if err != nil {
		return err
	}
	if bytes.Equal(bytes.TrimSpace(value), []byte("null")) {
		delete(store, key)
	} else {
		var compact bytes.Buffer
		if err := json.Compact(&compact, value); err != nil {
			return errs.E("builds.data", errs.Invalid, "The value is not JSON.")
		}
		store[key] = compact.Bytes()
	}
	out, err := json.MarshalIndent(store, "", "  ")
	if err != nil {
		return errs.Wrap("builds.data", errs.Other, err, "")
	}
	if len(out) > MaxDataBytes {
		return errs.E("builds.data", errs.Limited, "The page's store would be %d KB; it holds at most %d KB.", len(out)>>10, MaxDataBytes>>10)
	}
	_, err = r.b.Do(ctx, box.Change{Actor: pageActor(slug), Op: "page-data", Switch: gate.Change, Summary: "Saved the page's data: " + clip(key, 60),
		Apply: func(tx *box.Tx) error { return tx.Write(DataPath(slug), append(out, '\n')) }})
	return err
}

// secretIn reports a secret in a store's key or in any key or string of its JSON value, with the reason,
// by the rules for what a program keeps (secret.Stored: an id or a hash is not taken for a key).
func secretIn(key string, value json.RawMessage) (string, bool) {
	if reason, found := secret.Stored(key); found {
		return reason, true
	}
	var v any
	if err := json.Unmarshal(value, &v); err != nil {
		return "", false // not JSON: refused as such before it is written
	}
	var walk func(any) (string, bool)
	walk = func(v any) (string, bool) {
		switch v := v.(type) {
		case string:
			return secret.Stored(v)
		case []any:
			for _, e := range v {
				if reason, found := walk(e); found {
					return reason, true
				}
			}
		case map[string]any:
			for k, e := range v {
				if reason, found := secret.Stored(k); found {
					return reason, true
				}
				if reason, found := walk(e); found {
					return reason, true
				}
			}
		}
		return "", false
	}
	return walk(v)
}
