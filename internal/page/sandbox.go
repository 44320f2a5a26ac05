package page

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/boxmem/box/internal/errs"
)

// IframeSandbox is the sandbox attribute of the iframe that shows a page: scripts and forms, and an
// opaque origin (no allow-same-origin), so the page has no cookies and no storage of the box's.
const IframeSandbox = "allow-scripts allow-forms"

// permissions are the features a page is denied, every one of them (docs/PAGES.md, "The walls").
var permissions = []string{"accelerometer", "ambient-light-sensor", "attribution-reporting", "autoplay",
	"bluetooth", "browsing-topics", "camera", "clipboard-read", "clipboard-write", "compute-pressure",
	"display-capture", "encrypted-media", "fullscreen", "gamepad", "geolocation", "gyroscope", "hid",
	"identity-credentials-get", "idle-detection", "local-fonts", "magnetometer", "microphone", "midi",
	"otp-credentials", "payment", "picture-in-picture", "publickey-credentials-create",
	"publickey-credentials-get", "screen-wake-lock", "serial", "storage-access", "usb", "web-share",
	"window-management", "xr-spatial-tracking"}

// PermissionsPolicy is the Permissions-Policy header of a page: every powerful feature off.
func PermissionsPolicy() string {
	parts := make([]string, len(permissions))
	for i, p := range permissions {
		parts[i] = p + "=()"
	}
	return strings.Join(parts, ", ")
}

// CSP is the Content-Security-Policy header of a page served for the box at origin (from Origin).
func CSP(origin string) string {
	return "sandbox " + IframeSandbox + "; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
		"img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'self' " + origin +
		"; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
}

// Origin checks the box's own address and returns it as an origin (scheme://host[:port], lower case):
// it goes into a header and into the bridge, so anything else in it is refused.
func Origin(address string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(address, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" ||
		strings.ContainsAny(address, " \t\r\n;,'\"\\*") {
		return "", errs.E("page.origin", errs.Invalid, "The box's address %q is not an http(s) origin like https://box.example.com; set the public address the box is served at.", Clip(address))
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// Headers are every header a page's response carries, for the box at address: the CSP and
// Permissions-Policy of docs/PAGES.md, the content type, and no caching, sniffing or referrer.
func Headers(address string) (http.Header, error) {
	origin, err := Origin(address)
	if err != nil {
		return nil, err
	}
	return http.Header{
		"Content-Type":            {"text/html; charset=utf-8"},
		"Content-Security-Policy": {CSP(origin)},
		"Permissions-Policy":      {PermissionsPolicy()},
		"X-Content-Type-Options":  {"nosniff"},
		"Referrer-Policy":         {"no-referrer"},
		"Cache-Control":           {"no-store"},
	}, nil
}
