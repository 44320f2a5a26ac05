package cli

import "github.com/boxmem/box/internal/errs"

// Exit codes, documented in docs/CLI.md. This switch is the only place errors become exit codes.
const (
	ExitOK       = 0 // success
	ExitFailure  = 1 // an unexpected error, or validation found errors
	ExitUsage    = 2 // bad flags or arguments (also the agent-hook "blocking error" code)
	ExitNotABox  = 3 // no box found, or a box of a shape this binary does not know
	ExitRefused  = 4 // the input was refused by a rule: a secret, too long, needs --yes, a switch at Never
	ExitNotFound = 5 // the named note, entry or key does not exist
	ExitConflict = 6 // already exists, or changed underneath (an undo that would clash)
	ExitBusy     = 7 // the box is busy, frozen or locked: try again later
)

func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	switch errs.KindOf(err) {
	case errs.Usage:
		return ExitUsage
	case errs.NotABox:
		return ExitNotABox
	case errs.Invalid, errs.Refused, errs.Forbidden, errs.Unauthorized, errs.Limited:
		return ExitRefused
	case errs.NotFound:
		return ExitNotFound
	case errs.Exists, errs.Conflict:
		return ExitConflict
	case errs.Busy, errs.Frozen, errs.Locked:
		return ExitBusy
	}
	return ExitFailure
}

// exitError carries a chosen exit code with no message, e.g. validate found errors it already printed.
type exitError struct{ code int }

func (e exitError) Error() string { return "" }
