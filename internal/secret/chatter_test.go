package secret

import "testing"

// TestChatterRules: each drop rule takes its own kind of line and leaves the facts that open the same way.
func TestChatterRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule func(string) bool
		yes  []string
		no   []string
	}{
		{"Greeting", Greeting,
			[]string{"Hi", "Hello Claude!", "Good morning :)", "Good night, talk tomorrow", "Bye for now", "See you later!", "Bom dia!", "Hallo zusammen", "Hey ChatGPT, how are you?"},
			[]string{"Hi! Ana moved to Porto in May.", "Good news: Ana got the job.", "Hello Kitty is Leo's favourite.", "Good at chess.", "See the dentist on Friday."}},
		{"Question", Question,
			[]string{"When is Leo's swim practice?", "can you check the weather for tomorrow", "¿Cuándo es el cumpleaños de Ana?", "Leo's school starts on Monday, right?", "What time does the pharmacy close"},
			[]string{"Leo's favourite book is \"Where's Wally?\"", "What Leo wants for Christmas is a telescope.", "Ana asked whether Leo can come.", "How Ana met Rui: at a concert.", "Did the laundry this morning."}},
		{"Chatter", Chatter,
			[]string{"Sure! I've saved that to your memory.", "Let me know if you need anything else!", "As an AI, I don't have preferences.", "Thanks for sharing that with me.", "I'm sorry, I can't access your calendar.", "Here's a summary of what we discussed:"},
			[]string{"Sure enough, Leo lost his jacket again.", "OK so Leo's swim practice moved to Wednesdays.", "I've moved to Porto.", "I'll be in Madrid next week.", "I'm happy with the new job.", "I can swim 2 km."}},
		{"SmallTalk", SmallTalk,
			[]string{"We had a nice chat today, lol", "so tired today", "Nice weather today!", "thanks!", "lol", "Been a long week haha"},
			[]string{"Leo finally learned to ride a bike, lol", "Hates cold weather.", "Thanks to Ana, the garden is done.", "Tired of the commute; thinking about moving.", "Ana is busy today."}},
	} {
		for _, s := range tc.yes {
			if !tc.rule(s) {
				t.Errorf("%s(%q) = false", tc.name, s)
			}
		}
		for _, s := range tc.no {
			if tc.rule(s) {
				t.Errorf("%s(%q) = true", tc.name, s)
			}
		}
	}
}
