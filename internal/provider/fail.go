package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Reason is what went wrong with a provider call, for the layer that decides what to do next
// (say it, step down, fall back). The sentence for the owner is the error's text.
type Reason string

const (
	KeyRefused   Reason = "key_refused"   // 401, 403
	NoCredit     Reason = "no_credit"     // 402, OpenAI's insufficient_quota, Anthropic's credit balance
	RateLimited  Reason = "rate_limited"  // 429
	Down         Reason = "down"          // 5xx, Anthropic's 529, connection refused, unknown host
	Timeout      Reason = "timeout"       // no headers, or silence mid-stream, past the limit
	BadRequest   Reason = "bad_request"   // 400, 404, 413, 422: an unknown model, too long a prompt
	BrokenStream Reason = "broken_stream" // the stream broke off or said something this package cannot read
	SignedOut    Reason = "signed_out"    // a subscription CLI is not signed in, or its sign-in expired
	NotInstalled Reason = "not_installed" // a subscription CLI is not installed, or cannot start
)

// Failure is a provider call that failed. Its Error is one plain sentence that never contains the key.
type Failure struct {
	Reason     Reason
	Status     int           // the HTTP status, 0 when none came
	RetryAfter time.Duration // from Retry-After when the provider sent one
	Detail     string        // the provider's own message, key removed, for the diary
	sentence   string
}

func (f *Failure) Error() string { return f.sentence }

// FailureOf returns the Failure in err's chain, or nil.
func FailureOf(err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return nil
}

var kindOf = map[Reason]errs.Kind{
	KeyRefused: errs.Unauthorized, NoCredit: errs.Refused, RateLimited: errs.Limited, Down: errs.Busy,
	Timeout: errs.Busy, BadRequest: errs.Invalid, BrokenStream: errs.Other, SignedOut: errs.Unauthorized,
	NotInstalled: errs.NotFound,
}

func fail(op string, f *Failure) error { return errs.Wrap(op, kindOf[f.Reason], f, "") }

// statusFailure turns a non-2xx answer into a Failure. code and msg are the provider's own error code
// and message from the body (either may be empty).
func statusFailure(name, key string, resp *http.Response, code, msg string, now time.Time) *Failure {
	f := &Failure{Status: resp.StatusCode, Detail: scrub(msg, key)}
	st := resp.StatusCode
	credit := code == "insufficient_quota" || code == "billing_error" ||
		strings.Contains(strings.ToLower(msg), "credit balance")
	switch {
	case st == http.StatusPaymentRequired || credit:
		f.Reason = NoCredit
		f.sentence = name + " says the account has no credit left: add credit there, or pick another brain in Settings → Brain."
	case st == http.StatusUnauthorized:
		f.Reason = KeyRefused
		f.sentence = name + " refused the key (HTTP 401): check it, or set a new one in Settings → Brain."
	case st == http.StatusForbidden:
		f.Reason = KeyRefused
		f.sentence = name + " refused the key for this request (HTTP 403): it may not have access to this model; check the key's permissions there."
	case st == http.StatusTooManyRequests:
		f.Reason = RateLimited
		f.RetryAfter = retryAfter(resp.Header, now)
		f.sentence = name + " is limiting how fast this key may ask; try again " + wait(f.RetryAfter) + "."
	case st >= 500:
		f.Reason = Down
		f.RetryAfter = retryAfter(resp.Header, now)
		f.sentence = fmt.Sprintf("%s is not answering properly (HTTP %d); try again in a few minutes.", name, st)
	default:
		f.Reason = BadRequest
		f.sentence = fmt.Sprintf("%s refused the request (HTTP %d)", name, st)
		if f.Detail != "" {
			f.sentence += ": " + strings.TrimRight(f.Detail, ".") + "."
		} else {
			f.sentence += "."
		}
	}
	return f
}

// transportFailure classifies an error from the HTTP client or the body read.
func transportFailure(name string, err, cause error, limit time.Duration) *Failure {
	var ne net.Error
	var dns *net.DNSError
	switch {
	case errors.Is(cause, errFirstByte) || errors.Is(cause, errIdle):
		what := "answer"
		if errors.Is(cause, errIdle) {
			what = "go on"
		}
		return &Failure{Reason: Timeout, sentence: fmt.Sprintf("%s did not %s within %s; try again in a moment.", name, what, span(limit))}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Failure{Reason: Down, sentence: name + " refused the connection; is it running at that address?"}
	case errors.As(err, &dns):
		return &Failure{Reason: Down, sentence: name + " could not be found (" + dns.Name + "); check the address and the network."}
	case errors.As(err, &ne) && ne.Timeout():
		return &Failure{Reason: Timeout, sentence: name + " did not answer in time; try again in a moment."}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		return &Failure{Reason: BrokenStream, sentence: name + " broke off the answer midway; try again."}
	}
	return &Failure{Reason: Down, sentence: name + " could not be reached; check the address and the network."}
}

// brokenFailure is a stream that said something unreadable or ended without its last event.
func brokenFailure(name, what string) *Failure {
	return &Failure{Reason: BrokenStream, Detail: what, sentence: name + " sent an answer that could not be read (" + what + "); try again."}
}

var (
	errFirstByte = errors.New("no response headers in time")
	errIdle      = errors.New("stream silent for too long")
)

// errorBody reads a provider's JSON error: OpenAI {"error":{"message","type","code"}}, Anthropic
// {"type":"error","error":{"type","message"}}, Venice and others {"error":"text"}.
func errorBody(r io.Reader) (code, msg string) {
	data, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(data, &v) != nil {
		return "", ""
	}
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(v.Error, &e) == nil && (e.Message != "" || e.Type != "") {
		code = e.Type
		var c string
		if json.Unmarshal(e.Code, &c) == nil && c != "" {
			code = c
		}
		return code, e.Message
	}
	var s string
	if json.Unmarshal(v.Error, &s) == nil {
		return "", s
	}
	return "", v.Message
}

// retryAfter reads Retry-After (seconds or an HTTP date) or retry-after-ms; 0 when absent.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// span says a limit for a sentence: "60 s", or "100ms" below a second.
func span(d time.Duration) string {
	if d < time.Second {
		return d.String()
	}
	return fmt.Sprintf("%d s", int(d/time.Second))
}

func wait(d time.Duration) string {
	switch {
	case d <= 0:
		return "in a minute"
	case d < time.Minute:
		return fmt.Sprintf("in %d s", int(d.Round(time.Second)/time.Second))
	case d >= 2*time.Hour:
		return fmt.Sprintf("in %d h", int((d+time.Hour-1)/time.Hour))
	}
	return fmt.Sprintf("in %d min", int((d+time.Minute-1)/time.Minute))
}

// scrub removes the key, and any word that carries 8 or more of its characters in a row (a provider may
// echo a masked key like sk-abc12***wxyz), and caps the message at 300 bytes.
func scrub(msg, key string) string {
	msg = strings.TrimSpace(msg)
	if key != "" {
		msg = strings.ReplaceAll(msg, key, "[key]")
		words := strings.Fields(msg)
		for i, w := range words {
			if sharesRun(w, key, 8) {
				words[i] = "[key]"
			}
		}
		msg = strings.Join(words, " ")
	}
	if len(msg) > 300 {
		msg = strings.ToValidUTF8(msg[:300], "") + "…"
	}
	return msg
}

// sharesRun reports whether a and b have a common substring of n bytes.
func sharesRun(a, b string, n int) bool {
	if len(a) < n || len(b) < n {
		return false
	}
	for i := 0; i+n <= len(a); i++ {
		if strings.Contains(b, a[i:i+n]) {
			return true
		}
	}
	return false
}

// ctxFailure turns a cancelled caller context into its own error: the caller stopped, nothing failed.
func ctxFailure(op string, ctx context.Context) error {
	return errs.Wrap(op, errs.Other, ctx.Err(), "the model call was stopped")
}
