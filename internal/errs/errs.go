// Package errs owns the one error type of the box: an operation, a kind and a sentence for the user.
// It is mapped once to exit codes (cli), once to HTTP statuses (server) and once to MCP isError (mcp).
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies an error so each surface can map it once.
type Kind int

const (
	Other        Kind = iota // an unexpected failure
	Invalid                  // bad input: a malformed card, a refused fact, a bad path
	Usage                    // bad flags or arguments
	NotFound                 // the named thing does not exist
	Exists                   // the thing already exists
	NotABox                  // no box here, or a box of another shape
	Refused                  // a rule said no: a secret, a switch at Never, confirmation needed
	Conflict                 // the state changed under us
	Busy                     // the box is locked by another writer for too long
	Locked                   // the box's data is locked (MCP 503)
	Frozen                   // the owner froze the box
	Unauthorized             // no or bad credentials
	Forbidden                // credentials lack the right
	Limited                  // a rate or size limit
)

var kindNames = map[Kind]string{
	Other: "error", Invalid: "invalid", Usage: "usage", NotFound: "not_found", Exists: "exists",
	NotABox: "not_a_box", Refused: "refused", Conflict: "conflict", Busy: "busy", Locked: "locked",
	Frozen: "frozen", Unauthorized: "unauthorized", Forbidden: "forbidden", Limited: "limited",
}

func (k Kind) String() string { return kindNames[k] }

// Error is the box's error: Op is the operation ("memory.remember"), Msg a sentence for the user. Code is
// a protocol's own name for it, when a surface must send one (OAuth's "invalid_grant"); the kind still
// decides how each surface reports it.
type Error struct {
	Op   string
	Kind Kind
	Code string
	Msg  string
	Err  error
}

// E makes an error with a user sentence.
func E(op string, kind Kind, format string, a ...any) *Error {
	return &Error{Op: op, Kind: kind, Msg: fmt.Sprintf(format, a...)}
}

// Wrap attaches an operation and kind to err; msg may be empty to keep err's own sentence.
func Wrap(op string, kind Kind, err error, msg string) *Error {
	return &Error{Op: op, Kind: kind, Msg: msg, Err: err}
}

func (e *Error) Error() string {
	switch {
	case e.Msg != "" && e.Err != nil:
		return e.Msg + ": " + e.Err.Error()
	case e.Msg != "":
		return e.Msg
	case e.Err != nil:
		return e.Err.Error()
	}
	return e.Op + ": " + e.Kind.String()
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf is the protocol code of the outermost *Error in err's chain that has one, else "".
func CodeOf(err error) string {
	var e *Error
	for err != nil {
		if !errors.As(err, &e) {
			return ""
		}
		if e.Code != "" {
			return e.Code
		}
		err = e.Err
	}
	return ""
}

// Sentence is the user sentence of the outermost *Error in err's chain that has one, else "".
func Sentence(err error) string {
	var e *Error
	for err != nil {
		if !errors.As(err, &e) {
			return ""
		}
		if e.Msg != "" {
			return e.Msg
		}
		err = e.Err
	}
	return ""
}

// KindOf reports the kind of the outermost *Error in err's chain that has one, else Other.
func KindOf(err error) Kind {
	var e *Error
	for err != nil {
		if errors.As(err, &e) {
			if e.Kind != Other {
				return e.Kind
			}
			err = e.Err
			continue
		}
		return Other
	}
	return Other
}

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }
