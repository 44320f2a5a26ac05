package oauth

import (
	"strconv"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/grants"
)

// Seeds are in testdata/fuzz/FuzzCacheLife; run with go test -fuzz=^FuzzCacheLife$ ./internal/oauth.

// A Cache-Control header gives a life between zero and grants.DocumentMaxLife; no-store and no-cache give
// zero, and a lone max-age=N within the bound gives N seconds.
func FuzzCacheLife(f *testing.F) {
	f.Fuzz(func(t *testing.T, header string) {
		life := cacheLife(header)
		if life < 0 || life > grants.DocumentMaxLife {
			t.Fatalf("cacheLife(%q) = %v", header, life)
		}
		lower := strings.ToLower(header)
		if (strings.Contains(lower, "no-store") || strings.Contains(lower, "no-cache")) && !strings.Contains(lower, "=") && life != 0 {
			t.Fatalf("cacheLife(%q) = %v, want 0", header, life)
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(header, "max-age=")); err == nil && n >= 0 && n <= 86400 && header == "max-age="+strconv.Itoa(n) {
			if int(life.Seconds()) != n {
				t.Fatalf("cacheLife(%q) = %v", header, life)
			}
		}
	})
}
