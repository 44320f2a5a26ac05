// Package vault owns the box's secrets (provider keys, later connector credentials and mail passwords):
// sealed with AES-256-GCM under a box key, both kept outside the box tree in a per-user folder, and the
// key-wrapping layer a locked box uses. It must not touch the box tree, git, the diary or state.db, and
// nothing it returns prints a secret (docs/VAULT.md).
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
)

// Options say where a box's vault lives.
type Options struct {
	// BoxID is the id in the box's .box/box.json; every sealed entry is bound to it.
	BoxID string
	// Dir is the vault folder; "" means DefaultDir(BoxID).
	Dir string
	// BoxRoot is the box's folder (required): a vault, or any part of one, inside it is refused.
	BoxRoot string
	// Unlock opens a locked vault (a box key wrapped by Lock); nil for an unlocked one.
	Unlock *Unlocker
}

// Vault is one box's open vault.
type Vault struct {
	dir   string
	boxID string
	key   []byte
}

var boxIDPattern = lazyregexp.New(`^[A-Za-z0-9_-]{1,64}$`)

// DefaultDir is the vault folder of a box for this OS user: $XDG_DATA_HOME/box/<id>, else
// ~/.local/share/box/<id> on Linux and the BSDs, else the OS's per-user config folder (macOS:
// ~/Library/Application Support, Windows: %AppData%) + box/<id>.
func DefaultDir(boxID string) (string, error) {
	const op = "vault.dir"
	if !boxIDPattern.MatchString(boxID) {
		return "", errs.E(op, errs.Invalid, "The box id %q cannot name a vault folder; check .box/box.json.", boxID)
	}
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "box", boxID), nil
	}
	if runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, ".local", "share", "box", boxID), nil
		}
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", errs.Wrap(op, errs.Other, err, "There is no per-user folder to keep the vault in; set XDG_DATA_HOME")
	}
	return filepath.Join(base, "box", boxID), nil
}

// Open opens the box's vault, making its folder and box key on first use. A locked vault needs
// opts.Unlock; without it Open answers errs.Locked.
func Open(opts Options) (*Vault, error) {
	const op = "vault.open"
	if !boxIDPattern.MatchString(opts.BoxID) {
		return nil, errs.E(op, errs.Invalid, "The box id %q cannot name a vault; check .box/box.json.", opts.BoxID)
	}
	dir := opts.Dir
	if dir == "" {
		d, err := DefaultDir(opts.BoxID)
		if err != nil {
			return nil, err
		}
		dir = d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, errs.Wrap(op, errs.Invalid, err, "")
	}
	if opts.BoxRoot == "" {
		return nil, errs.E(op, errs.Invalid, "The vault needs the box's folder, to make sure it lives outside it.")
	}
	outside := func(p string) error {
		if inside(linkTarget(p), opts.BoxRoot) {
			return errs.E(op, errs.Refused, "The vault's %s is inside the box (or links into it); the vault must live outside the box (docs/VAULT.md).", p)
		}
		return nil
	}
	if err := outside(dir); err != nil {
		return nil, err
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	// secrets/ and box.key are checked where they resolve: a link there into the box would put
	// what the vault seals, or the key itself, in the tree.
	secrets, keyPath := filepath.Join(dir, "secrets"), filepath.Join(dir, keyFile)
	if err := outside(secrets); err != nil {
		return nil, err
	}
	if err := privateDir(secrets); err != nil {
		return nil, err
	}
	if err := outside(keyPath); err != nil {
		return nil, err
	}
	key, err := loadKey(keyPath, opts.BoxID, opts.Unlock)
	if err != nil {
		return nil, err
	}
	return &Vault{dir: dir, boxID: opts.BoxID, key: key}, nil
}

// Dir is the vault's folder.
func (v *Vault) Dir() string { return v.dir }

// String, GoString and Format show the folder and never the box key.
func (v *Vault) String() string                { return "vault(" + v.dir + ")" }
func (v *Vault) GoString() string              { return v.String() }
func (v *Vault) Format(f fmt.State, verb rune) { _, _ = fmt.Fprint(f, v.String()) }
func (v *Vault) LogValue() slog.Value          { return slog.StringValue(v.String()) }

// privateDir makes dir with mode 0700, or checks an existing one is not open to other users.
func privateDir(dir string) error {
	const op = "vault.open"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errs.Wrap(op, errs.Other, err, "The vault folder "+dir+" could not be made")
	}
	return private(op, dir)
}

// private refuses a file or folder that other users can read or write, or that another user owns, as
// ssh does with its keys.
func private(op, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return errs.Wrap(op, errs.Other, err, "The vault's "+path+" could not be read")
	}
	if uid, mine := ownedByMe(st); !mine {
		return errs.E(op, errs.Refused, "The vault's %s belongs to another user (uid %d); the vault must belong to the user the box runs as: chown it, or remove it and set the secrets again.", path, uid)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		want := "600"
		if st.IsDir() {
			want = "700"
		}
		return errs.E(op, errs.Refused, "The vault's %s is open to other users (mode %04o); run chmod %s on it.", path, st.Mode().Perm(), want)
	}
	return nil
}

// linkTarget follows p while it is a symlink, even one whose target does not exist yet (a key file
// linked to where the box would hold it), and returns where it ends.
func linkTarget(p string) string {
	for range 40 {
		to, err := os.Readlink(p)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(p), to)
		}
		p = to
	}
	return p
}

// inside reports whether dir is root or under it, following symlinks of the parts that exist.
func inside(dir, root string) bool {
	real := func(p string) string {
		p, _ = filepath.Abs(p)
		rest := ""
		for {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Join(r, rest)
			}
			parent := filepath.Dir(p)
			if parent == p {
				return filepath.Join(p, rest)
			}
			rest = filepath.Join(filepath.Base(p), rest)
			p = parent
		}
	}
	rel, err := filepath.Rel(real(root), real(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Secret is a value from the vault. Printing, logging or encoding it as JSON shows only its last four
// characters; Reveal is the one way to the value, for the call that needs it. The value sits behind a
// pointer: a Secret kept in a field that is not exported (which fmt prints without calling its
// methods) shows an address, never the value.
type Secret struct{ value *string }

// Reveal returns the secret itself.
func (s Secret) Reveal() string {
	if s.value == nil {
		return ""
	}
	return *s.value
}

// Last4 is what the owner sees: "…abcd", or "…" when the secret is too short to show any of it.
func (s Secret) Last4() string { return last4(s.Reveal()) }

func (s Secret) String() string                { return s.Last4() }
func (s Secret) GoString() string              { return "vault.Secret(" + s.Last4() + ")" }
func (s Secret) LogValue() slog.Value          { return slog.StringValue(s.Last4()) }
func (s Secret) MarshalJSON() ([]byte, error)  { return json.Marshal(s.Last4()) }
func (s Secret) MarshalText() ([]byte, error)  { return []byte(s.Last4()), nil }
func (s Secret) Format(f fmt.State, verb rune) { _, _ = fmt.Fprint(f, s.Last4()) }

func last4(v string) string {
	if len(v) < 12 {
		return "…"
	}
	return "…" + v[len(v)-4:]
}

// Entry is one name in the vault as a listing shows it.
type Entry struct {
	Name   string `json:"name"`
	Last4  string `json:"last4"`
	Broken bool   `json:"broken,omitempty"` // the sealed file could not be opened: set it again
}

var namePattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`)

// maxSecret bounds one secret; keys and passwords are far smaller.
const maxSecret = 64 << 10

func checkName(op, name string) error {
	if !namePattern.MatchString(name) {
		return errs.E(op, errs.Invalid, "%q is not a vault name: use up to 128 letters, digits and . _ : / -, starting with a letter or digit.", name)
	}
	return nil
}

// sealedFile is one entry on disk: the name in clear (names are not secret), the nonce and the sealed
// value, whose additional data binds it to its name and its box (docs/VAULT.md).
type sealedFile struct {
	Version int    `json:"v"`
	Name    string `json:"name"`
	Nonce   []byte `json:"nonce"`
	Sealed  []byte `json:"sealed"`
}

const entryVersion = 1

func (v *Vault) path(name string) string {
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(v.dir, "secrets", hex.EncodeToString(sum[:])+".sealed")
}

func entryAAD(boxID, name string) []byte {
	return []byte("box vault entry v1\x00" + boxID + "\x00" + name)
}

func (v *Vault) gcm() cipher.AEAD {
	block, err := aes.NewCipher(v.key)
	if err != nil {
		panic("vault: the box key is not 32 bytes") // loadKey never returns another length
	}
	g, err := cipher.NewGCM(block)
	if err != nil {
		panic("vault: " + err.Error())
	}
	return g
}

// Put seals secret under name, replacing what was there. Concurrent writers are safe: each entry is
// its own file, replaced atomically; the last one wins.
func (v *Vault) Put(name, secret string) error {
	const op = "vault.put"
	if err := checkName(op, name); err != nil {
		return err
	}
	if secret == "" || len(secret) > maxSecret {
		return errs.E(op, errs.Invalid, "The secret for %s must be between 1 byte and 64 KiB.", name)
	}
	g := v.gcm()
	nonce := make([]byte, g.NonceSize())
	rand.Read(nonce)
	f := sealedFile{Version: entryVersion, Name: name, Nonce: nonce, Sealed: g.Seal(nil, nonce, []byte(secret), entryAAD(v.boxID, name))}
	data, err := json.Marshal(f)
	if err != nil {
		return errs.Wrap(op, errs.Other, err, "the sealed entry could not be encoded")
	}
	if err := atomicfile.WriteFile(v.path(name), data, 0o600); err != nil {
		return errs.Wrap(op, errs.Other, err, "The vault could not save "+name)
	}
	return nil
}

// Get opens the secret under name: NotFound when there is none, Invalid when its file was changed,
// damaged or belongs to another box.
func (v *Vault) Get(name string) (Secret, error) {
	const op = "vault.get"
	if err := checkName(op, name); err != nil {
		return Secret{}, err
	}
	value, err := v.open(op, v.path(name), name)
	if err != nil {
		return Secret{}, err
	}
	return Secret{value: &value}, nil
}

func (v *Vault) open(op, path, name string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errs.E(op, errs.NotFound, "Nothing named %s is in the vault.", name)
	}
	if err != nil {
		return "", errs.Wrap(op, errs.Other, err, "The vault could not read "+name)
	}
	if err := private(op, path); err != nil {
		return "", err
	}
	broken := errs.E(op, errs.Invalid, "The vault's entry %s was changed, damaged or belongs to another box; set it again.", name)
	var f sealedFile
	if json.Unmarshal(data, &f) != nil || f.Version != entryVersion || f.Name != name || len(f.Nonce) != v.gcm().NonceSize() {
		return "", broken
	}
	plain, err := v.gcm().Open(nil, f.Nonce, f.Sealed, entryAAD(v.boxID, name))
	if err != nil {
		return "", broken
	}
	return string(plain), nil
}

// Delete removes the secret under name; a name that is not there is already deleted.
func (v *Vault) Delete(name string) error {
	const op = "vault.delete"
	if err := checkName(op, name); err != nil {
		return err
	}
	err := os.Remove(v.path(name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errs.Wrap(op, errs.Other, err, "The vault could not delete "+name)
	}
	return atomicfile.SyncDir(filepath.Join(v.dir, "secrets"))
}

// List returns every name with the last four characters of its secret, sorted by name. An entry that
// cannot be opened is listed as Broken.
func (v *Vault) List() ([]Entry, error) {
	const op = "vault.list"
	dir := filepath.Join(v.dir, "secrets")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "The vault could not be listed")
	}
	var out []Entry
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".sealed") || strings.HasPrefix(e.Name(), ".") {
			continue // the temp files of a write in progress
		}
		path := filepath.Join(dir, e.Name())
		var f sealedFile
		data, err := os.ReadFile(path)
		if err != nil {
			continue // removed meanwhile
		}
		if json.Unmarshal(data, &f) != nil || !namePattern.MatchString(f.Name) || v.path(f.Name) != path {
			out = append(out, Entry{Name: e.Name(), Broken: true})
			continue
		}
		value, err := v.open(op, path, f.Name)
		out = append(out, Entry{Name: f.Name, Last4: last4(value), Broken: err != nil})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Bind is the value to seal for a secret that may be sent to one address only (a backup's token, the
// brain's key): the address, a newline, then the secret, so a listing's last four are still the
// secret's. The reader of the entry compares the address with where it would send the secret and sends
// nothing elsewhere (docs/SECURITY.md, "The vault and the brain").
func Bind(addr, secret string) string { return addr + "\n" + secret }

// Unbind reads a value made by Bind; bound is false for a secret sealed without its address.
func Unbind(value string) (addr, secret string, bound bool) {
	addr, secret, bound = strings.Cut(value, "\n")
	if !bound {
		return "", value, false
	}
	return addr, secret, true
}
