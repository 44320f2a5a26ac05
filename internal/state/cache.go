package state

import (
	"context"
	"sync"
)

// Cache keeps what was read of state.db by key while Version stays the same: every call of a connection
// presents its key or token, and reading its row again each time costs more than the call. A commit to
// state.db by anyone (a revoke here or by the owner's CLI in another process) changes the version, and the
// next Get reads again. When the version cannot be read, nothing is taken from or put in the cache.
type Cache[V any] struct {
	version func(context.Context) (int64, error)
	mu      sync.Mutex
	at      int64
	m       map[string]V
}

// maxCached bounds a cache; past it the cache starts again.
const maxCached = 1024

// NewCache is an empty cache of what st holds.
func NewCache[V any](st *Store) *Cache[V] {
	return &Cache[V]{version: st.Version, at: -1, m: map[string]V{}}
}

// Get returns key's value, from the cache when it was read at the current version, else from read, whose
// value is kept unless it failed. Keys must not be secrets: callers key by a secret's hash.
func (c *Cache[V]) Get(ctx context.Context, key string, read func() (V, error)) (V, error) {
	v, verr := c.version(ctx)
	if verr == nil {
		c.mu.Lock()
		if c.at != v {
			clear(c.m)
			c.at = v
		}
		val, ok := c.m[key]
		c.mu.Unlock()
		if ok {
			return val, nil
		}
	}
	val, err := read()
	if err != nil || verr != nil {
		return val, err
	}
	c.mu.Lock()
	if c.at == v { // read before the row: a change since then moved the version, and this entry goes
		if len(c.m) >= maxCached {
			clear(c.m)
		}
		c.m[key] = val
	}
	c.mu.Unlock()
	return val, nil
}
