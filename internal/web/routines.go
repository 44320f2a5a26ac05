package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/boxmem/box/internal/routine"
)

// routinesData is Settings → Routines: the routines, the starters not added yet, and why they cannot be
// read when they cannot (docs/ROUTINES.md).
type routinesData struct {
	Shown    bool // the web UI was given the routines
	List     []routine.Routine
	Starters []routine.Routine
	Days     []string
	Problem  string
}

// routinesView reads the routines for Settings; a failure is the section's sentence, not the page's.
func (w *Web) routinesView(r *http.Request) routinesData {
	d := routinesData{Shown: w.cfg.Routines != nil, Days: append(append([]string{}, routine.Days[1:]...), routine.Days[0])}
	if !d.Shown {
		return d
	}
	list, err := w.cfg.Routines.List(r.Context())
	if err != nil {
		d.Problem = sentence(err)
		return d
	}
	d.List = list
	for _, s := range routine.Starters() {
		if !hasRoutine(list, s.Name) {
			d.Starters = append(d.Starters, s)
		}
	}
	return d
}

func hasRoutine(rs []routine.Routine, name string) bool {
	for _, r := range rs {
		if r.Name == name {
			return true
		}
	}
	return false
}

// routinesReady answers a form when the web UI has no routines; true when it has.
func (w *Web) routinesReady(rw http.ResponseWriter, r *http.Request) bool {
	if w.cfg.Routines == nil {
		back(rw, r, "/settings", "Routines are not available in this box's web UI.")
		return false
	}
	return true
}

const routinesBack = "/settings#routines"

// routineAdd is the add form: name, time, the days ticked (none: every day), prompt, on.
func (w *Web) routineAdd(rw http.ResponseWriter, r *http.Request, _ *session) {
	if !w.routinesReady(rw, r) {
		return
	}
	if err := r.ParseForm(); err != nil {
		back(rw, r, routinesBack, "The form could not be read; reload the page and try again.")
		return
	}
	days, err := routine.ParseDays(strings.Join(r.PostForm["day"], ","))
	if err != nil {
		w.backErr(rw, r, routinesBack, err)
		return
	}
	in := routine.Routine{Name: strings.TrimSpace(r.PostFormValue("name")), At: strings.TrimSpace(r.PostFormValue("at")),
		Days: days, Prompt: r.PostFormValue("prompt"), On: r.PostFormValue("on") == "1"}
	added, err := w.cfg.Routines.Add(r.Context(), ownerActor, in)
	if err != nil {
		w.backErr(rw, r, routinesBack, err)
		return
	}
	back(rw, r, routinesBack, fmt.Sprintf("Added the routine %s: %s, %s.", added.Name, added.When(), onWord(added.On)))
}

// routineStarter adds a starter routine, off.
func (w *Web) routineStarter(rw http.ResponseWriter, r *http.Request, _ *session) {
	if !w.routinesReady(rw, r) {
		return
	}
	s, ok := routine.Starter(r.PostFormValue("name"))
	if !ok {
		back(rw, r, routinesBack, "There is no such starter routine.")
		return
	}
	if _, err := w.cfg.Routines.Add(r.Context(), ownerActor, s); err != nil {
		w.backErr(rw, r, routinesBack, err)
		return
	}
	back(rw, r, routinesBack, fmt.Sprintf("Added the routine %s (%s), off until you turn it on.", s.Name, s.When()))
}

func (w *Web) routineRemove(rw http.ResponseWriter, r *http.Request, _ *session) {
	if !w.routinesReady(rw, r) {
		return
	}
	name := r.PathValue("name")
	if err := w.cfg.Routines.Remove(r.Context(), ownerActor, name); err != nil {
		w.backErr(rw, r, routinesBack, err)
		return
	}
	back(rw, r, routinesBack, "Removed the routine "+name+"; Undo on Today brings it back.")
}

func (w *Web) routineSwitch(rw http.ResponseWriter, r *http.Request, _ *session) {
	if !w.routinesReady(rw, r) {
		return
	}
	on := r.PostFormValue("on") == "1"
	rt, err := w.cfg.Routines.SetOn(r.Context(), ownerActor, r.PathValue("name"), on)
	if err != nil {
		w.backErr(rw, r, routinesBack, err)
		return
	}
	back(rw, r, routinesBack, fmt.Sprintf("The routine %s is %s (%s).", rt.Name, onWord(on), rt.When()))
}

// routineRun runs a routine now and shows its report on Today.
func (w *Web) routineRun(rw http.ResponseWriter, r *http.Request, _ *session) {
	if !w.routinesReady(rw, r) {
		return
	}
	rep, err := w.cfg.Routines.Run(r.Context(), r.PathValue("name"))
	if err != nil && rep.Path == "" {
		w.backErr(rw, r, routinesBack, err)
		return
	}
	note := "The routine " + rep.Routine + " reported; its report is below."
	if rep.Failed != "" {
		note = rep.Failed
	}
	back(rw, r, "/today", note)
}

func onWord(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
