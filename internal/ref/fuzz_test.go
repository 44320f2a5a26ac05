package ref

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/layout"
)

// FuzzExtract: any input, no panic; every span lies in the file and names the target's bytes when
// Verbatim; the line matches the offset. Seeds: testdata/fuzz/FuzzExtract/.
func FuzzExtract(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, _ := Extract("/_content/a/doc.md", data)
		for _, r := range refs {
			checkSpan(t, data, r)
			if want := bytes.Count(data[:r.Start], []byte("\n")) + 1; r.Line != want {
				t.Fatalf("ref %+v: line %d, want %d", r, r.Line, want)
			}
		}
		for _, u := range ExternalURLs(data) {
			if u.Start < 0 || u.End < u.Start || u.End > len(data) {
				t.Fatalf("url %+v: span out of range", u)
			}
			if u.End > u.Start && string(data[u.Start:u.End]) != u.URL {
				t.Fatalf("url %+v: bytes %q", u, data[u.Start:u.End])
			}
		}
	})
}

// FuzzResolve: any (from, target), no panic; an error only for a from path that is not a box path;
// a ref that does not fail closed names a clean path inside an area that maps inside the box.
// Seeds: testdata/fuzz/FuzzResolve/.
func FuzzResolve(f *testing.F) {
	root := testBox(f)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		f.Fatal(err)
	}
	rv := NewResolver(root)
	f.Fuzz(func(t *testing.T, from, target string) {
		if w, err := rv.Wikilink(from, target); err == nil && w.Exists && !layout.InArea(w.Target) {
			t.Fatalf("wikilink [[%s]] → %q, outside the areas", target, w.Target)
		}
		res, err := rv.Resolve(from, target)
		if _, cerr := layout.Clean(from); (err != nil) != (cerr != nil) {
			t.Fatalf("Resolve(%q, %q) error %v, from path error %v", from, target, err, cerr)
		}
		if err != nil {
			return
		}
		if res.Closed() {
			if res.Target != "" || res.Exists {
				t.Fatalf("closed with a target: %+v", res)
			}
			return
		}
		if c, err := layout.Clean(res.Target); err != nil || c != res.Target || !layout.InArea(c) {
			t.Fatalf("target %q is not a clean in-area box path (%v)", res.Target, err)
		}
		host, err := layout.Host(root, res.Target)
		if err != nil {
			t.Fatalf("target %q does not map into the box: %v", res.Target, err)
		}
		if res.Exists {
			real, err := filepath.EvalSymlinks(host)
			if err != nil {
				t.Fatalf("exists but %v", err)
			}
			if real != realRoot && !strings.HasPrefix(real, realRoot+string(os.PathSeparator)) {
				t.Fatalf("target %q leads to %s, outside the box", res.Target, real)
			}
		}
	})
}
