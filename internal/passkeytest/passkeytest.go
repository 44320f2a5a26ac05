// Package passkeytest is a software passkey speaking the WebAuthn wire format, for tests of the web UI and the
// OAuth consent without a browser. Test code only; it imports nothing of the box.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// Key is one software passkey for an origin and relying party.
type Key struct {
	t      testing.TB
	origin string
	rpID   string
	key    *ecdsa.PrivateKey
	credID []byte
	user   []byte
	count  uint32
	UV     bool // set the user-verified flag
}

// New makes a passkey for origin (like http://localhost:1234) and rpID (localhost).
func New(t testing.TB, origin, rpID string) *Key {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	id := make([]byte, 16)
	rand.Read(id)
	return &Key{t: t, origin: origin, rpID: rpID, key: k, credID: id, UV: true}
}

// UseOrigin makes the passkey answer from another origin of the same relying party (another port of
// localhost), as a browser does after moving to it; the key and its sign count stay the same.
func (s *Key) UseOrigin(origin string) { s.origin = origin }

// At is the same passkey used from another origin of the same rpID (a second server of the same box),
// its signature counter going on from this one's.
func (s *Key) At(origin string) *Key {
	c := *s
	c.origin = origin
	return &c
}

var b64 = base64.RawURLEncoding

func (s *Key) flags(at bool) byte {
	f := byte(0x01) // user present
	if s.UV {
		f |= 0x04
	}
	if at {
		f |= 0x40
	}
	return f
}

func (s *Key) authData(at bool) []byte {
	rp := sha256.Sum256([]byte(s.rpID))
	out := append([]byte{}, rp[:]...)
	out = append(out, s.flags(at))
	s.count++
	out = binary.BigEndian.AppendUint32(out, s.count)
	if at {
		out = append(out, make([]byte, 16)...) // AAGUID
		out = binary.BigEndian.AppendUint16(out, uint16(len(s.credID)))
		out = append(out, s.credID...)
		pub, _ := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: pad32(s.key.X.Bytes()), -3: pad32(s.key.Y.Bytes())})
		out = append(out, pub...)
	}
	return out
}

func pad32(b []byte) []byte {
	return append(make([]byte, 32-len(b)), b...)
}

func clientData(typ, challenge, origin string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	return b
}

// Create answers navigator.credentials.create for the options the box sent.
func (s *Key) Create(options json.RawMessage) json.RawMessage {
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			User      struct {
				ID string `json:"id"`
			} `json:"user"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &o); err != nil {
		s.t.Fatal(err)
	}
	s.user, _ = b64.DecodeString(o.PublicKey.User.ID)
	att, _ := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": s.authData(true)})
	cd := clientData("webauthn.create", o.PublicKey.Challenge, s.origin)
	out, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(s.credID), "rawId": b64.EncodeToString(s.credID), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "attestationObject": b64.EncodeToString(att)}})
	return out
}

// Get answers navigator.credentials.get.
func (s *Key) Get(options json.RawMessage) json.RawMessage {
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &o); err != nil {
		s.t.Fatal(err)
	}
	ad := s.authData(false)
	cd := clientData("webauthn.get", o.PublicKey.Challenge, s.origin)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, s.key, digest[:])
	if err != nil {
		s.t.Fatal(err)
	}
	out, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(s.credID), "rawId": b64.EncodeToString(s.credID), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(ad),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(s.user)}})
	return out
}
