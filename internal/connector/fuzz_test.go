package connector

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/egress"
)

// Seeds are in testdata/fuzz/<Name>/; run one with go test -fuzz=^FuzzName$ ./internal/connector.

// Validate never panics; an accepted bundle keeps every promise of the manifest rules, and a refused
// one says where and why.
func FuzzValidate(f *testing.F) {
	f.Fuzz(func(t *testing.T, manifest, files []byte) {
		b, rep := Validate(manifest, files, Options{BoxHosts: []string{"box.example.org"}})
		if !rep.OK {
			if b != nil || len(rep.Problems) == 0 {
				t.Fatalf("refused without a problem, or with a bundle: %+v", rep)
			}
			for _, p := range rep.Problems {
				if p.Where == "" || p.Why == "" {
					t.Fatalf("a problem without its place or reason: %+v", p)
				}
			}
			return
		}
		m := b.Manifest
		if !idRE.MatchString(m.ID) || len(m.Egress) > MaxHosts || len(m.Tools) == 0 || b.Script == "" {
			t.Fatalf("accepted a bad manifest: %+v", m)
		}
		for _, h := range m.Egress {
			if h == AnyWebsite {
				continue
			}
			if a, err := netip.ParseAddr(h); err == nil && egress.Blocked(a) != "" {
				t.Fatalf("accepted the blocked address %s", h)
			}
			if BlockedName(strings.TrimPrefix(h, "*.")) != "" || strings.Contains(h, "box.example.org") {
				t.Fatalf("accepted the blocked name %s", h)
			}
		}
		for _, c := range m.Credentials {
			if !b.Egress().Allows(c.Host) {
				t.Fatalf("a key goes to %s, outside egress", c.Host)
			}
		}
		total := 0
		for _, f := range b.Files {
			total += len(f)
		}
		if total > MaxBundleBytes {
			t.Fatalf("accepted %d bytes of files", total)
		}
	})
}

// parseTree reads exactly what encoding/json reads (minus repeated keys), and writes it back equal.
func FuzzParseTree(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseTree(data)
		v, stdErr := decodeNumbers(data)
		if err != nil {
			if stdErr == nil && !strings.Contains(err.Error(), "twice") && !strings.Contains(err.Error(), "deeper") {
				t.Fatalf("parseTree refused what encoding/json reads: %v", err)
			}
			return
		}
		if stdErr != nil {
			t.Fatalf("parseTree read what encoding/json refuses (%v)", stdErr)
		}
		out, _ := n.MarshalJSON()
		w, err := decodeNumbers(out)
		if err != nil {
			t.Fatalf("written back as invalid JSON %s: %v", out, err)
		}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(w)
		if string(a) != string(b) {
			t.Fatalf("round trip changed the value: %s → %s", a, b)
		}
	})
}

// An accepted egress entry is a normalised name, wildcard or public address, never a blocked one.
func FuzzEgressEntry(f *testing.F) {
	f.Fuzz(func(t *testing.T, entry string) {
		h, why := parseEgressEntry(entry, []string{"box.example.org"})
		if why != "" {
			if h != "" {
				t.Fatalf("refused %q but returned %q", entry, h)
			}
			return
		}
		if h != strings.ToLower(h) || strings.HasSuffix(h, ".") || strings.ContainsAny(h, "/:@ ") && !strings.Contains(h, ":") {
			t.Fatalf("accepted %q as %q", entry, h)
		}
		if a, err := netip.ParseAddr(h); err == nil {
			if egress.Blocked(a) != "" {
				t.Fatalf("accepted the blocked address %q", entry)
			}
			return
		}
		name := strings.TrimPrefix(h, "*.")
		if checkName(name) != "" || BlockedName(name) != "" || strings.Contains(name, "*") {
			t.Fatalf("accepted %q as %q", entry, h)
		}
	})
}

// decodeNumbers is encoding/json's reading with numbers kept as their digits, as parseTree keeps them.
func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the value")
	}
	return v, nil
}
