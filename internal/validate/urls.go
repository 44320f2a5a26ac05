package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/egress"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/ref"
)

// URLCache is where the URL pass keeps its verdicts, under the box root (git ignores .box/).
const URLCache = ".box/url-checks.json"

// urlTTL is how long a verdict stands before a full pass (without --urls-since) asks again.
const urlTTL = 7 * 24 * time.Hour

// Verdict is what one check of an external URL found.
type Verdict struct {
	OK     bool   `json:"ok"`
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Skipped says why the link was not asked: its address is not on the public internet (the egress rule).
	Skipped string `json:"skipped,omitempty"`
	Checked string `json:"checked"`
}

type urlUse struct {
	path string
	line int
}

// URLs checks external http(s) URLs: with since, only those in files changed since that revision
// (committed or not) that the cache has never seen; without, every URL in the box, re-asking
// verdicts older than a week. HEAD first, GET when the server refuses HEAD. Findings are warnings.
func (v *Validator) URLs(ctx context.Context, since string) (Result, error) {
	var res Result
	var files []string
	if since != "" {
		out, err := v.git.Run(ctx, nil, "diff", "--name-only", "-z", "--no-renames", "--diff-filter=d", since, "--")
		if err != nil {
			return res, errs.E("validate.urls", errs.Invalid, "cannot list the files changed since %q: name a revision of this box, like HEAD~1", since)
		}
		for _, p := range strings.Split(string(out), "\x00") {
			if bp := "/" + p; p != "" && card.IsCard(bp) && layout.InArea(bp) {
				files = append(files, bp)
			}
		}
	} else {
		w, err := v.walk(ctx, "/")
		if err != nil {
			return res, err
		}
		files = w.cards
	}
	uses := map[string][]urlUse{}
	for _, bp := range files {
		data, f := v.read(bp)
		if f != nil {
			continue
		}
		for _, u := range ref.ExternalURLs(data) {
			uses[u.URL] = append(uses[u.URL], urlUse{bp, u.Line})
		}
		res.Files++
	}
	cache := v.loadCache()
	now := v.opts.Now()
	var todo []string
	for u := range uses {
		vd, ok := cache[u]
		switch {
		case since != "" && ok:
			delete(uses, u) // seen before: only new URLs are this pass's business
		case !ok || stale(vd, now):
			todo = append(todo, u)
		}
	}
	sort.Strings(todo)
	for u, vd := range v.checkURLs(ctx, todo) {
		cache[u] = vd
	}
	if len(todo) > 0 {
		if err := v.saveCache(cache); err != nil {
			return res, err
		}
	}
	for u, us := range uses {
		vd := cache[u]
		if vd.OK {
			continue
		}
		// The link as egress repeats an address (without a user name, a query or an '@' that may hold a
		// token); the line says where it is.
		name := egress.Shown(u)
		if name == "" {
			name = "on this line"
		}
		if vd.Skipped != "" {
			for _, use := range us {
				res.add(finding.Warnf(use.path, use.line, CodeUncheckedURL, "the link %s was not checked: %s", name, vd.Skipped))
			}
			continue
		}
		why := vd.Error
		if why == "" {
			why = fmt.Sprintf("HTTP %d", vd.Status)
		}
		for _, use := range us {
			res.add(finding.Warnf(use.path, use.line, CodeDeadURL, "the link %s does not answer (%s): fix or remove it", name, why))
		}
	}
	return res.done(), nil
}

func stale(vd Verdict, now time.Time) bool {
	t, err := time.Parse(time.RFC3339, vd.Checked)
	return err != nil || now.Sub(t) > urlTTL
}

func (v *Validator) checkURLs(ctx context.Context, urls []string) map[string]Verdict {
	client := v.opts.Egress
	if client == nil {
		client = egress.New(egress.Options{Timeout: v.opts.Timeout})
	}
	out := make(map[string]Verdict, len(urls))
	var mu sync.Mutex
	sem := make(chan struct{}, v.opts.Concurrency)
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			vd := v.checkURL(ctx, client, u)
			mu.Lock()
			out[u] = vd
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func (v *Validator) checkURL(ctx context.Context, client *egress.Client, u string) Verdict {
	vd := Verdict{Checked: v.opts.Now().UTC().Format(time.RFC3339)}
	status, err := v.request(ctx, client, http.MethodHead, u)
	if err == nil && (status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented) {
		status, err = v.request(ctx, client, http.MethodGet, u)
	}
	if errs.Is(err, errs.Forbidden) {
		vd.Skipped = strings.TrimSuffix(errs.Sentence(err), ".")
		return vd
	}
	if err != nil {
		vd.Error = shortErr(err)
		return vd
	}
	vd.Status = status
	// 401/403/429 mean the page exists behind a sign-in or a rate limit: not dead.
	vd.OK = status < 400 || status == 401 || status == 403 || status == 429
	return vd
}

func (v *Validator) request(ctx context.Context, client *egress.Client, method, u string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, v.opts.Timeout)
	defer cancel()
	return client.Status(ctx, method, u, http.Header{"User-Agent": {"box-validate (link check)"}})
}

func shortErr(err error) string {
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout") {
		return "timed out"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

func (v *Validator) loadCache() map[string]Verdict {
	m := map[string]Verdict{}
	data, err := os.ReadFile(filepath.Join(v.root, filepath.FromSlash(URLCache)))
	if err == nil {
		_ = json.Unmarshal(data, &m) // a broken cache is rebuilt
	}
	return m
}

func (v *Validator) saveCache(m map[string]Verdict) error {
	data, _ := json.MarshalIndent(m, "", "  ")
	p := filepath.Join(v.root, filepath.FromSlash(URLCache))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return errs.Wrap("validate.urls", errs.Other, err, "cannot make .box/")
	}
	if err := atomicfile.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		return errs.Wrap("validate.urls", errs.Other, err, "cannot write "+URLCache)
	}
	return nil
}
