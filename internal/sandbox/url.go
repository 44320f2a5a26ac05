package sandbox

import (
	"net/url"

	"github.com/boxmem/box/internal/connector"
)

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return connector.NormalizeHost(u.Hostname())
}
