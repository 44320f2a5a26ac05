package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/errs"
)

// The box key file (docs/VAULT.md, "The key file"): a version byte, a protection byte, then either the
// bare 32-byte key or the wraps that each seal it under one way to unlock.
const (
	keyFile    = "box.key"
	keyVersion = 1
	keySize    = 32

	bare    = 0
	wrapped = 1

	saltSize  = 16
	nonceSize = 12
	wrapSize  = 1 + saltSize + nonceSize + keySize + 16 // kind, salt, nonce, sealed key with its tag
	maxWraps  = 8
)

// UnlockKind is a way to open a locked vault.
type UnlockKind byte

const (
	PasskeyPRF     UnlockKind = 1 // the 32-byte output of the owner's passkey's WebAuthn PRF extension
	RecoveryPhrase UnlockKind = 2 // the 12 words shown once when the box is locked
)

// Unlocker is one way to unlock and its secret: the PRF output, or the recovery phrase's 12 words,
// lowercased and joined by single spaces (docs/VAULT.md).
type Unlocker struct {
	Kind   UnlockKind
	Secret []byte
}

func (u Unlocker) check() error {
	switch {
	case u.Kind == PasskeyPRF && len(u.Secret) >= 32:
	case u.Kind == RecoveryPhrase && len(strings.Fields(string(u.Secret))) == 12:
	default:
		return errs.E("vault.lock", errs.Invalid, "An unlock secret must be a passkey's 32-byte PRF output or a 12-word phrase.")
	}
	return nil
}

// loadKey reads the box key, making a bare one when there is none. Two processes making it at once
// both end with the one that reached the disk first: the new file is linked into place, never renamed
// over another.
func loadKey(path, boxID string, unlock *Unlocker) ([]byte, error) {
	const op = "vault.open"
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKey(path); err != nil {
			return nil, err
		}
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "The vault's key could not be read")
	}
	if err := private(op, path); err != nil {
		return nil, err
	}
	damaged := errs.E(op, errs.Invalid, "The vault's key file %s is damaged; the secrets sealed with it are lost: delete the folder and set them again.", path)
	if len(data) < 2 {
		return nil, damaged
	}
	if data[0] != keyVersion {
		return nil, errs.E(op, errs.Invalid, "The vault's key file %s has format %d, which this box does not know; upgrade box.", path, data[0])
	}
	switch data[1] {
	case bare:
		if len(data) != 2+keySize {
			return nil, damaged
		}
		return data[2:], nil
	case wrapped:
		if len(data) < 3 || data[2] == 0 || data[2] > maxWraps || len(data) != 3+int(data[2])*wrapSize {
			return nil, damaged
		}
		if unlock == nil {
			return nil, errs.E(op, errs.Locked, "The vault is locked: open the box with your passkey or your recovery phrase.")
		}
		for i := range int(data[2]) {
			rec := data[3+i*wrapSize : 3+(i+1)*wrapSize]
			if UnlockKind(rec[0]) != unlock.Kind {
				continue
			}
			if key, err := unwrap(rec, boxID, unlock.Secret); err == nil {
				return key, nil
			}
		}
		return nil, errs.E(op, errs.Unauthorized, "That passkey or recovery phrase does not open this box's vault.")
	}
	return nil, damaged
}

func createKey(path string) error {
	const op = "vault.open"
	key := make([]byte, keySize)
	rand.Read(key)
	f, err := os.CreateTemp(filepath.Dir(path), ".box.key.tmp-*")
	if err != nil {
		return errs.Wrap(op, errs.Other, err, "The vault's key could not be made")
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }() // gone after the rename; a leftover on failure holds no key in clear
	_, err = f.Write(append([]byte{keyVersion, bare}, key...))
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
			return nil // another process made it first; use theirs
		}
	}
	if err != nil {
		return errs.Wrap(op, errs.Other, err, "The vault's key could not be made")
	}
	return atomicfile.SyncDir(filepath.Dir(path))
}

// Lock replaces the bare box key on disk by wraps of it, one per unlocker (every passkey and the
// phrase: a later Lock replaces the whole set). From then on Open needs one of them.
func (v *Vault) Lock(unlockers ...Unlocker) error {
	const op = "vault.lock"
	if len(unlockers) == 0 || len(unlockers) > maxWraps {
		return errs.E(op, errs.Invalid, "Locking needs between 1 and %d ways to unlock.", maxWraps)
	}
	out := []byte{keyVersion, wrapped, byte(len(unlockers))}
	for _, u := range unlockers {
		if err := u.check(); err != nil {
			return err
		}
		out = append(out, wrap(v.key, v.boxID, u)...)
	}
	if err := atomicfile.WriteFile(filepath.Join(v.dir, keyFile), out, 0o600); err != nil {
		return errs.Wrap(op, errs.Other, err, "The vault could not be locked")
	}
	return nil
}

// kek derives the key that wraps the box key from one unlock secret. The secrets carry at least 128
// bits of their own (a PRF output; 12 words drawn by the box), so HKDF suffices: no password stretching.
func kek(secret, salt []byte, boxID string, kind UnlockKind) cipher.AEAD {
	k, err := hkdf.Key(sha256.New, secret, salt, "box vault key wrap v1 "+boxID+" "+string(rune('0'+kind)), keySize)
	if err != nil {
		panic("vault: hkdf: " + err.Error())
	}
	block, _ := aes.NewCipher(k)
	g, _ := cipher.NewGCM(block)
	return g
}

func wrapAAD(boxID string, kind UnlockKind) []byte {
	return []byte("box vault key v1\x00" + boxID + "\x00" + string([]byte{byte(kind)}))
}

func wrap(key []byte, boxID string, u Unlocker) []byte {
	salt, nonce := make([]byte, saltSize), make([]byte, nonceSize)
	rand.Read(salt)
	rand.Read(nonce)
	rec := append([]byte{byte(u.Kind)}, salt...)
	rec = append(rec, nonce...)
	return kek(u.Secret, salt, boxID, u.Kind).Seal(rec, nonce, key, wrapAAD(boxID, u.Kind))
}

func unwrap(rec []byte, boxID string, secret []byte) ([]byte, error) {
	kind := UnlockKind(rec[0])
	salt, nonce, sealed := rec[1:1+saltSize], rec[1+saltSize:1+saltSize+nonceSize], rec[1+saltSize+nonceSize:]
	key, err := kek(secret, salt, boxID, kind).Open(nil, nonce, sealed, wrapAAD(boxID, kind))
	if err != nil || len(key) != keySize {
		return nil, errors.New("vault: the wrap does not open")
	}
	return bytes.Clone(key), nil
}
