package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/oauth"
	"github.com/boxmem/box/internal/state"
)

func (f *fx) revoke(client, token, hint string) (int, map[string]any) {
	f.t.Helper()
	v := url.Values{"client_id": {client}, "token": {token}}
	if hint != "" {
		v.Set("token_type_hint", hint)
	}
	req, _ := http.NewRequest("POST", f.base+oauth.RevokePath, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return f.do(req)
}

// RFC 7009 for public clients: an access token stops alone, a refresh token ends its whole family, an
// unknown token is no error, another client's token is refused and keeps working.
func TestRevocation(t *testing.T) {
	f := newFx(t)
	f.owner()
	asm, err := oauthex.GetAuthServerMeta(context.Background(), f.base+"/.well-known/oauth-authorization-server", f.base, nil)
	if err != nil || asm.RevocationEndpoint != f.base+oauth.RevokePath {
		t.Fatalf("metadata: %v %+v", err, asm)
	}
	read := keys.Caps{Memory: true}
	fl := f.newFlow(loop)
	tk := f.tokens(fl, "memory.read", read)
	at, rt := tk["access_token"].(string), tk["refresh_token"].(string)

	other := f.newFlow(loop)
	if st, out := f.revoke(other.client, at, ""); st != 400 || out["error"] != "unauthorized_client" {
		t.Fatalf("another client's token: %d %v", st, out)
	}
	if st, _ := f.mcpStatus(at); st != 200 {
		t.Fatalf("after another client's attempt the token must still work: %d", st)
	}
	if st, out := f.revoke("c_nobody", at, ""); st != 401 || out["error"] != "invalid_client" {
		t.Fatalf("unknown client: %d %v", st, out)
	}
	if st, out := f.revoke(fl.client, "mbo_at_not-a-token", ""); st != 200 {
		t.Fatalf("unknown token: %d %v", st, out)
	}
	if st, out := f.revoke(fl.client, "", ""); st != 400 || out["error"] != "invalid_request" {
		t.Fatalf("no token: %d %v", st, out)
	}

	// The access token alone: it stops, the refresh token still rotates.
	if st, out := f.revoke(fl.client, at, "access_token"); st != 200 {
		t.Fatalf("revoke access: %d %v", st, out)
	}
	if st, _ := f.mcpStatus(at); st != 401 {
		t.Fatalf("revoked access token: %d", st)
	}
	st, next := f.refresh(fl, rt, "")
	if st != 200 {
		t.Fatalf("refresh after revoking the access token: %d %v", st, next)
	}
	if st, _ := f.mcpStatus(next["access_token"].(string)); st != 200 {
		t.Fatalf("fresh access token: %d", st)
	}

	// The refresh token ends the family: its access tokens and the refresh token itself.
	if st, out := f.revoke(fl.client, next["refresh_token"].(string), "refresh_token"); st != 200 {
		t.Fatalf("revoke refresh: %d %v", st, out)
	}
	if st, _ := f.mcpStatus(next["access_token"].(string)); st != 401 {
		t.Fatalf("access token of a revoked family: %d", st)
	}
	if st, out := f.refresh(fl, next["refresh_token"].(string), ""); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("revoked refresh token: %d %v", st, out)
	}
	list, _ := f.grants.List(context.Background())
	if len(list) != 1 || list[0].Revoked.IsZero() {
		t.Fatalf("the connection must show as disconnected: %+v", list)
	}
	// Revoking again is still 200 (RFC 7009 §2.2).
	if st, out := f.revoke(fl.client, next["refresh_token"].(string), ""); st != 200 {
		t.Fatalf("revoke twice: %d %v", st, out)
	}
}

// TestCachedAccessTokenEndsAtOnce: /mcp keeps what it read of an access token while state.db is unchanged,
// yet a disconnect by another process (the owner's CLI, here a second opener of state.db), a disconnect
// here and the token's expiry each refuse the very next call.
func TestCachedAccessTokenEndsAtOnce(t *testing.T) {
	f := newFx(t)
	f.owner()
	ctx := context.Background()
	other, err := state.Open(f.root, state.Options{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	elsewhere := grants.NewStore(other)
	use := func(at string, want int) {
		t.Helper()
		for range 3 { // read once, then kept
			if st, _ := f.mcpStatus(at); st != want {
				t.Fatalf("status %d, want %d", st, want)
			}
		}
	}
	id := func(at string) string {
		g, err := f.grants.Verify(ctx, at, f.base+"/mcp")
		if err != nil {
			t.Fatal(err)
		}
		return g.ID
	}

	at := f.tokens(f.newFlow(loop), "memory.read", keys.Caps{})["access_token"].(string)
	use(at, 200)
	if _, _, err := elsewhere.Revoke(ctx, id(at)); err != nil {
		t.Fatal(err)
	}
	use(at, 401)

	at = f.tokens(f.newFlow(loop), "memory.read", keys.Caps{})["access_token"].(string)
	use(at, 200)
	if _, _, err := f.grants.Revoke(ctx, id(at)); err != nil {
		t.Fatal(err)
	}
	use(at, 401)

	at = f.tokens(f.newFlow(loop), "memory.read", keys.Caps{})["access_token"].(string)
	use(at, 200)
	f.clock.Advance(grants.AccessLife + time.Second)
	use(at, 401)
}
