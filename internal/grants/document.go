package grants

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, preferred by the MCP
// authorization spec of 2025-11-25): a client whose client_id is an https URL publishes its metadata there,
// and the box fetches it (package oauth, through package egress) instead of asking it to register. The
// rules the box applies are in docs/OAUTH.md.

// MaxDocument is the most of a metadata document the box reads (the draft recommends 5 KB).
const MaxDocument = 5 << 10

// IsDocumentID reports whether a client_id names a metadata document rather than a registration: the box's
// own client ids are "c_…", never URLs.
func IsDocumentID(clientID string) bool { return strings.HasPrefix(clientID, "https://") }

// CheckDocumentID says whether a client_id URL is one the draft allows: https, a host, a path, no dot
// segments, no fragment, no user or password, and not longer than MaxParam.
func CheckDocumentID(clientID string) error {
	const what = "A client_id that is a URL must be https with a host and a path, without . or .. segments, a fragment or a user name"
	if len(clientID) > MaxParam {
		return refuse("invalid_client", "The client_id is %d bytes; this box accepts at most %d.", len(clientID), MaxParam)
	}
	u, err := url.Parse(clientID)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(clientID, "#") ||
		u.Opaque != "" || u.Path == "" || u.Path == "/" {
		return refuse("invalid_client", "%s.", what)
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if s, _ := url.PathUnescape(seg); s == "." || s == ".." {
			return refuse("invalid_client", "%s.", what)
		}
	}
	return nil
}

// document is what the box reads of a metadata document; the rest is ignored.
type document struct {
	ClientID                string
	ClientName              string
	RedirectURIs            []string
	TokenEndpointAuthMethod string
	GrantTypes              []string
	ResponseTypes           []string
	hasSecret               bool
}

// readDocument reads one JSON object by its exact member names: encoding/json would also take
// "Client_ID" for client_id, and the document must say client_id.
func readDocument(body []byte) (document, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
		return document{}, errors.New("not one JSON object")
	}
	var d document
	for name, into := range map[string]any{"client_id": &d.ClientID, "client_name": &d.ClientName, "redirect_uris": &d.RedirectURIs,
		"token_endpoint_auth_method": &d.TokenEndpointAuthMethod, "grant_types": &d.GrantTypes, "response_types": &d.ResponseTypes} {
		if raw, ok := m[name]; ok {
			if err := json.Unmarshal(raw, into); err != nil {
				return document{}, fmt.Errorf("%s is not of its type", name)
			}
		}
	}
	_, a := m["client_secret"]
	_, b := m["client_secret_expires_at"]
	d.hasSecret = a || b
	return d, nil
}

// ParseDocument reads the metadata document fetched from clientID: a JSON object whose client_id is the
// URL it was fetched from, byte for byte, with redirect URIs the box accepts, a public client (no secret,
// token_endpoint_auth_method none or absent) of the code flow. The name is cleaned as a registered one is.
func ParseDocument(clientID string, body []byte) (Client, error) {
	if err := CheckDocumentID(clientID); err != nil {
		return Client{}, err
	}
	d, err := readDocument(body)
	if err != nil {
		return Client{}, refuse("invalid_client_metadata", "The client metadata document at %s is %v.", clientID, err)
	}
	switch {
	case d.ClientID != clientID:
		return Client{}, refuse("invalid_client_metadata", "The client metadata document at %s names another client_id, %q; they must be the same.", clientID, clip(d.ClientID, 200))
	case d.hasSecret:
		return Client{}, refuse("invalid_client_metadata", "The client metadata document at %s carries a client_secret, which a published document must not.", clientID)
	}
	if err := checkMetadata(d.RedirectURIs, d.TokenEndpointAuthMethod, d.GrantTypes, d.ResponseTypes); err != nil {
		var r *errs.Error
		if !errors.As(err, &r) {
			return Client{}, err
		}
		r.Msg = fmt.Sprintf("In the client metadata document at %s: %s", clientID, r.Msg)
		return Client{}, r
	}
	name := d.ClientName
	if strings.TrimSpace(name) == "" {
		u, _ := url.Parse(clientID)
		name = u.Host
	}
	return Client{ID: clientID, Name: cleanName(name), RedirectURIs: d.RedirectURIs}, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// How long a fetched document is used before it is fetched again: its Cache-Control max-age, within
// these bounds (the draft lets the server set them).
const (
	DocumentMinLife = time.Minute
	DocumentMaxLife = 24 * time.Hour
	maxFresh        = 512 // documents whose freshness is remembered; past that the soonest stale is forgotten
)

// SaveDocument keeps a client read from its metadata document, fresh for life (clamped to the bounds
// above), so codes, tokens and the consent page can name it; a client_id the box did not know yet counts
// against source's budget of new clients.
func (s *Store) SaveDocument(ctx context.Context, c Client, source string, life time.Duration) error {
	if err := s.addClient(ctx, c, source, true); err != nil {
		return err
	}
	life = min(max(life, DocumentMinLife), DocumentMaxLife)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fresh == nil {
		s.fresh = map[string]time.Time{}
	}
	now := s.now()
	for id, until := range s.fresh {
		if !now.Before(until) {
			delete(s.fresh, id)
		}
	}
	for len(s.fresh) >= maxFresh {
		soonest := ""
		for id, until := range s.fresh {
			if soonest == "" || until.Before(s.fresh[soonest]) {
				soonest = id
			}
		}
		delete(s.fresh, soonest)
	}
	s.fresh[c.ID] = now.Add(life)
	return nil
}

// DocumentFresh reports whether the stored copy of a client's metadata document may be used without
// fetching it again.
func (s *Store) DocumentFresh(clientID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.fresh[clientID]
	return ok && s.now().Before(until)
}
