package oauth

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/grants"
)

// documentTimeout bounds one fetch of a client metadata document, connect to last byte.
const documentTimeout = 5 * time.Second

// document makes sure a client_id that is an https URL is known from a fresh copy of its metadata
// document: fetched through egress (public addresses only, no redirects, MaxDocument bytes, 5 seconds)
// within grants' fetch budgets and slots, checked by grants, kept for as long as its Cache-Control allows
// within grants' bounds. A client_id that is not a URL is left to grants. A document that cannot be
// fetched or read ends the request (the draft: abort the authorization request), and the failure is
// answered again for a minute without a fetch; nothing of the document is kept. When only the budget
// refuses and a copy of a client already known is kept, that copy serves, stale, rather than lock the
// client out (docs/OAUTH.md).
func (s *Server) document(r *http.Request, clientID string) error {
	if !grants.IsDocumentID(clientID) {
		return nil
	}
	if s.cfg.Grants.DocumentFresh(clientID) {
		if _, err := s.cfg.Grants.Client(r.Context(), clientID); err == nil {
			return nil // else it was forgotten as idle meanwhile: fetch it again
		}
	}
	if err := grants.CheckDocumentID(clientID); err != nil {
		return err
	}
	finish, err := s.cfg.Grants.StartDocumentFetch(r.Context(), clientID, s.source(r))
	if errs.CodeOf(err) == "temporarily_unavailable" {
		if _, cerr := s.cfg.Grants.Client(r.Context(), clientID); cerr == nil {
			s.cfg.Logger.Info("oauth: client metadata document kept copy used", "client_id", clientID, "err", err)
			return nil
		}
	}
	if err != nil {
		return err
	}
	c, life, err := s.fetchDocument(r, clientID)
	if r.Context().Err() != nil {
		finish(nil) // the client left: nothing is learnt of the document
	} else {
		finish(err)
	}
	if err != nil {
		return err
	}
	return s.cfg.Grants.SaveDocument(r.Context(), c, s.source(r), life)
}

// fetchDocument fetches and reads one client metadata document, and says how long it may be kept.
func (s *Server) fetchDocument(r *http.Request, clientID string) (grants.Client, time.Duration, error) {
	res, err := s.cfg.Fetch.Get(r.Context(), clientID, http.Header{"Accept": {"application/json"}})
	if err != nil {
		s.cfg.Logger.Info("oauth: client metadata document not fetched", "client_id", clientID, "err", err)
		return grants.Client{}, 0, grants.Refuse("invalid_client", "The box could not fetch this client's metadata document at %s: %s", clientID, sentence(err))
	}
	if res.Status != http.StatusOK {
		return grants.Client{}, 0, grants.Refuse("invalid_client", "The client's metadata document at %s answered %s %s; it must be served there with 200 (the box follows no redirect).",
			clientID, strconv.Itoa(res.Status), http.StatusText(res.Status))
	}
	c, err := grants.ParseDocument(clientID, res.Body)
	if err == nil {
		err = grants.CheckNotOwn(c.RedirectURIs, s.own(r))
	}
	return c, cacheLife(res.Header.Get("Cache-Control")), err
}

// sentence is the user sentence of an error from egress.
func sentence(err error) string {
	var e *errs.Error
	if errors.As(err, &e) && e.Msg != "" {
		return e.Msg
	}
	return "the fetch failed."
}

// cacheLife reads how long a response may be reused from its Cache-Control (RFC 9111 §5.2): max-age in
// seconds, nothing for no-store or no-cache, an hour when it says nothing usable. grants clamps the result.
func cacheLife(header string) time.Duration {
	life := time.Hour
	for _, d := range strings.Split(header, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "no-store", "no-cache":
			return 0
		case "max-age":
			n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(value), `"`), 10, 64)
			if err != nil || n < 0 {
				continue
			}
			life = time.Duration(min(n, int64(grants.DocumentMaxLife/time.Second))) * time.Second
		}
	}
	return life
}
