package grants

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// What fetching client metadata documents may cost (docs/OAUTH.md): anyone may send a client_id URL to
// /authorize, so without these bounds a stranger could make the box fetch without end, or use it to
// hammer someone else's host.
const (
	DocumentFetchesPerSource = 30              // fetches one source (IPv4 /24, IPv6 /56) may cause an hour
	DocumentFetchesPerHost   = 10              // fetches of documents on one host a minute
	DocumentFetchesPerMinute = 60              // fetches in all a minute, whatever the source or host
	DocumentFetchesInFlight  = 4               // fetches at once; a further one waits for a slot
	DocumentFailureLife      = time.Minute     // a failed fetch is answered from memory this long
	documentSlotWait         = 5 * time.Second // how long a fetch waits for a slot before it is refused
	maxRemembered            = 4096            // budgets and failures remembered; past that the stalest go
	failureSuffix            = " The box will not fetch it again for a minute."
)

// fetches is the in-memory state of document fetching: budgets per source, per host and in all (token
// buckets on the store's clock), the slots of fetches in flight, and recent failures.
type fetches struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	failed  map[string]failure
	slots   chan struct{}
}

type bucket struct {
	tokens float64
	at     time.Time
}

type failure struct {
	err   *errs.Error
	until time.Time
}

// budget is one token bucket's size and how long it takes to fill again from empty.
type budget struct {
	key  string
	size float64
	fill time.Duration
}

func (s *Store) fetchState() *fetches {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fetch == nil {
		s.fetch = &fetches{buckets: map[string]*bucket{}, failed: map[string]failure{}, slots: make(chan struct{}, DocumentFetchesInFlight)}
	}
	return s.fetch
}

// StartDocumentFetch asks leave to fetch clientID's metadata document for a request from source. A
// failure of the last DocumentFailureLife is answered again without a fetch; a source, a host or the box
// past its budget is refused (temporarily_unavailable); otherwise it waits for one of the
// DocumentFetchesInFlight slots (refused if none frees within a few seconds). On leave, the caller
// fetches and then calls finish with the fetch's refusal, or nil when it worked or the caller gave up:
// a refusal is remembered, and the slot is freed.
func (s *Store) StartDocumentFetch(ctx context.Context, clientID, source string) (finish func(error), err error) {
	f := s.fetchState()
	now := s.now()
	host := clientID
	if u, err := url.Parse(clientID); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	f.mu.Lock()
	if e, ok := f.failed[clientID]; ok && now.Before(e.until) {
		f.mu.Unlock()
		return nil, e.err
	}
	delete(f.failed, clientID)
	budgets := []budget{
		{"source " + source, DocumentFetchesPerSource, time.Hour},
		{"host " + host, DocumentFetchesPerHost, time.Minute},
		{"all", DocumentFetchesPerMinute, time.Minute},
	}
	for i, b := range budgets {
		if f.level(b, now) < 1 {
			f.mu.Unlock()
			return nil, refuse("temporarily_unavailable", "%s", [...]string{
				fmt.Sprintf("This network asked the box to fetch %d client metadata documents in the last hour; try again later.", DocumentFetchesPerSource),
				fmt.Sprintf("The box fetched %d client metadata documents from %s in the last minute; try again in a minute.", DocumentFetchesPerHost, host),
				"The box is fetching many client metadata documents right now; try again in a minute.",
			}[i])
		}
	}
	for _, b := range budgets {
		f.buckets[b.key].tokens--
	}
	f.forget(now)
	f.mu.Unlock()

	wait := time.NewTimer(documentSlotWait)
	defer wait.Stop()
	select {
	case f.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, errs.Wrap("grants.document", errs.Other, ctx.Err(), "")
	case <-wait.C:
		return nil, refuse("temporarily_unavailable", "The box is fetching other client metadata documents right now; try again in a few seconds.")
	}
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			<-f.slots
			var r *errs.Error
			if err == nil || !errors.As(err, &r) || r.Code == "" {
				return
			}
			kept := *r
			kept.Msg = strings.TrimSpace(kept.Msg) + failureSuffix
			f.mu.Lock()
			f.failed[clientID] = failure{err: &kept, until: s.now().Add(DocumentFailureLife)}
			f.forget(s.now())
			f.mu.Unlock()
		})
	}, nil
}

// level is how many tokens b's bucket holds now, refilled at its rate since last seen (a new bucket is
// full). The caller holds f.mu.
func (f *fetches) level(b budget, now time.Time) float64 {
	k, ok := f.buckets[b.key]
	if !ok {
		k = &bucket{tokens: b.size, at: now}
		f.buckets[b.key] = k
	}
	if d := now.Sub(k.at); d > 0 {
		k.tokens = min(b.size, k.tokens+b.size*d.Seconds()/b.fill.Seconds())
	}
	k.at = now
	return k.tokens
}

// forget drops expired failures and buckets untouched for an hour (full again by then), and past
// maxRemembered the stalest of each. The caller holds f.mu.
func (f *fetches) forget(now time.Time) {
	for id, e := range f.failed {
		if !now.Before(e.until) {
			delete(f.failed, id)
		}
	}
	for k, b := range f.buckets {
		if now.Sub(b.at) >= time.Hour {
			delete(f.buckets, k)
		}
	}
	for len(f.failed) > maxRemembered {
		stalest := ""
		for id, e := range f.failed {
			if stalest == "" || e.until.Before(f.failed[stalest].until) {
				stalest = id
			}
		}
		delete(f.failed, stalest)
	}
	for len(f.buckets) > maxRemembered {
		stalest := ""
		for k, b := range f.buckets {
			if stalest == "" || b.at.Before(f.buckets[stalest].at) {
				stalest = k
			}
		}
		delete(f.buckets, stalest)
	}
}
