package vault

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzKeyFile: any key file opens to a 32-byte key or fails with a sentence, never a panic.
func FuzzKeyFile(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), keyFile)
		os.WriteFile(path, data, 0o600)
		u := &Unlocker{Kind: PasskeyPRF, Secret: make([]byte, 32)}
		for _, unlock := range []*Unlocker{nil, u} {
			key, err := loadKey(path, "box", unlock)
			if err == nil && len(key) != keySize {
				t.Errorf("a %d-byte key", len(key))
			}
		}
	})
}

// FuzzEntry: any sealed entry file gives its secret or an error, never a panic; a file not sealed by
// this vault never opens.
func FuzzEntry(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "vault")
		v, err := Open(Options{BoxID: "box", Dir: dir, BoxRoot: filepath.Join(os.TempDir(), "box-vault-fuzz-box")})
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(v.path("brain/openai"), data, 0o600)
		if s, err := v.Get("brain/openai"); err == nil {
			t.Errorf("a fuzzed entry opened to %s", s.Last4())
		}
		if _, err := v.List(); err != nil {
			t.Errorf("List: %v", err)
		}
	})
}
