package box

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxmem/box/internal/errs"
)

// lockPath is the OS file lock every writer of the box takes: CLI, server and hooks alike.
const lockPath = ".box/lock"

// held is the box write lock while a batch holds it.
type held struct {
	f *os.File
}

// lock takes the box write lock, waiting up to the lock timeout, then repairs whatever a killed writer
// left. The wait is a blocking flock (the kernel queues waiters, so a writer that releases and
// re-locks at once does not starve the others the way polling would), on a file opened for this one
// attempt: a wait that times out is abandoned to a goroutine that releases the lock if it ever gets it.
//
// While it waits, answered (if not nil) is polled: when it reports that other processes have already
// applied everything this batch needed, the wait ends with errAnswered.
func (b *Box) lock(ctx context.Context, answered func() bool) (*held, func(), error) {
	b.lockMu.Lock()
	f, err := b.openLockFile()
	if err != nil {
		b.lockMu.Unlock()
		return nil, nil, err
	}
	got := make(chan error, 1)
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		got <- nil
	} else {
		go func() { got <- flock(f, unix.LOCK_EX) }()
	}
	timer := time.NewTimer(b.opts.LockTimeout)
	defer timer.Stop()
	var tick <-chan time.Time
	if answered != nil {
		t := time.NewTicker(spoolPoll)
		defer t.Stop()
		tick = t.C
	}
	abandon := func(err error) (*held, func(), error) {
		go func() {
			_ = <-got     // whether or not the late lock came, the descriptor is closed next
			_ = f.Close() // closing the last descriptor releases the lock
		}()
		b.lockMu.Unlock()
		return nil, nil, err
	}
wait:
	for {
		select {
		case err := <-got:
			if err != nil {
				_ = f.Close()
				b.lockMu.Unlock()
				return nil, nil, errs.Wrap("box.lock", errs.Other, err, "cannot lock the box")
			}
			break wait
		case <-tick:
			if answered() {
				return abandon(errAnswered)
			}
		case <-timer.C:
			return abandon(errBusy())
		case <-ctx.Done():
			return abandon(ctx.Err())
		}
	}
	h := &held{f: f}
	unlock := func() {
		_ = f.Close()
		b.lockMu.Unlock()
	}
	if err := b.recoverLocked(ctx); err != nil {
		unlock()
		return nil, nil, err
	}
	return h, unlock, nil
}

var errAnswered = errors.New("box: the batch was applied by another process")

func errBusy() error {
	return errs.E("box.lock", errs.Busy, "the box is busy (another writer holds its lock); try again")
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// tryLock takes the lock only if it is free at once.
func (b *Box) tryLock() (func(), bool) {
	b.lockMu.Lock()
	f, err := b.openLockFile()
	if err != nil {
		b.lockMu.Unlock()
		return nil, false
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		_ = f.Close()
		b.lockMu.Unlock()
		return nil, false
	}
	return func() { _ = f.Close(); b.lockMu.Unlock() }, true // closing releases the lock
}

func (b *Box) openLockFile() (*os.File, error) {
	dir := filepath.Join(b.Root, ".box")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errs.Wrap("box.lock", errs.Other, err, "cannot make the box's .box folder")
	}
	f, err := os.OpenFile(filepath.Join(b.Root, filepath.FromSlash(lockPath)), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, errs.Wrap("box.lock", errs.Other, err, "cannot open the box lock")
	}
	return f, nil
}

// recoverIfFree runs the crash repair at Open when no other writer is busy (a busy writer repairs
// for itself when it takes the lock).
func (b *Box) recoverIfFree(ctx context.Context) error {
	unlock, ok := b.tryLock()
	if !ok {
		return nil
	}
	defer unlock()
	b.sweepSpool(time.Hour)
	return b.recoverLocked(ctx)
}
