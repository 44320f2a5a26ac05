package connector

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/egress"
)

// AnyWebsite is the egress entry that lets a connector reach any public website (docs/CONNECTORS.md).
const AnyWebsite = "*"

// Egress is a connector's allow-list, normalised: exact names (and public addresses), "*.example.com"
// suffixes, or any website.
type Egress struct {
	Any   bool
	Exact []string
	Wild  []string // the suffix after "*", with its dot: ".example.com"
}

// Allows reports whether host (already normalised by NormalizeHost) is on the list. A wildcard covers
// every name below its suffix, never the suffix itself; "*" covers every host. The address and name
// rules (egress.Blocked, BlockedName) still apply to an allowed host.
func (e Egress) Allows(host string) bool {
	if e.Any || slices.Contains(e.Exact, host) {
		return true
	}
	for _, w := range e.Wild {
		if strings.HasSuffix(host, w) && len(host) > len(w) {
			return true
		}
	}
	return false
}

// Entries is the list as the manifest and the envelope write it, sorted.
func (e Egress) Entries() []string {
	if e.Any {
		return []string{AnyWebsite}
	}
	out := slices.Clone(e.Exact)
	for _, w := range e.Wild {
		out = append(out, "*"+w)
	}
	slices.Sort(out)
	return out
}

// NormalizeHost lowercases a host name and drops one trailing dot, as URLs and DNS treat them alike.
// An IPv6 literal loses its brackets.
func NormalizeHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// parseEgressEntry checks one egress entry and returns it normalised, or why it is refused. boxHosts
// are the box's own names, which no entry may name or cover.
func parseEgressEntry(entry string, boxHosts []string) (string, string) {
	if entry == "" {
		return "", "an empty host; give a name like api.example.com"
	}
	if i := strings.Index(entry, "://"); i >= 0 {
		host, _, _ := strings.Cut(entry[i+3:], "/")
		return "", fmt.Sprintf("%q is an address, not a host; give the host only: %q", entry, host)
	}
	if strings.ContainsAny(entry, "/?#@ \t") {
		return "", fmt.Sprintf("%q is not a host name; give the host only, like api.example.com", entry)
	}
	h := NormalizeHost(entry)
	if a, err := netip.ParseAddr(h); err == nil {
		if why := egress.Blocked(a); why != "" {
			return "", fmt.Sprintf("%q is %s; a connector reaches public websites only", entry, why)
		}
		return a.String(), ""
	}
	if strings.Contains(h, ":") {
		return "", fmt.Sprintf("%q names a port; give the host without one (a connector reaches the standard ports 443 and 80)", entry)
	}
	name, wild := h, false
	if strings.HasPrefix(h, "*.") {
		name, wild = h[2:], true
	}
	if wild && !strings.Contains(name, ".") {
		return "", fmt.Sprintf("%q covers a whole top-level domain; name the site: *.example.com", entry)
	}
	if why := checkName(name); why != "" {
		return "", fmt.Sprintf("%q %s", entry, why)
	}
	if why := BlockedName(name); why != "" {
		return "", fmt.Sprintf("%q is %s; a connector reaches public websites only", entry, why)
	}
	for _, b := range boxHosts {
		b = NormalizeHost(b)
		if b == name || (wild && strings.HasSuffix(b, "."+name)) {
			return "", fmt.Sprintf("%q is the box itself; a connector never reaches its own box", entry)
		}
	}
	return h, ""
}

// checkName checks the shape of a DNS name: ASCII labels of letters, digits and hyphens, at least two
// of them, the last not all digits (so "127.1" is not taken for a name).
func checkName(name string) string {
	if len(name) > 253 {
		return "is longer than a DNS name can be"
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return "is not a full domain name; give one like api.example.com"
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "has an empty or over-long part between dots"
		}
		for _, r := range l {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			case r == '*':
				return "has a * that is not at the start; wildcards are written *.example.com"
			case r > 127:
				return "has letters outside ASCII; write an international name in its xn-- form"
			default:
				return fmt.Sprintf("has %q, which no host name has", r)
			}
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "has a part that starts or ends with a hyphen"
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "ends in a number; give a domain name or a public address"
	}
	return ""
}

// Names that never point at a public website: the machine itself, local networks and the cloud
// metadata services (docs/CONNECTORS.md, "Egress").
var (
	blockedNames    = []string{"localhost", "metadata.google.internal", "metadata.goog", "instance-data"}
	blockedSuffixes = []string{"localhost", "local", "localdomain", "internal", "intranet", "lan", "home", "corp", "private", "home.arpa", "in-addr.arpa", "ip6.arpa", "test", "invalid"}
)

// BlockedName returns why a host name is never reachable by a connector ("" when it may be): localhost
// and names under local-only or reserved suffixes, and the cloud metadata names.
func BlockedName(host string) string {
	host = NormalizeHost(host)
	if slices.Contains(blockedNames, host) {
		if host == "localhost" {
			return "the machine itself"
		}
		return "a cloud metadata service"
	}
	for _, s := range blockedSuffixes {
		if host == s || strings.HasSuffix(host, "."+s) {
			if s == "localhost" {
				return "the machine itself"
			}
			return fmt.Sprintf("a local or reserved name (.%s)", s)
		}
	}
	return ""
}
