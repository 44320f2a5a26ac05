package sandbox

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/boxmem/box/internal/atomicfile"
)

// Caps of ctx.store, the connector's own small key-value data (docs/CONNECTORS.md, "ctx").
const (
	MaxStoreBytes = 1 << 20  // all values together
	maxStoreValue = 64 << 10 // one value's JSON
	maxStoreKey   = 200
	maxStoreKeys  = 1000
	storeFile     = "store.json"
)

// store is one connector's ctx.store: in memory while calls run, kept in dir/store.json after a call
// that changed it and ended well; a call that failed (threw, ran out of time or memory) leaves it as it
// was. A store without a folder is fresh and kept nowhere (tests run on such a one).
type store struct {
	mu    sync.Mutex
	dir   string
	data  map[string]json.RawMessage
	dirty bool
}

func openStore(dir string) (*store, error) {
	s := &store{dir: dir, data: map[string]json.RawMessage{}}
	if dir == "" {
		return s, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, storeFile))
	if os.IsNotExist(err) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &s.data); err != nil {
		return nil, fmt.Errorf("%s is not a store: %v", filepath.Join(dir, storeFile), err)
	}
	return s, nil
}

// do answers one store request from the child.
func (s *store) do(m *message) *message {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case m.Action == "keys":
		return &message{Op: "reply", Keys: slices.Sorted(maps.Keys(s.data))}
	case m.Key == "" || len(m.Key) > maxStoreKey:
		return &message{Op: "reply", Error: fmt.Sprintf("a store key is 1 to %d bytes", maxStoreKey)}
	}
	switch m.Action {
	case "get":
		return &message{Op: "reply", Value: s.data[m.Key]}
	case "delete":
		if _, ok := s.data[m.Key]; ok {
			delete(s.data, m.Key)
			s.dirty = true
		}
		return &message{Op: "reply"}
	case "set":
		var v json.RawMessage
		if len(m.Value) > maxStoreValue || json.Unmarshal(m.Value, &v) != nil {
			return &message{Op: "reply", Error: fmt.Sprintf("a store value is JSON of at most %d KB", maxStoreValue>>10)}
		}
		// The value arrives as JSON text inside the message: unwrap it once.
		var text string
		if json.Unmarshal(v, &text) == nil && json.Valid([]byte(text)) {
			v = json.RawMessage(text)
		}
		old, had := s.data[m.Key]
		if !had && len(s.data) >= maxStoreKeys {
			return &message{Op: "reply", Error: fmt.Sprintf("the store holds %d keys, the most it may", maxStoreKeys)}
		}
		if s.size()-len(old)+len(v) > MaxStoreBytes {
			return &message{Op: "reply", Error: fmt.Sprintf("the store would pass %d KB", MaxStoreBytes>>10)}
		}
		s.data[m.Key] = v
		s.dirty = true
		return &message{Op: "reply"}
	}
	return &message{Op: "reply", Error: fmt.Sprintf("%q is not a store action", clip(m.Action))}
}

func (s *store) size() int {
	n := 0
	for _, v := range s.data {
		n += len(v)
	}
	return n
}

// snapshot is the store as it is, for restore to put back; values are never changed in place.
func (s *store) snapshot() (map[string]json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.data), s.dirty
}

// restore puts back what snapshot took: a failed call's writes are dropped, not half kept.
func (s *store) restore(data map[string]json.RawMessage, dirty bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data, s.dirty = data, dirty
}

// flush keeps the store on disk when a call changed it.
func (s *store) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" || !s.dirty {
		return nil
	}
	b, err := json.Marshal(s.data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(s.dir, storeFile), b, 0o600); err != nil {
		return err
	}
	s.dirty = false
	return nil
}
