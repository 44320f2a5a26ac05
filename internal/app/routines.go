package app

import "github.com/boxmem/box/internal/routine"

// composeRoutines builds the routines over the brain (docs/ROUTINES.md); the job runner of box serve
// runs what is due with Routines.RunDue.
func (a *App) composeRoutines() error {
	var err error
	a.Routines, err = routine.New(routine.Config{Box: a.Box, Brain: a.Brain, State: a.State, Now: a.opts.Now})
	return err
}
